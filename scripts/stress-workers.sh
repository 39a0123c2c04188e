#!/usr/bin/env bash
# Correctness with more workers than cores (issue 20, point 4; see
# docs/scaling.md): runs the conformance suites with N worker threads
# each, for every N given (default: 16 and 64), and prints PASS, FAIL or
# TIMEOUT per suite and N, with its time. Exit status 1 if any failed.
#   scripts/stress-workers.sh [N...]
# Environment: CARGO_TARGET_DIR as usual; JOBS (cargo's -j, default 1);
# SUITE_TIMEOUT (seconds per suite run, default 900); REPEAT (runs of
# each suite per N, default 1: a suite fails if any run fails); LOGS
# (where each run's output goes, default target dir's stress-workers/).
#
# The debug test profile (`cargo test`, with lona-vm and lona-term at
# opt-level 2 as the workspace sets): the suites are built once, before
# the first run, then each run only executes them.
#
# How N reaches the tests: `LONA_TEST_WORKERS=N`, read by the helpers
# that build runtimes for tests meant to hold for any number of workers
# (tests/common/mod.rs of lona-runtime, lona-vm and lona-otp):
# `common::workers(2)` in the `run(..)` helpers and inline builders,
# `common::more_workers(n)` in the `rt(n)` helpers (where `rt(1)` stays
# one worker). `Builder` itself reads no variable.
# Left at their own count, because their point is one schedule:
# - `rt(1)` in erlang_rules, runtime_core, api_traps, priority, io_tcp:
#   one worker's fairness, FIFO order of first runs, starvation bounds;
# - priority.rs's `*_on_two_workers` tests (two workers by name);
# - every `.workers(1)` (churn, hostile, stack, ...), and the suites not
#   run here: idle.rs and pinning.rs (count parked or pinned workers),
#   introspect.rs (per-worker figures), panic_hook, crash_report, hostile,
#   stack, io_emfile, readme (worker counts are part of what they check);
# - stress.rs's `sixty_four_workers_run_a_mixed_load_exactly`, which is
#   always 64 (and runs in every plain `cargo test`).
set -uo pipefail
cd "$(dirname "$0")/.."
counts=("$@")
[ ${#counts[@]} -eq 0 ] && counts=(16 64)
jobs=${JOBS:-1}
limit=${SUITE_TIMEOUT:-900}
target=${CARGO_TARGET_DIR:-target}
logs=${LOGS:-$target/stress-workers}
mkdir -p "$logs"

# crate:suite, the black-box and conformance suites.
suites=(
  lona-runtime:erlang_rules lona-runtime:links_monitors lona-runtime:runtime_core
  lona-runtime:stress lona-runtime:churn lona-runtime:priority
  lona-runtime:api_traps lona-runtime:aliases lona-runtime:lifecycle
  lona-runtime:large_mailbox lona-runtime:spawn_named lona-runtime:state_machine
  lona-runtime:timers lona-runtime:io_tcp lona-runtime:io_fs lona-runtime:io_hyper
  lona-vm:golden lona-vm:lonala lona-vm:processes
  lona-otp:server lona-otp:supervisor lona-otp:dynamic lona-otp:reports
)

args() { # crate:suite -> cargo test arguments
  echo "-p ${1%%:*} --test ${1#*:}"
}

# Built with the very arguments each run uses (one crate at a time: a
# build of several crates at once unifies features differently, and the
# runs would then build again).
echo "building the suites (cargo test -j$jobs --no-run)..."
: >"$logs/build.log"
for s in "${suites[@]}"; do
  if ! cargo test -j"$jobs" $(args "$s") --no-run >>"$logs/build.log" 2>&1; then
    echo "build of $s failed: see $logs/build.log"
    exit 1
  fi
done

failed=0
printf '%-30s %8s %-8s %7s\n' suite workers result seconds
for n in "${counts[@]}"; do
  for s in "${suites[@]}"; do
    log="$logs/${s/:/-}-$n.log"
    t0=$(date +%s.%N)
    r=PASS
    for ((i = 1; i <= ${REPEAT:-1}; i++)); do
      LONA_TEST_WORKERS=$n timeout "$limit" cargo test -j"$jobs" $(args "$s") >"$log" 2>&1
      case $? in
        0) ;;
        124) r=TIMEOUT; break ;;
        *) r=FAIL; break ;;
      esac
    done
    t1=$(date +%s.%N)
    [ "$r" = PASS ] || failed=1
    printf '%-30s %8s %-8s %7.1f\n' "$s" "$n" "$r" "$(echo "$t1 - $t0" | bc)"
    if [ "$r" != PASS ]; then
      [ "${REPEAT:-1}" -gt 1 ] && echo "    (run $i of ${REPEAT})"
      grep -E '^test .* (FAILED|has been running)|panicked at' "$log" | head -5 | sed 's/^/    /'
      echo "    (full output: $log)"
    fi
  done
done
exit $failed
