//! Lazy sequences (the leaf half) and the stack-like functions of vectors
//! and lists (`peek`, `pop`, `subvec`).
//!
//! A lazy sequence is a closure of one private code (`lona.core/lazy-seq`)
//! that captures its thunk: `(lazy-seq body)` makes `(lazy-seq* (fn []
//! body))`. Built-ins are leaf functions and cannot call the thunk, so the
//! functions that walk sequences (`seq`, `first`, `rest`, `map`, `take`...)
//! are Lonala functions of the prelude that call `lazy-seq-fn`'s thunk
//! when they meet one. A cons cell may have a lazy sequence as its tail
//! (`(cons x (lazy-seq ...))`), which is how infinite sequences are built.
//!
//! Realisation is not cached: the heap is immutable (a cell cannot be
//! updated in place without a write barrier), so each walk of the same
//! lazy sequence calls its thunks again. Pure thunks cannot tell; a thunk
//! with side effects runs once per walk (realise once with `doall`).

use std::sync::OnceLock;

use lona_term::{RawTerm, Term, View};

use super::coll;
use super::{def, ANY};

use crate::native::{BuiltinCx, NResult, Raise, Request};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

/// The code id of every lazy sequence.
static LAZY: OnceLock<u64> = OnceLock::new();

/// Calling a lazy sequence as a function is a `:badarg`.
fn lazy_called(_cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    Err(Raise::badarg())
}

fn lazy_code() -> u64 {
    *LAZY.get_or_init(|| {
        crate::bytecode::bare(
            "lona.core/lazy-seq",
            Vec::new(),
            Some((lazy_called, 0, ANY)),
        )
        .leak()
        .code_id()
    })
}

/// The thunk of a lazy sequence, if `x` is one.
pub(crate) fn lazy_thunk(x: Term<'_>) -> Option<Term<'_>> {
    // The common case, a list or a vector: no view built.
    if x.closure_code()? != lazy_code() {
        return None;
    }
    match x.view() {
        View::Closure { code, captured } if code == lazy_code() => captured.first().copied(),
        _ => None,
    }
}

/// `(lazy-seq* thunk)`: a lazy sequence of a function of no arguments.
fn make_lazy(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let f = t(cx, a[0]);
    if !matches!(f.view(), View::Closure { .. }) {
        return Err(Raise::badarg());
    }
    // SAFETY: `lazy_code` is the code id of a leaked prototype.
    Ok(unsafe { cx.heap.closure(lazy_code(), &[f]) }.raw())
}

/// `(destructure-map* x)`: what a map binding form reads its keys from
/// when its value is not a map (see `compiler/destructure.rs`). A list of
/// keys and values (keyword arguments, `& {:keys [opt]}`) becomes a map,
/// as in Clojure 1.11 (a trailing map is merged in); anything else is
/// read as it is (its keys with `get`: nil, a vector by index).
fn destructure_map(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    if lazy_thunk(x).is_some() {
        return redirect(cx, "destructure-map-lazy");
    }
    match x.view() {
        View::Map(_) => Ok(x.raw()),
        View::Cons(..) => {
            let mut it = x.list_iter();
            let items: Vec<Term<'_>> = (&mut it).collect();
            if !it.tail().same(Term::EMPTY_LIST) {
                return redirect(cx, "destructure-map-lazy");
            }
            cx.charge(items.len() / 8);
            let (items, last) = match items.split_last() {
                Some((l, init)) if items.len() % 2 == 1 => (init, Some(*l)),
                _ => (items.as_slice(), None),
            };
            let mut pairs: Vec<(Term<'_>, Term<'_>)> =
                items.chunks(2).map(|p| (p[0], p[1])).collect();
            if let Some(l) = last {
                let View::Map(m) = l.view() else {
                    return Err(Raise::badarg());
                };
                pairs.extend(m.iter());
            }
            Ok(cx.heap.map(&pairs).raw())
        }
        View::EmptyList => Ok(cx.heap.map(&[]).raw()),
        _ => Ok(x.raw()),
    }
}

/// `(lazy-seq? x)`
fn is_lazy(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(lazy_thunk(t(cx, a[0])).is_some()).raw())
}

/// `(lazy-seq-fn s)`: the thunk of a lazy sequence.
fn lazy_fn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    lazy_thunk(t(cx, a[0]))
        .map(|f| f.raw())
        .ok_or_else(Raise::badarg)
}

/// `(has-lazy? x)`: whether `x` is a lazy sequence or a list whose tail
/// is one (what a built-in cannot walk); `(has-lazy? x n)` looks at the
/// first `n` cells only (for `take`, `drop`, `nth`: O(n), not O(length)).
fn has_lazy(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    let limit = match a.get(1) {
        Some(r) => t(cx, *r).as_i64().map_or(0, |n| n.max(0) as usize),
        None => usize::MAX,
    };
    let mut cur = x;
    let mut n = 0usize;
    while let View::Cons(_, tl) = cur.view() {
        if n >= limit {
            cx.charge(n / 16);
            return Ok(Term::FALSE.raw());
        }
        n += 1;
        cur = tl;
    }
    cx.charge(n / 16);
    Ok(Term::bool(lazy_thunk(cur).is_some()).raw())
}

