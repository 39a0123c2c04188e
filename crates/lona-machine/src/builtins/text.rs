//! Strings, keywords and output.

use std::fmt::Write;

use lona_term::{RawTerm, Term, View};

use super::{coll::items, def, ANY};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::print::{display_into, readable_into};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

/// `(str & xs)`. When the first argument is a string, the rest is
/// appended to it with [`lona_term::Heap::string_append`]: building a
/// string with `(str s chunk)` in a loop appends in place (amortised O(1)
/// per byte, as Erlang's binary append), and is charged for the new bytes
/// only.
fn str_fn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    thread_local! {
        // One buffer per worker thread, reused: `str` is called in loops.
        static BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    let first = a.first().map(|x| t(cx, *x));
    let head = first.filter(|f| f.as_str().is_some());
    if let (Some(h), 1) = (head, a.len()) {
        // `(str s)` is `s`.
        return Ok(h.raw());
    }
    BUF.with(|b| {
        let mut s = b.borrow_mut();
        s.clear();
        let rest = if head.is_some() { &a[1..] } else { a };
        for x in rest {
            display_into(&mut s, t(cx, *x));
        }
        cx.charge(s.len() / 64);
        let r = match head {
            Some(h) => cx
                .heap
                .string_append(h, &s)
                .ok_or_else(Raise::badarg)?
                .raw(),
            None => cx.heap.string(&s).raw(),
        };
        if s.capacity() > 1 << 20 {
            *s = String::new();
        }
        Ok(r)
    })
}

fn joined(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], readable: bool) -> String {
    let mut s = String::new();
    for (i, x) in a.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let x = t(cx, *x);
        if readable || x.same(Term::NIL) {
            // `print` shows nil as `nil` (only `str` makes it empty).
            readable_into(&mut s, x);
        } else if matches!(
            x.view(),
            View::Vector(_) | View::Cons(..) | View::Map(_) | View::Set(_)
        ) {
            // Strings inside collections without quotes, as Clojure's
            // `print` (`(println [:a "b"])` shows `[:a b]`; `str` and
            // `pr` keep them readable).
            let _ = write!(s, "{}", lona_term::Plain(x));
        } else {
            display_into(&mut s, x);
        }
    }
    cx.charge(s.len() / 64);
    s
}

/// Writes `s` where this process's printing goes: the string
/// `with-out-str` is collecting, if there is one, else the node's output.
fn write_out(cx: &mut BuiltinCx<'_, '_>, s: &str) -> Result<(), Raise> {
    // No dictionary (most processes): no capture, and no lookup.
    if let Some(r) = cx.dict() {
        let d = cx.heap.root(r);
        // The key under which `with-out-str` collects what its body prints
        // (a string; any other value collects nothing): a runtime atom, so
        // no lookup in the atom table per print.
        let key = lona_term::kw!("lona.core/out");
        if let View::Map(m) = d.view() {
            if let Some(sofar) = m.get(key).filter(|v| v.as_str().is_some()) {
                // Amortised O(len(s)): the newest version of a string grows
                // in place (`lona_term`'s `binary.rs`).
                let longer = cx.heap.string_append(sofar, s).ok_or_else(Raise::badarg)?;
                let d = cx
                    .heap
                    .map_assoc(d, key, longer)
                    .ok_or_else(Raise::badarg)?;
                cx.heap.set_root(r, d);
                return Ok(());
            }
        }
    }
    cx.env.write_out(s);
    Ok(())
}

fn println(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut s = joined(cx, a, false);
    s.push('\n');
    write_out(cx, &s)?;
    Ok(Term::NIL.raw())
}
/// `(eprintln & xs)`: as `println`, to standard error (reports, errors).
fn eprintln(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut s = joined(cx, a, false);
    s.push('\n');
    cx.env.flush_out();
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(s.as_bytes());
    Ok(Term::NIL.raw())
}
/// `(report & xs)`: as `eprintln`, unless reports are silenced
/// (`reports!`): how the supervisors of `lona.supervisor` report.
fn report(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    // Relaxed: a switch; no data is published through it.
    if cx.env.reports.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln(cx, a)?;
    }
    Ok(Term::NIL.raw())
}
/// `(reports! on)`: turns reports on or off for the node; the old setting.
fn reports_switch(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let on = match t(cx, a[0]).view() {
        View::Bool(b) => b,
        View::Nil => false,
        _ => return Err(Raise::badarg()),
    };
    // Relaxed: as in `report`.
    let old = cx
        .env
        .reports
        .swap(on, std::sync::atomic::Ordering::Relaxed);
    Ok(Term::bool(old).raw())
}
fn print(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = joined(cx, a, false);
    write_out(cx, &s)?;
    Ok(Term::NIL.raw())
}
fn prn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut s = joined(cx, a, true);
    s.push('\n');
    write_out(cx, &s)?;
    Ok(Term::NIL.raw())
}
/// `(print-str & xs)`: what `print` writes, as a string.
fn print_str(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = joined(cx, a, false);
    Ok(cx.heap.string(&s).raw())
}
fn pr_str(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = joined(cx, a, true);
    Ok(cx.heap.string(&s).raw())
}

