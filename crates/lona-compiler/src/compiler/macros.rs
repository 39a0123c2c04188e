//! Macros: `defmacro`, their expansion at compile time, and syntax quote.
//!
//! A macro is a function (in a var marked as a macro) from forms to a
//! form. When the compiler meets a call of one, it asks its host
//! ([`Host::expand`](super::Host::expand)) to turn the argument forms
//! into terms, run the function to completion (on a scratch VM of its
//! own: macros are pure; a bounded number of reductions guards against
//! one that never ends) and turn the resulting term back into a form
//! ([`term_to_form`], with the position of the call), and compiles that
//! instead.
//!
//! Syntax quote `` `form `` builds its form at run time: symbols are
//! quoted (qualified with their namespace when they name a var, so an
//! expansion means what the macro's author meant), `~x` is the value of
//! `x`, `~@xs` splices a collection, and `name#` is a fresh symbol, the
//! same one everywhere in one syntax quote.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use lona_term::{Term, View};

use super::{Compiler, ExpandError, R};
use crate::bytecode::Reg;
use crate::var::Var;
use lona_reader::{Form, FormKind, Pos};

impl<X: Default + 'static> Compiler<'_, X> {
    pub(super) fn defmacro(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let Some(name) = items
            .get(1)
            .and_then(|n| n.as_symbol())
            .filter(|s| !s.contains('/'))
        else {
            return Err(self.err(
                f.pos,
                "defmacro needs a name: (defmacro name [params] body...)",
            ));
        };
        // Marked now: the forms after this one are compiled after it ran.
        self.ns.intern(name).set_macro(true);
        self.defn(f, items, dst, tail, false)
    }

    /// The macro var a head symbol names, if it names one.
    pub(super) fn macro_var(&self, name: &str) -> Option<&'static Var> {
        self.resolve_var(name, Pos::default())
            .ok()
            .flatten()
            .filter(|v| v.is_macro())
    }

    /// Expands one macro call.
    pub(super) fn expand_macro(&mut self, v: &'static Var, call: &Form) -> R<Form> {
        let Some(fw) = v.get() else {
            return Err(self.err(
                call.pos,
                format!("macro {} is used before it is defined", v.qualified()),
            ));
        };
        let items = call.as_list().unwrap_or(&[]);
        let args = items.get(1..).unwrap_or(&[]);
        let expanded = self.host.expand(fw, args, call.pos).map_err(|e| match e {
            ExpandError::Quote(pos, m) => self.err(pos, m.to_string()),
            ExpandError::Unfinished => self.err(
                call.pos,
                format!("expanding {} did not finish", v.qualified()),
            ),
            ExpandError::Raised(reason) => self.err(
                call.pos,
                format!("expanding {} raised {reason}", v.qualified()),
            ),
            ExpandError::Halt => self.err(call.pos, "halt during macro expansion"),
            ExpandError::Wait => self.err(call.pos, "a macro cannot wait for messages"),
            ExpandError::NotForm(m) => self.err(call.pos, format!("{}: {m}", v.qualified())),
        })?;
        Ok(restore_positions(expanded, args))
    }

    /// The code that builds `` `f ``.
    pub(super) fn syntax_quote(&self, f: &Form) -> R<Form> {
        // Generated names are salted with the template's text (key "" can
        // be no symbol's): see `fresh`.
        let mut gensyms = HashMap::new();
        let mut h = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&format!("{f:?}"), &mut h);
        let salt = std::hash::Hasher::finish(&h) as u32;
        gensyms.insert(String::new(), format!("{salt:08x}"));
        self.sq(f, &mut gensyms, 0)
    }

    fn sq(&self, f: &Form, gensyms: &mut HashMap<String, String>, depth: usize) -> R<Form> {
        if depth > super::MAX_NESTING {
            return Err(self.err(f.pos, "syntax quote nested too deeply"));
        }
        let pos = f.pos;
        let call = |head: &str, args: Vec<Form>| {
            let mut v = vec![Form::new(FormKind::Symbol(head.into()), pos)];
            v.extend(args);
            Form::new(FormKind::List(v), pos)
        };
        let quote = |x: Form| call("quote", vec![x]);
        Ok(match &f.kind {
            FormKind::Symbol(s) => {
                let name = if let Some(base) = s.strip_suffix('#').filter(|b| !b.is_empty()) {
                    let salt = gensyms.get("").cloned().unwrap_or_default();
                    gensyms
                        .entry(s.clone())
                        .or_insert_with(|| fresh(base, &salt, pos))
                        .clone()
                } else if !s.contains('/') && !is_special(s) {
                    match self.resolve_var(s, pos) {
                        Ok(Some(v)) => v.qualified(),
                        _ => s.clone(),
                    }
                } else {
                    s.clone()
                };
                quote(Form::new(FormKind::Symbol(name), pos))
            }
            FormKind::List(items) => {
                match items.first().and_then(|h| h.as_symbol()) {
                    Some("unquote") if items.len() == 2 => return Ok(items[1].clone()),
                    Some("unquote-splicing") => {
                        return Err(self.err(pos, "~@ outside a list, vector or map"))
                    }
                    _ => {}
                }
                if items.is_empty() {
                    return Ok(quote(f.clone()));
                }
                let parts = self.sq_parts(items, gensyms, depth)?;
                call(
                    "lona.core/apply",
                    vec![
                        Form::new(FormKind::Symbol("lona.core/list".into()), pos),
                        call("lona.core/concat", parts),
                    ],
                )
            }
            FormKind::Vector(items) => {
                let parts = self.sq_parts(items, gensyms, depth)?;
                call("lona.core/vec", vec![call("lona.core/concat", parts)])
            }
            FormKind::Set(items) => {
                let parts = self.sq_parts(items, gensyms, depth)?;
                call(
                    "lona.core/apply",
                    vec![
                        Form::new(FormKind::Symbol("lona.core/hash-set".into()), pos),
                        call("lona.core/concat", parts),
                    ],
                )
            }
            FormKind::Map(pairs) => {
                let flat: Vec<Form> = pairs
                    .iter()
                    .flat_map(|(k, v)| [k.clone(), v.clone()])
                    .collect();
                let parts = self.sq_parts(&flat, gensyms, depth)?;
                call(
                    "lona.core/apply",
                    vec![
                        Form::new(FormKind::Symbol("lona.core/hash-map".into()), pos),
                        call("lona.core/concat", parts),
                    ],
                )
            }
            _ => f.clone(),
        })
    }

    fn sq_parts(
        &self,
        items: &[Form],
        gensyms: &mut HashMap<String, String>,
        depth: usize,
    ) -> R<Vec<Form>> {
        let mut parts = Vec::new();
        for it in items {
            if let Some(l) = it.as_list() {
                if l.len() == 2 && l[0].as_symbol() == Some("unquote-splicing") {
                    parts.push(l[1].clone());
                    continue;
                }
            }
            let x = self.sq(it, gensyms, depth + 1)?;
            parts.push(Form::new(
                FormKind::List(vec![
                    Form::new(FormKind::Symbol("lona.core/list".into()), it.pos),
                    x,
                ]),
                it.pos,
            ));
        }
        Ok(parts)
    }
}

