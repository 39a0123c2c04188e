//! Arithmetic on any numbers: the slow paths behind the interpreter's
//! small-integer fast paths, and the numeric built-ins.
//!
//! Integers never wrap: results outside the small range become big
//! integers (`num-bigint`), and big results that fit again are small
//! (lona-term keeps every integer in its smallest form). An integer and a
//! float combine as floats. `/` always gives a float (Erlang's `/`);
//! `quot`, `rem` and `mod` are for integers. Division by zero, and any
//! operand that is not a number, raise `:badarith`.
//!
//! An integer has at most [`MAX_BITS`] bits: an operation whose result
//! would be larger raises `:system-limit` (Erlang raises `system_limit`
//! past about 32 Mbit), before the work is done where that can be known,
//! so that a loop squaring a number ends in an error instead of filling
//! the node's memory.

use std::cmp::Ordering;

use lona_term::{Heap, IntRef, Term, View};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

use crate::raise::Raise;

mod limbs;

/// The most bits an integer may have: 16 Mbit (2 MB). Past it, an
/// arithmetic operation, `expt` or `bit-shift-left` raises
/// `:system-limit`.
pub const MAX_BITS: u64 = 1 << 24;

/// Whether an integer of `digits` decimal digits (without leading zeros)
/// surely has more than `max_bits` bits: it is at least 10^(digits - 1),
/// which has more bits once (digits - 1) log2(10) >= max_bits. Checked
/// before converting decimal text, which takes time quadratic in its
/// length (`parse-int`); a count it passes may still be one digit too
/// many, which the exact check after the conversion refuses.
pub(crate) fn decimal_surely_over(digits: usize, max_bits: u64) -> bool {
    // log2(10) = 3.32192809488736234787..., rounded down: a lower bound.
    const LOG2_10_E16: u128 = 33_219_280_948_873_623;
    let d = digits.saturating_sub(1) as u128;
    d * LOG2_10_E16 >= u128::from(max_bits) * 10_000_000_000_000_000
}

/// The integer decimal text `s` spells (an optional sign, then digits,
/// `_` allowed between them, as `num-bigint` reads them), if it has at
/// most `max_bits` bits; a longer one is refused by its length before
/// any conversion ([`decimal_surely_over`]). Leading zeros count nothing.
pub(crate) fn parse_decimal(s: &str, max_bits: u64) -> Option<BigInt> {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = unsigned
        .trim_start_matches(['0', '_'])
        .bytes()
        .filter(u8::is_ascii_digit)
        .count();
    if decimal_surely_over(digits, max_bits) {
        return None;
    }
    let parsed = if digits > SPLIT_DIGITS {
        parse_long_decimal(s)
    } else {
        None
    };
    parsed
        .or_else(|| s.parse::<BigInt>().ok())
        .filter(|v| v.bits() <= max_bits)
}

/// Longer decimal text than this is converted by halves
/// ([`parse_long_decimal`]).
const SPLIT_DIGITS: usize = 4096;

/// Decimal text of many digits, converted in time below quadratic:
/// `num-bigint` converts digit by digit (5 M digits took 30 s, a worker
/// that long in one built-in), so the digits are split in halves, each
/// converted so, and joined as `high * 10^k + low` (its multiplication is
/// Karatsuba's and Toom's; the powers of ten are computed once a level).
/// `None` for text this does not take (anything but an optional sign then
/// digits with `_` between them, as `num-bigint` reads them): the caller
/// parses it the plain way.
fn parse_long_decimal(s: &str) -> Option<BigInt> {
    let (negative, unsigned) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if !unsigned.as_bytes().first()?.is_ascii_digit()
        || !unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let digits: Vec<u8> = unsigned
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let mut powers = std::collections::HashMap::new();
    let magnitude = by_halves(&digits, &mut powers);
    let sign = if negative {
        num_bigint::Sign::Minus
    } else {
        num_bigint::Sign::Plus
    };
    Some(BigInt::from_biguint(sign, magnitude))
}

