//! Evaluating programs: files and strings of top-level forms, `ns` and
//! `require`, the prelude, `-main`.
//!
//! An [`Evaluator`] is a resumable state machine over a [`Vm`]:
//!
//! 1. Take the next form of the innermost *unit* (a file or a string
//!    being evaluated); a finished unit is popped.
//! 2. `(ns name (:require [a.b :as c]))` switches the unit's namespace,
//!    records the aliases and, for a namespace not loaded yet, pushes a
//!    unit for it: one that comes with Lonala (`lona.server`,
//!    `lona.supervisor`, `lona.dynamic-supervisor`, `lona.test`, in
//!    `src/lonala/`), else `a/b.lona` found beside the
//!    running file, then in `LONA_PATH`; `(load "file.lona")` pushes a
//!    unit for that file.
//! 3. Any other form is compiled into a thunk, and the VM runs it, in
//!    slices of reductions: [`Evaluator::step`] returns
//!    [`Progress::Yield`] when a slice is spent and continues next time.
//! 4. When every unit is done and a `-main` call was asked for, it runs
//!    last with the program's arguments.

use crate::NodeEnv;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lona_term::{RawTerm, Term};

use crate::compiler::{CompileError, Compiler};
use crate::env::Env;
use crate::host::NodeHost;
use crate::native::Raise;
use crate::var::Namespace;
use crate::vm::{Outcome, Vm};
use lona_reader::read_all;
use lona_reader::{Form, FormKind, Source};

pub use crate::error::EvalError;

/// How far [`Evaluator::step`] got.
#[derive(Debug)]
pub enum Progress {
    /// The slice is spent; call again.
    Yield,
    /// Everything ran; the value of the last form.
    Done,
    /// Stopped with an error.
    Failed(EvalError),
    /// `(halt n)`.
    Halt(i32),
    /// Waiting in a `receive`: step again when a message arrives.
    Wait,
    /// The heap outgrew its maximum: the process must be killed.
    HeapLimit(lona_term::HeapError),
}

struct Unit {
    file: Arc<str>,
    dir: Option<PathBuf>,
    ns: &'static Namespace,
    forms: VecDeque<Form>,
    /// A namespace this unit loads for a `require` (marked loaded at end).
    provides: Option<String>,
}

/// Evaluates units of forms on a VM (see the module documentation).
pub struct Evaluator {
    env: Arc<Env>,
    /// The interpreter (its heap is the process's heap).
    pub(crate) vm: Vm,
    units: Vec<Unit>,
    running: bool,
    main: Option<(&'static Namespace, Vec<String>)>,
    main_started: bool,
    /// The value of the last form evaluated (a root of the heap).
    last: lona_term::Root,
    /// The namespace the last unit ended in (the REPL keeps it).
    pub ns: &'static Namespace,
    /// Print the last value (readably) to the node's output when done.
    print_last: bool,
}

impl Evaluator {
    /// Words in use on the VM's stack (tests of stack growth).
    pub fn stack_words(&self) -> usize {
        self.vm.stack_words()
    }

    /// Words in use on the process heap (tests of heap growth).
    pub fn heap_words(&self) -> usize {
        self.vm.heap.heap_words()
    }

    /// Limits the VM's register stack to `words` (at least 64); deeper
    /// calls raise `:system-limit`.
    pub fn set_stack_limit(&mut self, words: usize) {
        self.vm.set_stack_limit(words);
    }

    /// Limits the VM's heap and stack to `words` in all (0: no limit, the
    /// default outside a process): past it, [`Evaluator::step`] gives
    /// [`Progress::HeapLimit`], as `:max-heap-size` kills a process.
    pub fn set_max_heap_size(&mut self, words: usize) {
        self.vm.heap.set_max_heap_size(words);
    }

    /// Reductions the VM has spent (the compiling tier must charge the
    /// interpreter's: `tests/jit.rs`).
    pub fn reductions(&self) -> u64 {
        self.vm.reductions
    }

    /// Runs a major collection of the process heap now (between steps).
    pub fn collect_major(&mut self) {
        self.vm.collect_major();
    }

    // `Evaluator::new`, which starts the node first if it has not
    // started, is in `boot.rs`, above the node's built-ins.

