//! Numbers, comparison, predicates, errors, time and chance.

use std::cmp::Ordering;

use lona_term::{IntRef, RawTerm, Term, View};

use super::{def, ANY};
use crate::native::{BuiltinCx, Class, NResult, Raise};
use crate::num::{self, Op};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

fn fold(cx: &mut BuiltinCx<'_, '_>, args: &[RawTerm], op: Op, unit: i64) -> NResult {
    let mut acc = Term::small_int(unit).unwrap_or(Term::NIL);
    if args.is_empty() {
        return Ok(acc.raw());
    }
    let mut it = args.iter();
    if args.len() > 1 || matches!(op, Op::Mul | Op::Add) {
        acc = t(cx, *it.next().unwrap_or(&acc.raw()));
        if args.len() == 1 && num::num_of(acc).is_none() {
            return Err(Raise::badarith());
        }
    }
    cx.charge(args.len() / 4);
    for a in it {
        acc = num::arith(cx.heap, op, acc, t(cx, *a))?;
    }
    Ok(acc.raw())
}

fn add(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let [x, y] = a {
        if crate::tag::both_small(x.bits(), y.bits()) {
            if let Some(v) = crate::tag::add_small(x.bits(), y.bits()) {
                return Ok(crate::tag::raw(v));
            }
        }
    }
    fold(cx, a, Op::Add, 0)
}
fn mul(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    fold(cx, a, Op::Mul, 1)
}
fn sub(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if a.len() == 1 {
        return Ok(num::negate(cx.heap, t(cx, a[0]))?.raw());
    }
    fold(cx, a, Op::Sub, 0)
}
fn div(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if a.len() == 1 {
        let one = Term::small_int(1).unwrap_or(Term::NIL);
        return Ok(num::arith(cx.heap, Op::Div, one, t(cx, a[0]))?.raw());
    }
    fold(cx, a, Op::Div, 1)
}
fn quot(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(num::arith(cx.heap, Op::Quot, t(cx, a[0]), t(cx, a[1]))?.raw())
}
fn rem(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(num::arith(cx.heap, Op::Rem, t(cx, a[0]), t(cx, a[1]))?.raw())
}
fn modulo(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(num::arith(cx.heap, Op::Mod, t(cx, a[0]), t(cx, a[1]))?.raw())
}
fn inc(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if crate::tag::is_small(a[0].bits()) {
        if let Some(v) = crate::tag::add_small(a[0].bits(), crate::tag::small(1)) {
            return Ok(crate::tag::raw(v));
        }
    }
    let one = Term::small_int(1).unwrap_or(Term::NIL);
    Ok(num::arith(cx.heap, Op::Add, t(cx, a[0]), one)?.raw())
}
fn dec(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let one = Term::small_int(1).unwrap_or(Term::NIL);
    Ok(num::arith(cx.heap, Op::Sub, t(cx, a[0]), one)?.raw())
}
fn abs(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(num::abs(cx.heap, t(cx, a[0]))?.raw())
}

/// `(int x)`: an integer as is; a float truncated toward zero (Erlang's
/// `trunc/1`); `:badarg` for a float that is not finite or beyond 64
/// bits, or anything else.
fn int(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if t(cx, a[0]).int_ref().is_some() {
        return Ok(a[0]);
    }
    match t(cx, a[0]).view() {
        View::Int(_) | View::BigInt(_) => Ok(a[0]),
        View::Float(f) if f.is_finite() && f.abs() < 9.2e18 => {
            Ok(cx.heap.int(f.trunc() as i64).raw())
        }
        _ => Err(Raise::badarg()),
    }
}

