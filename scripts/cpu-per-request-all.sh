#!/usr/bin/env bash
# Server CPU per request (issue 44, point 3): the echo and HTTP servers of
# Lona's Rust API (`lona bench echo-server` / `http-server`), Lonala
# (bench/lonala/echo.lona, http.lona), Erlang (bench/erlang/echo.erl,
# http.erl) and Go (bench/go/), each loaded at each connection count; the
# server's own user + system CPU time from /proc/PID/stat across the load,
# divided by the requests (HTTP: wrk's count) or round trips (echo:
# loadgen's conns x msgs) it served. On a machine whose cores the load
# generator shares, this measures the server where requests/s measure the
# machine. Prints one line per server, protocol and count, medians of RUNS:
#   proto server conns cpu_us_per_req user_us_per_req sys_us_per_req per_s
#   scripts/cpu-per-request-all.sh [RUNS] [CONNS...]   (default 3 100 10000)
# Needs erl/erlc (erlang-base), go (golang-go) and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; shift || true
conns=("$@"); [ ${#conns[@]} -gt 0 ] || conns=(100 10000)
for c in erl erlc go wrk; do command -v $c >/dev/null || { echo "needs $c" >&2; exit 1; }; done
ulimit -n 65536 2>/dev/null || true
lona=${LONA:-target/release/lona}
[ -x "$lona" ] || { cargo build --release -q -p lona; lona=target/release/lona; }
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cp bench/erlang/echo.erl bench/erlang/http.erl "$work/" && (cd "$work" && erlc echo.erl http.erl)
(cd bench/loadgen && go build -o "$work/loadgen" loadgen.go)
(cd bench/go && go build -o "$work/echo_go" echo_server.go && go build -o "$work/http_go" http_server.go)
tick=$(getconf CLK_TCK)
port=7600

# start NAME WORD CMD...: run a server, wait for its "WORD listening" line.
start() {
  local name=$1 word=$2; shift 2
  "$@" > "$work/$name.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "$word listening" "$work/$name.out" && return; sleep 0.1; done
  echo "$name did not start" >&2; cat "$work/$name.out" >&2; exit 1
}
# The server's user and system ticks so far (fields 14 and 15 of stat,
# after the parenthesised command name).
cpu() { sed 's/.*) //' "/proc/$server/stat" | awk '{ print $12, $13 }'; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-5s %-9s %6s %14s %15s %14s %10s\n' proto server conns cpu_us_per_req user_us_per_req sys_us_per_req per_s
for proto in echo http; do
  for srv in lona-rust lonala erlang go; do
    port=$((port + 1))
    case $proto-$srv in
      echo-lona-rust) start $srv echo "$lona" bench echo-server $port ;;
      echo-lonala) start $srv echo "$lona" run --process-limit 1000000 bench/lonala/echo.lona $port ;;
      echo-erlang) start $srv echo sh -c "cd $work && exec erl +P 1000000 -noshell -run echo main $port" ;;
      echo-go) start $srv echo "$work/echo_go" $port ;;
      http-lona-rust) start $srv http "$lona" bench http-server $port ;;
      http-lonala) start $srv http "$lona" run --process-limit 1000000 bench/lonala/http.lona $port ;;
      http-erlang) start $srv http sh -c "cd $work && exec erl +P 1000000 -noshell -run http main $port" ;;
      http-go) start $srv http "$work/http_go" $port ;;
    esac
    # `sh -c ... exec erl` keeps the pid: erl execs beam.smp in place.
    for c in "${conns[@]}"; do
      : > "$work/cpu"; : > "$work/user"; : > "$work/sys"; : > "$work/rate"
      for _ in $(seq "$runs"); do
        read -r u0 s0 < <(cpu)
        if [ $proto = echo ]; then
          msgs=$(( c >= 10000 ? 20 : 2000 ))
          "$work/loadgen" -addr 127.0.0.1:$port -conns "$c" -msgs $msgs -size 64 > "$work/load" 2>&1 || true
          n=$(( c * msgs ))
          rate=$(sed -n 's/.*msgs_per_s=\([0-9.]*\).*/\1/p' "$work/load")
        else
          wrk -t2 -c"$c" -d5s "http://127.0.0.1:$port/" > "$work/load" 2>&1 || true
          n=$(awk '/requests in/ { print $1 }' "$work/load")
          rate=$(awk '/Requests\/sec/ { print $2 }' "$work/load")
        fi
        read -r u1 s1 < <(cpu)
        awk -v n="$n" -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v t="$tick" 'BEGIN {
          k = 1e6 / t / (n > 0 ? n : 1); printf "%.2f %.2f %.2f\n", (u + s) * k, u * k, s * k }' > "$work/one"
        read -r a b d < "$work/one"
        echo "$a" >> "$work/cpu"; echo "$b" >> "$work/user"; echo "$d" >> "$work/sys"
        echo "${rate:-0}" >> "$work/rate"
      done
      printf '%-5s %-9s %6s %14s %15s %14s %10s\n' $proto $srv "$c" "$(median < "$work/cpu")" \
        "$(median < "$work/user")" "$(median < "$work/sys")" "$(median < "$work/rate")"
    done
    kill $server; wait $server 2>/dev/null || true
  done
done
