//! What a heap points to outside itself: the walk a code collector makes
//! of a process heap to learn which code and which permanent terms the
//! process may still use.
//!
//! 1. Every object in the heap's blocks is visited in address order: the
//!    young block up to `htop`, the old block up to `old_top`, each
//!    fragment up to what it uses. Blocks hold objects back to back (a
//!    header and its payload, or a headerless cons cell), as the
//!    collector's to-space scan relies on too.
//! 2. For each term slot of an object, and each word of the stack, the
//!    registers and the registered roots, a pointer outside the young and
//!    the old block is reported as [`Foreign::Pointer`] (into a fragment
//!    of this heap, or into permanent memory: the caller tells them apart).
//! 3. For each closure, its code id is reported as [`Foreign::Code`].
//!
//! The walk is conservative: dead objects not yet collected are reported
//! too, so a caller keeps more than it must until the next collection,
//! never less.

use crate::block::words_between;
use crate::heap::Heap;
use crate::term::{header_arity, is_header, is_ptr, ptr_of, Kind};

/// A reference from a heap to something outside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    /// The address of an object outside the young and old blocks.
    Pointer(usize),
    /// A closure's code id.
    Code(u64),
}

impl Heap {
    /// Reports everything this heap points to outside itself (module
    /// documentation), including from `extra`, words its owner keeps
    /// beside the heap (a register stack).
    pub fn visit_foreign(&self, extra: &[u64], f: &mut dyn FnMut(Foreign)) {
        let young = &self.young;
        let old = &self.old;
        let mut word = |w: u64| {
            if is_ptr(w) {
                let p = ptr_of(w);
                if !young.contains(p) && !old.contains(p) {
                    f(Foreign::Pointer(p as usize));
                }
            }
        };
        // Code ids are reported after the walk: `word` holds `f`.
        let mut codes: Vec<u64> = Vec::new();
        let mut region = |from: *mut u64, to: *mut u64, word: &mut dyn FnMut(u64)| {
            walk(from, to, |c| codes.push(c), word)
        };
        region(young.base(), self.htop.get(), &mut word);
        region(old.base(), self.old_top, &mut word);
        {
            let frags = self.frags.borrow();
            let ovf = self.ovf_idx.get();
            for (i, fr) in frags.iter().enumerate() {
                let base = fr.block.base();
                let end = if i == ovf {
                    self.ovf_top.get()
                } else {
                    // SAFETY: `used` words of the block are in use.
                    unsafe { base.add(fr.used) }
                };
                region(base, end, &mut word);
            }
        }
        // The stack sits at the top of the young block.
        let stop = self.stop.get();
        for i in 0..words_between(stop, young.end()) {
            // SAFETY: [stop, end) of the young block is the stack.
            word(unsafe { *stop.add(i) });
        }
        if let Some(x) = self.extra.get() {
            x.regs.borrow().iter().for_each(|w| word(*w));
            x.roots.borrow().iter().for_each(|w| word(*w));
        }
        extra.iter().for_each(|w| word(*w));
        for c in codes {
            f(Foreign::Code(c));
        }
    }
}

/// Calls `code` with the code id of every closure in `[from, to)`, a
/// region of complete objects back to back (step 1), and `word` with
/// every term slot.
#[inline]
fn walk(from: *mut u64, to: *mut u64, mut code: impl FnMut(u64), mut word: impl FnMut(u64)) {
    let mut s = from;
    // SAFETY: per the caller, [from, to) holds complete objects; every
    // read stays inside the object the header describes.
    unsafe {
        while s < to {
            let h = *s;
            if is_header(h) {
                let arity = header_arity(h);
                let kind = Kind::from_header(h);
                if kind == Kind::Closure {
                    code(*s.add(1));
                }
                let (off, n) = kind.term_slots(arity);
                for i in 0..n {
                    word(*s.add(1 + off + i));
                }
                s = s.add(1 + arity);
            } else {
                word(h);
                word(*s.add(1));
                s = s.add(2);
            }
        }
    }
}

/// Reports the code id of every closure in `[from, to)`, a region of
/// complete objects back to back (step 1).
#[inline]
pub(crate) fn visit_codes(from: *mut u64, to: *mut u64, f: impl FnMut(u64)) {
    walk(from, to, f, |_| {});
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fragment, Term};

    fn foreign(h: &Heap, extra: &[u64]) -> Vec<Foreign> {
        let mut v = Vec::new();
        h.visit_foreign(extra, &mut |x| v.push(x));
        v
    }

    #[test]
    fn closures_and_outside_pointers_are_reported() {
        let h = Heap::new();
        let other = Heap::new();
        let s = other.string("elsewhere, a long enough string");
        // SAFETY: the code id is opaque to the heap.
        let c = unsafe { h.closure(0xC0DE, &[Term::small_int(1).unwrap()]) };
        let v = h.vector(&[c, h.string("mine")]);
        let _r = h.add_root(v);
        let got = foreign(&h, &[s.bits()]);
        assert_eq!(
            got.iter().filter(|f| **f == Foreign::Code(0xC0DE)).count(),
            1
        );
        assert!(got.contains(&Foreign::Pointer(ptr_of(s.bits()) as usize)));
        // Nothing of its own is reported.
        assert_eq!(got.len(), 2, "{got:?}");
    }

    #[test]
    fn attached_fragments_and_old_objects_are_walked() {
        let mut h = Heap::new();
        let src = Heap::new();
        // SAFETY: as above.
        let c = unsafe { src.closure(0xF00D, &[]) };
        let frag = Fragment::new(src.list(&[c, c]));
        let t = h.attach(frag);
        let _r = h.add_root(t);
        let got = foreign(&h, &[]);
        assert_eq!(
            got.iter().filter(|f| **f == Foreign::Code(0xF00D)).count(),
            2
        );
        // After collections the survivors sit in the young and old blocks.
        h.collect(0).unwrap();
        h.collect(0).unwrap();
        let got = foreign(&h, &[]);
        assert!(got.contains(&Foreign::Code(0xF00D)));
        assert!(
            !got.iter().any(|f| matches!(f, Foreign::Pointer(_))),
            "{got:?}"
        );
    }
}
