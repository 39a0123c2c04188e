//! Regular expressions on the `regex` crate: `re-pattern`, `re-find`,
//! `re-matches`, `re-seq`, and the matching half of `clojure.string`'s
//! `replace` and `split`.
//!
//! A pattern value is the term kind `Regex` (`#"..."` or `re-pattern`),
//! which holds its source string; it is told apart from a string
//! (`(clojure.string/replace s "." "x")` replaces dots, `#"."` any
//! character). Compiled
//! regexes are cached per worker thread by source (no lock; compiled once
//! per pattern and thread; the cache is dropped when it reaches
//! `CACHE_MAX` patterns). A pattern from data is bounded: at most
//! `MAX_SOURCE` bytes, and the crate's compiled-size and nesting limits
//! (`SIZE_LIMIT`, `NEST_LIMIT`); beyond them `[:bad-regex message]`.
//! Matching is linear in the text (the crate has no backtracking); it is
//! charged as reductions.
//!
//! Positions are character indices, as `subs` and `index-of`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use lona_term::{RawTerm, Term, View};
use regex::{Captures, Regex, RegexBuilder};

use super::def;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

/// The longest pattern source accepted.
const MAX_SOURCE: usize = 32 * 1024;
/// The compiled program's limit (bytes), and the lazy DFA's.
const SIZE_LIMIT: usize = 1 << 20;
/// The deepest nesting of groups and repetitions.
const NEST_LIMIT: u32 = 64;
/// Patterns cached per worker thread.
const CACHE_MAX: usize = 256;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

/// The source of a pattern value (`#"..."`, `re-pattern`), if `x` is one.
pub(crate) fn pattern_of(x: Term<'_>) -> Option<&str> {
    match x.view() {
        View::Regex(s) => Some(s),
        _ => None,
    }
}

fn bad_regex(cx: &BuiltinCx<'_, '_>, msg: &str) -> Raise {
    let m = cx.heap.string(msg);
    Raise::error(cx.heap.vector(&[lona_term::kw!("bad-regex"), m]))
}

thread_local! {
    static CACHE: RefCell<HashMap<String, Rc<Regex>>> = RefCell::new(HashMap::new());
}

/// The compiled regex of `src` (cached).
fn compile(cx: &mut BuiltinCx<'_, '_>, src: &str) -> Result<Rc<Regex>, Raise> {
    if let Some(r) = CACHE.with(|c| c.borrow().get(src).cloned()) {
        return Ok(r);
    }
    if src.len() > MAX_SOURCE {
        return Err(bad_regex(cx, "pattern too long"));
    }
    cx.charge(src.len() / 4 + 10);
    let re = RegexBuilder::new(src)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()
        .map_err(|e| bad_regex(cx, &e.to_string()))?;
    let re = Rc::new(re);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_MAX {
            c.clear();
        }
        c.insert(src.to_string(), re.clone());
    });
    Ok(re)
}

/// The regex of a pattern argument (a pattern value; `:badarg` otherwise).
pub(crate) fn regex_arg(cx: &mut BuiltinCx<'_, '_>, r: RawTerm) -> Result<Rc<Regex>, Raise> {
    let x = t(cx, r);
    let src = pattern_of(x).ok_or_else(Raise::badarg)?;
    compile(cx, src)
}

fn string_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a str, Raise> {
    t(cx, r).as_str().ok_or_else(Raise::badarg)
}

/// `(re-pattern s)`: the pattern of a source string (a pattern as is).
fn re_pattern(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    if pattern_of(x).is_some() {
        return Ok(a[0]);
    }
    let src = x.as_str().ok_or_else(Raise::badarg)?;
    compile(cx, src)?;
    Ok(cx.heap.regex(src).raw())
}

/// `(regex? x)`
fn is_regex(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(pattern_of(t(cx, a[0])).is_some()).raw())
}

/// What Clojure's matching functions return for one match: the matched
/// string without groups, else `[whole group1 ...]` (nil for a group that
/// took no part).
fn result<'h>(cx: &BuiltinCx<'h, '_>, c: &Captures<'_>) -> Term<'h> {
    if c.len() == 1 {
        return cx.heap.string(c.get(0).map_or("", |m| m.as_str()));
    }
    let parts: Vec<Term<'h>> = c
        .iter()
        .map(|m| m.map_or(Term::NIL, |m| cx.heap.string(m.as_str())))
        .collect();
    cx.heap.vector(&parts)
}

/// `(re-find re s)`: the first match (see `result`), or nil.
fn re_find(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let re = regex_arg(cx, a[0])?;
    let s = string_arg(cx, a[1])?;
    cx.charge(s.len() / 64);
    Ok(match re.captures(s) {
        Some(c) => result(cx, &c).raw(),
        None => Term::NIL.raw(),
    })
}

/// `(re-matches re s)`: the match of the whole string, or nil.
fn re_matches(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let re = regex_arg(cx, a[0])?;
    let s = string_arg(cx, a[1])?;
    cx.charge(s.len() / 64);
    // The leftmost-first match need not be the longest: look for a match
    // anchored at both ends.
    let anchored = compile(cx, &format!(r"\A(?:{})\z", re.as_str()))?;
    Ok(match anchored.captures(s) {
        Some(c) => result(cx, &c).raw(),
        None => Term::NIL.raw(),
    })
}

/// `(re-seq re s)`: every match in turn (a list), or nil.
fn re_seq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let re = regex_arg(cx, a[0])?;
    let s = string_arg(cx, a[1])?;
    cx.charge(s.len() / 64);
    let all: Vec<Term<'_>> = re.captures_iter(s).map(|c| result(cx, &c)).collect();
    cx.charge(all.len() / 8);
    if all.is_empty() {
        return Ok(Term::NIL.raw());
    }
    Ok(cx.heap.list(&all).raw())
}

/// `(re-parts re s all?)`: `s` cut at the matches of `re` (every match,
/// or only the first): a list of strings (the text between) and
/// one-element vectors holding each match's `result`, for a replacement
/// computed by a function.
fn re_parts(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let re = regex_arg(cx, a[0])?;
    let s = string_arg(cx, a[1])?;
    let all = crate::tag::truthy(a[2].bits());
    cx.charge(s.len() / 64);
    let mut out = Vec::new();
    let mut at = 0;
    for c in re.captures_iter(s) {
        let Some(m) = c.get(0) else { continue };
        out.push(cx.heap.string(&s[at..m.start()]));
        let r = result(cx, &c);
        out.push(cx.heap.vector(&[r]));
        at = m.end();
        if !all {
            break;
        }
    }
    out.push(cx.heap.string(&s[at..]));
    cx.charge(out.len() / 8);
    Ok(cx.heap.list(&out).raw())
}

pub(super) fn install(core: &'static Namespace) {
    def(core, "re-pattern", 1, 1, re_pattern);
    def(core, "regex?", 1, 1, is_regex);
    def(core, "re-find", 2, 2, re_find);
    def(core, "re-matches", 2, 2, re_matches);
    def(core, "re-seq", 2, 2, re_seq);
    def(core, "re-parts", 3, 3, re_parts);
}
