//! Quoted forms: the term a form stands for (`quote`, a literal's
//! constant, a macro's arguments), with the metadata `^` gave it, and
//! whether a form is a constant at all.

use lona_reader::{Form, FormKind};
use lona_term::{Heap, Term};

pub(crate) fn is_constant(f: &Form) -> bool {
    if f.meta.as_deref().is_some_and(|m| !is_constant(m)) {
        return false;
    }
    match &f.kind {
        FormKind::Symbol(_) | FormKind::List(_) => false,
        FormKind::Vector(v) | FormKind::Set(v) => v.iter().all(is_constant),
        FormKind::Map(m) => m.iter().all(|(k, v)| is_constant(k) && is_constant(v)),
        _ => true,
    }
}

/// The term a quoted form stands for: with the metadata `^` gave it, if it
/// is a vector, list, map or set.
pub fn form_to_term<'h>(heap: &'h Heap, f: &Form) -> Result<Term<'h>, crate::error::QuoteError> {
    let t = bare_form_to_term(heap, f)?;
    Ok(match &f.meta {
        Some(m) if t.takes_meta() => {
            let m = form_to_term(heap, m)?;
            heap.with_meta(t, m).unwrap_or(t)
        }
        _ => t,
    })
}

fn bare_form_to_term<'h>(heap: &'h Heap, f: &Form) -> Result<Term<'h>, crate::error::QuoteError> {
    Ok(match &f.kind {
        FormKind::Nil => Term::NIL,
        FormKind::Bool(b) => Term::bool(*b),
        FormKind::Int(i) => heap.int(*i),
        FormKind::BigInt(b) => heap.bigint(b),
        FormKind::Float(x) => heap.float(*x),
        FormKind::Str(s) => heap.string(s),
        FormKind::Keyword(k) => {
            Term::keyword_atom(lona_term::Atom::try_new(k).map_err(|source| {
                crate::error::QuoteError {
                    name: format!(":{k}"),
                    source,
                }
            })?)
        }
        FormKind::Symbol(s) => {
            Term::symbol_atom(lona_term::Atom::try_new(s).map_err(|source| {
                crate::error::QuoteError {
                    name: s.to_string(),
                    source,
                }
            })?)
        }
        FormKind::List(items) => {
            let v: Vec<Term<'h>> = items
                .iter()
                .map(|i| form_to_term(heap, i))
                .collect::<Result<_, _>>()?;
            heap.list(&v)
        }
        FormKind::Vector(items) => {
            let v: Vec<Term<'h>> = items
                .iter()
                .map(|i| form_to_term(heap, i))
                .collect::<Result<_, _>>()?;
            heap.vector(&v)
        }
        FormKind::Map(pairs) => {
            let mut v = Vec::new();
            for (k, x) in pairs {
                v.push((form_to_term(heap, k)?, form_to_term(heap, x)?));
            }
            heap.map(&v)
        }
        FormKind::Set(items) => {
            let v: Vec<Term<'h>> = items
                .iter()
                .map(|i| form_to_term(heap, i))
                .collect::<Result<_, _>>()?;
            heap.set(&v)
        }
        FormKind::Regex(s) => heap.regex(s),
        FormKind::Binary(b) => heap.binary(b),
    })
}
