#!/usr/bin/env bash
# The echo workload: each echo server (Lona's Rust API, Lonala, Erlang's
# bench/erlang/echo.erl, Go's bench/go/echo_server.go) driven by
# bench/loadgen/loadgen.go at each connection count; prints one line per
# server and count with the load generator's figures (medians of RUNS).
#   scripts/bench-echo.sh [RUNS] [CONNS...]      (default: 3 runs, 100 1000)
# Needs erl/erlc (apt-get install -y erlang-base) and go (golang-go).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; shift || true
conns=("$@"); [ ${#conns[@]} -gt 0 ] || conns=(100 1000)
command -v erl >/dev/null && command -v go >/dev/null || { echo "needs erl and go" >&2; exit 1; }
cargo build --release -q -p lona
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cp bench/erlang/echo.erl "$work/" && (cd "$work" && erlc echo.erl)
(cd bench/loadgen && go build -o "$work/loadgen" loadgen.go)
(cd bench/go && go build -o "$work/echo_go" echo_server.go)
port=7400

# start NAME CMD...: run a server, wait for its `echo listening` line.
start() {
  local name=$1; shift
  "$@" > "$work/$name.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "echo listening" "$work/$name.out" && return; sleep 0.1; done
  echo "$name did not start" >&2; cat "$work/$name.out" >&2; exit 1
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-8s %6s %14s %9s %9s\n' server conns msgs_per_s p50_us p99_us
for srv in lona-rust lonala erlang go; do
  port=$((port + 1))
  case $srv in
    lona-rust) start $srv ./target/release/lona bench echo-server $port ;;
    lonala) start $srv ./target/release/lona run --process-limit 1000000 bench/lonala/echo.lona $port ;;
    erlang) start $srv sh -c "cd $work && exec erl +P 1000000 -noshell -run echo main $port" ;;
    go) start $srv "$work/echo_go" $port ;;
  esac
  for c in "${conns[@]}"; do
    : > "$work/runs"
    for _ in $(seq "$runs"); do
      "$work/loadgen" -addr 127.0.0.1:$port -conns "$c" -msgs 100 -size 64 >> "$work/runs"
    done
    m() { grep -o "$1=[0-9.]*" "$work/runs" | cut -d= -f2 | median; }
    printf '%-8s %6s %14s %9s %9s\n' $srv "$c" "$(m msgs_per_s)" "$(m p50_us)" "$(m p99_us)"
  done
  kill $server; wait $server 2>/dev/null || true
done
