//! Which memory is permanent: the address ranges of the heaps given to
//! [`make_permanent`](crate::make_permanent) and
//! [`make_freeable`](crate::make_freeable) (`permanent.rs`), and the owner of
//! each. Every heap's store check reads it (a pointer in none of the
//! heap's own blocks may still be permanent: [`is_permanent`]), so it sits
//! below `heap.rs`; `permanent.rs`, which takes heaps, fills it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
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

/// Bumped by [`forget`] after it removed ranges (`Release`); read by
/// every lookup (`Acquire`). A range found under one generation is
/// recorded until the next: [`LAST`] holds only while it is current.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// A range found: `(start, end, owner, generation)`.
type Found = (usize, usize, u64, u64);

/// How many ranges each thread keeps ([`LAST`]).
const KEPT: usize = 4;

thread_local! {
    /// The last ranges this thread found, the newest first: a loop
    /// storing the same code literals into its heap again and again
    /// (fasta's tables of one-letter strings, from a few vars' values)
    /// asks for the same few ranges each time, and the lock's shared
    /// counter, written by every read, was over half of such a
    /// program's time on two workers.
    static LAST: [Cell<Found>; KEPT] = const { [const { Cell::new((0, 0, 0, u64::MAX)) }; KEPT] };
}

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
        // Release, after the removal: a lookup that reads the new
        // generation finds every thread's cached range stale.
        GENERATION.fetch_add(1, Release);
    }
    // Relaxed: a statistic.
    BYTES.fetch_sub(bytes, Relaxed);
}

/// The owner of the permanent block holding address `a`: `Some(0)` for
/// memory kept forever, `Some(token)` for a block of `make_freeable`,
/// `None` if `a` is not permanent.
pub fn permanent_owner(a: usize) -> Option<u64> {
    // Acquire: pairs with `forget`'s Release, so a generation still
    // current means no range was removed since `LAST` was filled (its
    // generation read before the map was).
    let g = GENERATION.load(Acquire);
    let hit = LAST
        .try_with(|kept| {
            kept.iter().find_map(|c| {
                let (lo, hi, owner, at) = c.get();
                (at == g && lo <= a && a < hi).then_some(owner)
            })
        })
        .ok()
        .flatten();
    if hit.is_some() {
        return hit;
    }
    let all = RANGES.read().unwrap_or_else(|e| e.into_inner());
    let (&lo, &(hi, owner)) = all.range(..=a).next_back()?;
    if a >= hi {
        return None;
    }
    // (A thread being torn down has no cache: it asks the map.)
    let _ = LAST.try_with(|kept| {
        for i in (1..KEPT).rev() {
            kept[i].set(kept[i - 1].get());
        }
        kept[0].set((lo, hi, owner, g));
    });
    Some(owner)
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
