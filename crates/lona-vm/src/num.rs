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

use lona_term::{Heap, Term, View};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::native::Raise;

/// The most bits an integer may have: 16 Mbit (2 MB). Past it, an
/// arithmetic operation, `expt` or `bit-shift-left` raises
/// `:system-limit`.
pub const MAX_BITS: u64 = 1 << 24;

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
    fn is_float(&self) -> bool {
        matches!(self, Num::Float(_))
    }
}

/// `a op b`, allocating the result on `heap` when it is not an immediate.
pub fn arith<'h>(heap: &'h Heap, op: Op, a: Term<'_>, b: Term<'_>) -> Result<Term<'h>, Raise> {
    let (Some(x), Some(y)) = (num_of(a), num_of(b)) else {
        return Err(Raise::badarith());
    };
    if op == Op::Div || x.is_float() || y.is_float() {
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
        return Ok(heap.float(r));
    }
    if let (Num::Small(p), Num::Small(q)) = (&x, &y) {
        let (p, q) = (*p, *q);
        let r = match op {
            Op::Add => p.checked_add(q),
            Op::Sub => p.checked_sub(q),
            Op::Mul => p.checked_mul(q),
            Op::Quot => {
                if q == 0 {
                    return Err(Raise::badarith());
                }
                p.checked_div(q)
            }
            Op::Rem => {
                if q == 0 {
                    return Err(Raise::badarith());
                }
                p.checked_rem(q)
            }
            Op::Mod => {
                if q == 0 {
                    return Err(Raise::badarith());
                }
                p.checked_rem(q).map(|r| {
                    if r != 0 && (r < 0) != (q < 0) {
                        r + q
                    } else {
                        r
                    }
                })
            }
            Op::Div => unreachable!(),
        };
        if let Some(r) = r {
            return Ok(heap.int(r));
        }
    }
    let (p, q) = (x.to_big(), y.to_big());
    // A product has the bits of its factors, or one fewer: refuse before
    // multiplying what would be too large.
    if op == Op::Mul && !p.is_zero() && !q.is_zero() && p.bits() + q.bits() - 1 > MAX_BITS {
        return Err(Raise::system_limit());
    }
    let r = match op {
        Op::Add => p + q,
        Op::Sub => p - q,
        Op::Mul => p * q,
        Op::Quot | Op::Rem | Op::Mod => {
            if q.is_zero() {
                return Err(Raise::badarith());
            }
            match op {
                Op::Quot => p / q,
                Op::Rem => p % q,
                _ => {
                    let r = &p % &q;
                    if !r.is_zero() && r.is_negative() != q.is_negative() {
                        r + q
                    } else {
                        r
                    }
                }
            }
        }
        Op::Div => unreachable!(),
    };
    if r.bits() > MAX_BITS {
        return Err(Raise::system_limit());
    }
    Ok(heap.bigint(&r))
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
    match (num_of(a), num_of(b)) {
        (Some(x), Some(y)) => compare_nums(&x, &y),
        _ => lona_term::compare(a, b),
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

/// `(== a b)`: numeric equality; `:badarith` unless both are numbers.
pub fn num_eq(a: Term<'_>, b: Term<'_>) -> Result<bool, Raise> {
    match (num_of(a), num_of(b)) {
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