fn extreme(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], want: Ordering) -> NResult {
    let mut best = t(cx, a[0]);
    if num::num_of(best).is_none() {
        return Err(Raise::badarith());
    }
    for x in &a[1..] {
        let x = t(cx, *x);
        if num::num_of(x).is_none() {
            return Err(Raise::badarith());
        }
        // NaN wins (is contagious), as with the JVM's `Math/min`.
        if num::relation(x, best).is_none() {
            if x.as_f64().is_some_and(f64::is_nan) {
                best = x;
            }
        } else if num::compare_values(x, best) == want {
            best = x;
        }
    }
    Ok(best.raw())
}
fn max(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    extreme(cx, a, Ordering::Greater)
}
fn min(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    extreme(cx, a, Ordering::Less)
}

fn chain(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], ok: fn(Ordering) -> bool) -> NResult {
    for w in a.windows(2) {
        // NaN is unordered: false (`num::relation`).
        if !num::relation(t(cx, w[0]), t(cx, w[1])).is_some_and(ok) {
            return Ok(Term::FALSE.raw());
        }
    }
    Ok(Term::TRUE.raw())
}
fn lt(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    chain(cx, a, Ordering::is_lt)
}
fn le(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    chain(cx, a, Ordering::is_le)
}
fn gt(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    chain(cx, a, Ordering::is_gt)
}
fn ge(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    chain(cx, a, Ordering::is_ge)
}
fn num_eq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    for w in a.windows(2) {
        if !num::num_eq(t(cx, w[0]), t(cx, w[1]))? {
            return Ok(Term::FALSE.raw());
        }
    }
    if a.len() == 1 && num::num_of(t(cx, a[0])).is_none() {
        return Err(Raise::badarith());
    }
    Ok(Term::TRUE.raw())
}
fn eq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let ok = a
        .windows(2)
        .all(|w| lona_term::equal(t(cx, w[0]), t(cx, w[1])));
    Ok(Term::bool(ok).raw())
}
fn not_eq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let e = eq(cx, a)?;
    Ok(Term::bool(e == Term::FALSE.raw()).raw())
}
fn compare(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let o = num::compare_values(t(cx, a[0]), t(cx, a[1]));
    Ok(cx.heap.int(o as i64).raw())
}
fn hash(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let h = lona_term::term_hash(t(cx, a[0])) >> 4;
    Ok(cx.heap.int(h as i64).raw())
}
fn not(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(!crate::tag::truthy(t(cx, a[0]).bits())).raw())
}

macro_rules! pred {
    ($name:ident, $v:ident => $e:expr) => {
        fn $name(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
            let $v = t(cx, a[0]).view();
            Ok(Term::bool($e).raw())
        }
    };
}
pred!(is_nil, v => matches!(v, View::Nil));
pred!(is_some, v => !matches!(v, View::Nil));
pred!(is_true, v => matches!(v, View::Bool(true)));
pred!(is_false, v => matches!(v, View::Bool(false)));
// Integers by `int_ref`: a view would make a `BigInt` of a big one.
fn is_number(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    Ok(Term::bool(x.int_ref().is_some() || matches!(x.view(), View::Float(_))).raw())
}
fn is_int(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(t(cx, a[0]).int_ref().is_some()).raw())
}
pred!(is_float, v => matches!(v, View::Float(_)));
pred!(is_string, v => matches!(v, View::Str(_)));
pred!(is_keyword, v => matches!(v, View::Keyword(_)));
pred!(is_symbol, v => matches!(v, View::Symbol(_)));
pred!(is_vector, v => matches!(v, View::Vector(_)));
pred!(is_list, v => matches!(v, View::Cons(..) | View::EmptyList));
pred!(is_map, v => matches!(v, View::Map(_)));
pred!(is_set, v => matches!(v, View::Set(_)));
pred!(is_fn, v => matches!(v, View::Closure { .. }));
pred!(is_pid, v => matches!(v, View::Pid(_) | View::ExtPid { .. }));
pred!(is_ref, v => matches!(v, View::Ref(_) | View::ExtRef { .. }));
pred!(is_boolean, v => matches!(v, View::Bool(_)));