fn is_special(s: &str) -> bool {
    matches!(
        s,
        "quote"
            | "if"
            | "do"
            | "def"
            | "fn"
            | "let"
            | "loop"
            | "recur"
            | "match"
            | "receive"
            | "try"
            | "ns"
            | "catch"
            | "finally"
            | "&"
            | "_"
    )
}

/// A symbol no source can spell (`#` never reads as part of a symbol),
/// named by the template's text (`salt`, a hash of it) and where `base#`
/// first appears in it. The name is the same each time the same macro is
/// compiled (every node loads the prelude, the REPL redefines macros), so
/// compiling macros never grows the keyword table, which is never freed;
/// different templates get different names. Within one syntax quote each
/// `base#` has one name (as with a counter, two nested expansions of the
/// same template bind the same name).
fn fresh(base: &str, salt: &str, pos: Pos) -> String {
    format!("{base}#{salt}.{}.{}", pos.line, pos.col)
}

/// The form a term stands for (what a macro returned).
pub fn term_to_form(t: Term<'_>, pos: Pos) -> Result<Form, String> {
    let mut depth = 0usize;
    to_form(t, pos, &mut depth)
}

fn to_form(t: Term<'_>, pos: Pos, depth: &mut usize) -> Result<Form, String> {
    *depth += 1;
    if *depth > 10_000 {
        return Err("the expansion is nested too deeply".into());
    }
    // Code has no metadata: a form is what the value is.
    let kind = match t.unmeta().view() {
        View::Nil => FormKind::Nil,
        View::Bool(b) => FormKind::Bool(b),
        View::Int(i) => FormKind::Int(i),
        View::BigInt(b) => FormKind::BigInt(b),
        View::Float(x) => FormKind::Float(x),
        View::Str(s) => FormKind::Str(s.to_string()),
        View::Keyword(a) => FormKind::Keyword(a.name().to_string()),
        View::Symbol(a) => FormKind::Symbol(a.name().to_string()),
        View::EmptyList => FormKind::List(Vec::new()),
        View::Cons(..) => {
            let mut it = t.list_iter();
            let mut v = Vec::new();
            for x in &mut it {
                v.push(to_form(x, pos, depth)?);
            }
            if !it.tail().same(Term::EMPTY_LIST) {
                return Err("the expansion is an improper list".into());
            }
            FormKind::List(v)
        }
        View::Vector(items) => FormKind::Vector(
            items
                .iter()
                .map(|x| to_form(*x, pos, depth))
                .collect::<Result<_, _>>()?,
        ),
        View::Map(m) => {
            let mut v = Vec::new();
            for (k, x) in m.iter() {
                v.push((to_form(k, pos, depth)?, to_form(x, pos, depth)?));
            }
            FormKind::Map(v)
        }
        View::Set(m) => FormKind::Set(
            m.ordered_pairs()
                .into_iter()
                .map(|(k, _)| to_form(k, pos, depth))
                .collect::<Result<_, _>>()?,
        ),
        View::Regex(s) => FormKind::Regex(s.to_string()),
        View::Binary(b) => FormKind::Binary(b.to_vec()),
        other => {
            return Err(format!(
                "the expansion contains {other:?}, which is not code"
            ))
        }
    };
    *depth -= 1;
    Ok(Form::new(kind, pos))
}