fn by_halves(
    digits: &[u8],
    powers: &mut std::collections::HashMap<usize, num_bigint::BigUint>,
) -> num_bigint::BigUint {
    if digits.len() <= SPLIT_DIGITS {
        return num_bigint::BigUint::from_radix_be(digits, 10).unwrap_or_default();
    }
    let k = digits.len() / 2;
    let (high, low) = digits.split_at(digits.len() - k);
    let high = by_halves(high, powers);
    let low = by_halves(low, powers);
    let ten_k = powers
        .entry(k)
        .or_insert_with(|| num_bigint::BigUint::from(10u32).pow(k as u32));
    high * &*ten_k + low
}

/// An arithmetic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (always a float)
    Div,
    /// `quot`: integer division truncating toward zero.
    Quot,
    /// `rem`: remainder with the sign of the dividend.
    Rem,
    /// `mod`: remainder with the sign of the divisor.
    Mod,
}

/// A number read out of a term.
#[derive(Clone, Debug)]
pub enum Num {
    /// An integer (small or big).
    Int(BigInt),
    /// A small integer, kept apart for speed.
    Small(i64),
    /// A float.
    Float(f64),
}

/// The number a term holds, if any.
pub fn num_of(t: Term<'_>) -> Option<Num> {
    match t.view() {
        View::Int(i) => Some(Num::Small(i)),
        View::BigInt(b) => Some(Num::Int(b)),
        View::Float(f) => Some(Num::Float(f)),
        _ => None,
    }
}

impl Num {
    fn to_f64(&self) -> f64 {
        match self {
            Num::Small(i) => *i as f64,
            Num::Int(b) => b.to_f64().unwrap_or(f64::NAN),
            Num::Float(f) => *f,
        }
    }
    fn to_big(&self) -> BigInt {
        match self {
            Num::Small(i) => BigInt::from(*i),
            Num::Int(b) => b.clone(),
            Num::Float(_) => unreachable!("float as integer"),
        }
    }
}

/// `a op b`, allocating the result on `heap` when it is not an immediate.
pub fn arith<'h>(heap: &'h Heap, op: Op, a: Term<'_>, b: Term<'_>) -> Result<Term<'h>, Raise> {
    if let (Some(x), Some(y)) = (a.int_ref(), b.int_ref()) {
        if op != Op::Div {
            return int_arith(heap, op, x, y);
        }
        // `/` of two integers that divide exactly is the integer (Clojure's
        // `(/ 42 2)` is 21); otherwise a float (Lonala has no ratios).
        if divides(y, x) {
            return int_arith(heap, Op::Quot, x, y);
        }
    }
    let (Some(x), Some(y)) = (num_of(a), num_of(b)) else {
        return Err(Raise::badarith());
    };
    // Here one of them is a float, or the operation is `/`.
    if matches!(op, Op::Quot | Op::Rem | Op::Mod) {
        return Err(Raise::badarith());
    }
    let (p, q) = (x.to_f64(), y.to_f64());
    let r = match op {
        Op::Add => p + q,
        Op::Sub => p - q,
        Op::Mul => p * q,
        Op::Div => {
            if q == 0.0 {
                return Err(Raise::badarith());
            }
            p / q
        }
        _ => unreachable!(),
    };
    if !r.is_finite() {
        return Err(Raise::badarith());
    }
    Ok(heap.float(r))
}

/// Whether `y` is not zero and divides `x` exactly.
fn divides(y: IntRef<'_>, x: IntRef<'_>) -> bool {
    if let (IntRef::Small(p), IntRef::Small(q)) = (x, y) {
        // No limbs and no scratch for the common case. `i64::MIN / -1`
        // has no `i64` remainder but divides (its quotient is big).
        return q != 0 && p.checked_rem(q).is_none_or(|r| r == 0);
    }
    let (mut xs, mut ys) = ([0u64; 1], [0u64; 1]);
    let (_, xm) = magnitude(x, &mut xs);
    let (_, ym) = magnitude(y, &mut ys);
    if ym.is_empty() {
        return false;
    }
    if limbs::cmp(xm, ym) == Ordering::Less {
        return xm.is_empty();
    }
    let mut r = vec![0u64; ym.len()];
    limbs::divrem(xm, ym, None, Some(&mut r));
    limbs::trim(&r).is_empty()
}

