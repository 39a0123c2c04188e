//! Reading a large map's trie (its layout is in `hamt.rs`) without
//! comparing keys: its count, its entries in trie order, and the words of
//! its nodes. This is what reading a map ([`crate::MapView`], `view.rs`)
//! needs, below the term order (`cmp.rs`); finding, adding and removing a
//! key compare keys and are in `hamt.rs`.

use crate::term::{header_arity, ptr_of, Kind};

/// The value of a small-integer word (a count or a bitmap of the trie).
#[inline]
pub(crate) fn unsmall(w: u64) -> u64 {
    w >> 3
}

/// The payload words of a boxed object.
///
/// # Safety
/// `w` must be a boxed word of a live heap.
#[inline]
pub(crate) unsafe fn words<'a>(w: u64) -> &'a [u64] {
    // SAFETY: per the caller; the header gives the payload length.
    unsafe {
        let p = ptr_of(w);
        std::slice::from_raw_parts(p.add(1), header_arity(*p))
    }
}

/// # Safety
/// `w` must be a boxed word of a live heap.
#[inline]
pub(crate) unsafe fn kind(w: u64) -> Kind {
    // SAFETY: per the caller.
    unsafe { Kind::from_header(*ptr_of(w)) }
}

/// The count of a `HamtMap` word.
///
/// # Safety
/// `m` must be a live `HamtMap`.
pub(crate) unsafe fn len(m: u64) -> usize {
    // SAFETY: per the caller.
    unsafe { unsmall(words(m)[0]) as usize }
}

/// Every entry under `node`, in trie order.
///
/// # Safety
/// `node` must be a live node.
pub(crate) unsafe fn collect(node: u64, out: &mut Vec<(u64, u64)>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        // SAFETY: nodes reached from a live node are live.
        let w = unsafe { words(n) };
        // SAFETY: as above.
        if unsafe { kind(n) } == Kind::HamtColl {
            out.extend(w.chunks_exact(2).map(|p| (p[0], p[1])));
            continue;
        }
        let ndata = (unsmall(w[0]) as u32).count_ones() as usize;
        out.extend(w[2..2 + 2 * ndata].chunks_exact(2).map(|p| (p[0], p[1])));
        stack.extend(w[2 + 2 * ndata..].iter().rev());
    }
}

/// The root node of a `HamtMap`.
///
/// # Safety
/// `m` must be a live `HamtMap`.
pub(crate) unsafe fn root(m: u64) -> u64 {
    // SAFETY: per the caller.
    unsafe { words(m)[1] }
}
