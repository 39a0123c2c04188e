//! Intrinsics: the common case of a few built-ins (small integers,
//! immediates) as plain functions that compiled code calls directly,
//! without `callout::call`'s context, when a call's callee turns out to
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
        "lona.core/*" => (mul, 2),
        "lona.core/quot" => (quot, 2),
        "lona.core/rem" => (rem, 2),
        "lona.core/mod" => (modulo, 2),
        "lona.core/bit-and" => (bit_and, 2),
        "lona.core/bit-or" => (bit_or, 2),
        "lona.core/bit-xor" => (bit_xor, 2),
        "lona.core/bit-shift-left" => (shift_left, 2),
        "lona.core/bit-shift-right" => (shift_right, 2),
        // The starred built-ins the prelude's `count` calls
        // (`builtins/seq.rs`, `WRAPPED`).
        "lona.core/count" => (count, 1),
        "lona.core/has-lazy?" => (has_lazy, 1),
        // And those of the prelude's `nth`.
        "lona.core/nth" => (nth, 2),
        "lona.core/int?" | "lona.core/integer?" => (is_int, 1),
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

/// `(count* x)` of `nil`, `()`, a vector or a string of under 64 bytes
/// (characters: the bytes that do not continue one); else the general
/// way (a list is walked and charged for, a shared string is elsewhere).
extern "C" fn count(x: u64, _: u64) -> u64 {
    if x == tag::NIL || x == tag::EMPTY_LIST {
        return tag::small(0);
    }
    let Some(h) = tag::boxed_header(x) else {
        return 0;
    };
    match h & 0xff {
        tag::VECTOR_HEADER => tag::small((h >> 8) as i64),
        tag::STR_HEADER => {
            // SAFETY: a boxed word of a live heap (every word compiled
            // code passes is one) with a string's header: payload word 0
            // is the byte length, the bytes follow inside the object
            // (`lona_term`'s layout, `term.rs`).
            let bytes = unsafe {
                let p = x as usize as *const u64;
                std::slice::from_raw_parts(p.add(2) as *const u8, *p.add(1) as usize)
            };
            tag::small(bytes.iter().filter(|&&b| b & 0xc0 != 0x80).count() as i64)
        }
        _ => 0,
    }
}

/// `(nth* v i)` of a vector and a small index inside it: the element;
/// else the general way (a list is walked and charged for; out of range
/// raises).
extern "C" fn nth(x: u64, i: u64) -> u64 {
    let Some(i) = small(i).filter(|&i| i >= 0) else {
        return 0;
    };
    match tag::boxed_header(x) {
        Some(h) if h & 0xff == tag::VECTOR_HEADER && (i as u64) < h >> 8 => {
            // SAFETY: a boxed word of a live heap with a vector's header
            // of `h >> 8` elements, the payload words after the header
            // (`lona_term`'s layout); `i` is below that count.
            unsafe { *(x as usize as *const u64).add(1 + i as usize) }
        }
        _ => 0,
    }
}

/// `(int? x)` of an immediate: a small integer or not; a boxed term (a
/// big integer among them) the general way.
extern "C" fn is_int(x: u64, _: u64) -> u64 {
    if tag::is_small(x) {
        tag::TRUE
    } else if x & 0b111 == 0 {
        0
    } else {
        tag::FALSE
    }
}

/// `(has-lazy? x)` of anything but a cons cell (walked, charged for) and
/// a closure (a lazy sequence is one): `false`.
extern "C" fn has_lazy(x: u64, _: u64) -> u64 {
    if tag::is_cons(x) || tag::closure_code(x).is_some() {
        0
    } else {
        tag::FALSE
    }
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

extern "C" fn mul(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| a.checked_mul(b)))
}
/// Division by zero is the built-in's (it raises).
extern "C" fn quot(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| a.checked_div(b)))
}
extern "C" fn rem(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| a.checked_rem(b)))
}
/// The remainder with the divisor's sign (`num::arith`'s `Mod`).
extern "C" fn modulo(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, b)| {
        a.checked_rem(b).map(|r| {
            if r != 0 && (r < 0) != (b < 0) {
                r + b
            } else {
                r
            }
        })
    }))
}
extern "C" fn bit_and(x: u64, y: u64) -> u64 {
    int(small2(x, y).map(|(a, b)| a & b))
}
extern "C" fn bit_or(x: u64, y: u64) -> u64 {
    int(small2(x, y).map(|(a, b)| a | b))
}
extern "C" fn bit_xor(x: u64, y: u64) -> u64 {
    int(small2(x, y).map(|(a, b)| a ^ b))
}
/// A shift of 0 to 63 places whose result is a small integer; anything
/// else (a negative count, a big result) is the built-in's.
extern "C" fn shift_left(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, n)| {
        let n = u32::try_from(n).ok().filter(|n| *n < 64)?;
        let r = a.checked_shl(n)?;
        (r >> n == a).then_some(r)
    }))
}
/// Arithmetic: rounds toward negative infinity; a count of 63 or more
/// leaves the sign.
extern "C" fn shift_right(x: u64, y: u64) -> u64 {
    int(small2(x, y).and_then(|(a, n)| (n >= 0).then(|| a >> n.min(63))))
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

    /// Each arithmetic and bit intrinsic against the built-in's own rule
    /// (`num::arith`, `builtins/math.rs`), over edge values: equal where
    /// the intrinsic answers, and it leaves every other case (0).
    #[test]
    fn arithmetic_and_bits_agree_with_the_built_ins() {
        let s = tag::small;
        let max = (1i64 << 60) - 1;
        let vals = [
            0,
            1,
            -1,
            2,
            -3,
            7,
            13,
            17,
            63,
            64,
            -64,
            1 << 30,
            max,
            -max - 1,
            max / 3,
        ];
        let small_ok = |v: i128| (-(1i128 << 60)..(1i128 << 60)).contains(&v);
        for &a in &vals {
            for &b in &vals {
                let (wa, wb) = (s(a), s(b));
                let (x, y) = (a as i128, b as i128);
                let want = |v: Option<i128>| match v {
                    Some(v) if small_ok(v) => s(v as i64),
                    _ => 0,
                };
                assert_eq!(mul(wa, wb), want(Some(x * y)), "{a} * {b}");
                let div = (b != 0).then(|| x / y);
                assert_eq!(quot(wa, wb), want(div), "quot {a} {b}");
                let r = (b != 0).then(|| x % y);
                assert_eq!(rem(wa, wb), want(r), "rem {a} {b}");
                // Floored: x - y * floor(x / y).
                let m = (b != 0).then(|| {
                    let q = x / y - i128::from(x % y != 0 && (x < 0) != (y < 0));
                    x - y * q
                });
                assert_eq!(modulo(wa, wb), want(m), "mod {a} {b}");
                assert_eq!(bit_and(wa, wb), s(a & b));
                assert_eq!(bit_or(wa, wb), s(a | b));
                assert_eq!(bit_xor(wa, wb), s(a ^ b));
                let left = (0..64).contains(&b).then(|| x << b);
                assert_eq!(shift_left(wa, wb), want(left), "{a} << {b}");
                let right = (b >= 0).then(|| x >> b.min(127));
                assert_eq!(shift_right(wa, wb), want(right), "{a} >> {b}");
            }
        }
        // Not integers: the built-in's (it raises or converts).
        assert_eq!(mul(tag::NIL, s(1)), 0);
        assert_eq!(bit_and(s(1), tag::TRUE), 0);
    }
}
