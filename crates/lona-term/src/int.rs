//! Integers by their limbs: reading a big integer's magnitude where it lies
//! on its heap ([`Term::int_ref`]) and writing one straight onto a heap
//! ([`Heap::int_with`], [`Heap::int_from_limbs`]), so that arithmetic
//! (`lona-machine`'s `num` and `limbs`) needs no `BigInt` (a `Vec`) for
//! its operands nor for its result.
//!
//! Every integer is kept in its smallest form (term.rs): a value in
//! [`SMALL_INT_MIN`]`..=`[`SMALL_INT_MAX`] is an immediate, any other a
//! boxed `BigPos`/`BigNeg` whose top limb is not zero. The constructors
//! here keep that form, as [`Heap::bigint`] does.

use std::cmp::Ordering;
use std::marker::PhantomData;

use crate::heap::Heap;
use crate::term::TAG_BOXED;
use crate::term::{header, header_arity, ptr_of, Kind, Term, SMALL_INT_MAX, SMALL_INT_MIN};

/// An integer term, read without copying: an immediate's value, or a big
/// integer's sign and magnitude (`u64` limbs, least significant first,
/// the top one not zero), borrowed from its heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntRef<'h> {
    /// An integer held in an immediate.
    Small(i64),
    /// A boxed big integer.
    Big {
        /// Whether it is negative.
        neg: bool,
        /// Its magnitude (at least one limb; the last is not zero).
        limbs: &'h [u64],
    },
}

impl<'h> Term<'h> {
    /// The integer this term holds, if it is one, without copying a big
    /// integer's limbs (`View::BigInt` makes a `BigInt` of them).
    #[inline]
    pub fn int_ref(self) -> Option<IntRef<'h>> {
        if let Some(v) = self.small_value() {
            return Some(IntRef::Small(v));
        }
        let h = self.boxed_header()?;
        let neg = match Kind::from_header(h) {
            Kind::BigPos => false,
            Kind::BigNeg => true,
            _ => return None,
        };
        let n = header_arity(h);
        // SAFETY: a boxed Term<'h> points at a live, immutable object for
        // 'h (invariant of `from_bits`); a big integer's header is followed
        // by its `n` limbs (term.rs's table), 8-byte aligned words.
        let limbs = unsafe { std::slice::from_raw_parts(ptr_of(self.bits()).add(1), n) };
        Some(IntRef::Big { neg, limbs })
    }
}

