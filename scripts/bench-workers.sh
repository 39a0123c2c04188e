#!/usr/bin/env bash
# Does a second worker help? Runs each process workload RUNS times on one
# worker and on two (alternating), natively (`lona bench W --workers N`)
# and in Lonala (`lona run --workers N bench/lonala/W.lona`, where that
# file exists), and prints for each the median of its main figure with
# 1 and 2 workers, the fastest and slowest run of each, and
#   t2/t1  time with 2 workers / time with 1: below 1, the second worker
#          helps (a throughput figure, `*_per_s`, is turned into a time:
#          the ratio is then median1 / median2);
#   slow1, slow2  the slowest run / the median, in time (for a throughput
#          figure, median / the lowest): issue 20 wants at most 1.5 in
#          10 runs;
#   xcore_ns  the host's cross-core round trip (`lona bench xcore`),
#          lowest..highest of the figures taken before each pair of runs:
#          the guests here switch between ~90 and ~450 ns, and two-worker
#          figures follow.
# PIN=1 adds `--pin` (worker i pinned to core i mod cores).
#   scripts/bench-workers.sh [RUNS] [WORKLOAD...]
# Default workloads: every process workload; not `gc` (one process, no
# runtime), nor the latency workloads `fair` (its hogs are 2 per worker,
# so 1 and 2 workers run different loads) and `gcpause`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}; shift || true
workloads=("$@")
if [ ${#workloads[@]} -eq 0 ]; then
  workloads=(spawn skynet ring pingpong fanin selective restart call supstart suprestart pairs mesh)
fi
pin=()
[ "${PIN:-0}" = 1 ] && pin=(--pin)
# The workloads of `lona bench` (the process ones and gc).
native=" spawn skynet ring pingpong fanin fair selective restart gc call supstart suprestart pairs mesh "
for w in "${workloads[@]}"; do
  case "$native" in *" $w "*) ;; *)
    [ -f "bench/lonala/$w.lona" ] || { echo "bench-workers: no workload $w" >&2; exit 2; } ;;
  esac
done

# figure WORKLOAD: the main figure of its line; a leading `1/` marks a
# throughput (higher is faster).
figure() {
  case "$1" in
    spawn) echo ns_per_spawn ;;
    ring) echo ns_per_hop ;;
    pingpong) echo ns_per_round_trip ;;
    fanin|mesh) echo 1/msgs_per_s ;;
    pairs) echo 1/round_trips_per_s ;;
    restart|suprestart) echo us_per_restart ;;
    call) echo us_per_call ;;
    supstart) echo us_per_child ;;
    fair|gcpause) echo p99_us ;;
    gc) echo full_gc_ms ;;
    *) echo total_ms ;;
  esac
}

cargo build --release -q -p lona
lona=${CARGO_TARGET_DIR:-target}/release/lona
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# one FORM WORKLOAD N: one run; its line on standard output, or nothing
# (the error goes to standard error).
one() {
  local out=$work/out err=$work/err
  if [ "$1" = native ]; then "$lona" bench "$2" --workers "$3" "${pin[@]}" >"$out" 2>"$err" || true
  # The process limit of bench-compare.sh (Erlang's +P): skynet has
  # 1,111,111 processes.
  else "$lona" run --workers "$3" "${pin[@]}" --process-limit 5000000 "bench/lonala/$2.lona" >"$out" 2>"$err" || true; fi
  if ! grep "^$2 " "$out"; then
    echo "bench-workers: $1 $2 --workers $3 printed no result:" >&2
    tail -3 "$err" >&2
  fi
}

# stats FILE KEY: median min max of KEY's values in FILE's lines, or `- - -`.
stats() {
  { grep -o "\b$2=[0-9.e+-]*" "$1" || true; } | cut -d= -f2 | sort -g | awk '
    function f(x) { return sprintf("%.10g", x) }
    {a[NR]=$1}
    END {
      if (NR == 0) { print "- - -"; exit }
      m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
      print f(m), f(a[1]), f(a[NR])
    }'
}

printf '%-10s %-6s %-18s %11s %19s %11s %19s %7s %6s %6s %9s\n' \
  workload form figure "median(1)" "min..max(1)" "median(2)" "min..max(2)" t2/t1 slow1 slow2 xcore_ns
for w in "${workloads[@]}"; do
  forms=()
  case "$native" in *" $w "*) forms+=(native) ;; esac
  [ -f "bench/lonala/$w.lona" ] && forms+=(lonala)
  fig=$(figure "$w"); key=${fig#1/}
  for form in "${forms[@]}"; do
    : >"$work/1"; : >"$work/2"; : >"$work/x"
    for _ in $(seq "$runs"); do
      "$lona" bench xcore >>"$work/x" 2>/dev/null || true
      for n in 1 2; do one "$form" "$w" "$n" >>"$work/$n"; done
    done
    read -r _ xlo xhi <<<"$(stats "$work/x" round_trip_ns)"
    read -r m1 lo1 hi1 <<<"$(stats "$work/1" "$key")"
    read -r m2 lo2 hi2 <<<"$(stats "$work/2" "$key")"
    awk -v w="$w" -v form="$form" -v key="$key" -v inv="$([ "$fig" = "$key" ] && echo 0 || echo 1)" \
      -v m1="$m1" -v lo1="$lo1" -v hi1="$hi1" -v m2="$m2" -v lo2="$lo2" -v hi2="$hi2" -v x="$xlo..$xhi" '
      function f(x) { return x == "-" ? "-" : sprintf(x >= 1000 ? "%.0f" : "%.4g", x) }
      function slow(m, lo, hi) {
        if (m == "-" || m + 0 == 0 || lo + 0 == 0) return "-"
        return sprintf("%.2f", inv ? m / lo : hi / m)
      }
      BEGIN {
        r = "-"
        if (m1 != "-" && m2 != "-" && m1 + 0 != 0 && m2 + 0 != 0)
          r = sprintf("%.3f", inv ? m1 / m2 : m2 / m1)
        printf "%-10s %-6s %-18s %11s %19s %11s %19s %7s %6s %6s %9s\n", w, form, key,
          f(m1), f(lo1) ".." f(hi1), f(m2), f(lo2) ".." f(hi2), r, slow(m1, lo1, hi1), slow(m2, lo2, hi2), x
      }'
  done
done
