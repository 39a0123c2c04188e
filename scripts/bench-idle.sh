#!/usr/bin/env bash
# Memory per idle connection: each echo server (Lona's Rust API, Lonala,
# Erlang, Go) holding N connections that each made one round trip and then
# sit idle; prints the server's resident memory grown per connection.
#   scripts/bench-idle.sh [N]     (default 10000; needs `ulimit -n` > N + 100)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
command -v erl >/dev/null && command -v go >/dev/null || { echo "needs erl and go" >&2; exit 1; }
cargo build --release -q -p lona
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cp bench/erlang/echo.erl "$work/" && (cd "$work" && erlc echo.erl)
(cd bench/go && go build -o "$work/echo_go" echo_server.go)
port=7600
rss() { awk '/VmRSS/ {print $2 * 1024}' "/proc/$1/status"; }
start() {
  local name=$1; shift
  "$@" > "$work/$name.out" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q "echo listening" "$work/$name.out" && return; sleep 0.1; done
  echo "$name did not start" >&2; exit 1
}
printf '%-10s %8s %16s\n' server conns bytes_per_conn
for srv in lona-rust lonala erlang go; do
  port=$((port + 1))
  case $srv in
    lona-rust) start $srv ./target/release/lona bench echo-server $port ;;
    lonala) start $srv ./target/release/lona run --process-limit 1000000 bench/lonala/echo.lona $port ;;
    erlang) start $srv sh -c "cd $work && exec erl +P 1000000 -noshell -run echo main $port" ;;
    go) start $srv "$work/echo_go" $port ;;
  esac
  # The server's own process (erl's shell wrapper execs, so $server is it).
  sleep 1
  before=$(rss $server)
  python3 - "$port" "$n" "$server" "$before" "$srv" <<'PY'
import socket, sys, time
port, n, pid, before, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
conns = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    conns.append(s)
for s in conns:
    s.sendall(b"x" * 64)
for s in conns:
    got = b""
    while len(got) < 64:
        got += s.recv(64 - len(got))
time.sleep(2)
rss = int([l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
print(f"{name:<10} {n:>8} {(rss - before) / n:>16.0f}")
for s in conns:
    s.close()
PY
  kill $server; wait $server 2>/dev/null || true
done