fn string_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a str, Raise> {
    t(cx, r).as_str().ok_or_else(Raise::badarg)
}

fn subs(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let n = s.chars().count() as i64;
    let from = t(cx, a[1]).as_i64().ok_or_else(Raise::badarg)?;
    let to = match a.get(2) {
        Some(r) => t(cx, *r).as_i64().ok_or_else(Raise::badarg)?,
        None => n,
    };
    if from < 0 || to > n || from > to {
        return Err(Raise::badarg());
    }
    let out: String = s
        .chars()
        .skip(from as usize)
        .take((to - from) as usize)
        .collect();
    Ok(cx.heap.string(&out).raw())
}

fn split(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let sep = string_arg(cx, a[1])?;
    if sep.is_empty() {
        return Err(Raise::badarg());
    }
    cx.charge(s.len() / 64);
    // A one-byte separator (the common `","`) through `char`'s searcher,
    // which scans with `memchr`; a longer one through the general
    // substring search.
    let parts: Vec<Term<'_>> = match sep.as_bytes() {
        &[b] if b.is_ascii() => s.split(b as char).map(|p| cx.heap.string(p)).collect(),
        _ => s.split(sep).map(|p| cx.heap.string(p)).collect(),
    };
    Ok(cx.heap.vector(&parts).raw())
}

fn join(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (sep, coll) = if a.len() == 1 {
        ("", a[0])
    } else {
        (string_arg(cx, a[0])?, a[1])
    };
    let v = items(cx.heap, t(cx, coll))?;
    let mut s = String::new();
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        display_into(&mut s, *x);
    }
    cx.charge(v.len() / 8 + s.len() / 64);
    Ok(cx.heap.string(&s).raw())
}

fn upper(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.to_uppercase();
    Ok(cx.heap.string(&s).raw())
}
fn lower(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.to_lowercase();
    Ok(cx.heap.string(&s).raw())
}
fn trim(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim();
    Ok(cx.heap.string(s).raw())
}
fn includes(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let sub = string_arg(cx, a[1])?;
    Ok(Term::bool(s.contains(sub)).raw())
}

/// `(format "x=%s n=%d f=%.2f %%" ...)`: `%s` (as `str`), `%d`, `%f`
/// with an optional precision, `%x`, `%%`, `%n`.
fn format(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let f = string_arg(cx, a[0])?;
    let mut out = String::new();
    let mut args = a[1..].iter();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut prec = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut n = 0usize;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                n = n * 10 + d as usize;
                chars.next();
            }
            prec = Some(n);
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('n') => out.push('\n'),
            Some(k @ ('s' | 'd' | 'f' | 'x')) => {
                let Some(x) = args.next() else {
                    return Err(Raise::badarg());
                };
                let x = t(cx, *x);
                match k {
                    's' => display_into(&mut out, x),
                    'd' => match x.view() {
                        View::Int(i) => {
                            let _ = write!(out, "{i}");
                        }
                        View::BigInt(b) => {
                            let _ = write!(out, "{b}");
                        }
                        _ => return Err(Raise::badarg()),
                    },
                    'x' => match x.as_i64() {
                        Some(i) => {
                            let _ = write!(out, "{i:x}");
                        }
                        None => return Err(Raise::badarg()),
                    },
                    _ => {
                        let v = match crate::num::num_of(x) {
                            Some(crate::num::Num::Float(f)) => f,
                            Some(crate::num::Num::Small(i)) => i as f64,
                            _ => return Err(Raise::badarg()),
                        };
                        let _ = write!(out, "{:.*}", prec.unwrap_or(6), v);
                    }
                }
            }
            _ => return Err(Raise::badarg()),
        }
    }
    Ok(cx.heap.string(&out).raw())
}

/// The atom `ns/n` of `(keyword ns n)` and `(symbol ns n)` (`n` for a
/// nil `ns`).
fn qualified(cx: &BuiltinCx<'_, '_>, ns: RawTerm, n: RawTerm) -> Result<lona_term::Atom, Raise> {
    let n = string_arg(cx, n)?.to_string();
    let name = match t(cx, ns).view() {
        View::Nil => n,
        View::Str(ns) => format!("{ns}/{n}"),
        _ => return Err(Raise::badarg()),
    };
    lona_term::Atom::try_new(&name).map_err(|_| Raise::system_limit())
}

