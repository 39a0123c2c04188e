//! The share of reductions run in compiled code (`--jit-stats`; issue
//! 44 asks for it per program).
//!
//! Counting is off unless asked for (`count_reductions`), so the paths
//! that count cost one relaxed load of a flag when it is off:
//! 1. `Vm::run_compiled` adds the reductions a compiled entry used (its
//!    budget before, less the budget it gave back) to `COMPILED`.
//! 2. `Vm::run_in` adds every reduction of the slice, in either tier, to
//!    `ALL`.
//! 3. `stats()` reads both; the ratio is the compiled share.
//!
//! Both counters are written by every worker and read once, at the end:
//! the adds are relaxed (they order nothing; each is a sum only read
//! after the program ended, when the workers have stopped).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

/// Written once, before the program runs (`--jit-stats`); read by every
/// slice and every compiled entry.
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Reductions run in compiled code, summed over every process.
static COMPILED: AtomicU64 = AtomicU64::new(0);
/// Every reduction of every Lonala process, either tier.
static ALL: AtomicU64 = AtomicU64::new(0);

/// Counts reductions from now on, for `Stats::reductions` and
/// `Stats::compiled_reductions` (`--jit-stats`).
pub fn count_reductions(on: bool) {
    COUNTING.store(on, Relaxed);
}

#[inline]
pub(crate) fn counting() -> bool {
    COUNTING.load(Relaxed)
}

/// Step 1: `n` reductions ran in compiled code.
#[inline(never)]
pub(crate) fn add_compiled(n: i64) {
    if n > 0 {
        COMPILED.fetch_add(n as u64, Relaxed);
    }
}

/// Step 2: a slice ran `n` reductions.
#[inline(never)]
pub(crate) fn add_all(n: i64) {
    if n > 0 {
        ALL.fetch_add(n as u64, Relaxed);
    }
}

/// Step 3: (all reductions, those in compiled code) so far.
pub(crate) fn read() -> (u64, u64) {
    (ALL.load(Relaxed), COMPILED.load(Relaxed))
}
