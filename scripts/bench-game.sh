#!/usr/bin/env bash
# The Benchmarks Game programs of bench/game: every NAME.lona with its
# Erlang module beside it (NAME.erl, or the module `erl_of` names: an
# Erlang module name holds no dash), RUNS runs each side (alternating),
# median wall-clock seconds and the ratio (Lona / Erlang).
#   scripts/bench-game.sh [RUNS] [NAME...]
# The size of NAME is SIZE (the same for every program) if set, else the
# size column of NAME's row in bench/game/README.md or README-b.md, else
# the N of its NAME.N.out. The programs that read standard input
# (reverse-complement, k-nucleotide, regex-redux) get fasta's output at
# that size, made once by fasta.lona. LONA names the binary (default: target/release/lona, built
# with cargo when missing). Each run's output is compared with the other
# side's: a mismatch is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; shift || true
names=("$@")
erl_of() {
  case $1 in
    spectral-norm) echo spectral_norm ;;
    reverse-complement) echo revcomp ;;
    k-nucleotide) echo knucleotide ;;
    regex-redux) echo regexredux ;;
    *) echo "$1" ;;
  esac
}
reads_stdin() { case $1 in reverse-complement | k-nucleotide | regex-redux) return 0 ;; *) return 1 ;; esac; }
if [ ${#names[@]} -eq 0 ]; then
  for f in bench/game/*.lona; do
    n=$(basename "$f" .lona)
    [ -f "bench/game/$(erl_of "$n").erl" ] && names+=("$n")
  done
fi
command -v erl >/dev/null && command -v erlc >/dev/null || { echo "needs erl and erlc: apt-get install -y erlang-base" >&2; exit 1; }
lona=${LONA:-target/release/lona}
[ -x "$lona" ] || { cargo build --release -q -p lona; lona=target/release/lona; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

size_of() {
  if [ -n "${SIZE:-}" ]; then echo "$SIZE"; return; fi
  local s
  s=$(awk -F'|' -v n="$1" '{ gsub(/ /, "", $2); sub(/^ */, "", $3); sub(/ .*/, "", $3) } $2 == n && $3 ~ /^[0-9]+$/ { print $3; exit }' bench/game/README.md bench/game/README-b.md 2>/dev/null || true)
  if [ -z "$s" ]; then
    s=$(ls bench/game/"$1".*.out 2>/dev/null | head -1 | sed -E "s/.*\/$1\.([0-9]+)\.out$/\1/")
  fi
  echo "$s"
}
# Seconds one command takes (its output to FILE).
secs() { local out=$1; shift; /usr/bin/time -f %e -o "$work/t" "$@" > "$out" 2>/dev/null || echo "failed: $*" >&2; tail -1 "$work/t"; }
median() { sort -g "$1" | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

printf '%-20s %10s %10s %10s %8s\n' program size lona_s erlang_s ratio
for n in "${names[@]}"; do
  size=$(size_of "$n")
  [ -n "$size" ] || { echo "$n: no size (set SIZE, or add its row to bench/game/README.md)" >&2; continue; }
  m=$(erl_of "$n")
  cp "bench/game/$m.erl" "$work/" && (cd "$work" && erlc "$m.erl")
  input=/dev/null
  if reads_stdin "$n"; then
    input="$work/fasta.$size"
    [ -f "$input" ] || "$lona" run bench/game/fasta.lona "$size" > "$input"
  fi
  : > "$work/lona.t"; : > "$work/erl.t"
  for _ in $(seq "$runs"); do
    secs "$work/lona.out" "$lona" run "bench/game/$n.lona" "$size" < "$input" >> "$work/lona.t"
    secs "$work/erl.out" erl -noshell -pa "$work" -run "$m" main "$size" -s init stop < "$input" >> "$work/erl.t"
    cmp -s "$work/lona.out" "$work/erl.out" || echo "$n: the Lonala and Erlang outputs differ at $size" >&2
  done
  l=$(median "$work/lona.t"); e=$(median "$work/erl.t")
  r=$(awk -v l="$l" -v e="$e" 'BEGIN { if (e+0 == 0 || l == "-") print "-"; else printf "%.2f", l/e }')
  printf '%-20s %10s %10s %10s %8s\n' "$n" "$size" "$l" "$e" "$r"
done
