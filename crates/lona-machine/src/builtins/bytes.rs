//! Binaries (bytes), what sockets read and write: `bytes`,
//! `bytes->string`, `binary?`, `byte-count`, `subbytes`.

use lona_term::{RawTerm, Term, View};

use super::def;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

fn bytes_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a [u8], Raise> {
    match t(cx, r).view() {
        View::Binary(b) => Ok(b),
        _ => Err(Raise::badarg()),
    }
}

/// `(bytes x)`: a string's UTF-8 bytes, a vector or list of integers
/// 0-255, or a binary as it is.
fn bytes(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    let v: Vec<u8> = match x.view() {
        View::Binary(_) => return Ok(x.raw()),
        View::Str(s) => s.as_bytes().to_vec(),
        View::Vector(items) => items
            .iter()
            .map(|i| i.as_i64().and_then(|n| u8::try_from(n).ok()))
            .collect::<Option<_>>()
            .ok_or_else(Raise::badarg)?,
        View::Cons(..) | View::EmptyList => x
            .list_iter()
            .map(|i| i.as_i64().and_then(|n| u8::try_from(n).ok()))
            .collect::<Option<_>>()
            .ok_or_else(Raise::badarg)?,
        _ => return Err(Raise::badarg()),
    };
    cx.charge(v.len() / 64);
    Ok(cx.heap.binary(&v).raw())
}

/// `(bytes->string b)`: the UTF-8 text of `b` (`:badarg` if it is not
/// UTF-8); `(bytes->string b :replace)` puts U+FFFD for bad sequences.
fn to_string(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let b = bytes_arg(cx, a[0])?;
    cx.charge(b.len() / 64);
    let lossy = match a.get(1).map(|r| t(cx, *r).view()) {
        None => false,
        Some(View::Keyword(k)) if k.name() == "replace" => true,
        Some(_) => return Err(Raise::badarg()),
    };
    let s = if lossy {
        String::from_utf8_lossy(b)
    } else {
        std::str::from_utf8(b).map_err(|_| Raise::badarg())?.into()
    };
    Ok(cx.heap.string(&s).raw())
}

fn is_binary(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(matches!(t(cx, a[0]).view(), View::Binary(_))).raw())
}

/// `(byte-count b)`: its length in bytes (also a string's).
fn byte_count(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let n = match t(cx, a[0]).view() {
        View::Binary(b) => b.len(),
        View::Str(s) => s.len(),
        _ => return Err(Raise::badarg()),
    };
    Ok(cx.heap.int(n as i64).raw())
}

/// `(subbytes b start [end])`: bytes `start` to `end` (exclusive).
fn subbytes(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let b = bytes_arg(cx, a[0])?;
    let idx = |r: RawTerm| {
        t(cx, r)
            .as_i64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(Raise::badarg)
    };
    let start = idx(a[1])?;
    let end = match a.get(2) {
        Some(r) => idx(*r)?,
        None => b.len(),
    };
    if start > end || end > b.len() {
        return Err(Raise::badarg());
    }
    cx.charge((end - start) / 64);
    let part = b[start..end].to_vec();
    Ok(cx.heap.binary(&part).raw())
}

/// `(concat-bytes coll)`: one binary of the binaries (or strings) of
/// `coll`, in order.
fn concat_bytes(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let c = t(cx, a[0]);
    let items: Vec<lona_term::Term<'_>> = match c.view() {
        View::Vector(v) => v.to_vec(),
        View::Cons(..) | View::EmptyList | View::Nil => c.list_iter().collect(),
        _ => return Err(Raise::badarg()),
    };
    let mut out = Vec::new();
    for i in items {
        match i.view() {
            View::Binary(b) => out.extend_from_slice(b),
            View::Str(s) => out.extend_from_slice(s.as_bytes()),
            _ => return Err(Raise::badarg()),
        }
    }
    cx.charge(out.len() / 64);
    Ok(cx.heap.binary(&out).raw())
}

pub(super) fn install(core: &'static Namespace) {
    def(core, "concat-bytes", 1, 1, concat_bytes);
    def(core, "bytes", 1, 1, bytes);
    def(core, "bytes->string", 1, 2, to_string);
    def(core, "binary?", 1, 1, is_binary);
    def(core, "byte-count", 1, 1, byte_count);
    def(core, "subbytes", 2, 3, subbytes);
}