/// An expansion with the positions of the call's arguments given back
/// where it holds them unchanged: a macro's result is a term, which has
/// no positions (`term_to_form` places all of it at the call), so each
/// list, vector, map or set of the expansion that is the same as one of
/// the arguments' (or one inside them) takes that one's positions, and a
/// symbol that is an argument its own. So an error in the body of a
/// `deftest` or a `when` names the line and column of the offending form,
/// not of the macro call.
fn restore_positions(mut expanded: Form, args: &[Form]) -> Form {
    let mut table: HashMap<u64, Vec<&Form>> = HashMap::new();
    let mut syms: HashMap<&str, Pos> = HashMap::new();
    for a in args {
        index(a, &mut table);
        if let FormKind::Symbol(s) = &a.kind {
            syms.entry(s.as_str()).or_insert(a.pos);
        }
    }
    if !table.is_empty() || !syms.is_empty() {
        restore(&mut expanded, &table, &syms, 0);
    }
    expanded
}

fn is_compound(f: &Form) -> bool {
    match &f.kind {
        FormKind::List(v) | FormKind::Vector(v) | FormKind::Set(v) => !v.is_empty(),
        FormKind::Map(m) => !m.is_empty(),
        _ => false,
    }
}

/// A hash of a form's shape, positions left out (equal for forms that
/// are `same_as` each other).
fn leaf_hash(f: &Form, h: &mut std::collections::hash_map::DefaultHasher) {
    std::mem::discriminant(&f.kind).hash(h);
    match &f.kind {
        FormKind::Bool(b) => b.hash(h),
        FormKind::Int(i) => i.hash(h),
        FormKind::BigInt(b) => b.hash(h),
        FormKind::Float(x) if !x.is_nan() => x.to_bits().hash(h),
        FormKind::Str(s) | FormKind::Keyword(s) | FormKind::Symbol(s) | FormKind::Regex(s) => {
            s.hash(h)
        }
        _ => {}
    }
}

/// Hashes `f` and every compound form inside it into `table`.
fn index<'f>(f: &'f Form, table: &mut HashMap<u64, Vec<&'f Form>>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    leaf_hash(f, &mut h);
    match &f.kind {
        FormKind::List(v) | FormKind::Vector(v) | FormKind::Set(v) => {
            for x in v {
                index(x, table).hash(&mut h);
            }
        }
        FormKind::Map(m) => {
            for (k, x) in m {
                index(k, table).hash(&mut h);
                index(x, table).hash(&mut h);
            }
        }
        _ => {}
    }
    let h = h.finish();
    if is_compound(f) {
        table.entry(h).or_default().push(f);
    }
    h
}

/// Gives `f` (and what is inside it) the positions of an equal form of
/// `table`; returns its hash.
fn restore(
    f: &mut Form,
    table: &HashMap<u64, Vec<&Form>>,
    syms: &HashMap<&str, Pos>,
    depth: usize,
) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    leaf_hash(f, &mut h);
    // Deeper than the reader nests, only the hash matters (no position
    // is restored there).
    let deep = depth > lona_reader::MAX_DEPTH;
    match &mut f.kind {
        FormKind::List(v) | FormKind::Vector(v) | FormKind::Set(v) => {
            for x in v {
                restore(x, table, syms, depth + 1).hash(&mut h);
            }
        }
        FormKind::Map(m) => {
            for (k, x) in m {
                restore(k, table, syms, depth + 1).hash(&mut h);
                restore(x, table, syms, depth + 1).hash(&mut h);
            }
        }
        FormKind::Symbol(s) if !deep => {
            if let Some(p) = syms.get(s.as_str()) {
                f.pos = *p;
            }
        }
        _ => {}
    }
    let h = h.finish();
    if is_compound(f) && !deep {
        if let Some(orig) = table.get(&h).and_then(|v| v.iter().find(|o| o.same_as(f))) {
            *f = (*orig).clone();
        }
    }
    h
}
