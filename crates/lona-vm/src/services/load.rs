//! Code at run time, the Rust half (`src/lonala/load.lona` is the other):
//! `read-string` in `lona.core`, and the leaf steps of `eval`, `load` and
//! `require` in `lona.code` (compiling a form, reading a file's forms,
//! applying an `ns` form, finding a namespace's source), which the Lonala
//! half strings together so that running the code stays preemptible.
//!
//! Errors are raised as `[:read-error "msg"]`, `[:compile-error "msg"]`
//! and `[:load-error "msg"]`, the message naming file, line and column
//! where there is one.

use crate::NodeEnv;
use std::path::{Path, PathBuf};

use lona_term::{RawTerm, Term, View};

use super::def;
use crate::bytecode::Proto;
use crate::compiler::{form_to_term, term_to_form, Compiler};
use crate::env::Env;
use crate::host::NodeHost;
use crate::native::{BuiltinCx, NResult, Raise};
use lona_reader::Reader;
use lona_reader::{Form, FormKind, Pos, Source};

fn fail(cx: &BuiltinCx<'_, '_>, kind: &str, msg: &str) -> Raise {
    Raise::error(cx.heap.vector(&[Term::keyword(kind), cx.heap.string(msg)]))
}

/// A string argument (or a symbol's name, or `nil` as "").
fn text_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<String, Raise> {
    match cx.term(r).view() {
        View::Str(s) => Ok(s.to_string()),
        View::Symbol(a) => Ok(a.name().to_string()),
        View::Nil => Ok(String::new()),
        _ => Err(Raise::badarg()),
    }
}

fn symbol_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<String, Raise> {
    match cx.term(r).view() {
        View::Symbol(a) => Ok(a.name().to_string()),
        _ => Err(Raise::badarg()),
    }
}

/// `(read-string s)`: the first form of `s`, as data.
fn read_string(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let View::Str(s) = cx.term(a[0]).view() else {
        return Err(Raise::badarg());
    };
    cx.charge(s.len() / 16);
    let src = Source::new("<string>", s.to_string());
    let mut r = Reader::new(&src);
    match r.next_form() {
        Ok(Some(f)) => form_to_term(cx.heap, &f)
            .map(|t| t.raw())
            .map_err(|m| fail(cx, "read-error", &m.to_string())),
        Ok(None) => Err(fail(cx, "read-error", "<string>: end of input")),
        Err(e) => Err(fail(cx, "read-error", &e.to_string())),
    }
}

/// `(lona.code/read-all text name)`: every form of `text`, as a list.
fn read_all(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let text = text_arg(cx, a[0])?;
    let name = text_arg(cx, a[1])?;
    cx.charge(text.len() / 16);
    let src = Source::new(name, text);
    let forms = lona_reader::read_all(&src).map_err(|e| fail(cx, "read-error", &e.to_string()))?;
    let mut terms = Vec::with_capacity(forms.len());
    for f in &forms {
        terms.push(form_to_term(cx.heap, f).map_err(|m| fail(cx, "read-error", &m.to_string()))?);
    }
    Ok(cx.heap.list(&terms).raw())
}

/// `(lona.code/slurp path)`: a file's text, of at most 64 MB
/// (`builtins/file.rs`'s bound on a whole file).
fn slurp(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let path = text_arg(cx, a[0])?;
    let text = super::file::read_text(&path).map_err(|e| {
        let why = if crate::files::is_limit(&e) {
            format!(
                "file too large (more than {} MB)",
                crate::files::MAX_WHOLE >> 20
            )
        } else {
            e.to_string()
        };
        fail(cx, "load-error", &format!("{path}: {why}"))
    })?;
    cx.charge(text.len() / 64);
    Ok(cx.heap.string(&text).raw())
}