    /// [`Evaluator::new`] on a node whose start may not have run (the
    /// start itself, loading the prelude).
    pub(crate) fn unbooted(env: Arc<Env>) -> Evaluator {
        // SAFETY: the evaluator starts only thunks it compiled (their
        // closures made on this heap) and words of this heap.
        let mut vm = unsafe { Vm::new(env.clone()) };
        // Outside any process until a process takes it (`purge`): its
        // heap pins the closures that enter it meanwhile.
        vm.census = lona_compiler::area::Census::unmanaged();
        vm.heap.set_visited(false);
        let last = vm.heap.add_root(Term::NIL);
        let ns = env.namespaces.get_or_create("user");
        Evaluator {
            env,
            vm,
            units: Vec::new(),
            running: false,
            main: None,
            main_started: false,
            last,
            ns,
            print_last: false,
        }
    }

    /// Whether to print the value of the last form when everything ran
    /// (`lona eval`).
    pub fn print_last_value(&mut self, on: bool) {
        self.print_last = on;
    }

    /// Queues the forms of `src` (in namespace `user` unless it says
    /// otherwise with `ns`).
    pub fn push_source(&mut self, src: &Source) -> Result<(), EvalError> {
        let forms = read_all(src).map_err(EvalError::Read)?;
        let dir = Path::new(&*src.name).parent().map(|p| p.to_path_buf());
        self.units.push(Unit {
            file: src.name.clone(),
            dir,
            ns: self.ns,
            forms: forms.into(),
            provides: None,
        });
        Ok(())
    }

    /// Queues a file.
    pub fn push_file(&mut self, path: &Path) -> Result<(), EvalError> {
        let text = read_source_file(path)?;
        self.push_source(&Source::new(path.display().to_string(), text))
    }

    /// After the queued units, call `-main` of the namespace the first
    /// unit ends in (if it defines one) with these arguments.
    pub fn call_main_after(&mut self, args: Vec<String>) {
        self.main = Some((self.ns, args));
    }

    /// The value of the last form evaluated.
    pub fn last_value(&self) -> Term<'_> {
        self.vm.heap.root(self.last)
    }

    /// Runs for at most `budget` reductions, outside any process.
    pub fn step(&mut self, budget: i32) -> Progress {
        self.step_in(budget, None)
    }

    /// Runs for at most `budget` reductions as the process `rt` is the
    /// runtime of.
    pub fn step_in(
        &mut self,
        budget: i32,
        mut rt: Option<&mut lona_runtime::StepCx<'_>>,
    ) -> Progress {
        let mut budget = budget;
        loop {
            if self.running {
                let before = self.vm.reductions;
                match self.vm.run_in(budget, rt.as_deref_mut()) {
                    Outcome::Yield => return Progress::Yield,
                    Outcome::Wait => return Progress::Wait,
                    Outcome::HeapLimit(e) => return Progress::HeapLimit(e),
                    Outcome::Done(v) => {
                        self.running = false;
                        // SAFETY: the VM just returned this word of its heap.
                        let t = unsafe { self.vm.heap.term(v) };
                        self.vm.heap.set_root(self.last, t);
                        let spent = (self.vm.reductions - before) as i32;
                        budget -= spent.max(1);
                        if budget <= 0 {
                            return Progress::Yield;
                        }
                    }
                    Outcome::Halt(n) => return Progress::Halt(n),
                    Outcome::Raised(r) => return Progress::Failed(self.uncaught(r)),
                }
                continue;
            }
            let Some(unit) = self.units.last_mut() else {
                if let Some((ns, args)) = self.main.clone() {
                    if !self.main_started {
                        self.main_started = true;
                        let ns = self.unit_ns_after(ns);
                        if let Some(v) = ns.lookup("-main").and_then(|v| v.get()) {
                            let argv: Vec<RawTerm> =
                                args.iter().map(|a| self.vm.heap.string(a).raw()).collect();
                            self.vm.start(v, &argv);
                            self.running = true;
                            continue;
                        }
                    }
                }
                if self.print_last {
                    let mut s = String::new();
                    crate::print::readable(&mut s, self.last_value());
                    s.push('\n');
                    self.env.write_out(&s);
                }
                return Progress::Done;
            };
            let Some(form) = unit.forms.pop_front() else {
                let u = self.units.pop().expect("unit");
                if let Some(name) = u.provides {
                    self.env.node().mark_loaded(name);
                } else {
                    self.ns = u.ns;
                }
                continue;
            };
            let (ns, file) = (unit.ns, unit.file.clone());
            if let Err(e) = self.toplevel(form, ns, file) {
                return Progress::Failed(e);
            }
        }
    }