fn sign(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<Ordering, Raise> {
    let x = t(cx, r);
    if x.int_ref().is_none() && num::num_of(x).is_none() {
        return Err(Raise::badarith());
    }
    Ok(num::compare_values(
        x,
        Term::small_int(0).unwrap_or(Term::NIL),
    ))
}
fn is_zero(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(sign(cx, a[0])? == Ordering::Equal).raw())
}
fn is_pos(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(sign(cx, a[0])? == Ordering::Greater).raw())
}
fn is_neg(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(sign(cx, a[0])? == Ordering::Less).raw())
}
fn parity(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<bool, Raise> {
    if crate::tag::is_small(r.bits()) {
        return Ok(crate::tag::small_value(r.bits()) % 2 == 0);
    }
    match t(cx, r).int_ref() {
        Some(IntRef::Small(i)) => Ok(i % 2 == 0),
        Some(IntRef::Big { limbs, .. }) => Ok(limbs[0] % 2 == 0),
        None => Err(Raise::badarg()),
    }
}
fn is_even(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(parity(cx, a[0])?).raw())
}
fn is_odd(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(!parity(cx, a[0])?).raw())
}

fn throw(_cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Err(Raise {
        class: Class::Throw,
        reason: a[0],
    })
}
fn error(_cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Err(Raise {
        class: Class::Error,
        reason: a[0],
    })
}
fn halt(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let code = match a.first() {
        None => 0,
        Some(r) => match t(cx, *r).as_i64() {
            Some(n) => i32::try_from(n).map_err(|_| Raise::badarg())?,
            None => return Err(Raise::badarg()),
        },
    };
    Err(Raise {
        class: Class::Halt(code),
        reason: Term::NIL.raw(),
    })
}

fn now_ms(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    Ok(cx.heap.int(ms).raw())
}
fn monotonic_ms(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let ms = START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
        * 1000.0;
    Ok(cx.heap.float(ms).raw())
}

/// `(var-get 'ns/name)` or `(var-get 'ns 'name)`: the value of a global
/// var now (a function, for calling a behaviour's callbacks by namespace,
/// as Erlang's `apply(Module, Function, Args)`: through the var, so a
/// redefinition is seen at the next call). `[:undef sym]` if unbound.
fn var_get(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    // No allocation on the way: behaviours call this for every message.
    fn name_of<'h>(cx: &BuiltinCx<'h, '_>, r: RawTerm) -> Result<&'h str, Raise> {
        match cx.term(r).view() {
            View::Symbol(s) | View::Keyword(s) => Ok(s.name()),
            _ => Err(Raise::badarg()),
        }
    }
    let (ns, name) = match a {
        [q] => {
            let q = name_of(cx, *q)?;
            q.rsplit_once('/').unwrap_or(("", q))
        }
        [ns, n] => (name_of(cx, *ns)?, name_of(cx, *n)?),
        _ => return Err(Raise::badarg()),
    };
    let found = cx
        .env
        .namespaces
        .get(ns)
        .and_then(|n| n.lookup(name))
        .and_then(|v| v.get());
    found.ok_or_else(|| {
        let q = format!("{ns}/{name}");
        // an error path: a string when the atom table cannot take the name
        let sym = Term::try_symbol(&q).unwrap_or_else(|_| cx.heap.string(&q));
        Raise::error(cx.heap.vector(&[lona_term::kw!("undef"), sym]))
    })
}

/// `(memory)`: the node's resident memory in bytes (Linux: from
/// `/proc/self/statm`; 0 where unknown), for benchmarks and the shell.
fn memory(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let bytes = crate::introspect::resident_bytes();
    Ok(cx.heap.int(i64::try_from(bytes).unwrap_or(i64::MAX)).raw())
}

