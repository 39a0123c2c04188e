//! Integers by their limbs: reading a big integer's magnitude where it lies
//! on its heap ([`Term::int_ref`]) and comparing two integers so, without
//! the `BigInt` (a `Vec`) a view makes. Writing one straight onto a heap
//! is `heap.rs`'s ([`crate::Heap::int_by`], [`crate::Heap::int_with`],
//! [`crate::LimbWriter`]); arithmetic on limbs is `lona-machine`'s
//! (`num.rs`, `num/limbs.rs`).
//!
//! Every integer is kept in its smallest form (term.rs): a value in
//! `SMALL_INT_MIN..=SMALL_INT_MAX` is an immediate, any other a boxed
//! `BigPos`/`BigNeg` whose top limb is not zero, so two equal integers
//! have equal `IntRef`s.

use std::cmp::Ordering;

use crate::term::{header_arity, ptr_of, Kind, Term};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::{SMALL_INT_MAX, SMALL_INT_MIN};
    use crate::{Heap, View};
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
            let small = want >= BigInt::from(SMALL_INT_MIN) && want <= BigInt::from(SMALL_INT_MAX);
            match t.int_ref() {
                Some(IntRef::Small(v)) => {
                    assert!(small);
                    assert_eq!(BigInt::from(v), want);
                }
                Some(IntRef::Big { neg: n, limbs: l }) => {
                    assert!(!small);
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
