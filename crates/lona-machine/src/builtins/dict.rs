//! The process dictionary (Erlang's `put/2`, `get/1`, `erase/1`,
//! `get_keys/0`), named so as not to clash with Clojure's `get`:
//!
//! | function | Erlang | value |
//! | --- | --- | --- |
//! | `(pd-put k v)` | `put(K, V)` | the old value, `nil` if none |
//! | `(pd-get k)` | `get(K)` | the value, `nil` if none |
//! | `(pd-get)` | `get()` | the whole dictionary, as a map |
//! | `(pd-erase k)` | `erase(K)` | the old value, `nil` if none |
//! | `(pd-keys)` | `get_keys()` | the keys, as a list |
//!
//! The dictionary is a persistent map in a root of the process heap, made
//! by the first `pd-put`: it belongs to the process (a spawned process
//! starts with an empty one), costs nothing until used, and survives
//! collections like any root. Keys and values are any terms.

use lona_term::{RawTerm, Term, View};

use super::def;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

/// The dictionary as a map (`nil` when it was never written).
fn dict<'a>(cx: &BuiltinCx<'a, '_>) -> Term<'a> {
    match cx.dict() {
        Some(r) => cx.heap.root(r),
        None => Term::NIL,
    }
}

fn lookup<'a>(d: Term<'a>, k: Term<'_>) -> Term<'a> {
    match d.view() {
        View::Map(m) => m.get(k).unwrap_or(Term::NIL),
        _ => Term::NIL,
    }
}

fn pd_put(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (k, v) = (cx.term(a[0]), cx.term(a[1]));
    let d = dict(cx);
    let old = lookup(d, k);
    let new = match d.view() {
        View::Map(_) => cx.heap.map_assoc(d, k, v).ok_or_else(Raise::badarg)?,
        _ => cx.heap.map(&[(k, v)]),
    };
    match cx.dict() {
        Some(r) => cx.heap.set_root(r, new),
        None => {
            let r = cx.heap.add_root(new);
            cx.set_dict(r);
        }
    }
    Ok(old.raw())
}

fn pd_get(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let d = dict(cx);
    match a.first() {
        Some(k) => Ok(lookup(d, cx.term(*k)).raw()),
        None if matches!(d.view(), View::Nil) => Ok(cx.heap.map(&[]).raw()),
        None => Ok(d.raw()),
    }
}

fn pd_erase(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let k = cx.term(a[0]);
    let d = dict(cx);
    let old = lookup(d, k);
    if let (Some(r), View::Map(_)) = (cx.dict(), d.view()) {
        let new = cx.heap.map_dissoc(d, k).ok_or_else(Raise::badarg)?;
        cx.heap.set_root(r, new);
    }
    Ok(old.raw())
}

fn pd_keys(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    let d = dict(cx);
    let keys: Vec<Term<'_>> = match d.view() {
        View::Map(m) => m.iter().map(|(k, _)| k).collect(),
        _ => Vec::new(),
    };
    cx.charge(keys.len() / 8);
    Ok(cx.heap.list(&keys).raw())
}

pub(super) fn install(ns: &'static Namespace) {
    def(ns, "pd-put", 2, 2, pd_put);
    def(ns, "pd-get", 0, 1, pd_get);
    def(ns, "pd-erase", 1, 1, pd_erase);
    def(ns, "pd-keys", 0, 0, pd_keys);
}
