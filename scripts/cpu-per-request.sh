#!/usr/bin/env bash
# CPU per request of an HTTP server, not its throughput: on a machine
# whose cores the load generator (and anything else) shares, requests/s
# measure the machine, while the server's own user + system CPU time per
# request (from /proc/PID/stat, as issue 44 asks) measures the server.
#
#   scripts/cpu-per-request.sh CONNS SECONDS PATH -- SERVER-COMMAND...
#
# SERVER-COMMAND must print a line ending in `port=N` once it serves on
# 127.0.0.1:N (examples/service.rs and bench/axum-count do, given port 0).
# Prints one line:
#   requests=R req_per_s=X cpu_us_per_req=C user_us=U sys_us=S rss_kb=K p99=P
set -euo pipefail
conns=$1 secs=$2 path=$3
shift 3
[ "$1" = -- ] && shift
command -v wrk >/dev/null || { echo "wrk is missing (apt-get install -y wrk)" >&2; exit 2; }

out=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; rm -f "$out"' EXIT
"$@" >"$out" 2>&1 &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*port=\([0-9][0-9]*\).*/\1/p' "$out" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "the server printed no port=N:" >&2; cat "$out" >&2; exit 1; }

tick=$(getconf CLK_TCK)
# utime and stime are fields 14 and 15 of /proc/PID/stat (after the
# command name, which is in parentheses and may hold spaces).
cpu() { sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12, $13 }'; }
# A short warm-up, not counted.
wrk -t2 -c"$conns" -d1s "http://127.0.0.1:$port$path" >/dev/null
read -r u0 s0 < <(cpu)
res=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "http://127.0.0.1:$port$path")
read -r u1 s1 < <(cpu)
reqs=$(echo "$res" | awk '/requests in/ { print $1 }')
rps=$(echo "$res" | awk '/Requests\/sec/ { print $2 }')
p99=$(echo "$res" | awk '$1 == "99%" { print $2 }')
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
awk -v r="$reqs" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v t="$tick" -v rps="$rps" -v rss="$rss" -v p99="$p99" 'BEGIN {
  us = 1e6 / t
  printf "requests=%d req_per_s=%s cpu_us_per_req=%.2f user_us=%d sys_us=%d rss_kb=%d p99=%s\n",
    r, rps, (u + s) * us / r, u * us, s * us, rss, p99 }'