    fn unit_ns_after(&self, default: &'static Namespace) -> &'static Namespace {
        if std::ptr::eq(default, self.ns) {
            default
        } else {
            self.ns
        }
    }

    /// Handles one top-level form: `ns`, `load`, or compile and start it.
    fn toplevel(
        &mut self,
        form: Form,
        ns: &'static Namespace,
        file: Arc<str>,
    ) -> Result<(), EvalError> {
        // `ns` (and an empty `load`) run no code: their value is nil, not
        // the value of the form before.
        self.vm.heap.set_root(self.last, Term::NIL);
        if let Some(items) = form.as_list() {
            match items.first().and_then(|h| h.as_symbol()) {
                Some("ns") => return self.ns_form(&form, items, file),
                Some("load") if items.len() == 2 && ns.lookup("load").is_none() => {
                    if let FormKind::Str(path) = &items[1].kind {
                        let base = self.units.last().and_then(|u| u.dir.clone());
                        let p = match base {
                            Some(d) if Path::new(path).is_relative() => d.join(path),
                            _ => PathBuf::from(path),
                        };
                        return self.push_file(&p);
                    }
                }
                _ => {}
            }
        }
        // SAFETY: the host is given only to this compiler.
        let host = unsafe { NodeHost::new(&self.env) };
        let proto: &crate::bytecode::Proto = Compiler::new(&host, ns, file)
            .compile_toplevel(&form)
            .map_err(EvalError::Compile)?;
        let h = &self.vm.heap;
        // SAFETY: the code id is a leaked Proto's; the closure has no
        // captures.
        let f = unsafe { h.closure_raw(proto.code_id(), &[]) };
        self.vm.start(f, &[]);
        self.running = true;
        Ok(())
    }

    fn ns_form(&mut self, form: &Form, items: &[Form], file: Arc<str>) -> Result<(), EvalError> {
        let err = |pos, m: &str| {
            EvalError::Compile(CompileError {
                file: file.clone(),
                pos,
                message: m.to_string(),
            })
        };
        let Some(name) = items.get(1).and_then(|n| n.as_symbol()) else {
            return Err(err(form.pos, "ns needs a name: (ns app.server ...)"));
        };
        let ns = self.env.namespaces.get_or_create(name);
        if let Some(u) = self.units.last_mut() {
            u.ns = ns;
        }
        self.ns = ns;
        let mut to_load = Vec::new();
        for clause in &items[2..] {
            let Some(cl) = clause.as_list() else {
                return Err(err(clause.pos, "expected (:require ...)"));
            };
            match cl.first().and_then(|k| k.as_keyword()) {
                Some("require") => {
                    for spec in &cl[1..] {
                        let target = match &spec.kind {
                            FormKind::Symbol(s) => s.to_string(),
                            FormKind::Vector(v) => {
                                let Some(t) = v.first().and_then(|x| x.as_symbol()) else {
                                    return Err(err(spec.pos, REQUIRE_SPEC));
                                };
                                require_options(ns, t, &v[1..]).map_err(|(p, m)| err(p, &m))?;
                                t.to_string()
                            }
                            _ => return Err(err(spec.pos, REQUIRE_SPEC)),
                        };
                        to_load.push((target, spec.pos));
                    }
                }
                _ => return Err(err(clause.pos, "ns supports (:require ...) clauses")),
            }
        }
        // Where to look, from this unit (before any is pushed below).
        let base = self.search_base();
        // Load in order: push in reverse so the first runs first.
        for (target, pos) in to_load.into_iter().rev() {
            let already = self.env.node().loaded(&target)
                || self
                    .env
                    .namespaces
                    .get(&target)
                    .is_some_and(|n| !n.vars().is_empty());
            if already {
                continue;
            }
            if let Some(text) = library(&target) {
                let src = Source::new(format!("<{target}>"), text);
                let forms = read_all(&src).map_err(EvalError::Read)?;
                let user = self.env.namespaces.get_or_create("user");
                self.units.push(Unit {
                    file: src.name.clone(),
                    dir: None,
                    ns: user,
                    forms: forms.into(),
                    provides: Some(target),
                });
                continue;
            }
            let path = self.find(&base, &target).ok_or_else(|| {
                err(
                    pos,
                    &format!(
                        "cannot find namespace {target} ({}.lona beside the file or in LONA_PATH)",
                        target.replace('.', "/")
                    ),
                )
            })?;
            let text = read_source_file(&path)?;
            let src = Source::new(path.display().to_string(), text);
            let forms = read_all(&src).map_err(EvalError::Read)?;
            let user = self.env.namespaces.get_or_create("user");
            self.units.push(Unit {
                file: src.name.clone(),
                dir: path.parent().map(|p| p.to_path_buf()),
                ns: user,
                forms: forms.into(),
                provides: Some(target),
            });
        }
        Ok(())
    }

    /// The directories a `require` of the innermost file unit looks in
    /// first: its source root, then its own directory.
    fn search_base(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        if let Some(u) = self.units.iter().rev().find(|u| u.dir.is_some()) {
            if let Some(root) = source_root(Path::new(&*u.file), &u.ns.name) {
                dirs.push(root);
            }
            dirs.extend(u.dir.clone());
        }
        dirs
    }

    fn find(&self, base: &[PathBuf], ns: &str) -> Option<PathBuf> {
        let rel = format!("{}.lona", ns.replace('.', "/"));
        let mut dirs: Vec<PathBuf> = base.to_vec();
        dirs.extend(self.env.node().load_path());
        dirs.into_iter().map(|d| d.join(&rel)).find(|p| p.is_file())
    }

    fn uncaught(&mut self, r: Raise) -> EvalError {
        // SAFETY: the reason is a word of the VM heap (no collection since).
        let reason = unsafe { self.vm.heap.term(r.reason) };
        let mut text = String::new();
        crate::print::readable(&mut text, reason);
        let t = crate::msg::exit_term(&self.vm.heap, r.class, reason);
        let mut exit_reason = String::new();
        crate::print::readable(&mut exit_reason, t);
        let trace = self.vm.trace_text();
        let exit = crate::msg::term_reason(t, Some(&trace));
        self.units.clear();
        self.main = None;
        EvalError::Uncaught {
            class: r.class,
            reason: text,
            exit_reason,
            trace,
            exit,
        }
    }
}

/// A source file's text, of at most 64 MB (the bound on a whole file of
/// `files.rs`). Invalid UTF-8 is reported at the place of its
/// first bad byte, as `file:line:column: invalid UTF-8 (byte 0xFF)`, the
/// column counted in characters as the reader's are.
pub fn read_source_file(path: &Path) -> Result<String, EvalError> {
    let bytes = std::fs::File::open(path)
        .and_then(|f| {
            let hint = f.metadata().map_or(0, |m| m.len());
            crate::files::read_whole(f, hint)
        })
        .map_err(|e| {
            if crate::files::is_limit(&e) {
                EvalError::Load(format!(
                    "{}: file too large (more than {} MB)",
                    path.display(),
                    crate::files::MAX_WHOLE >> 20
                ))
            } else {
                EvalError::Load(format!("{}: {e}", path.display()))
            }
        })?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // The prefix is valid: count lines and characters in it.
        let good = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let line = 1 + good.matches('\n').count();
        let col = 1 + good.rsplit('\n').next().map_or(0, |l| l.chars().count());
        EvalError::Load(format!(
            "{}:{line}:{col}: invalid UTF-8 (byte 0x{:02X})",
            path.display(),
            bytes[at]
        ))
    })
}

