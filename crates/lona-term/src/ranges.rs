//! Which memory is permanent: the address ranges of the heaps given to
//! [`make_permanent`](crate::make_permanent) and
//! [`make_freeable`](crate::make_freeable) (`permanent.rs`), and the owner of
//! each. Every heap's store check reads it (a pointer in none of the
//! heap's own blocks may still be permanent: [`is_permanent`]), so it sits
//! below `heap.rs`; `permanent.rs`, which takes heaps, fills it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::RwLock;

use crate::term::{is_ptr, ptr_of};

/// Permanent blocks by start address: `start -> (end, owner)`, where the
/// owner is 0 for memory kept forever and otherwise the token given to
/// `make_freeable`.
///
/// Written by `make_permanent` and `make_freeable` (rare: once per
/// compiled unit or `def`) and by `free_permanent`; read by the store
/// check of every heap, only for a pointer that is in none of that heap's
/// own blocks (the slow path), and by the code collector.
static RANGES: RwLock<BTreeMap<usize, (usize, u64)>> = RwLock::new(BTreeMap::new());

/// Bytes of permanent memory now (code literals, functions, var values).
static BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes of permanent memory (Erlang's `memory(code)` and literal areas):
/// what `make_permanent` and `make_freeable` hold now.
pub fn permanent_bytes() -> usize {
    // Relaxed: a statistic.
    BYTES.load(Relaxed)
}

/// Records `ranges` (`[start, end)` addresses) as permanent under `owner`.
pub(crate) fn record(ranges: &[(usize, usize)], owner: u64) {
    let bytes: usize = ranges.iter().map(|r| r.1 - r.0).sum();
    // Relaxed: a statistic.
    BYTES.fetch_add(bytes, Relaxed);
    let mut all = RANGES.write().unwrap_or_else(|e| e.into_inner());
    for &(lo, hi) in ranges {
        all.insert(lo, (hi, owner));
    }
}

/// Forgets `ranges`, each recorded before, taking the lock once.
pub(crate) fn forget(ranges: &[(usize, usize)]) {
    let mut bytes = 0;
    {
        let mut all = RANGES.write().unwrap_or_else(|e| e.into_inner());
        for &(lo, hi) in ranges {
            all.remove(&lo);
            bytes += hi - lo;
        }
    }
    // Relaxed: a statistic.
    BYTES.fetch_sub(bytes, Relaxed);
}

/// The owner of the permanent block holding address `a`: `Some(0)` for
/// memory kept forever, `Some(token)` for a block of `make_freeable`,
/// `None` if `a` is not permanent.
pub fn permanent_owner(a: usize) -> Option<u64> {
    let all = RANGES.read().unwrap_or_else(|e| e.into_inner());
    let (_, &(hi, owner)) = all.range(..=a).next_back()?;
    (a < hi).then_some(owner)
}

/// [`permanent_owner`] of the object a term word points to; `None` for
/// an immediate.
pub fn permanent_owner_of(bits: u64) -> Option<u64> {
    if is_ptr(bits) {
        permanent_owner(ptr_of(bits) as usize)
    } else {
        None
    }
}

/// Whether `bits` is an immediate or points into permanent memory.
pub fn is_permanent(bits: u64) -> bool {
    !is_ptr(bits) || permanent_owner(ptr_of(bits) as usize).is_some()
}