/// `(keyword s)`, `(symbol s)`: `:system-limit` when the node's atom table
/// is full or `s` has more than 255 characters (`lona_term`'s `atom.rs`).
fn keyword(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let [ns, n] = a {
        // `(keyword ns name)`: `:ns/name` (`:name` for a nil ns).
        return Ok(Term::keyword_atom(qualified(cx, *ns, *n)?).raw());
    }
    let x = t(cx, a[0]);
    let name = match x.view() {
        View::Str(s) => s.to_string(),
        View::Keyword(k) => return Ok(Term::keyword_atom(k).raw()),
        View::Symbol(s) => s.name().to_string(),
        _ => return Err(Raise::badarg()),
    };
    let atom = lona_term::Atom::try_new(&name).map_err(|_| Raise::system_limit())?;
    Ok(Term::keyword_atom(atom).raw())
}
fn symbol(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let [ns, n] = a {
        // `(symbol ns name)`: `ns/name` (`name` for a nil ns).
        return Ok(Term::symbol_atom(qualified(cx, *ns, *n)?).raw());
    }
    let s = string_arg(cx, a[0])?;
    let atom = lona_term::Atom::try_new(s).map_err(|_| Raise::system_limit())?;
    Ok(Term::symbol_atom(atom).raw())
}
fn name(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    let s = match x.view() {
        View::Str(_) => return Ok(x.raw()),
        View::Keyword(k) | View::Symbol(k) => k.name(),
        _ => return Err(Raise::badarg()),
    };
    let s = s
        .rsplit_once('/')
        .map_or(s, |(_, n)| if n.is_empty() { s } else { n });
    Ok(cx.heap.string(s).raw())
}

/// `(parse-int s)`: the integer `s` spells (surrounding whitespace, a
/// sign, decimal digits), of any size up to the integer limit
/// ([`crate::num::MAX_BITS`], 16 Mbit: 5,050,446 digits); `nil` for text
/// that spells no integer, and, as `parse-long` past 64 bits, for one
/// past the limit. The limit is applied to the count of digits before
/// the conversion, whose time grows with the square of the length.
fn parse_int(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim();
    match crate::num::parse_decimal(s, crate::num::MAX_BITS) {
        Some(b) => Ok(cx.heap.bigint(&b).raw()),
        None => Ok(Term::NIL.raw()),
    }
}

/// `(parse-long s)`: the integer `s` spells (an optional sign and
/// decimal digits, nothing else), if it fits 64 bits; `nil` otherwise
/// (Clojure 1.11's).
fn parse_long(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(Term::NIL.raw());
    }
    match s.parse::<i64>() {
        Ok(n) => Ok(cx.heap.int(n).raw()),
        Err(_) => Ok(Term::NIL.raw()),
    }
}

/// `(parse-double s)`: the float `s` spells (surrounding whitespace
/// allowed; digits, a point, an exponent, or `NaN` and `Infinity` with
/// an optional sign), or `nil`.
fn parse_double(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim();
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let f = match unsigned {
        "NaN" => Some(f64::NAN),
        "Infinity" if s.starts_with('-') => Some(f64::NEG_INFINITY),
        "Infinity" => Some(f64::INFINITY),
        // Rust also reads `inf` and `nan`, which Clojure does not.
        _ if unsigned.bytes().any(|b| b.is_ascii_digit())
            && unsigned
                .bytes()
                .all(|b| b.is_ascii_digit() || b".+-eE".contains(&b)) =>
        {
            s.parse::<f64>().ok()
        }
        _ => None,
    };
    Ok(f.map_or(Term::NIL.raw(), |f| cx.heap.float(f).raw()))
}

/// `(parse-boolean s)`: `true` for `"true"`, `false` for `"false"`,
/// `nil` for anything else.
fn parse_boolean(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(match string_arg(cx, a[0])? {
        "true" => Term::bool(true),
        "false" => Term::bool(false),
        _ => Term::NIL,
    }
    .raw())
}

pub(super) fn install(core: &'static Namespace, string: &'static Namespace) {
    def(core, "str", 0, ANY, str_fn);
    def(core, "subs", 2, 3, subs);
    def(core, "println", 0, ANY, println);
    def(core, "print", 0, ANY, print);
    def(core, "eprintln", 0, ANY, eprintln);
    def(core, "report", 0, ANY, report);
    def(core, "reports!", 1, 1, reports_switch);
    def(core, "prn", 0, ANY, prn);
    def(core, "pr-str", 0, ANY, pr_str);
    def(core, "print-str", 0, ANY, print_str);
    def(core, "format", 1, ANY, format);
    def(core, "keyword", 1, 2, keyword);
    def(core, "symbol", 1, 2, symbol);
    def(core, "name", 1, 1, name);
    def(core, "parse-int", 1, 1, parse_int);
    def(core, "parse-long", 1, 1, parse_long);
    def(core, "parse-double", 1, 1, parse_double);
    def(core, "parse-boolean", 1, 1, parse_boolean);
    def(string, "split", 2, 2, split);
    def(string, "join", 1, 2, join);
    def(string, "upper", 1, 1, upper);
    def(string, "lower", 1, 1, lower);
    def(string, "trim", 1, 1, trim);
    def(string, "includes?", 2, 2, includes);
}