impl IntRef<'_> {
    /// The numeric order of two integers.
    pub fn compare(self, other: IntRef<'_>) -> Ordering {
        match (self, other) {
            (IntRef::Small(p), IntRef::Small(q)) => p.cmp(&q),
            // A big integer is outside the small range: above every small
            // one when positive, below when negative.
            (IntRef::Small(_), IntRef::Big { neg, .. }) => {
                if neg {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (IntRef::Big { neg, .. }, IntRef::Small(_)) => {
                if neg {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (IntRef::Big { neg: n1, limbs: l1 }, IntRef::Big { neg: n2, limbs: l2 }) => {
                let magnitudes = l1
                    .len()
                    .cmp(&l2.len())
                    .then_with(|| l1.iter().rev().cmp(l2.iter().rev()));
                match (n1, n2) {
                    (false, true) => Ordering::Greater,
                    (true, false) => Ordering::Less,
                    (false, false) => magnitudes,
                    (true, true) => magnitudes.reverse(),
                }
            }
        }
    }
}

/// The integer of sign `neg` and magnitude `limbs` (top limb not zero) as
/// an immediate, if it is in the small range.
#[inline]
fn small_of(neg: bool, limbs: &[u64]) -> Option<Term<'static>> {
    match *limbs {
        [] => Term::small_int(0),
        [m] if !neg && m <= SMALL_INT_MAX as u64 => Term::small_int(m as i64),
        [m] if neg && m <= SMALL_INT_MIN.unsigned_abs() => {
            Term::small_int((m as i64).wrapping_neg())
        }
        _ => None,
    }
}

/// Where [`Heap::int_by`]'s caller writes a magnitude, limb after limb
/// (least significant first), straight into the heap object: no zeroing
/// first, no copy after.
pub struct LimbWriter<'a> {
    ptr: *mut u64,
    len: usize,
    cap: usize,
    _words: PhantomData<&'a mut [u64]>,
}

impl LimbWriter<'_> {
    /// Appends the next limb.
    ///
    /// # Panics
    /// Past the number of limbs the writer was made for.
    #[inline]
    pub fn push(&mut self, limb: u64) {
        assert!(self.len < self.cap, "more limbs than allocated");
        // SAFETY: `ptr` points at `cap` writable words of one object
        // (`int_by`), and `len < cap`.
        unsafe { self.ptr.add(self.len).write(limb) };
        self.len += 1;
    }

    /// The limbs written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no limb was written yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Heap {
    /// The integer of sign `neg` (ignored for zero) whose magnitude `fill`
    /// pushes into a [`LimbWriter`] of at most `n` limbs, in its canonical
    /// form (as [`Heap::int_with`], without zeroing the limbs first:
    /// linear kernels write each limb once).
    pub fn int_by(&self, neg: bool, n: usize, fill: impl FnOnce(&mut LimbWriter<'_>)) -> Term<'_> {
        let p = self.alloc(1 + n);
        // SAFETY: `alloc` returned 1 + n writable words. The header makes
        // them an object of raw words (none is read as a term, by the
        // collector or a walk) before `fill` writes into the limbs through
        // the writer, which stays within them.
        let written = unsafe {
            p.write(header(Kind::BigPos, n));
            let mut w = LimbWriter {
                ptr: p.add(1),
                len: 0,
                cap: n,
                _words: PhantomData,
            };
            fill(&mut w);
            std::slice::from_raw_parts(p.add(1), w.len)
        };
        self.finish_int(p, n, neg, written)
    }

    /// The integer of sign `neg` (ignored for zero) and magnitude `limbs`
    /// (`u64`, least significant first; top zero limbs allowed), in its
    /// canonical form.
    pub fn int_from_limbs(&self, neg: bool, limbs: &[u64]) -> Term<'_> {
        self.int_by(neg, limbs.len(), |w| limbs.iter().for_each(|&l| w.push(l)))
    }

    /// The integer of sign `neg` (ignored for zero) whose magnitude `fill`
    /// writes into `n` zeroed limbs (least significant first; it may leave
    /// top limbs zero), in its canonical form: an immediate when it fits,
    /// else a big integer of exactly its limbs. The object is made in place
    /// (header, `n` limbs), then shrunk to what the value needs; the words
    /// it no longer needs go back to the heap when nothing was allocated
    /// after it (nothing is, unless `fill` allocates), else they become a
    /// dead object of their own, so the heap stays a walkable sequence of
    /// objects (`scan.rs`).
    pub fn int_with(&self, neg: bool, n: usize, fill: impl FnOnce(&mut [u64])) -> Term<'_> {
        let p = self.alloc(1 + n);
        // SAFETY: `alloc` returned 1 + n writable words, which nothing else
        // refers to yet. The header is written first and the limbs zeroed,
        // so the words are a well-formed (raw-word) object from here on;
        // `fill` sees them as an initialised `&mut [u64]` for its call only.
        let limbs = unsafe {
            p.write(header(Kind::BigPos, n));
            std::ptr::write_bytes(p.add(1), 0, n);
            let out = std::slice::from_raw_parts_mut(p.add(1), n);
            fill(out);
            out
        };
        self.finish_int(p, n, neg, limbs)
    }

    /// Ends the object of `n` limbs at `p` whose first limbs are `limbs`
    /// (the value; any after them are not part of it): an immediate when
    /// the value fits one, else the object shrunk to the value's limbs.
    fn finish_int(&self, p: *mut u64, n: usize, neg: bool, limbs: &[u64]) -> Term<'_> {
        let len = limbs.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1);
        if let Some(t) = small_of(neg, &limbs[..len]) {
            self.give_back(p, 1 + n, 0);
            return t;
        }
        let kind = if neg { Kind::BigNeg } else { Kind::BigPos };
        // SAFETY: `p` is the caller's object of `n` limbs (header first,
        // `limbs` the start of its payload); its header now counts the
        // `len` limbs that hold the value, and the words past them are
        // given back or made a dead object of their own.
        unsafe {
            p.write(header(kind, len));
            self.give_back(p, 1 + n, 1 + len);
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::View;
    use num_bigint::BigInt;

    fn big_of(t: Term<'_>) -> BigInt {
        match t.view() {
            View::Int(i) => BigInt::from(i),
            View::BigInt(b) => b,
            v => panic!("not an integer: {v:?}"),
        }
    }

    #[test]
    fn int_with_keeps_the_canonical_form_at_the_small_bounds() {
        let heap = Heap::new();
        let cases: [(bool, &[u64]); 9] = [
            (false, &[]),
            (true, &[]),
            (false, &[0, 0, 0]),
            (false, &[SMALL_INT_MAX as u64]),
            (false, &[SMALL_INT_MAX as u64 + 1]),
            (true, &[1 << 60]),
            (true, &[(1 << 60) + 1, 0]),
            (false, &[5, 7, 0, 0]),
            (true, &[u64::MAX, u64::MAX]),
        ];
        for (neg, limbs) in cases {
            let t = heap.int_from_limbs(neg, limbs);
            let mut want = BigInt::from_slice(
                num_bigint::Sign::Plus,
                &limbs
                    .iter()
                    .flat_map(|l| [*l as u32, (*l >> 32) as u32])
                    .collect::<Vec<_>>(),
            );
            if neg {
                want = -want;
            }
            assert_eq!(big_of(t), want, "{neg} {limbs:?}");
            // The same term as the BigInt constructor makes: same shape.
            let canonical = heap.bigint(&want);
            assert_eq!(t.is_immediate(), canonical.is_immediate());
            assert!(crate::equal_exact(t, canonical));
            match t.int_ref() {
                Some(IntRef::Small(v)) => assert_eq!(BigInt::from(v), want),
                Some(IntRef::Big { neg: n, limbs: l }) => {
                    assert_eq!(n, neg);
                    assert_ne!(*l.last().unwrap(), 0);
                    assert_eq!(l, &limbs[..l.len()]);
                }
                None => panic!("not an integer"),
            }
        }
    }

    #[test]
    #[should_panic(expected = "more limbs than allocated")]
    fn a_limb_writer_keeps_to_its_object() {
        let heap = Heap::new();
        heap.int_by(false, 2, |w| (0..3).for_each(|_| w.push(1)));
    }

    #[test]
    fn int_with_gives_back_what_it_does_not_use() {
        let heap = Heap::new();
        let before = heap.young_used();
        let t = heap.int_with(false, 10, |out| out[0] = 3);
        assert_eq!(t.int_ref(), Some(IntRef::Small(3)));
        assert_eq!(heap.young_used(), before);
        let t = heap.int_with(true, 10, |out| out[2] = 1);
        assert_eq!(heap.young_used(), before + 4);
        assert_eq!(big_of(t), -(BigInt::from(1u8) << 128u32));
        // Written limb by limb: fewer than allotted, zero top limbs.
        let t = heap.int_by(false, 6, |w| [0, 0, 9, 0].iter().for_each(|&l| w.push(l)));
        assert_eq!(big_of(t), BigInt::from(9u8) << 128u32);
        let t = heap.int_by(true, 3, |w| w.push(SMALL_INT_MIN.unsigned_abs()));
        assert_eq!(t.int_ref(), Some(IntRef::Small(SMALL_INT_MIN)));
        let t = heap.int_by(true, 3, |w| assert!(w.is_empty()));
        assert_eq!(t.int_ref(), Some(IntRef::Small(0)));
        assert!(Term::keyword("x").int_ref().is_none());
        assert!(heap.float(1.5).int_ref().is_none());
    }
}