/// `x op y` on two integers (not `/`), on their limbs where they lie
/// ([`limbs`]): the result is written straight onto `heap`, in its
/// canonical form (an immediate when it fits).
fn int_arith<'h>(heap: &'h Heap, op: Op, x: IntRef<'_>, y: IntRef<'_>) -> Result<Term<'h>, Raise> {
    if let (IntRef::Small(p), IntRef::Small(q)) = (x, y) {
        if let Some(r) = small_arith(op, p, q)? {
            return Ok(heap.int(r));
        }
    }
    let (mut xs, mut ys) = ([0u64; 1], [0u64; 1]);
    let (xn, xm) = magnitude(x, &mut xs);
    let (yn, ym) = magnitude(y, &mut ys);
    let r = match op {
        Op::Add => add_signed(heap, xn, xm, yn, ym),
        Op::Sub => add_signed(heap, xn, xm, !yn, ym),
        Op::Mul => {
            if xm.is_empty() || ym.is_empty() {
                return Ok(heap.int(0));
            }
            // A product has the bits of its factors, or one fewer: refuse
            // before multiplying what would be too large.
            if limbs::bits(xm) + limbs::bits(ym) - 1 > MAX_BITS {
                return Err(Raise::system_limit());
            }
            let (long, short) = if xm.len() >= ym.len() {
                (xm, ym)
            } else {
                (ym, xm)
            };
            match *short {
                [m] => heap.int_by(xn != yn, long.len() + 1, |w| limbs::mul_limb(w, long, m)),
                _ => heap.int_with(xn != yn, xm.len() + ym.len(), |out| limbs::mul(out, xm, ym)),
            }
        }
        Op::Quot | Op::Rem | Op::Mod => {
            if ym.is_empty() {
                return Err(Raise::badarith());
            }
            if limbs::cmp(xm, ym) == Ordering::Less {
                // |x| < |y|: the quotient is 0 and the remainder x.
                return Ok(match op {
                    Op::Quot => heap.int(0),
                    Op::Mod if !xm.is_empty() && xn != yn => {
                        heap.int_by(yn, ym.len(), |w| limbs::sub(w, ym, xm))
                    }
                    _ => heap.int_from_limbs(xn, xm),
                });
            }
            match op {
                Op::Quot => heap.int_with(xn != yn, xm.len() - ym.len() + 1, |q| {
                    limbs::divrem(xm, ym, Some(q), None)
                }),
                Op::Rem => heap.int_with(xn, ym.len(), |r| limbs::divrem(xm, ym, None, Some(r))),
                _ => {
                    let mut r = vec![0u64; ym.len()];
                    limbs::divrem(xm, ym, None, Some(&mut r));
                    let r = limbs::trim(&r);
                    if !r.is_empty() && xn != yn {
                        heap.int_by(yn, ym.len(), |w| limbs::sub(w, ym, r))
                    } else {
                        heap.int_from_limbs(xn, r)
                    }
                }
            }
        }
        Op::Div => unreachable!("`/` is not integer arithmetic"),
    };
    match r.int_ref() {
        Some(IntRef::Big { limbs: l, .. }) if limbs::bits(l) > MAX_BITS => {
            Err(Raise::system_limit())
        }
        _ => Ok(r),
    }
}

/// `p op q` on two small integers, or `None` if it overflows `i64`.
fn small_arith(op: Op, p: i64, q: i64) -> Result<Option<i64>, Raise> {
    Ok(match op {
        Op::Add => p.checked_add(q),
        Op::Sub => p.checked_sub(q),
        Op::Mul => p.checked_mul(q),
        Op::Quot | Op::Rem | Op::Mod if q == 0 => return Err(Raise::badarith()),
        Op::Quot => p.checked_div(q),
        Op::Rem => p.checked_rem(q),
        Op::Mod => p.checked_rem(q).map(|r| {
            if r != 0 && (r < 0) != (q < 0) {
                r + q
            } else {
                r
            }
        }),
        Op::Div => unreachable!("`/` is not integer arithmetic"),
    })
}

/// An integer's sign (negative?) and magnitude; a small one's magnitude
/// is put in `buf`.
#[inline]
fn magnitude<'a>(x: IntRef<'a>, buf: &'a mut [u64; 1]) -> (bool, &'a [u64]) {
    match x {
        IntRef::Small(v) => {
            buf[0] = v.unsigned_abs();
            (v < 0, if v == 0 { &buf[..0] } else { &buf[..] })
        }
        IntRef::Big { neg, limbs } => (neg, limbs),
    }
}

