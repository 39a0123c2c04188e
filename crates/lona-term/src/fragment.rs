//! Heap fragments: a message deep-copied into a standalone block.
//!
//! A sender that cannot write into the receiver's heap copies its message
//! into a [`Fragment`] ([`Fragment::new`]). The fragment is `Send + 'static`,
//! so it is what travels through the runtime's mailbox. The receiver reads
//! it in place ([`Fragment::root`]) or hands it to its heap with
//! [`Heap::attach`]: the block joins the heap's fragment list, its objects
//! count as young, and the next collection copies the live ones into the
//! heap proper and frees the block.

use std::mem::ManuallyDrop;

use crate::block::Block;
use crate::heap::{Frag, Heap};
use crate::term::{header, Kind, Term, TAG_BOXED};

/// A deep copy of one term in a block of its own (plus counts on the large
/// binaries it references).
///
/// Five words: a fragment sits in every queued Lonala message, and most
/// messages hold neither shared binaries nor closures, so their lists are
/// boxed apart (`Extra`) and absent. (With the two lists inline, a queued
/// message took 104 bytes, with them boxed 64: `fanin` queues up to a
/// million.)
pub struct Fragment {
    block: Block,
    root: u64,
    extra: Option<Box<Extra>>,
}

/// What a fragment holds besides its block, when it holds anything.
struct Extra {
    /// Shared objects in the block, each owning a count.
    offheap: Vec<*mut u64>,
    /// The code ids of its closures, each pinned (`pins.rs`).
    codes: Vec<u64>,
}

/// A new fragment's lists: `None` when both are empty (the common case,
/// no allocation). Each closure's code is pinned here, once for the
/// fragment (released by its drop, or by the heap it is attached to); a
/// copy that pins nothing collected no code ids.
fn extra(offheap: Vec<*mut u64>, codes: Vec<u64>) -> Option<Box<Extra>> {
    if offheap.is_empty() && codes.is_empty() {
        return None;
    }
    for c in &codes {
        crate::pins::retain(*c);
    }
    Some(Box::new(Extra { offheap, codes }))
}

// SAFETY: the fragment exclusively owns its block; its words point only
// into that block or at atomically counted shared binaries, whose bytes
// below every holder's length never change (appends claim bytes past
// them with a CAS: `binary.rs`).
unsafe impl Send for Fragment {}

impl Fragment {
    /// Deep-copies `t` (from any heap or fragment) into a new fragment of
    /// exactly the size it needs.
    pub fn new(t: Term<'_>) -> Fragment {
        if t.is_immediate() {
            return Fragment {
                block: Block::empty(),
                root: t.bits(),
                extra: None,
            };
        }
        let size = crate::copy::tree_size(t);
        let block = Block::new(size);
        let mut offheap = Vec::new();
        let mut codes = Vec::new();
        // SAFETY: the block has exactly `size` fresh words.
        let root = unsafe {
            crate::copy::copy_tree(t, block.base(), size, &mut offheap, Some(&mut codes))
        };
        Fragment {
            block,
            root,
            extra: extra(offheap, codes),
        }
    }

