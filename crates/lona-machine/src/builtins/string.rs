//! The leaf functions of `clojure.string` (installed in the `string`
//! namespace; `src/lonala/clojure_string.lona` gives them their Clojure
//! names and adds what calls a function): search, trimming, case,
//! replacement and splitting by a string or a pattern (`regex.rs`).
//! Indices are character indices, as `subs`.

use lona_term::{RawTerm, Term, View};

use super::def;
use super::regex::{pattern_of, regex_arg};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

fn string_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a str, Raise> {
    t(cx, r).as_str().ok_or_else(Raise::badarg)
}

fn string(cx: &mut BuiltinCx<'_, '_>, s: &str) -> NResult {
    cx.charge(s.len() / 64);
    Ok(cx.heap.string(s).raw())
}

/// The character index of a byte index of `s`.
fn char_index(s: &str, byte: usize) -> usize {
    s[..byte].chars().count()
}

/// The byte index of a character index of `s` (its length beyond the end).
fn byte_index(s: &str, ch: usize) -> usize {
    s.char_indices().nth(ch).map_or(s.len(), |(b, _)| b)
}

fn starts_with(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (s, p) = (string_arg(cx, a[0])?, string_arg(cx, a[1])?);
    Ok(Term::bool(s.starts_with(p)).raw())
}
fn ends_with(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (s, p) = (string_arg(cx, a[0])?, string_arg(cx, a[1])?);
    Ok(Term::bool(s.ends_with(p)).raw())
}

/// `(index-of s value)`, `(index-of s value from)`: the character index
/// of the first `value` (a string) at or after `from`, or nil.
fn index_of(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (s, v) = (string_arg(cx, a[0])?, string_arg(cx, a[1])?);
    let from = match a.get(2) {
        Some(r) => t(cx, *r).as_i64().ok_or_else(Raise::badarg)?.max(0) as usize,
        None => 0,
    };
    cx.charge(s.len() / 64);
    let start = byte_index(s, from);
    Ok(match s[start..].find(v) {
        Some(b) => cx.heap.int(char_index(s, start + b) as i64).raw(),
        None => Term::NIL.raw(),
    })
}

/// `(last-index-of s value)`, `(last-index-of s value from)`: the
/// character index of the last `value` starting at or before `from`.
fn last_index_of(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (s, v) = (string_arg(cx, a[0])?, string_arg(cx, a[1])?);
    cx.charge(s.len() / 64);
    let end = match a.get(2) {
        Some(r) => {
            let from = t(cx, *r).as_i64().ok_or_else(Raise::badarg)?;
            if from < 0 {
                return Ok(Term::NIL.raw());
            }
            (byte_index(s, from as usize) + v.len()).min(s.len())
        }
        None => s.len(),
    };
    let mut end = end;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Ok(match s[..end].rfind(v) {
        Some(b) => cx.heap.int(char_index(s, b) as i64).raw(),
        None => Term::NIL.raw(),
    })
}

/// `(blank? s)`: nil, empty or only whitespace.
fn is_blank(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    let b = match x.view() {
        View::Nil => true,
        View::Str(s) => s.trim().is_empty(),
        _ => return Err(Raise::badarg()),
    };
    Ok(Term::bool(b).raw())
}

fn triml(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim_start();
    string(cx, s)
}
fn trimr(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim_end();
    string(cx, s)
}
/// `(trim-newline s)`: `s` without its trailing newlines and returns.
fn trim_newline(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?.trim_end_matches(['\n', '\r']);
    string(cx, s)
}
/// `(capitalize s)`: the first character upper case, the rest lower.
fn capitalize(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let mut cs = s.chars();
    let out = match cs.next() {
        Some(c) => c
            .to_uppercase()
            .chain(cs.as_str().to_lowercase().chars())
            .collect(),
        None => String::new(),
    };
    string(cx, &out)
}
/// `(reverse s)`: the characters of `s` backwards.
fn reverse(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s: String = string_arg(cx, a[0])?.chars().rev().collect();
    string(cx, &s)
}