/// `(-1)^xn xm + (-1)^yn ym` onto `heap`.
fn add_signed<'h>(heap: &'h Heap, xn: bool, xm: &[u64], yn: bool, ym: &[u64]) -> Term<'h> {
    if xn == yn {
        return heap.int_by(xn, xm.len().max(ym.len()) + 1, |w| limbs::add(w, xm, ym));
    }
    match limbs::cmp(xm, ym) {
        Ordering::Equal => heap.int(0),
        Ordering::Greater => heap.int_by(xn, xm.len(), |w| limbs::sub(w, xm, ym)),
        Ordering::Less => heap.int_by(yn, ym.len(), |w| limbs::sub(w, ym, xm)),
    }
}

/// `-a`
pub fn negate<'h>(heap: &'h Heap, a: Term<'_>) -> Result<Term<'h>, Raise> {
    arith(heap, Op::Sub, Term::small_int(0).unwrap_or(Term::NIL), a)
}

/// The numeric order of two numbers (`1 == 1.0`), or the term order if
/// either is not a number (so `<` works on any two terms, as in Erlang).
pub fn compare_values(a: Term<'_>, b: Term<'_>) -> Ordering {
    let (x, y) = (a.bits(), b.bits());
    if crate::tag::both_small(x, y) {
        return (x as i64).cmp(&(y as i64));
    }
    if let (Some(x), Some(y)) = (a.int_ref(), b.int_ref()) {
        return x.compare(y);
    }
    match (num_of(a), num_of(b)) {
        (Some(x), Some(y)) => compare_nums(&x, &y),
        _ => lona_term::compare(a, b),
    }
}

/// How `<`, `<=`, `>` and `>=` see two values: [`compare_values`], except
/// that NaN is unordered against every number (IEEE 754, as Clojure's and
/// the JVM's comparisons): `None`, and each of them is false. (`compare`,
/// `sort`, `=` and map keys keep the total order, where NaN is above
/// every number.)
pub fn relation(a: Term<'_>, b: Term<'_>) -> Option<Ordering> {
    if crate::tag::both_small(a.bits(), b.bits()) {
        return Some((a.bits() as i64).cmp(&(b.bits() as i64)));
    }
    if let (Some(x), Some(y)) = (a.int_ref(), b.int_ref()) {
        return Some(x.compare(y));
    }
    match (num_of(a), num_of(b)) {
        (Some(Num::Float(f)), Some(_)) | (Some(_), Some(Num::Float(f))) if f.is_nan() => None,
        (Some(x), Some(y)) => Some(compare_nums(&x, &y)),
        _ => Some(lona_term::compare(a, b)),
    }
}

fn compare_nums(x: &Num, y: &Num) -> Ordering {
    match (x, y) {
        (Num::Small(p), Num::Small(q)) => p.cmp(q),
        (Num::Float(_), _) | (_, Num::Float(_)) => {
            let (p, q) = (x.to_f64(), y.to_f64());
            p.partial_cmp(&q).unwrap_or_else(|| p.total_cmp(&q))
        }
        _ => x.to_big().cmp(&y.to_big()),
    }
}

/// `(== a b)`: numeric equality (NaN equals nothing, itself included, as
/// IEEE 754 has it); `:badarith` unless both are numbers.
pub fn num_eq(a: Term<'_>, b: Term<'_>) -> Result<bool, Raise> {
    if let (Some(x), Some(y)) = (a.int_ref(), b.int_ref()) {
        return Ok(x.compare(y) == Ordering::Equal);
    }
    match (num_of(a), num_of(b)) {
        (Some(Num::Float(f)), Some(_)) | (Some(_), Some(Num::Float(f))) if f.is_nan() => Ok(false),
        (Some(x), Some(y)) => Ok(compare_nums(&x, &y) == Ordering::Equal),
        _ => Err(Raise::badarith()),
    }
}

