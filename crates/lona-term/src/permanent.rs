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
//! Memory given to [`make_permanent`] is never freed (built-ins). Memory
//! given to [`make_freeable`] (compiled code's constants, var values) is
//! freed by [`free_permanent`] once the VM's code collector has shown that
//! nothing points into it any more (`lona-vm`'s `purge.rs`); until then
//! it is permanent like the rest.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::heap::Heap;
use crate::ranges::{forget, is_permanent, record};
use crate::term::{RawTerm, Term};

/// The heaps given to [`make_freeable`], by owner token, until
/// [`free_permanent`] drops them.
static FREEABLE: Mutex<Option<HashMap<u64, Heap>>> = Mutex::new(None);

/// The address ranges of `heap`'s blocks.
fn ranges_of(heap: &Heap) -> Vec<(usize, usize)> {
    heap.close_overflow();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    ranges.push((heap.young.base() as usize, heap.young.end() as usize));
    if heap.old.words() > 0 {
        ranges.push((heap.old.base() as usize, heap.old.end() as usize));
    }
    for f in heap.frags.borrow().iter() {
        ranges.push((f.block.base() as usize, f.block.end() as usize));
    }
    ranges.retain(|r| r.0 < r.1);
    ranges
}

/// Makes every object allocated in `heap` permanent (see the module
/// documentation). The heap's registers, roots and stack are dropped; its
/// objects stay where they are, forever.
pub fn make_permanent(heap: Heap) {
    record(&ranges_of(&heap), 0);
    // The blocks (and the shared binaries' counts) are kept for good.
    std::mem::forget(heap);
}

/// Makes every object allocated in `heap` permanent until
/// [`free_permanent`]`(owner)`: how code and var values that can be
/// replaced are kept (`owner`, not 0, names them to the code collector,
/// and [`permanent_owner`](crate::permanent_owner) finds it from an
/// address).
pub fn make_freeable(heap: Heap, owner: u64) {
    assert!(owner != 0, "owner 0 is the memory kept forever");
    record(&ranges_of(&heap), owner);
    FREEABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(owner, heap);
}

/// Frees the heaps given to [`make_freeable`] under `owners` (skipping
/// any there is none for), taking each lock once.
///
/// # Safety
/// No term of those heaps may be used again: no heap, fragment, var or
/// register anywhere holds a pointer into them.
pub unsafe fn free_permanent(owners: &[u64]) {
    let heaps: Vec<Heap> = {
        let mut all = FREEABLE.lock().unwrap_or_else(|e| e.into_inner());
        let Some(m) = all.as_mut() else { return };
        owners.iter().filter_map(|o| m.remove(o)).collect()
    };
    let ranges: Vec<(usize, usize)> = heaps.iter().flat_map(ranges_of).collect();
    forget(&ranges);
    drop(heaps);
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