    /// A fragment holding a new vector of deep copies of `items`: what
    /// `Fragment::new(heap.vector(items))` makes, without building the
    /// vector on a heap first (e.g. a spawn's `[f & args]`).
    pub fn vector(items: &[Term<'_>]) -> Fragment {
        Fragment::vector_copy(items, true)
    }

    /// [`Fragment::vector`] without pins on the code its closures name
    /// (`pins.rs`), for a caller that keeps that code alive in another way
    /// (a VM spawning a process it will ask about the fragment:
    /// [`Fragment::visit_codes`] finds the closures).
    pub fn vector_unpinned(items: &[Term<'_>]) -> Fragment {
        Fragment::vector_copy(items, false)
    }

    fn vector_copy(items: &[Term<'_>], pin: bool) -> Fragment {
        let n = items.len();
        // Each element's size, measured once (the first few kept here).
        let mut sizes = [0usize; 8];
        let mut size = 1 + n;
        for (i, t) in items.iter().enumerate() {
            let s = crate::copy::tree_size(*t);
            if let Some(x) = sizes.get_mut(i) {
                *x = s;
            }
            size += s;
        }
        let block = Block::new(size);
        let mut offheap = Vec::new();
        let mut codes = Vec::new();
        let base = block.base();
        // SAFETY: the block has exactly `size` fresh words: the header, the
        // `n` elements, then each element's tree in turn (`tree_size`
        // words each, which is what `copy_tree` writes).
        unsafe {
            base.write(header(Kind::Vector, n));
            let mut at = base.add(1 + n);
            for (i, t) in items.iter().enumerate() {
                let w = if t.is_immediate() {
                    t.bits()
                } else {
                    let s = match sizes.get(i) {
                        Some(s) => *s,
                        None => crate::copy::tree_size(*t),
                    };
                    let w =
                        crate::copy::copy_tree(*t, at, s, &mut offheap, pin.then_some(&mut codes));
                    at = at.add(s);
                    w
                };
                base.add(1 + i).write(w);
            }
            debug_assert!(at == base.add(size));
        }
        Fragment {
            block,
            root: base as usize as u64 | TAG_BOXED,
            extra: extra(offheap, codes),
        }
    }

    /// Reports the closures' code ids in the fragment (whether pinned or
    /// not), as [`Heap::visit_foreign`] does for a heap.
    #[inline]
    pub fn visit_codes(&self, f: impl FnMut(u64)) {
        crate::scan::visit_codes(self.block.base(), self.block.end(), f);
    }

    /// The message.
    #[inline]
    pub fn root(&self) -> Term<'_> {
        // SAFETY: the root is an immediate or points into our block, which
        // lives (unmoved) as long as the borrow of self.
        unsafe { Term::from_bits(self.root) }
    }

    /// Words in the fragment's block.
    pub fn words(&self) -> usize {
        self.block.words()
    }
}

impl Drop for Fragment {
    fn drop(&mut self) {
        if let Some(x) = &self.extra {
            // SAFETY: every entry is a shared object in our block owning a
            // count.
            unsafe { crate::binary::release_all(&x.offheap) };
            crate::pins::release_all(&x.codes);
        }
    }
}

impl std::fmt::Debug for Fragment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fragment({})", self.root())
    }
}

impl Heap {
    /// Makes a fragment part of this heap (its objects count as young until
    /// the next collection) and returns its message as a term of this heap.
    pub fn attach(&self, frag: Fragment) -> Term<'_> {
        let mut frag = ManuallyDrop::new(frag);
        let block = std::mem::replace(&mut frag.block, Block::empty());
        let root = frag.root;
        let used = block.words();
        if used > 0 {
            self.frags.borrow_mut().push(Frag { block, used });
            self.msg_words.set(self.msg_words.get() + used);
        }
        if let Some(x) = frag.extra.take() {
            self.attach_extra(*x);
        }
        // SAFETY: the root points into the block now owned by this heap (or
        // is an immediate). The ManuallyDrop leaves nothing to drop: its
        // block was replaced by an empty one and its extra taken.
        unsafe { self.wrap(root) }
    }

    /// `attach`'s shared objects and closures (out of line: most messages
    /// have none).
    #[inline(never)]
    fn attach_extra(&self, x: Extra) {
        let Extra { offheap, codes } = x;
        // SAFETY: the fragment's list holds its live shared objects.
        self.note_offheap(unsafe { crate::binary::offheap_bytes(&offheap) });
        self.offheap.borrow_mut().extend(offheap);
        // A visited heap holds the closures now (whoever frees code asks
        // it); any other keeps the fragment's pins.
        if self.visited.get() {
            crate::pins::release_all(&codes);
        } else if !codes.is_empty() {
            self.keep_pinned(codes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{View, SHARED_THRESHOLD};

    #[test]
    fn plain_fragments_are_five_words_with_nothing_boxed() {
        assert_eq!(std::mem::size_of::<Fragment>(), 5 * 8);
        let h = Heap::new();
        let small = h.binary(&[1, 2, 3]);
        let plain = h.vector(&[h.int(1), h.list(&[Term::NIL, small])]);
        assert!(Fragment::new(h.int(7)).extra.is_none());
        assert!(Fragment::new(plain).extra.is_none());
        assert!(Fragment::vector(&[plain, plain]).extra.is_none());
        // A shared binary needs its count kept: the list is boxed, and
        // attaching hands it to the heap (the copy still reads the bytes).
        let big = h.binary(&[9u8; SHARED_THRESHOLD]);
        let f = Fragment::new(h.vector(&[plain, big]));
        assert_eq!(f.extra.as_ref().map(|x| x.offheap.len()), Some(1));
        let other = Heap::new();
        let t = other.attach(f);
        let View::Vector(items) = t.view() else {
            panic!("a vector")
        };
        assert_eq!(items[1].shared_refcount(), Some(2));
        let View::Binary(bytes) = items[1].view() else {
            panic!("a binary")
        };
        assert_eq!(bytes.len(), SHARED_THRESHOLD);
        assert!(bytes.iter().all(|b| *b == 9));
    }
}
