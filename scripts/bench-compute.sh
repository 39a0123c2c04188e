#!/usr/bin/env bash
# The sequential Lonala workloads (bench/lonala/*.lona, run by `lona run`)
# beside Erlang/OTP (bench/erlang/compute.erl): RUNS runs each, alternating
# the two sides, median total_ms and the ratio (Lona / Erlang).
#   scripts/bench-compute.sh [RUNS] [WORKLOAD...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}; shift || true
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(fib loop lists sort maps strings)
command -v erl >/dev/null && command -v erlc >/dev/null || { echo "needs erl and erlc: apt-get install -y erlang-base" >&2; exit 1; }
cargo build --release -q -p lona
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp bench/erlang/compute.erl "$work/"
(cd "$work" && erlc compute.erl)

median() { { grep -o "$2=[0-9.]*" "$1" || true; } | cut -d= -f2 | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-10s %12s %12s %8s\n' workload lona_ms erlang_ms ratio
for w in "${workloads[@]}"; do
  : > "$work/lona.$w"; : > "$work/erl.$w"
  for _ in $(seq "$runs"); do
    ./target/release/lona run "bench/lonala/$w.lona" 2>/dev/null | grep "^$w " >> "$work/lona.$w" || true
    (cd "$work" && erl -noshell -run compute main "$w") 2>/dev/null | grep "^$w " >> "$work/erl.$w" || true
  done
  l=$(median "$work/lona.$w" total_ms); e=$(median "$work/erl.$w" total_ms)
  r=$(awk -v l="$l" -v e="$e" 'BEGIN { if (e+0 == 0 || l == "-") print "-"; else printf "%.2f", l/e }')
  printf '%-10s %12s %12s %8s\n' "$w" "$l" "$e" "$r"
done