/// `(lona.code/compile form ns file)`: a function of no arguments that
/// runs `form`, compiled in namespace `ns` (made if needed).
fn compile(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let ns = symbol_arg(cx, a[1])?;
    let file = text_arg(cx, a[2])?;
    let file = if file.is_empty() {
        "<eval>".to_string()
    } else {
        file
    };
    let form = term_to_form(cx.term(a[0]), Pos::default())
        .map_err(|m| fail(cx, "compile-error", &format!("{file}: {m}")))?;
    if is_ns_form(&form) {
        return Err(fail(
            cx,
            "compile-error",
            &format!("{file}: ns must be a top-level form of a file"),
        ));
    }
    let env = cx.env.clone();
    let ns = env.namespaces.get_or_create(&ns);
    // SAFETY: the host is given only to this compiler.
    let host = unsafe { NodeHost::new(&env) };
    let proto: &Proto = Compiler::new(&host, ns, file.into())
        .compile_toplevel(&form)
        .map_err(|e| fail(cx, "compile-error", &e.to_string()))?;
    // SAFETY: the code id of a compiled, leaked (never freed) prototype.
    Ok(unsafe { cx.heap.closure(proto.code_id(), &[]) }.raw())
}

fn is_ns_form(f: &Form) -> bool {
    f.as_list()
        .and_then(|l| l.first())
        .and_then(|h| h.as_symbol())
        == Some("ns")
}

/// `(lona.code/ns! form file)`: applies `(ns name (:require ...))` (the
/// namespace, its aliases and refers) and returns `[name targets]`, the
/// namespaces it requires, in order.
fn ns_bang(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let file = text_arg(cx, a[1])?;
    let form = term_to_form(cx.term(a[0]), Pos::default())
        .map_err(|m| fail(cx, "compile-error", &format!("{file}: {m}")))?;
    let items = form.as_list().unwrap_or(&[]);
    let Some(name) = items.get(1).and_then(|n| n.as_symbol()) else {
        return Err(fail(
            cx,
            "compile-error",
            &format!("{file}: ns needs a name"),
        ));
    };
    let ns = cx.env.namespaces.get_or_create(name);
    let mut targets = Vec::new();
    for clause in &items[2..] {
        let cl = clause.as_list().unwrap_or(&[]);
        if cl.first().and_then(|k| k.as_keyword()) != Some("require") {
            return Err(fail(
                cx,
                "compile-error",
                &format!("{file}: ns supports (:require ...) clauses"),
            ));
        }
        for spec in &cl[1..] {
            let t = apply_spec(ns, spec)
                .map_err(|m| fail(cx, "compile-error", &format!("{file}: {m}")))?;
            targets.push(Term::symbol(&t));
        }
    }
    let v = cx.heap.vector(&targets);
    Ok(cx.heap.vector(&[Term::symbol(name), v]).raw())
}

/// Applies one require spec (`a.b` or `[a.b :as x :refer [f]]`) to `ns`;
/// the namespace it names.
fn apply_spec(ns: &'static crate::var::Namespace, spec: &Form) -> Result<String, String> {
    match &spec.kind {
        FormKind::Symbol(s) => Ok(s.clone()),
        FormKind::Vector(v) => {
            let Some(t) = v.first().and_then(|x| x.as_symbol()) else {
                return Err("expected [namespace :as alias :refer [names]]".into());
            };
            crate::eval::require_options(ns, t, &v[1..]).map_err(|(_, m)| m)?;
            Ok(t.to_string())
        }
        _ => Err("expected a namespace or [namespace :as alias :refer [names]]".into()),
    }
}

/// `(lona.code/require-spec! ns spec)`: applies a require spec to `ns`;
/// the namespace it names (a symbol).
fn require_spec(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let ns = symbol_arg(cx, a[0])?;
    let spec =
        term_to_form(cx.term(a[1]), Pos::default()).map_err(|m| fail(cx, "load-error", &m))?;
    let ns = cx.env.namespaces.get_or_create(&ns);
    let t = apply_spec(ns, &spec).map_err(|m| fail(cx, "load-error", &m))?;
    Ok(Term::symbol(&t).raw())
}

/// The directory of `file` (a source's name), if it is a file's.
fn dir_of(file: &str) -> Option<PathBuf> {
    if file.is_empty() || file.starts_with('<') {
        return None;
    }
    Path::new(file).parent().map(|p| p.to_path_buf())
}

