#!/usr/bin/env bash
# Two nodes on this machine over loopback: bench/lonala/dist.lona (two
# Lona nodes) against bench/erlang/dist.erl (two Erlang nodes), run in
# turns; prints each run's lines, then the medians and the ratios
# (Lona / Erlang: below 1 is better for the round trips, above 1 for
# msgs_per_s).
#   scripts/bench-dist.sh [RUNS]      (default 3)
# Needs erl/erlc (apt-get install -y erlang-base).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
command -v erl >/dev/null || { echo "needs erl" >&2; exit 1; }
cargo build --release -q -p lona
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cp bench/erlang/dist.erl "$work/" && (cd "$work" && erlc dist.erl)
host=$(hostname -s)
lona=${CARGO_TARGET_DIR:-$PWD/target}/release/lona

# The responder ends on the driver's stop; one that has not after 5 s is
# killed (the run's figures are already printed).
reap() {
  for _ in $(seq 50); do [ -z "$(jobs -pr)" ] && return; sleep 0.1; done
  echo "(a responder did not stop; killed)" >&2
  kill $(jobs -pr) 2>/dev/null; wait
}

run_lona() {
  "$lona" run --sname "pong$1" --cookie lona bench/lonala/dist.lona pong > "$work/pong.out" 2>&1 &
  for _ in $(seq 100); do grep -q "ready" "$work/pong.out" && break; sleep 0.05; done
  "$lona" run --sname "ping$1" --cookie lona bench/lonala/dist.lona ping "pong$1@$host"
  reap
}
run_erl() {
  (cd "$work" && erl -sname "epong$1" -setcookie lona -noshell -run dist pong > pong.out 2>&1) &
  for _ in $(seq 100); do grep -q "ready" "$work/pong.out" && break; sleep 0.05; done
  (cd "$work" && erl -sname "eping$1" -setcookie lona -noshell -run dist ping "epong$1@$host")
  reap
}

for i in $(seq "$runs"); do
  run_lona "$i" | sed 's/^/lona /' | tee -a "$work/all"
  run_erl "$i" | sed 's/^/erlang /' | tee -a "$work/all"
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
fig() { grep "^$1 $2 " "$work/all" | sed -n "s/.*$3=\([0-9.]*\).*/\1/p" | median; }
echo "medians of $runs:"
for w in "dist_pingpong us_per_round_trip" "dist_oneway msgs_per_s" "dist_big ms_per_round_trip"; do
  set -- $w
  l=$(fig lona "$1" "$2"); e=$(fig erlang "$1" "$2")
  echo "$1 $2 lona=$l erlang=$e ratio=$(awk -v l="$l" -v e="$e" 'BEGIN{printf "%.2f", l/e}')"
done
