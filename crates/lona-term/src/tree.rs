//! Sorted maps and sets: a weight-balanced tree of vectors, read here.
//!
//! A sorted collection (`Kind::SortedMap`, `Kind::SortedSet`) is two
//! words: its comparator (`nil` for the term order, else the Lonala
//! function `sorted-map-by` was given) and its tree's root. A tree is
//! `nil` (empty) or a node, a plain vector `[key value left right size]`
//! (a set's value is its key), so that the collector, messages and
//! fragments need nothing new for it.
//!
//! The tree is balanced by weight: Adams' trees ("Efficient sets: a
//! balancing act", *J. Functional Programming* 3(4), 1993), with the
//! parameters ⟨3, 2⟩ that Hirai and Yamamoto proved correct
//! ("Balancing weight-balanced trees", *J. Functional Programming* 21(3),
//! 2011). Changing a tree needs its comparator, which may be any Lonala
//! function, so insertion and deletion are written in Lonala
//! (`lonala/sorted.lona`: `tree-insert`, `tree-delete`). What needs no
//! comparison is here, below the views (the size, the entries in order or
//! reversed, a collection's parts, read from the words as `trie.rs`
//! reads a trie); finding a key by the term order and making a sorted
//! collection are in `map.rs`, above the term order. A node that is not a
//! five-element vector reads as empty: a tree made by hand (`sorted*`)
//! can be wrong, never unsafe.

use crate::term::{header_arity, Kind, Term};

/// A node's key, value, left and right subtrees (`None` for `nil` or
/// anything that is not a node).
pub(crate) fn node<'h>(t: Term<'h>) -> Option<(Term<'h>, Term<'h>, Term<'h>, Term<'h>)> {
    let h = t.boxed_header()?;
    if Kind::from_header(h) != Kind::Vector || header_arity(h) != 5 {
        return None;
    }
    // SAFETY: a vector's five payload words are terms, alive as long as it.
    unsafe {
        Some((
            Term::from_bits(t.payload(0)),
            Term::from_bits(t.payload(1)),
            Term::from_bits(t.payload(2)),
            Term::from_bits(t.payload(3)),
        ))
    }
}

/// The number of entries of the tree at `root` (what its root says).
pub(crate) fn size(root: Term<'_>) -> usize {
    if node(root).is_none() {
        return 0;
    }
    // SAFETY: a node's fifth payload word is a term (its size).
    let n = unsafe { Term::from_bits(root.payload(4)) };
    n.small_value().map_or(0, |n| n.max(0) as usize)
}

/// The tree's entries in order (`rev`: from the last).
pub(crate) fn entries<'h>(root: Term<'h>, rev: bool) -> Vec<(Term<'h>, Term<'h>)> {
    let mut out = Vec::with_capacity(size(root).min(1 << 20));
    // An explicit stack: a tree of a million entries is ~40 deep, but a
    // hand-made one may be a list.
    let mut stack: Vec<(Term<'h>, Term<'h>, Term<'h>)> = Vec::new();
    let mut at = root;
    loop {
        while let Some((k, v, l, r)) = node(at) {
            let (near, far) = if rev { (r, l) } else { (l, r) };
            stack.push((k, v, far));
            at = near;
        }
        let Some((k, v, far)) = stack.pop() else {
            return out;
        };
        out.push((k, v));
        at = far;
    }
}

impl<'h> Term<'h> {
    /// Whether the term is a sorted map or set (one test of the header,
    /// for the built-ins that hand sorted collections to Lonala).
    #[inline]
    pub fn is_sorted(self) -> bool {
        self.boxed_header().is_some_and(|h| {
            let k = (h >> 3) & 0x1f;
            k == Kind::SortedMap as u64 || k == Kind::SortedSet as u64
        })
    }

    /// A sorted collection's parts: whether it is a set, its comparator
    /// and its tree's root (`None` for anything else).
    pub fn sorted_parts(self) -> Option<(bool, Term<'h>, Term<'h>)> {
        let set = match Kind::from_header(self.boxed_header()?) {
            Kind::SortedMap => false,
            Kind::SortedSet => true,
            _ => return None,
        };
        // SAFETY: a sorted collection's two payload words are terms,
        // alive as long as it.
        unsafe {
            Some((
                set,
                Term::from_bits(self.payload(0)),
                Term::from_bits(self.payload(1)),
            ))
        }
    }
}