/// Where to look: under the source root of `file` when it is the file of
/// namespace `ns` (see [`crate::eval::source_root`]), beside `file` (the
/// current directory for code not from a file), then `LONA_PATH`.
fn search_dirs(env: &Env, file: &str, ns: Option<&str>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ns
        .filter(|_| dir_of(file).is_some())
        .and_then(|ns| crate::eval::source_root(Path::new(file), ns))
        .into_iter()
        .collect();
    // Code not from a file (`lona eval`, the REPL, `eval` as a value):
    // the current directory, as the top-level evaluator does.
    dirs.push(dir_of(file).unwrap_or_default());
    dirs.extend(env.node().load_path());
    dirs
}

/// `(lona.code/resolve-load path file)`: the file `(load path)` in `file`
/// means: an absolute path as is; a relative one beside `file`, then in
/// each `LONA_PATH` directory, then from the current directory.
fn resolve_load(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let path = text_arg(cx, a[0])?;
    let file = text_arg(cx, a[1])?;
    let p = Path::new(&path);
    let found = if p.is_absolute() {
        p.is_file().then(|| p.to_path_buf())
    } else {
        search_dirs(cx.env, &file, None)
            .into_iter()
            .map(|d| d.join(p))
            .chain(std::iter::once(p.to_path_buf()))
            .find(|c| c.is_file())
    };
    match found {
        Some(f) => Ok(cx.heap.string(&f.display().to_string()).raw()),
        None => Err(fail(
            cx,
            "load-error",
            &format!("cannot find {path} (beside {file}, in LONA_PATH or the current directory)"),
        )),
    }
}

/// `(lona.code/ns-source target file ns)`: `[name text]` of namespace
/// `target`, required by namespace `ns` written in `file`: one that comes
/// with Lonala, else `a/b.lona` under `file`'s source root, beside `file`,
/// then in `LONA_PATH`; `nil` if none.
fn ns_source(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let target = symbol_arg(cx, a[0])?;
    let file = text_arg(cx, a[1])?;
    let from = symbol_arg(cx, a[2])?;
    if let Some(text) = crate::eval::library(&target) {
        let name = cx.heap.string(&format!("<{target}>"));
        return Ok(cx.heap.vector(&[name, cx.heap.string(text)]).raw());
    }
    let rel = format!("{}.lona", target.replace('.', "/"));
    let Some(path) = search_dirs(cx.env, &file, Some(&from))
        .into_iter()
        .map(|d| d.join(&rel))
        .find(|p| p.is_file())
    else {
        return Ok(Term::NIL.raw());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| fail(cx, "load-error", &format!("{}: {e}", path.display())))?;
    cx.charge(text.len() / 64);
    let name = cx.heap.string(&path.display().to_string());
    Ok(cx.heap.vector(&[name, cx.heap.string(&text)]).raw())
}

/// `(lona.code/loaded? target)`: whether the namespace was loaded (or
/// defined some other way).
fn loaded(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let target = symbol_arg(cx, a[0])?;
    let env = cx.env;
    let yes = env.node().loaded(&target)
        || env
            .namespaces
            .get(&target)
            .is_some_and(|n| !n.vars().is_empty());
    Ok(Term::bool(yes).raw())
}

/// `(lona.code/mark-loaded! target)`.
fn mark_loaded(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let target = symbol_arg(cx, a[0])?;
    cx.env.node().mark_loaded(target);
    Ok(Term::NIL.raw())
}

pub(super) fn install(env: &Env) {
    def(env.core, "read-string", 1, 1, read_string);
    let ns = env.namespaces.get_or_create("lona.code");
    def(ns, "read-all", 2, 2, read_all);
    def(ns, "slurp", 1, 1, slurp);
    def(ns, "compile", 3, 3, compile);
    def(ns, "ns!", 2, 2, ns_bang);
    def(ns, "require-spec!", 2, 2, require_spec);
    def(ns, "resolve-load", 2, 2, resolve_load);
    def(ns, "ns-source", 3, 3, ns_source);
    def(ns, "loaded?", 1, 1, loaded);
    def(ns, "mark-loaded!", 1, 1, mark_loaded);
}
