//! Metadata: `meta` and `with-meta` (`vary-meta` and the reader's `^` are
//! Lonala over them), over `lona_term`'s wrapper (`meta.rs` there).
//!
//! A vector, list, map or set takes metadata; an atom keeps its own in
//! the atom (`builtins/cell.rs`, slot 1), so `(meta a)` reads it there.
//! Every other built-in is given its arguments without their metadata
//! (`BuiltinCx::term`): a value a function makes anew has none, as the
//! result of `conj` or `assoc` in Lonala (Clojure keeps the
//! collection's; `docs/lonala.md`, "Metadata").

use lona_term::{RawTerm, Term, View};

use super::def;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

/// `(meta x)`: `x`'s metadata, or nil.
fn meta(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = cx.term_with_meta(a[0]);
    if let View::Cell(c) = x.view() {
        let (_, attrs) = c.read(1, cx.heap);
        return Ok(match attrs.view() {
            View::Map(m) => m.get(lona_term::kw!("meta")).unwrap_or(Term::NIL).raw(),
            _ => Term::NIL.raw(),
        });
    }
    Ok(x.meta().raw())
}

/// `(with-meta x m)`: `x` with metadata `m` (a map or nil) in place of
/// any it had; `:badarg` if `x` cannot carry metadata or `m` is no map.
fn with_meta(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (x, m) = (cx.term_with_meta(a[0]), cx.term(a[1]));
    cx.heap
        .with_meta(x, m)
        .map(|t| t.raw())
        .ok_or_else(Raise::badarg)
}

/// `f`'s result with the metadata of its first argument, as Clojure's
/// `conj`, `assoc`, `dissoc`, `disj` and `into` keep the collection's.
/// (Inlined, so that a collection without metadata costs one header
/// compare: `f` is called directly.)
#[inline(always)]
pub(super) fn keeping(
    f: impl FnOnce(&mut BuiltinCx<'_, '_>, &[RawTerm]) -> NResult,
    cx: &mut BuiltinCx<'_, '_>,
    a: &[RawTerm],
) -> NResult {
    let m = cx.term_with_meta(a[0]).meta();
    if m.same(Term::NIL) {
        return f(cx, a);
    }
    let r = f(cx, a)?;
    // A request (a sorted collection's change handed to its Lonala
    // function) answers no value yet: that function's result is bare.
    if cx.request.is_some() {
        return Ok(r);
    }
    let t = cx.term_with_meta(r);
    Ok(cx.heap.with_meta(t, m).map_or(r, |t| t.raw()))
}

pub(super) fn install(ns: &'static Namespace) {
    def(ns, "meta", 1, 1, meta);
    def(ns, "with-meta", 2, 2, with_meta);
}
