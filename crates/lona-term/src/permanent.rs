//! Permanent terms: objects that live for the rest of the node, outside
//! every process heap (BEAM's literal areas).
//!
//! Compiled code keeps its constants (quoted lists, strings, vectors) and
//! global values (`def`) as permanent terms, so every process reads them in
//! place and none copies them:
//!
//! 1. Build the terms in an ordinary [`Heap`] (its safe constructors).
//! 2. [`make_permanent`] takes the heap: its blocks are leaked and their
//!    address ranges recorded here. The words of its terms stay valid for
//!    the rest of the process, as `Term<'static>`.
//! 3. A process heap may hold such words: the collector leaves a pointer
//!    that is outside its from-space alone (`gc.rs`), and the heap's store
//!    check accepts pointers in a recorded range ([`is_permanent`]).
//!
//! Permanent memory is never freed. Code is small and redefinition is
//! rare (a REPL, a reload); BEAM instead copies literals into the
//! processes that still use them when a module is purged, which we may do
//! later.

use std::sync::RwLock;

use crate::heap::Heap;
use crate::term::{is_ptr, ptr_of, RawTerm, Term};

/// Sorted, non-overlapping address ranges of permanent blocks.
///
/// Written by [`make_permanent`] (rare: once per compiled unit or `def`);
/// read by the store check of every heap, only for a pointer that is in
/// none of that heap's own blocks (the slow path).
static RANGES: RwLock<Vec<(usize, usize)>> = RwLock::new(Vec::new());

/// Bytes made permanent so far (code literals, functions, var values).
static BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Bytes of permanent memory (Erlang's `memory(code)` and literal areas):
/// what [`make_permanent`] kept, never freed.
pub fn permanent_bytes() -> usize {
    // Relaxed: a statistic.
    BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes every object allocated in `heap` permanent (see the module
/// documentation). The heap's registers, roots and stack are dropped; its
/// objects stay where they are, forever.
pub fn make_permanent(heap: Heap) {
    heap.close_overflow();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    ranges.push((heap.young.base() as usize, heap.young.end() as usize));
    if heap.old.words() > 0 {
        ranges.push((heap.old.base() as usize, heap.old.end() as usize));
    }
    for f in heap.frags.borrow().iter() {
        ranges.push((f.block.base() as usize, f.block.end() as usize));
    }
    let bytes: usize = ranges.iter().map(|r| r.1.saturating_sub(r.0)).sum();
    // Relaxed: a statistic.
    BYTES.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    {
        let mut all = RANGES.write().unwrap_or_else(|e| e.into_inner());
        for r in ranges {
            if r.0 < r.1 {
                let i = all.partition_point(|&(lo, _)| lo < r.0);
                all.insert(i, r);
            }
        }
    }
    // The blocks (and the shared binaries' counts) are kept for good.
    std::mem::forget(heap);
}

/// Whether `bits` is an immediate or points into permanent memory.
pub fn is_permanent(bits: u64) -> bool {
    if !is_ptr(bits) {
        return true;
    }
    let a = ptr_of(bits) as usize;
    let all = RANGES.read().unwrap_or_else(|e| e.into_inner());
    let i = all.partition_point(|&(lo, _)| lo <= a);
    i > 0 && a < all[i - 1].1
}

/// A permanent term from its word.
///
/// # Safety
/// `raw` must be an immediate or a word of a term whose heap was passed to
/// [`make_permanent`].
pub unsafe fn permanent_term(raw: RawTerm) -> Term<'static> {
    debug_assert!(is_permanent(raw.0));
    // SAFETY: per the caller, the object lives forever and never moves.
    unsafe { Term::from_bits(raw.0) }
}
