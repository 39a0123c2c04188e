#!/usr/bin/env bash
# Run each workload RUNS times on Lona and on Erlang/OTP, print the median
# figures side by side and their ratio (Lona / Erlang). The Erlang side is
# the repository's bench/erlang/anchors.erl, or bench/erlang/otp.erl (real
# gen_server and supervisor) for the OTP workloads call, supstart and
# suprestart. With --lonala, the Lona side is the workload written in
# Lonala (bench/lonala/WORKLOAD.lona, run by `lona run`) instead of the
# native Rust one (`lona bench WORKLOAD`).
#   scripts/bench-compare.sh [--lonala] [RUNS] [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/.."
lonala=0
if [ "${1:-}" = --lonala ]; then lonala=1; shift; fi
runs=${1:-5}; shift || true
workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=(spawn skynet ring pingpong fanin fair selective restart gc pairs mesh)
  [ $lonala = 0 ] || workloads+=(gcpause)
fi
# lona_run WORKLOAD: one run of the Lona side.
lona_run() {
  # Erlang runs with +P 5000000; so does the Lonala side (skynet has
  # 1,111,111 processes, most of them alive at once).
  if [ $lonala = 1 ]; then ./target/release/lona run --process-limit 5000000 "bench/lonala/$1.lona"
  else ./target/release/lona bench "$1"; fi
}
command -v erl >/dev/null && command -v erlc >/dev/null || { echo "needs erl and erlc: apt-get install -y erlang-base" >&2; exit 1; }
cargo build --release -q
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp bench/erlang/anchors.erl bench/erlang/otp.erl "$work/"
(cd "$work" && erlc anchors.erl otp.erl)

# the Erlang module that has workload $1
erl_module() { case "$1" in call|supstart|suprestart) echo otp ;; *) echo anchors ;; esac; }

# median of the values of KEY across lines of FILE
median() { { grep -o "$2=[0-9.]*" "$1" || true; } | cut -d= -f2 | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-10s %-20s %14s %14s %8s\n' workload figure lona erlang ratio
for w in "${workloads[@]}"; do
  : > "$work/lona.$w"; : > "$work/erl.$w"
  for _ in $(seq "$runs"); do
    lona_run "$w" 2>/dev/null | grep "^$w " >> "$work/lona.$w" || true
    (cd "$work" && erl +P 5000000 -noshell -run "$(erl_module "$w")" main "$w") 2>/dev/null | grep "^$w " >> "$work/erl.$w" || true
  done
  keys=$(head -1 "$work/lona.$w" | tr ' ' '\n' | grep = | cut -d= -f1 | grep -vE '^(n|laps|msgs|round_trips|senders|each|junk|wanted|crashes|hogs|leaves|live_elements|live_mb|calls|children|restarts|pairs|procs)$')
  for k in $keys; do
    l=$(median "$work/lona.$w" "$k"); e=$(median "$work/erl.$w" "$k")
    r=$(awk -v l="$l" -v e="$e" 'BEGIN { if (e+0 == 0) print "-"; else printf "%.3f", l/e }')
    printf '%-10s %-20s %14s %14s %8s\n' "$w" "$k" "$l" "$e" "$r"
  done
done
