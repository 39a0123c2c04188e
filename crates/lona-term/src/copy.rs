//! Deep copy of a term into a fresh region (another heap or a fragment).
//!
//! Two passes, both without recursion: [`tree_size`] walks the term with an
//! explicit stack to count the words a flattened copy needs, then
//! [`copy_tree`] copies the root object shallowly and scans the copied
//! words Cheney-style, shallow-copying every source object a slot still
//! points to. The source is only read (a source heap may be shared-borrowed
//! by others), so shared subterms are copied once per reference, as BEAM's
//! `copy_struct` does. Large binaries are shared: their two-word object is
//! copied and the count incremented.

use crate::binary::SharedBytes;
use crate::term::{
    header_arity, is_header, is_ptr, ptr_of, Kind, Term, TAG_BOXED, TAG_CONS, TAG_MASK,
};

/// Words needed for a flattened copy of `t`.
pub(crate) fn tree_size(t: Term<'_>) -> usize {
    let mut total = 0usize;
    let mut todo = Todo::default();
    todo.push(t.bits());
    while let Some(mut w) = todo.pop() {
        // Follow cdr chains in a loop so long lists use no stack.
        while is_ptr(w) {
            let p = ptr_of(w);
            // SAFETY: every pointer reachable from a live Term<'_> points at
            // a valid object for the term's lifetime, which spans this call.
            unsafe {
                if w & TAG_MASK == TAG_CONS {
                    total = total.saturating_add(2);
                    todo.push(*p);
                    w = *p.add(1);
                } else {
                    let h = *p;
                    let arity = header_arity(h);
                    total = total.saturating_add(1 + arity);
                    let (off, n) = Kind::from_header(h).term_slots(arity);
                    for i in 0..n {
                        todo.push(*p.add(1 + off + i));
                    }
                    break;
                }
            }
        }
    }
    total
}

/// `tree_size`'s stack of words still to measure: the first few on the
/// Rust stack, so a small message (nearly all of them) costs no
/// allocation.
#[derive(Default)]
struct Todo {
    inline: [u64; 32],
    n: usize,
    /// Used only while `inline` is full.
    more: Vec<u64>,
}

impl Todo {
    #[inline]
    fn push(&mut self, w: u64) {
        if self.n < self.inline.len() {
            self.inline[self.n] = w;
            self.n += 1;
        } else {
            self.more.push(w);
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<u64> {
        if let Some(w) = self.more.pop() {
            return Some(w);
        }
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some(self.inline[self.n])
    }
}

/// Copies `t` into `size` words at `dst` (`size` must be `tree_size(t)`),
/// registering copied large binaries in `offheap`. Returns the new word.
///
/// # Safety
/// `dst` must be `size` writable words that nothing else uses; `t` must be
/// valid for the duration of the call.
pub(crate) unsafe fn copy_tree(
    t: Term<'_>,
    dst: *mut u64,
    size: usize,
    offheap: &mut Vec<*mut u64>,
    codes: Option<&mut Vec<u64>>,
) -> u64 {
    let mut c = Copier {
        // SAFETY: dst + size is one past the region.
        end: unsafe { dst.add(size) },
        top: dst,
        offheap,
        codes,
    };
    // SAFETY: the copier only writes inside [dst, end) (asserted) and reads
    // valid source objects reachable from t.
    unsafe {
        let root = c.shallow(t.bits());
        let mut scan = dst;
        while scan < c.top {
            let w = *scan;
            if is_header(w) {
                let arity = header_arity(w);
                let (off, n) = Kind::from_header(w).term_slots(arity);
                for i in 0..n {
                    let q = scan.add(1 + off + i);
                    *q = c.shallow(*q);
                }
                scan = scan.add(1 + arity);
            } else {
                *scan = c.shallow(w);
                *scan.add(1) = c.shallow(*scan.add(1));
                scan = scan.add(2);
            }
        }
        assert!(c.top == c.end, "copy size mismatch");
        root
    }
}

struct Copier<'a> {
    top: *mut u64,
    end: *mut u64,
    offheap: &'a mut Vec<*mut u64>,
    /// For a fragment: the code ids of the closures copied (the fragment
    /// pins them: `pins.rs`).
    codes: Option<&'a mut Vec<u64>>,
}

impl Copier<'_> {
    /// Copies the object `w` points to (if any) to `top`.
    ///
    /// # Safety
    /// `w` is a valid term word; `[top, end)` is writable.
    unsafe fn shallow(&mut self, w: u64) -> u64 {
        if !is_ptr(w) {
            return w;
        }
        let p = ptr_of(w);
        // SAFETY: p is a valid object (caller); the room check below keeps
        // every write inside [top, end).
        unsafe {
            let (n, tag) = if w & TAG_MASK == TAG_CONS {
                (2, TAG_CONS)
            } else {
                (1 + header_arity(*p), TAG_BOXED)
            };
            assert!(
                crate::block::words_between(self.top, self.end) >= n,
                "copy overflow"
            );
            let d = self.top;
            std::ptr::copy_nonoverlapping(p, d, n);
            self.top = d.add(n);
            if tag == TAG_BOXED {
                match Kind::from_header(*d) {
                    Kind::SharedStr | Kind::SharedBin | Kind::Cell => {
                        SharedBytes::retain(*d.add(1) as usize as *const SharedBytes);
                        self.offheap.push(d);
                    }
                    Kind::Closure => {
                        if let Some(codes) = self.codes.as_deref_mut() {
                            codes.push(*d.add(1));
                        }
                    }
                    _ => {}
                }
            }
            d as usize as u64 | tag
        }
    }
}