/// `(peek coll)`: a vector's last element, a list's first; nil if empty.
fn peek(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(match t(cx, a[0]).view() {
        View::Vector(v) => v.last().map_or(Term::NIL.raw(), |x| x.raw()),
        View::Cons(h, _) => h.raw(),
        View::Nil | View::EmptyList => Term::NIL.raw(),
        _ => return Err(Raise::badarg()),
    })
}

/// `(pop coll)`: a vector without its last element, a list without its
/// first; `:badarg` for an empty one (Clojure's `IllegalStateException`).
fn pop(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    match t(cx, a[0]).view() {
        View::Vector(v) if !v.is_empty() => {
            cx.charge(v.len() / 8);
            Ok(cx.heap.vector(&v[..v.len() - 1]).raw())
        }
        View::Cons(_, tl) => Ok(tl.raw()),
        View::Nil => Ok(Term::NIL.raw()),
        _ => Err(Raise::error(lona_term::kw!("badarg"))),
    }
}

/// `(subvec v start)`, `(subvec v start end)`: the elements from `start`
/// to `end` (exclusive); `:badarg` out of bounds.
fn subvec(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let View::Vector(v) = t(cx, a[0]).view() else {
        return Err(Raise::badarg());
    };
    let from = t(cx, a[1]).as_i64().ok_or_else(Raise::badarg)?;
    let to = match a.get(2) {
        Some(r) => t(cx, *r).as_i64().ok_or_else(Raise::badarg)?,
        None => v.len() as i64,
    };
    if from < 0 || to < from || to > v.len() as i64 {
        return Err(Raise::badarg());
    }
    cx.charge((to - from) as usize / 8);
    Ok(cx.heap.vector(&v[from as usize..to as usize]).raw())
}

/// The call continues in the prelude's `name` (a Lonala function), with
/// the same arguments: how a leaf built-in walks a lazy sequence.
pub(crate) fn redirect(cx: &mut BuiltinCx<'_, '_>, name: &str) -> NResult {
    let f = cx
        .env
        .core
        .lookup(name)
        .and_then(|v| v.get())
        .ok_or_else(Raise::badarg)?;
    cx.request = Some(Request::Redirect);
    Ok(f)
}

fn lazy(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> bool {
    lazy_thunk(t(cx, r)).is_some()
}

/// `(seq c)`: the built-in for collections, `seq-lazy` for a lazy one.
fn seq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if lazy(cx, a[0]) {
        return redirect(cx, "seq-lazy");
    }
    coll::seq(cx, a)
}

/// `(first c)`
fn first(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if lazy(cx, a[0]) {
        return redirect(cx, "first-lazy");
    }
    coll::first(cx, a)
}

/// `(rest c)`: a lazy tail is returned as it is (still lazy).
fn rest(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if lazy(cx, a[0]) {
        return redirect(cx, "rest-lazy");
    }
    coll::rest(cx, a)
}

/// `(next c)`: `seq` of the rest, so a lazy rest is walked in Lonala.
fn next(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if lazy(cx, a[0]) {
        return redirect(cx, "next-lazy");
    }
    let r = coll::rest(cx, a)?;
    if lazy(cx, r) {
        return redirect(cx, "next-lazy");
    }
    coll::next(cx, a)
}

/// `(empty? c)`
fn is_empty(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if lazy(cx, a[0]) {
        return redirect(cx, "empty-lazy?");
    }
    coll::is_empty(cx, a)
}

/// Built-ins that the prelude wraps (to walk lazy sequences; `throw`, to
/// raise an `ex-info` as an error), kept under a starred name (`count*`)
/// that the Lonala wrapper calls.
const WRAPPED: &[&str] = &[
    "seq",
    "first",
    "second",
    "rest",
    "next",
    "last",
    "nth",
    "count",
    "empty?",
    "vec",
    "into",
    "concat",
    "take",
    "drop",
    "reverse",
    "range",
    "repeat",
    "sort",
    "frequencies",
    "zipmap",
    "throw",
];

pub(super) fn install(core: &'static Namespace) {
    for name in WRAPPED {
        if let Some(v) = core.lookup(name).and_then(|v| v.get()) {
            // SAFETY: `v` is the permanent closure of a built-in.
            unsafe { core.intern(&format!("{name}*")).set(v) };
        }
    }
    def(core, "seq", 1, 1, seq);
    def(core, "first", 1, 1, first);
    def(core, "rest", 1, 1, rest);
    def(core, "next", 1, 1, next);
    def(core, "empty?", 1, 1, is_empty);
    def(core, "lazy-seq*", 1, 1, make_lazy);
    def(core, "lazy-seq?", 1, 1, is_lazy);
    def(core, "lazy-seq-fn", 1, 1, lazy_fn);
    def(core, "has-lazy?", 1, 2, has_lazy);
    def(core, "destructure-map*", 1, 1, destructure_map);
    def(core, "peek", 1, 1, peek);
    def(core, "pop", 1, 1, pop);
    def(core, "subvec", 2, 3, subvec);
}
