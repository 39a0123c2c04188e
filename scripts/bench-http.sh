#!/usr/bin/env bash
# The HTTP workload: the Rust API's `lona bench http-server` (lona-http),
# Lonala's bench/lonala/http.lona (lona.http), Erlang's
# bench/erlang/http.erl and Go's bench/go/http_server.go, each loaded by
# wrk at each connection count; prints requests/s and latency
# percentiles (medians of RUNS).
#   scripts/bench-http.sh [RUNS] [SECONDS] [CONNS...]   (default 3 5 100 1000)
# Needs erl/erlc (erlang-base), go (golang-go) and wrk.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; secs=${2:-5}; shift 2 || true
conns=("$@"); [ ${#conns[@]} -gt 0 ] || conns=(100 1000)
for c in erl go wrk; do command -v $c >/dev/null || { echo "needs $c" >&2; exit 1; }; done
cargo build --release -q -p lona
lona=${CARGO_TARGET_DIR:-target}/release/lona
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cp bench/erlang/http.erl "$work/" && (cd "$work" && erlc http.erl)
(cd bench/go && go build -o "$work/http_go" http_server.go)
port=7500

start() {
  local name=$1; shift
  "$@" > "$work/$name.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "http listening" "$work/$name.out" && return; sleep 0.1; done
  echo "$name did not start" >&2; cat "$work/$name.out" >&2; exit 1
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# wrk's latency figures in microseconds
us() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /ms$/) n *= 1000; else if (v ~ /[0-9]s$/) n *= 1000000; print n }'; }

printf '%-9s %6s %10s %9s %9s\n' server conns req_per_s p50_us p99_us
for srv in lona-rust lonala erlang go; do
  port=$((port + 1))
  case $srv in
    lona-rust) start $srv "$lona" bench http-server $port ;;
    lonala) start $srv "$lona" run --process-limit 1000000 bench/lonala/http.lona $port ;;
    erlang) start $srv sh -c "cd $work && exec erl +P 1000000 -noshell -run http main $port" ;;
    go) start $srv "$work/http_go" $port ;;
  esac
  for c in "${conns[@]}"; do
    : > "$work/rps"; : > "$work/p50"; : > "$work/p99"
    for _ in $(seq "$runs"); do
      wrk -t2 -c"$c" -d"${secs}s" --latency "http://127.0.0.1:$port/" > "$work/wrk" 2>&1 || true
      awk '/Requests\/sec/ {print $2}' "$work/wrk" >> "$work/rps"
      us "$(awk '$1 == "50%" {print $2}' "$work/wrk")" >> "$work/p50"
      us "$(awk '$1 == "99%" {print $2}' "$work/wrk")" >> "$work/p99"
    done
    printf '%-9s %6s %10s %9s %9s\n' $srv "$c" "$(median < "$work/rps")" "$(median < "$work/p50")" "$(median < "$work/p99")"
  done
  kill $server; wait $server 2>/dev/null || true
done
