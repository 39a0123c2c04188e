//! The Rust side of `lona.test` (`src/lonala/test.lona`), in namespace
//! `lona.test.impl`:
//!
//! - `(call-form? 'sym)`: whether `(sym args...)` is a function call whose
//!   arguments `is` may evaluate one by one to report their values, i.e.
//!   `sym` is neither a special form, nor a form the compiler expands
//!   (`when`, `and`, `doseq`...), nor a macro of any namespace. Asked at
//!   macro-expansion time, where the caller's namespace is unknown, so a
//!   macro is recognised by name in every namespace.

use lona_term::{RawTerm, Term, View};

use super::def;
use crate::env::Env;
use crate::native::{BuiltinCx, NResult};

/// Heads the compiler handles itself (special forms and built-in
/// expansions), plus the expansions other Lonala versions add.
const SPECIAL: &[&str] = &[
    "quote",
    "if",
    "do",
    "def",
    "defn",
    "defn-",
    "declare",
    "fn",
    "let",
    "loop",
    "recur",
    "match",
    "try",
    "stacktrace",
    "ns",
    "receive",
    "defmacro",
    "syntax-quote",
    "unquote",
    "unquote-splicing",
    "when",
    "when-not",
    "if-not",
    "cond",
    "and",
    "or",
    "->",
    "->>",
    "case",
    "if-let",
    "when-let",
    "comment",
    "doseq",
    "for",
    "dotimes",
    "letfn",
    "some->",
    "some->>",
    "as->",
    "condp",
    "cond->",
    "cond->>",
    "lazy-seq",
    "assert",
    "time",
    "when-some",
    "if-some",
    "when-first",
    "binding",
    "var",
    "throw",
    "set!",
];

fn call_form(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let s = match cx.term(a[0]).view() {
        View::Symbol(s) => s.name().to_string(),
        _ => return Ok(Term::FALSE.raw()),
    };
    if SPECIAL.contains(&s.as_str()) {
        return Ok(Term::FALSE.raw());
    }
    let env = cx.env;
    let is_macro = match s.rsplit_once('/') {
        Some((ns, n)) if !ns.is_empty() => env
            .namespaces
            .get(ns)
            .and_then(|ns| ns.lookup(n))
            .is_some_and(|v| v.is_macro()),
        _ => env.namespaces.names().iter().any(|ns| {
            env.namespaces
                .get(ns)
                .and_then(|ns| ns.lookup(&s))
                .is_some_and(|v| v.is_macro())
        }),
    };
    Ok(if is_macro { Term::FALSE } else { Term::TRUE }.raw())
}

pub(super) fn install(env: &Env) {
    let ns = env.namespaces.get_or_create("lona.test.impl");
    def(ns, "call-form?", 1, 1, call_form);
}