/// The directory a namespace's file is under by its name: `/src` for
/// `/src/app/util.lona` in namespace `app.util`; `None` when the path does
/// not end as the name says. Namespaces it requires are looked for there
/// first (`app.util` requiring `app.db` finds `/src/app/db.lona`).
pub(crate) fn source_root(file: &Path, ns: &str) -> Option<PathBuf> {
    let stem = file.with_extension("");
    let mut p = stem.as_path();
    for seg in ns.rsplit('.') {
        if p.file_name()?.to_str()? != seg {
            return None;
        }
        p = p.parent()?;
    }
    Some(p.to_path_buf())
}

const REQUIRE_SPEC: &str =
    "expected a namespace or [namespace :as alias :refer [names]] (or :refer :all)";

/// Applies the options of a `[target :as a :refer [x y]]` require spec
/// to `ns`: `:as` adds an alias, `:refer [names]` makes each name stand
/// for `target/name`, `:refer :all` every public var of `target`. Names
/// are resolved when code uses them (the target loads after this).
pub(crate) fn require_options(
    ns: &Namespace,
    target: &str,
    opts: &[Form],
) -> Result<(), (lona_reader::Pos, String)> {
    if !opts.len().is_multiple_of(2) {
        let p = opts.last().map(|f| f.pos).unwrap_or_default();
        return Err((p, REQUIRE_SPEC.to_string()));
    }
    for kv in opts.chunks(2) {
        let (k, v) = (&kv[0], &kv[1]);
        match k.as_keyword() {
            Some("as") => {
                let a = v
                    .as_symbol()
                    .ok_or_else(|| (v.pos, "alias must be a symbol".to_string()))?;
                ns.add_alias(a, target);
            }
            Some("refer") => match &v.kind {
                FormKind::Keyword(k) if &**k == "all" => ns.add_refer_all(target),
                FormKind::Vector(names) => {
                    for n in names {
                        let Some(name) = n.as_symbol().filter(|s| !s.contains('/')) else {
                            return Err((n.pos, ":refer takes unqualified symbols".to_string()));
                        };
                        ns.add_refer(name, target);
                    }
                }
                _ => return Err((v.pos, ":refer takes [names] or :all".to_string())),
            },
            _ => return Err((k.pos, REQUIRE_SPEC.to_string())),
        }
    }
    Ok(())
}