/// `(abs a)`
pub fn abs<'h>(heap: &'h Heap, a: Term<'_>) -> Result<Term<'h>, Raise> {
    match num_of(a) {
        Some(Num::Small(i)) => Ok(heap.bigint(&BigInt::from(i).abs())),
        Some(Num::Int(b)) => Ok(heap.bigint(&b.abs())),
        Some(Num::Float(f)) => Ok(heap.float(f.abs())),
        None => Err(Raise::badarith()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lona_term::{SMALL_INT_MAX, SMALL_INT_MIN};
    use num_traits::Zero;
    use proptest::prelude::*;

    /// Integers of every shape: zero, around the small range's bounds and
    /// a limb's, and big ones of random sizes and signs (limbs that carry
    /// and borrow included).
    fn int() -> impl Strategy<Value = BigInt> {
        let edge = prop::sample::select(vec![
            BigInt::from(0),
            BigInt::from(1),
            BigInt::from(-1),
            BigInt::from(SMALL_INT_MAX),
            BigInt::from(SMALL_INT_MAX) + 1,
            BigInt::from(SMALL_INT_MIN),
            BigInt::from(SMALL_INT_MIN) - 1,
            BigInt::from(u64::MAX),
            -BigInt::from(u64::MAX),
            BigInt::from(1u8) << 64u32,
            -(BigInt::from(1u8) << 64u32),
            BigInt::from(1u8) << 120u32,
        ]);
        let limb = prop_oneof![Just(0u64), Just(u64::MAX), Just(1u64 << 63), any::<u64>()];
        let big = (
            any::<bool>(),
            prop_oneof![4 => prop::collection::vec(limb.clone(), 1..5), 1 => prop::collection::vec(limb, 30..150)],
        )
            .prop_map(|(neg, limbs)| {
                let m = limbs::to_biguint(&limbs);
                let v = BigInt::from(m);
                if neg { -v } else { v }
            });
        prop_oneof![2 => edge, 2 => any::<i64>().prop_map(BigInt::from), 1 => (-1000i64..1000).prop_map(BigInt::from), 4 => big]
    }

    fn big_of(t: Term<'_>) -> BigInt {
        match t.view() {
            View::Int(i) => BigInt::from(i),
            View::BigInt(b) => b,
            v => panic!("not an integer: {v:?}"),
        }
    }

    /// What `op` gives on two integers by `num-bigint`: the oracle.
    fn oracle(op: Op, p: &BigInt, q: &BigInt) -> Option<BigInt> {
        Some(match op {
            Op::Add => p + q,
            Op::Sub => p - q,
            Op::Mul => p * q,
            _ if q.is_zero() => return None,
            Op::Quot => p / q,
            Op::Rem => p % q,
            Op::Mod => {
                let r = p % q;
                if !r.is_zero() && r.is_negative() != q.is_negative() {
                    r + q
                } else {
                    r
                }
            }
            Op::Div => unreachable!(),
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Integer arithmetic on heap terms (on their limbs) gives what
        /// `num-bigint` gives, in the canonical form: the same term as
        /// `Heap::bigint` of the oracle's value (an immediate when small).
        #[test]
        fn integer_arithmetic_agrees_with_num_bigint(p in int(), q in int()) {
            let heap = Heap::new();
            let (a, b) = (heap.bigint(&p), heap.bigint(&q));
            for op in [Op::Add, Op::Sub, Op::Mul, Op::Quot, Op::Rem, Op::Mod] {
                let got = arith(&heap, op, a, b);
                match oracle(op, &p, &q) {
                    None => prop_assert!(got.is_err(), "{op:?} {p} {q}"),
                    Some(want) => {
                        let got = got.map_err(|e| format!("{e:?}")).unwrap();
                        prop_assert_eq!(big_of(got), want.clone(), "{:?} {} {}", op, p, q);
                        let canonical = heap.bigint(&want);
                        let small = i64::try_from(&want).is_ok_and(|v| (SMALL_INT_MIN..=SMALL_INT_MAX).contains(&v));
                        prop_assert_eq!(got.is_immediate(), small);
                        prop_assert_eq!(canonical.is_immediate(), small);
                        prop_assert!(lona_term::equal_exact(got, canonical));
                    }
                }
            }
            // `/`: the integer when it divides exactly, else a float.
            let got = arith(&heap, Op::Div, a, b);
            if q.is_zero() {
                prop_assert!(got.is_err());
            } else if (&p % &q).is_zero() {
                prop_assert_eq!(big_of(got.map_err(|e| format!("{e:?}")).unwrap()), &p / &q);
            } else {
                // A float, `:badarith` when it is not finite.
                let want = p.to_f64().unwrap_or(f64::NAN) / q.to_f64().unwrap_or(f64::NAN);
                match got {
                    Ok(got) => prop_assert!(matches!(got.view(), View::Float(f) if f == want)),
                    Err(_) => prop_assert!(!want.is_finite()),
                }
            }
            let want = p.cmp(&q);
            prop_assert_eq!(compare_values(a, b), want);
            prop_assert_eq!(relation(a, b), Some(want));
            prop_assert_eq!(num_eq(a, b).map_err(|e| format!("{e:?}")).unwrap(), want == Ordering::Equal);
            prop_assert_eq!(lona_term::compare(a, b), want);
        }
    }

    /// The cap holds on the limb paths: a product past it is refused
    /// before it is made, a sum past it after.
    #[test]
    fn integers_past_the_cap_raise_system_limit() {
        let heap = Heap::new();
        let top = heap.bigint(&((BigInt::from(1u8) << (MAX_BITS - 1)) + 1));
        let limit = format!("{:?}", Raise::system_limit());
        let e = arith(&heap, Op::Add, top, top).unwrap_err();
        assert_eq!(format!("{e:?}"), limit);
        let e = arith(&heap, Op::Mul, top, heap.int(2)).unwrap_err();
        assert_eq!(format!("{e:?}"), limit);
        assert!(arith(&heap, Op::Sub, top, top).is_ok());
        assert!(arith(&heap, Op::Mul, top, heap.int(1)).is_ok());
    }

    /// The largest integer of `MAX_BITS` bits has 5,050,446 digits
    /// (16,777,216 log10(2) = 5,050,445.9): that many digits are
    /// converted (and checked exactly), one more is refused unread.
    #[test]
    fn the_digit_bound_is_the_cap_s_own() {
        assert!(!decimal_surely_over(0, MAX_BITS));
        assert!(!decimal_surely_over(5_050_446, MAX_BITS));
        assert!(decimal_surely_over(5_050_447, MAX_BITS));
        assert!(decimal_surely_over(usize::MAX, MAX_BITS));
        // 64 bits: 2^64 - 1 has 20 digits, and 10^20 is past it.
        assert!(!decimal_surely_over(20, 64));
        assert!(decimal_surely_over(21, 64));
    }

    /// At a small cap: the exact check after the conversion, the digit
    /// bound before it, and what does not count as digits.
    #[test]
    fn long_decimals_convert_by_halves_as_digit_by_digit() {
        // Lengths around the split, and signs, zeros and underscores: the
        // same value as num-bigint's own conversion.
        for len in [4095usize, 4096, 4097, 8193, 20_011] {
            let digits: String = (0..len)
                .map(|i| char::from(b'0' + ((i * 7 + i / 3) % 10) as u8))
                .collect();
            for text in [
                digits.clone(),
                format!("-{digits}"),
                format!("+{digits}"),
                format!("000{digits}"),
                format!("1_{digits}_2"),
            ] {
                let plain: BigInt = text.parse().unwrap();
                assert_eq!(parse_long_decimal(&text), Some(plain.clone()), "{len}");
                assert_eq!(parse_decimal(&text, MAX_BITS), Some(plain));
            }
        }
        for bad in ["_1", "--1", "+-1", "1a", "", "-"] {
            assert_eq!(parse_long_decimal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parse_decimal_keeps_to_its_cap() {
        let p = |s: &str| parse_decimal(s, 64).map(|v| v.to_string());
        assert_eq!(
            p("18446744073709551615").as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(
            p("-18446744073709551615").as_deref(),
            Some("-18446744073709551615")
        );
        // 20 digits, 65 bits: converted, then refused.
        assert_eq!(p("18446744073709551616"), None);
        assert_eq!(p("99999999999999999999"), None);
        // 21 digits: refused by the count.
        assert_eq!(p("100000000000000000000"), None);
        // Leading zeros and a sign carry no bits.
        assert_eq!(p("+0000000000000000000000000042").as_deref(), Some("42"));
        assert_eq!(
            p("-0_000_000_000_000_000_000_000_001").as_deref(),
            Some("-1")
        );
        assert_eq!(p("1_000").as_deref(), Some("1000"));
        // Not integers, whatever their length.
        assert_eq!(p(""), None);
        assert_eq!(p("-"), None);
        assert_eq!(p("12a"), None);
        assert_eq!(p(&"9".repeat(1000)), None);
    }
}