/// `(replace s match replacement)` and `replace-first`: `match` a string
/// (replaced literally) or a pattern (the replacement may name groups as
/// `$1`, `${name}`; `$$` is a dollar). A function as replacement is
/// handled in Lonala (`re-parts`).
fn replace_with(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], all: bool) -> NResult {
    let s = string_arg(cx, a[0])?;
    let with = string_arg(cx, a[2])?;
    cx.charge(s.len() / 32);
    let m = t(cx, a[1]);
    let out = if pattern_of(m).is_some() {
        let re = regex_arg(cx, a[1])?;
        if all {
            re.replace_all(s, with).into_owned()
        } else {
            re.replace(s, with).into_owned()
        }
    } else {
        let m = m.as_str().ok_or_else(Raise::badarg)?;
        if all {
            if m.is_empty() {
                // As Java: the replacement between every character.
                let mut out = String::from(with);
                for c in s.chars() {
                    out.push(c);
                    out.push_str(with);
                }
                out
            } else {
                s.replace(m, with)
            }
        } else {
            s.replacen(m, with, 1)
        }
    };
    string(cx, &out)
}
fn replace(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    replace_with(cx, a, true)
}
fn replace_first(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    replace_with(cx, a, false)
}

/// `(split-by s sep)`, `(split-by s sep limit)`: `s` cut at each match of
/// `sep` (a pattern, or a string matched literally), as Java's
/// `String.split`: trailing empty strings dropped, and with a positive
/// `limit`, at most `limit` parts (the last holding the rest).
fn split_by(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    let limit = match a.get(2) {
        Some(r) => t(cx, *r).as_i64().ok_or_else(Raise::badarg)?,
        None => 0,
    };
    cx.charge(s.len() / 32);
    let sep = t(cx, a[1]);
    let mut spans: Vec<(usize, usize)> = if pattern_of(sep).is_some() {
        let re = regex_arg(cx, a[1])?;
        re.find_iter(s).map(|m| (m.start(), m.end())).collect()
    } else {
        let p = sep.as_str().ok_or_else(Raise::badarg)?;
        if p.is_empty() {
            s.char_indices().map(|(i, _)| (i, i)).skip(1).collect()
        } else {
            s.match_indices(p).map(|(i, m)| (i, i + m.len())).collect()
        }
    };
    // A zero-width match at the start makes no leading empty part (Java).
    if spans.first() == Some(&(0, 0)) {
        spans.remove(0);
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut at = 0;
    for (b, e) in spans {
        if limit > 0 && parts.len() as i64 == limit - 1 {
            break;
        }
        parts.push(&s[at..b]);
        at = e;
    }
    parts.push(&s[at..]);
    if limit == 0 {
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
    }
    let terms: Vec<Term<'_>> = parts.iter().map(|p| cx.heap.string(p)).collect();
    cx.charge(terms.len() / 8);
    Ok(cx.heap.vector(&terms).raw())
}

/// `(split-lines s)`: `s` cut at `\n` and `\r\n` (trailing empties dropped).
fn split_lines(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = string_arg(cx, a[0])?;
    cx.charge(s.len() / 32);
    let mut parts: Vec<&str> = s
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    let terms: Vec<Term<'_>> = parts.iter().map(|p| cx.heap.string(p)).collect();
    Ok(cx.heap.vector(&terms).raw())
}

pub(super) fn install(string: &'static Namespace) {
    def(string, "starts-with?", 2, 2, starts_with);
    def(string, "ends-with?", 2, 2, ends_with);
    def(string, "index-of", 2, 3, index_of);
    def(string, "last-index-of", 2, 3, last_index_of);
    def(string, "blank?", 1, 1, is_blank);
    def(string, "triml", 1, 1, triml);
    def(string, "trimr", 1, 1, trimr);
    def(string, "trim-newline", 1, 1, trim_newline);
    def(string, "capitalize", 1, 1, capitalize);
    def(string, "reverse", 1, 1, reverse);
    def(string, "replace", 3, 3, replace);
    def(string, "replace-first", 3, 3, replace_first);
    def(string, "split-by", 2, 3, split_by);
    def(string, "split-lines", 1, 1, split_lines);
}