thread_local! {
    static RNG: std::cell::Cell<u64> = std::cell::Cell::new({
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
        t | 1
    });
}
/// xorshift64*: quality enough for `rand`, not for cryptography.
fn next_random() -> u64 {
    RNG.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    })
}
fn rand(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let f = (next_random() >> 11) as f64 / (1u64 << 53) as f64;
    let scale = match a.first() {
        None => 1.0,
        Some(r) => match num::num_of(t(cx, *r)) {
            Some(num::Num::Small(i)) => i as f64,
            Some(num::Num::Float(x)) => x,
            _ => return Err(Raise::badarg()),
        },
    };
    Ok(cx.heap.float(f * scale).raw())
}
fn rand_int(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    match t(cx, a[0]).as_i64() {
        Some(n) if n > 0 => Ok(cx.heap.int((next_random() % n as u64) as i64).raw()),
        _ => Err(Raise::badarg()),
    }
}
fn identity(_cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(a[0])
}

pub(super) fn install(ns: &'static Namespace) {
    def(ns, "+", 0, ANY, add);
    def(ns, "-", 1, ANY, sub);
    def(ns, "*", 0, ANY, mul);
    def(ns, "/", 1, ANY, div);
    def(ns, "quot", 2, 2, quot);
    def(ns, "rem", 2, 2, rem);
    def(ns, "mod", 2, 2, modulo);
    def(ns, "inc", 1, 1, inc);
    def(ns, "dec", 1, 1, dec);
    def(ns, "abs", 1, 1, abs);
    def(ns, "max", 1, ANY, max);
    def(ns, "min", 1, ANY, min);
    def(ns, "<", 1, ANY, lt);
    def(ns, "<=", 1, ANY, le);
    def(ns, ">", 1, ANY, gt);
    def(ns, ">=", 1, ANY, ge);
    def(ns, "==", 1, ANY, num_eq);
    def(ns, "=", 1, ANY, eq);
    def(ns, "not=", 1, ANY, not_eq);
    def(ns, "compare", 2, 2, compare);
    def(ns, "hash", 1, 1, hash);
    def(ns, "not", 1, 1, not);
    def(ns, "nil?", 1, 1, is_nil);
    def(ns, "some?", 1, 1, is_some);
    def(ns, "true?", 1, 1, is_true);
    def(ns, "false?", 1, 1, is_false);
    def(ns, "boolean?", 1, 1, is_boolean);
    def(ns, "number?", 1, 1, is_number);
    def(ns, "int?", 1, 1, is_int);
    def(ns, "integer?", 1, 1, is_int);
    def(ns, "float?", 1, 1, is_float);
    def(ns, "string?", 1, 1, is_string);
    def(ns, "keyword?", 1, 1, is_keyword);
    def(ns, "symbol?", 1, 1, is_symbol);
    def(ns, "vector?", 1, 1, is_vector);
    def(ns, "list?", 1, 1, is_list);
    def(ns, "map?", 1, 1, is_map);
    def(ns, "set?", 1, 1, is_set);
    def(ns, "fn?", 1, 1, is_fn);
    def(ns, "pid?", 1, 1, is_pid);
    def(ns, "ref?", 1, 1, is_ref);
    def(ns, "zero?", 1, 1, is_zero);
    def(ns, "pos?", 1, 1, is_pos);
    def(ns, "neg?", 1, 1, is_neg);
    def(ns, "even?", 1, 1, is_even);
    def(ns, "odd?", 1, 1, is_odd);
    def(ns, "throw", 1, 1, throw);
    def(ns, "error", 1, 1, error);
    def(ns, "halt", 0, 1, halt);
    def(ns, "now-ms", 0, 0, now_ms);
    def(ns, "monotonic-ms", 0, 0, monotonic_ms);
    def(ns, "memory", 0, 0, memory);
    def(ns, "var-get", 1, 2, var_get);
    def(ns, "int", 1, 1, int);
    def(ns, "rand", 0, 1, rand);
    def(ns, "rand-int", 1, 1, rand_int);
    def(ns, "identity", 1, 1, identity);
}