/// The core library written in Lonala.
const PRELUDE: &str = include_str!("lonala/prelude.lona");

/// The namespaces that come with Lonala, written in Lonala and loaded on
/// `(:require ...)` like any other (`src/lonala/`).
const LIBRARY: &[(&str, &str)] = &[
    ("lona.server", include_str!("lonala/server.lona")),
    ("lona.supervisor", include_str!("lonala/supervisor.lona")),
    ("lona.sys", include_str!("lonala/sys.lona")),
    (
        "lona.dynamic-supervisor",
        include_str!("lonala/dynamic_supervisor.lona"),
    ),
    ("lona.test", include_str!("lonala/test.lona")),
    ("clojure.string", include_str!("lonala/clojure_string.lona")),
    ("clojure.set", include_str!("lonala/clojure_set.lona")),
    ("lona.http", include_str!("lonala/http.lona")),
];

/// The source of a namespace that comes with Lonala.
pub(crate) fn library(ns: &str) -> Option<&'static str> {
    LIBRARY.iter().find(|(n, _)| *n == ns).map(|(_, s)| *s)
}

/// `eval`, `load` and `require` at run time, in `lona.core`, after the
/// prelude (`builtins/code.rs` has the Rust half).
const CODE: &str = include_str!("lonala/load.lona");

/// The `tcp` namespace's Lonala functions (over the built-ins of
/// `builtins/tcp.rs`).
const TCP: &str = include_str!("lonala/tcp.lona");

/// Sorted maps and sets: what changes their trees (`lona.core`, after the
/// prelude).
const SORTED: &str = include_str!("lonala/sorted.lona");

/// Transients and records, as collections and maps (`lona.core`).
const COMPAT: &str = include_str!("lonala/compat.lona");

/// Atoms: `swap!` and the rest over the cell built-ins (`lona.core`).
const ATOM: &str = include_str!("lonala/atom.lona");

/// The `file` namespace's Lonala functions (over `builtins/file.rs`).
const FILE: &str = include_str!("lonala/file.lona");

/// Compiles and runs the prelude into `lona.core` (at node start).
pub fn load_prelude(env: &Arc<Env>) {
    let mut ev = Evaluator::unbooted(env.clone());
    ev.ns = env.core;
    // Units run last pushed first.
    ev.push_source(&Source::new("<file>", FILE))
        .expect("file.lona reads");
    ev.push_source(&Source::new("<tcp>", TCP))
        .expect("tcp.lona reads");
    ev.push_source(&Source::new("<code>", CODE))
        .expect("code.lona reads");
    ev.push_source(&Source::new("<atom>", ATOM))
        .expect("atom.lona reads");
    ev.push_source(&Source::new("<compat>", COMPAT))
        .expect("compat.lona reads");
    ev.push_source(&Source::new("<sorted>", SORTED))
        .expect("sorted.lona reads");
    ev.push_source(&Source::new("<prelude>", PRELUDE))
        .expect("the prelude reads");
    loop {
        match ev.step(i32::MAX) {
            Progress::Yield => continue,
            Progress::Done => break,
            Progress::Failed(e) => panic!("the prelude failed: {e}"),
            Progress::Halt(_) => panic!("the prelude halted"),
            Progress::Wait | Progress::HeapLimit(_) => panic!("the prelude cannot wait"),
        }
    }
}
