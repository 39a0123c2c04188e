//! Intrinsics: the common case of a few built-ins (small integers,
//! immediates) as plain functions that compiled code calls directly,
//! without `native::call`'s context, when a call's callee turns out to
//! be one of these built-ins (`map inc`, `filter even?`, `reduce +`).
//!
//! An intrinsic takes the call's one or two argument words (the second
//! is 0 for one argument) and returns the built-in's value, or 0 (never
//! a term word) for "not the common case": the caller then calls the
//! built-in the general way, which gives the same value or raises. So an
//! intrinsic must return exactly what the built-in returns wherever it
//! returns non-zero, and it must not allocate, panic or charge reductions
//! (the built-ins below charge none beyond the call's own).

use crate::tag;

/// `f(x, y)`: the value, or 0 to take the general path.
pub(crate) type Intrinsic = extern "C" fn(u64, u64) -> u64;

/// The intrinsic of built-in `ns/name` (as `builtins::def` names it), and
/// the number of arguments it takes.
pub(crate) fn of(name: &str) -> Option<(Intrinsic, u8)> {
    Some(match name {
        "lona.core/inc" => (inc, 1),
        "lona.core/dec" => (dec, 1),
        "lona.core/+" => (add, 2),
        "lona.core/-" => (sub, 2),
        "lona.core/<" => (lt, 2),
        "lona.core/>" => (gt, 2),
        "lona.core/<=" => (le, 2),
        "lona.core/>=" => (ge, 2),
        "lona.core/=" => (eq, 2),
        "lona.core/even?" => (even, 1),
        "lona.core/odd?" => (odd, 1),
        "lona.core/zero?" => (zero, 1),
        "lona.core/pos?" => (pos, 1),
        "lona.core/neg?" => (neg, 1),
        "lona.core/nil?" => (nil, 1),
        "lona.core/not" => (not, 1),
        "lona.core/identity" => (identity, 1),
        _ => return None,
    })
}

fn small(x: u64) -> Option<i64> {
    tag::is_small(x).then(|| tag::small_value(x))
}

fn small2(x: u64, y: u64) -> Option<(i64, i64)> {
    Some((small(x)?, small(y)?))
}

/// A small integer's word, or 0 outside the small range.
fn int(v: Option<i64>) -> u64 {
    match v {
        Some(v) if tag::small_value(tag::small(v)) == v => tag::small(v),
        _ => 0,
    }
}

fn test(v: Option<bool>) -> u64 {
    v.map_or(0, tag::bool)
}

extern "C" fn inc(x: u64, _: u64) -> u64 {
    int(small(x).and_then(|v| v.checked_add(1)))
}
extern "C" fn dec(x: u64, _: u64) -> u64 {
    int(small(x).and_then(|v| v.checked_sub(1)))
}
extern "C" fn add(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| a.checked_add(b)))
}
extern "C" fn sub(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| a.checked_sub(b)))
}
extern "C" fn lt(x: u64, y: u64) -> u64 {
    test(small2(x, y).map(|(a, b)| a < b))
}
extern "C" fn gt(x: u64, y: u64) -> u64 {
    test(small2(x, y).map(|(a, b)| a > b))
}
extern "C" fn le(x: u64, y: u64) -> u64 {
    test(small2(x, y).map(|(a, b)| a <= b))
}
extern "C" fn ge(x: u64, y: u64) -> u64 {
    test(small2(x, y).map(|(a, b)| a >= b))
}
/// Equal words are equal; two different immediates are not (as the
/// compiled `Eq`); anything boxed is the built-in's.
extern "C" fn eq(x: u64, y: u64) -> u64 {
    let imm = |w: u64| w & 0b110 != 0;
    if x == y {
        tag::TRUE
    } else if imm(x) && imm(y) {
        tag::FALSE
    } else {
        0
    }
}
extern "C" fn even(x: u64, _: u64) -> u64 {
    test(small(x).map(|v| v % 2 == 0))
}
extern "C" fn odd(x: u64, _: u64) -> u64 {
    test(small(x).map(|v| v % 2 != 0))
}
extern "C" fn zero(x: u64, _: u64) -> u64 {
    test(small(x).map(|v| v == 0))
}
extern "C" fn pos(x: u64, _: u64) -> u64 {
    test(small(x).map(|v| v > 0))
}
extern "C" fn neg(x: u64, _: u64) -> u64 {
    test(small(x).map(|v| v < 0))
}
extern "C" fn nil(x: u64, _: u64) -> u64 {
    tag::bool(x == tag::NIL)
}
extern "C" fn not(x: u64, _: u64) -> u64 {
    tag::bool(x == tag::NIL || x == tag::FALSE)
}
extern "C" fn identity(x: u64, _: u64) -> u64 {
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_cases_and_nothing_else() {
        let s = tag::small;
        assert_eq!(inc(s(41), 0), s(42));
        assert_eq!(add(s(2), s(3)), s(5));
        assert_eq!(sub(s(2), s(3)), s(-1));
        assert_eq!(lt(s(2), s(3)), tag::TRUE);
        assert_eq!(ge(s(2), s(3)), tag::FALSE);
        assert_eq!(even(s(-4), 0), tag::TRUE);
        assert_eq!(odd(s(-3), 0), tag::TRUE);
        assert_eq!(eq(tag::NIL, tag::FALSE), tag::FALSE);
        assert_eq!(not(tag::FALSE, 0), tag::TRUE);
        assert_eq!(nil(s(0), 0), tag::FALSE);
        // The edges of the small range go the general way (a big
        // integer), as do non-numbers.
        let max = (1i64 << 60) - 1;
        assert_eq!(tag::small_value(s(max)), max, "the small range's top");
        assert_eq!(inc(s(max), 0), 0);
        assert_eq!(dec(s(-max - 1), 0), 0);
        assert_eq!(add(s(max), s(1)), 0);
        assert_eq!(even(tag::NIL, 0), 0);
        assert_eq!(lt(s(1), tag::NIL), 0);
    }
}
