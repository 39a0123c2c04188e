//! Math beyond the four operations: roots and powers, rounding, float
//! conversion, `quot`/`rem`/`mod` on floats, and the bit operations on
//! integers of any size (two's complement, as Clojure's and Erlang's).

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use lona_term::{RawTerm, Term, View};

use super::{def, ANY};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::num::{self, Num, Op, MAX_BITS};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

/// A number as a float; `:badarith` for anything else.
fn float_of(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<f64, Raise> {
    match num::num_of(t(cx, r)) {
        Some(Num::Small(i)) => Ok(i as f64),
        Some(Num::Int(b)) => Ok(b.to_f64().unwrap_or(f64::NAN)),
        Some(Num::Float(f)) => Ok(f),
        None => Err(Raise::badarith()),
    }
}

/// An integer as a big integer; `:badarg` for anything else.
fn big_of(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<BigInt, Raise> {
    match t(cx, r).view() {
        View::Int(i) => Ok(BigInt::from(i)),
        View::BigInt(b) => Ok(b),
        _ => Err(Raise::badarg()),
    }
}

/// A finite float result, else `:badarith` (NaN and infinities are not
/// Lonala values).
fn float_result(cx: &mut BuiltinCx<'_, '_>, f: f64) -> NResult {
    if f.is_finite() {
        Ok(cx.heap.float(f).raw())
    } else {
        Err(Raise::badarith())
    }
}

macro_rules! float_fn {
    ($name:ident, $x:ident => $e:expr) => {
        fn $name(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
            let $x = float_of(cx, a[0])?;
            float_result(cx, $e)
        }
    };
}
float_fn!(sqrt, x => if x < 0.0 { f64::NAN } else { x.sqrt() });
float_fn!(exp, x => x.exp());
float_fn!(log, x => if x <= 0.0 { f64::NAN } else { x.ln() });
float_fn!(log10, x => if x <= 0.0 { f64::NAN } else { x.log10() });
float_fn!(sin, x => x.sin());
float_fn!(cos, x => x.cos());
float_fn!(tan, x => x.tan());
float_fn!(atan, x => x.atan());
float_fn!(to_float, x => x);

fn pow(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (x, y) = (float_of(cx, a[0])?, float_of(cx, a[1])?);
    float_result(cx, x.powf(y))
}
fn atan2(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (y, x) = (float_of(cx, a[0])?, float_of(cx, a[1])?);
    float_result(cx, y.atan2(x))
}

/// `(expt base n)`: an exact integer power for an integer base and a
/// non-negative integer exponent; a float otherwise (as `pow`).
fn expt(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (b, n) = (t(cx, a[0]), t(cx, a[1]));
    match (b.view(), n.view()) {
        (View::Int(_) | View::BigInt(_), View::Int(n)) if n >= 0 => {
            let base = big_of(cx, a[0])?;
            let bits = base.bits().max(1) * n as u64;
            if base.abs() > BigInt::from(1) && bits > MAX_BITS {
                return Err(Raise::system_limit());
            }
            cx.charge((bits / 4096) as usize);
            let r = num_traits::pow::Pow::pow(&base, n as u64);
            Ok(cx.heap.bigint(&r).raw())
        }
        (View::Int(_) | View::BigInt(_), View::BigInt(_)) => Err(Raise::system_limit()),
        _ => pow(cx, a),
    }
}

/// Rounds a float to an integer by `f`; an integer stays as it is.
fn to_int(cx: &mut BuiltinCx<'_, '_>, r: RawTerm, f: fn(f64) -> f64) -> NResult {
    if t(cx, r).int_ref().is_some() {
        return Ok(r);
    }
    match t(cx, r).view() {
        View::Int(_) | View::BigInt(_) => Ok(r),
        View::Float(x) => {
            let y = f(x);
            if y.abs() < 9.2e18 {
                Ok(cx.heap.int(y as i64).raw())
            } else {
                let b = num_bigint::BigInt::from(y as i128);
                if y.abs() < 1.7e38 {
                    Ok(cx.heap.bigint(&b).raw())
                } else {
                    // Beyond i128: through the decimal digits of the float.
                    let s = format!("{y:.0}");
                    let b: BigInt = s.parse().map_err(|_| Raise::badarith())?;
                    Ok(cx.heap.bigint(&b).raw())
                }
            }
        }
        _ => Err(Raise::badarith()),
    }
}

/// `(round x)`: the nearest integer, halves away from zero (Erlang's
/// `round/1`); an integer as it is.
fn round(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    to_int(cx, a[0], f64::round)
}

/// `(floor x)`, `(ceil x)`: a float rounded down/up, as a float (Clojure's
/// `Math/floor`); an integer as it is.
fn floor(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if t(cx, a[0]).int_ref().is_some() {
        return Ok(a[0]);
    }
    match t(cx, a[0]).view() {
        View::Int(_) | View::BigInt(_) => Ok(a[0]),
        View::Float(x) => float_result(cx, x.floor()),
        _ => Err(Raise::badarith()),
    }
}
fn ceil(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if t(cx, a[0]).int_ref().is_some() {
        return Ok(a[0]);
    }
    match t(cx, a[0]).view() {
        View::Int(_) | View::BigInt(_) => Ok(a[0]),
        View::Float(x) => float_result(cx, x.ceil()),
        _ => Err(Raise::badarith()),
    }
}

/// `quot`, `rem`, `mod` as Clojure's: integers exactly (any size), floats
/// too (`(mod 5.5 2)` is 1.5); `mod` has the sign of the divisor, `rem` of
/// the dividend; a zero divisor is `:badarith`.
fn divide(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], op: Op) -> NResult {
    let (x, y) = (t(cx, a[0]), t(cx, a[1]));
    // Not `view`: it makes a `BigInt` of a big integer's limbs.
    let float = |v: Term<'_>| v.int_ref().is_none() && matches!(v.view(), View::Float(_));
    if !float(x) && !float(y) {
        return Ok(num::arith(cx.heap, op, x, y)?.raw());
    }
    let (p, q) = (float_of(cx, a[0])?, float_of(cx, a[1])?);
    if q == 0.0 {
        return Err(Raise::badarith());
    }
    let r = match op {
        Op::Quot => (p / q).trunc(),
        Op::Rem => p % q,
        _ => {
            let r = p % q;
            if r != 0.0 && (r < 0.0) != (q < 0.0) {
                r + q
            } else {
                r
            }
        }
    };
    float_result(cx, r)
}
fn quot(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    divide(cx, a, Op::Quot)
}
fn rem(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    divide(cx, a, Op::Rem)
}
fn modulo(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    divide(cx, a, Op::Mod)
}

/// A bit operation over two or more integers.
fn bits(
    cx: &mut BuiltinCx<'_, '_>,
    a: &[RawTerm],
    small: fn(i64, i64) -> i64,
    big: fn(BigInt, BigInt) -> BigInt,
) -> NResult {
    let mut small_acc = match t(cx, a[0]).view() {
        View::Int(i) => Some(i),
        View::BigInt(_) => None,
        _ => return Err(Raise::badarg()),
    };
    let mut big_acc: Option<BigInt> = None;
    for r in &a[1..] {
        match (small_acc, t(cx, *r).view()) {
            (Some(x), View::Int(y)) => small_acc = Some(small(x, y)),
            _ => {
                let acc = match (small_acc.take(), big_acc.take()) {
                    (Some(x), _) => BigInt::from(x),
                    (None, Some(b)) => b,
                    (None, None) => big_of(cx, a[0])?,
                };
                let y = big_of(cx, *r)?;
                cx.charge(((acc.bits() + y.bits()) / 4096) as usize);
                big_acc = Some(big(acc, y));
            }
        }
    }
    match (small_acc, big_acc) {
        (Some(x), _) => Ok(cx.heap.int(x).raw()),
        (None, Some(b)) => Ok(cx.heap.bigint(&b).raw()),
        (None, None) => Ok(a[0]),
    }
}
fn bit_and(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    bits(cx, a, |x, y| x & y, |x, y| x & y)
}
fn bit_or(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    bits(cx, a, |x, y| x | y, |x, y| x | y)
}
fn bit_xor(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    bits(cx, a, |x, y| x ^ y, |x, y| x ^ y)
}
fn bit_and_not(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    bits(cx, a, |x, y| x & !y, |x, y| x & !y)
}
fn bit_not(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    match t(cx, a[0]).view() {
        View::Int(i) => Ok(cx.heap.int(!i).raw()),
        View::BigInt(b) => Ok(cx.heap.bigint(&!b).raw()),
        _ => Err(Raise::badarg()),
    }
}

/// Shifts `x` left by `n` bits (right for a negative `n`); a right shift
/// rounds toward negative infinity (arithmetic, as Clojure's and Erlang's).
fn shift(cx: &mut BuiltinCx<'_, '_>, x: RawTerm, n: RawTerm, left: bool) -> NResult {
    let x = big_of(cx, x)?;
    let n = match t(cx, n).view() {
        View::Int(n) => n,
        View::BigInt(b) if (b.is_negative() == left) => {
            // A huge shift right: everything shifted out.
            return Ok(cx.heap.int(if x.is_negative() { -1 } else { 0 }).raw());
        }
        View::BigInt(_) => return Err(Raise::system_limit()),
        _ => return Err(Raise::badarg()),
    };
    let n = if left {
        n
    } else {
        n.checked_neg().ok_or_else(Raise::system_limit)?
    };
    let r = if n >= 0 {
        if x.is_zero() {
            x
        } else {
            if x.bits() + n as u64 > MAX_BITS {
                return Err(Raise::system_limit());
            }
            cx.charge((x.bits() + n as u64) as usize / 4096);
            x << n as u64
        }
    } else {
        let m = n.unsigned_abs();
        if m >= x.bits() {
            BigInt::from(if x.is_negative() { -1 } else { 0 })
        } else {
            cx.charge(x.bits() as usize / 4096);
            x >> m
        }
    };
    Ok(cx.heap.bigint(&r).raw())
}
fn shift_left(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    shift(cx, a[0], a[1], true)
}
fn shift_right(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    shift(cx, a[0], a[1], false)
}
/// `(bit-test x n)`: whether bit `n` of `x` (two's complement) is set.
fn bit_test(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = big_of(cx, a[0])?;
    let n = t(cx, a[1])
        .as_i64()
        .filter(|n| *n >= 0)
        .ok_or_else(Raise::badarg)?;
    Ok(Term::bool(x.bit(n as u64)).raw())
}

pub(super) fn install(core: &'static Namespace) {
    def(core, "sqrt", 1, 1, sqrt);
    def(core, "exp", 1, 1, exp);
    def(core, "log", 1, 1, log);
    def(core, "log10", 1, 1, log10);
    def(core, "sin", 1, 1, sin);
    def(core, "cos", 1, 1, cos);
    def(core, "tan", 1, 1, tan);
    def(core, "atan", 1, 1, atan);
    def(core, "atan2", 2, 2, atan2);
    def(core, "pow", 2, 2, pow);
    def(core, "expt", 2, 2, expt);
    def(core, "float", 1, 1, to_float);
    def(core, "double", 1, 1, to_float);
    def(core, "round", 1, 1, round);
    def(core, "floor", 1, 1, floor);
    def(core, "ceil", 1, 1, ceil);
    def(core, "quot", 2, 2, quot);
    def(core, "rem", 2, 2, rem);
    def(core, "mod", 2, 2, modulo);
    def(core, "bit-and", 2, ANY, bit_and);
    def(core, "bit-or", 2, ANY, bit_or);
    def(core, "bit-xor", 2, ANY, bit_xor);
    def(core, "bit-and-not", 2, ANY, bit_and_not);
    def(core, "bit-not", 1, 1, bit_not);
    def(core, "bit-shift-left", 2, 2, shift_left);
    def(core, "bit-shift-right", 2, 2, shift_right);
    def(core, "bit-test", 2, 2, bit_test);
}
