//! The compiler: forms to bytecode, in one pass per function.
//!
//! 1. **Expansion**: derived forms (`expand.rs`) are rewritten into
//!    special forms at the head of each list, before it is compiled.
//! 2. **Resolution**: a symbol is a local of the current function, a
//!    local of an enclosing function (then it is *captured*: the closure
//!    gets a copy, as values never change), the function's own name, or a
//!    var (`ns/name`, an alias, the current namespace, then `lona.core`).
//!    Anything else is a compile error naming its position.
//! 3. **Emission**: each expression is compiled into a destination
//!    register; in tail position it returns instead (`Ret`, or a tail
//!    call). Registers are allocated like a stack: locals stay while in
//!    scope, temporaries are freed after each expression.
//! 4. **Patterns** (`pattern.rs`) become type tests, element loads and
//!    equality tests that jump to the next clause on failure.
//!
//! Calls to `+ - * < <= > >= = == cons inc dec` of `lona.core` with two
//! arguments (one for `inc`/`dec`) become instructions; like Erlang's
//! arithmetic BIFs, these cannot be redefined for existing code.

mod destructure;
mod expand;
mod function;
mod host;
mod keywords;
mod load;
mod macros;
mod pattern;
mod quote;
mod receive;

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::Arc;

use lona_term::{Heap, RawTerm, Term};

pub use host::{ExpandError, Host};
pub use macros::term_to_form;
pub use quote::form_to_term;
pub(super) use quote::is_constant;

use crate::bytecode::{Entry, Instr, Proto, Reg};
use crate::var::{Namespace, Var};
use lona_reader::{Form, FormKind, Pos};

/// A compile error: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    /// The file.
    pub file: Arc<str>,
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.pos.line, self.pos.col, self.message
        )
    }
}

impl std::error::Error for CompileError {}

type R<T> = Result<T, CompileError>;

/// Most registers one function may use.
const MAX_REGS: usize = 250;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Reg(Reg),
    Capture(u8),
    SelfRef,
}

#[derive(Clone, Debug)]
struct LoopTarget {
    pc: u32,
    first: Reg,
    n: usize,
}

/// One function being compiled.
#[derive(Default)]
struct FnState<X: 'static> {
    name: String,
    code: Vec<Instr>,
    consts: Vec<RawTerm>,
    recv_filters: Vec<crate::bytecode::RecvFilter>,
    const_index: HashMap<u64, u32>,
    vars: Vec<&'static Var>,
    var_index: HashMap<usize, u32>,
    protos: Vec<&'static Proto<X>>,
    lines: Vec<(u32, u32)>,
    /// Bindings in scope, innermost last.
    locals: Vec<(String, Reg)>,
    next_reg: usize,
    max_reg: usize,
    /// Captured names and where the enclosing function has them.
    captures: Vec<(String, Loc)>,
    self_name: Option<String>,
    loop_target: Option<LoopTarget>,
    /// Inside a loop that is not in tail position: where its tails go
    /// (the loop's register, and the jumps to patch to its end).
    exit: Option<(Reg, Patch)>,
}

/// Compiles one top-level form of a namespace.
pub struct Compiler<'e, X: 'static> {
    host: &'e dyn Host,
    ns: &'static Namespace,
    file: Arc<str>,
    lits: Heap,
    fns: Vec<FnState<X>>,
    /// Every prototype made so far: they and `lits` become one area of
    /// the code collector (`purge`), or are freed if compiling fails.
    made: Vec<NonNull<Proto<X>>>,
    /// Nesting of `expr` calls (bounded, so the compiler's recursion
    /// cannot exhaust the Rust stack).
    depth: usize,
}

/// Deepest expression nesting the compiler accepts.
pub const MAX_NESTING: usize = 200;

/// One clause of a function: parameter patterns, body, position.
type Clause<'f> = (&'f [Form], &'f [Form], Pos);

/// Where a jump target must be written once known.
type Patch = Vec<usize>;

impl<'e, X: Default + 'static> Compiler<'e, X> {
    /// A compiler for code of namespace `ns` read from `file`, for the
    /// node `host`.
    pub fn new(host: &'e dyn Host, ns: &'static Namespace, file: Arc<str>) -> Compiler<'e, X> {
        Compiler {
            host,
            ns,
            file,
            lits: Heap::with_config(lona_term::HeapConfig {
                min_heap_size: 1,
                ..Default::default()
            }),
            fns: Vec::new(),
            made: Vec::new(),
            depth: 0,
        }
    }

    /// Compiles `form` into a function of no arguments that evaluates it.
    pub fn compile_toplevel(mut self, form: &Form) -> R<&'static Proto<X>> {
        let resolved;
        let form = if keywords::has_auto_keyword(form) {
            resolved = self.resolve_auto_keywords(form)?;
            &resolved
        } else {
            form
        };
        self.fns.push(FnState {
            name: format!("{}/<top>", self.ns.name),
            ..Default::default()
        });
        let dst = self.alloc(form.pos)?;
        self.expr(form, dst, true)?;
        let st = self.fns.pop().expect("function state");
        let proto = self.finish(st, vec![(0, Entry { pc: 0, nregs: 0 })], None);
        // SAFETY: leaked by `finish`, unpublished, in no area; what the
        // compiled form is reached through from now on is what the
        // collector follows (the caller runs it in a process, or as an
        // unmanaged VM, and `def` puts it in vars).
        unsafe {
            crate::collect::make(
                std::mem::take(&mut self.made),
                std::mem::take(&mut self.lits),
            )
        };
        Ok(proto)
    }

    fn err(&self, pos: Pos, message: impl Into<String>) -> CompileError {
        CompileError {
            file: self.file.clone(),
            pos,
            message: message.into(),
        }
    }

    /// Refuses a qualified name where `form` (a binding form, a pattern)
    /// binds one: `bad {kind}: a/b is qualified`.
    fn plain_name(&self, pos: Pos, s: &str, kind: &str, form: &str) -> R<()> {
        if s.contains('/') && s != "/" {
            return Err(self.err(
                pos,
                format!("bad {kind}: {s} is qualified; {form} binds plain names"),
            ));
        }
        Ok(())
    }

    fn st(&mut self) -> &mut FnState<X> {
        self.fns.last_mut().expect("inside a function")
    }

    fn finish(
        &mut self,
        mut st: FnState<X>,
        entries: Vec<(usize, Entry)>,
        variadic: Option<(u16, Entry)>,
    ) -> &'static Proto<X> {
        let nregs = (st.max_reg + 1) as u16;
        let max = entries.iter().map(|(a, _)| *a).max().map_or(0, |m| m + 1);
        let mut table = vec![Entry::NONE; max];
        for (argc, mut e) in entries {
            e.nregs = nregs;
            table[argc] = e;
        }
        let variadic = variadic.map(|(f, mut e)| {
            e.nregs = nregs;
            (f, e)
        });
        st.lines.dedup_by_key(|l| l.0);
        crate::bytecode::fuse(&mut st.code);
        let proto = Proto {
            name: st.name.into(),
            file: self.file.clone(),
            entries: table.into(),
            variadic,
            code: st.code.into(),
            consts: st.consts.into(),
            recv_filters: st.recv_filters.into(),
            vars: st.vars.into(),
            protos: st.protos.into(),
            lines: st.lines.into(),
            native_arity: (0, 0),
            ncaptures: st.captures.len() as u8,
            area: Default::default(),
            ext: X::default(),
        }
        .into_raw();
        self.made.push(proto);
        // SAFETY: just leaked; freed only by the collector (through
        // `made`'s pointer, whose provenance it keeps) or by `drop` if
        // this compile fails, after which no reference to it is used.
        unsafe { proto.as_ref() }
    }

    // ---- emission helpers ------------------------------------------------

    fn emit(&mut self, i: Instr) -> usize {
        let st = self.st();
        st.code.push(i);
        st.code.len() - 1
    }

    fn pc(&mut self) -> u32 {
        self.st().code.len() as u32
    }

    fn line(&mut self, pos: Pos) {
        let pc = self.pc();
        let st = self.st();
        if st.lines.last().map(|l| l.1) != Some(pos.line) {
            st.lines.push((pc, pos.line));
        }
    }

    /// Points every jump in `patch` at the current pc.
    fn bind(&mut self, patch: Patch) {
        let to = self.pc();
        for at in patch {
            self.set_target(at, to);
        }
    }

    fn set_target(&mut self, at: usize, to: u32) {
        let i = &mut self.st().code[at];
        match i {
            Instr::Jump { to: t }
            | Instr::Loop { to: t }
            | Instr::JumpIfFalse { to: t, .. }
            | Instr::JumpIfTrue { to: t, .. }
            | Instr::JumpUnlessLt { to: t, .. }
            | Instr::JumpUnlessLe { to: t, .. }
            | Instr::JumpUnlessLtImm { to: t, .. }
            | Instr::JumpUnlessEq { to: t, .. } => *t = to,
            Instr::TestVector { fail, .. }
            | Instr::TestVectorMin { fail, .. }
            | Instr::TestCons { fail, .. }
            | Instr::TestList { fail, .. }
            | Instr::TestEmptyList { fail, .. }
            | Instr::TestEqConst { fail, .. }
            | Instr::TestEqReg { fail, .. }
            | Instr::TestMap { fail, .. }
            | Instr::MapGet { fail, .. } => *fail = to,
            Instr::TryBegin { handler, .. } => *handler = to,
            Instr::RecvPeek { empty, .. } | Instr::RecvScan { empty, .. } => *empty = to,
            other => unreachable!("not a jump: {other:?}"),
        }
    }

    fn alloc(&mut self, pos: Pos) -> R<Reg> {
        let st = self.fns.last_mut().expect("function");
        let r = st.next_reg;
        if r >= MAX_REGS {
            return Err(self.err(
                pos,
                "function too large: more than 250 registers live at once",
            ));
        }
        st.next_reg += 1;
        st.max_reg = st.max_reg.max(r);
        Ok(r as Reg)
    }

    /// `n` consecutive registers.
    fn alloc_n(&mut self, n: usize, pos: Pos) -> R<Reg> {
        let first = self.st().next_reg;
        if first + n > MAX_REGS {
            return Err(self.err(
                pos,
                "function too large: more than 250 registers live at once",
            ));
        }
        for _ in 0..n {
            self.alloc(pos)?;
        }
        if n == 0 {
            self.st().max_reg = self.st().max_reg.max(first);
        }
        Ok(first as Reg)
    }

    fn mark(&mut self) -> (usize, usize) {
        let st = self.st();
        (st.next_reg, st.locals.len())
    }

    fn release(&mut self, m: (usize, usize)) {
        let st = self.st();
        st.next_reg = m.0;
        st.locals.truncate(m.1);
    }

    fn konst(&mut self, t: Term<'_>) -> u32 {
        let st = self.st();
        if t.is_immediate() {
            if let Some(k) = st.const_index.get(&t.bits()) {
                return *k;
            }
            st.const_index.insert(t.bits(), st.consts.len() as u32);
        }
        st.consts.push(t.raw());
        (st.consts.len() - 1) as u32
    }

    fn var_index(&mut self, v: &'static Var) -> u32 {
        let st = self.st();
        let key = v as *const Var as usize;
        if let Some(i) = st.var_index.get(&key) {
            return *i;
        }
        st.vars.push(v);
        let i = (st.vars.len() - 1) as u32;
        st.var_index.insert(key, i);
        i
    }

    /// The literal term of a quoted form, in this unit's literal heap.
    fn literal(&mut self, f: &Form) -> R<u32> {
        let t = form_to_term(&self.lits, f).map_err(|m| self.err(f.pos, m.to_string()))?;
        // `raw` is a word of `lits`, which becomes permanent when this
        // unit is finished, before any code runs.
        let raw = t.raw();
        Ok(self.konst_lit(raw))
    }

    /// A literal's constant index for an instruction with a 16-bit field.
    fn literal16(&mut self, f: &Form) -> R<u16> {
        let k = self.literal(f)?;
        u16::try_from(k)
            .map_err(|_| self.err(f.pos, "function too large: more than 65536 constants"))
    }

    fn konst_lit(&mut self, raw: RawTerm) -> u32 {
        let st = self.fns.last_mut().expect("function");
        if raw.bits() & 0b110 != 0 {
            if let Some(k) = st.const_index.get(&raw.bits()) {
                return *k;
            }
            st.const_index.insert(raw.bits(), st.consts.len() as u32);
        }
        st.consts.push(raw);
        (st.consts.len() - 1) as u32
    }

    fn load_const(&mut self, t: Term<'static>, dst: Reg) {
        let k = self.konst(t);
        self.emit(Instr::LoadConst { dst, k });
    }

    /// Ends a tail expression: returns `dst`, or inside a loop that is not
    /// itself in tail position, moves it to the loop's register and jumps
    /// past the loop.
    fn ret_if(&mut self, dst: Reg, tail: bool) {
        if !tail {
            return;
        }
        match self.st().exit.as_ref().map(|e| e.0) {
            None => {
                self.emit(Instr::Ret { r: dst });
            }
            Some(out) => {
                if out != dst {
                    self.emit(Instr::Move { dst: out, src: dst });
                }
                let j = self.emit(Instr::Jump { to: u32::MAX });
                if let Some(e) = self.st().exit.as_mut() {
                    e.1.push(j);
                }
            }
        }
    }

    /// Whether a tail call may reuse the frame (not inside a loop that is
    /// not in tail position).
    fn real_tail(&mut self, tail: bool) -> bool {
        tail && self.st().exit.is_none()
    }

    // ---- resolution ---------------------------------------------------------

    /// Where a local name lives in function `depth` (capturing from
    /// enclosing functions as needed).
    fn resolve_local(&mut self, depth: usize, name: &str) -> Option<Loc> {
        let st = &self.fns[depth];
        if let Some((_, r)) = st.locals.iter().rev().find(|(n, _)| n == name) {
            return Some(Loc::Reg(*r));
        }
        if let Some(i) = st.captures.iter().position(|(n, _)| n == name) {
            return Some(Loc::Capture(i as u8));
        }
        if st.self_name.as_deref() == Some(name) {
            return Some(Loc::SelfRef);
        }
        if depth == 0 {
            return None;
        }
        let outer = self.resolve_local(depth - 1, name)?;
        let st = &mut self.fns[depth];
        if st.captures.len() >= 255 {
            return None;
        }
        st.captures.push((name.to_string(), outer));
        Some(Loc::Capture((st.captures.len() - 1) as u8))
    }

    /// The var a symbol names, if any.
    fn resolve_var(&self, name: &str, pos: Pos) -> R<Option<&'static Var>> {
        if let Some((ns, n)) = split_qualified(name) {
            let target = self.ns.alias(ns).unwrap_or_else(|| ns.into());
            let Some(tns) = self.host.namespaces().get(&target) else {
                return Err(self.err(pos, format!("no namespace {ns} (require it first)")));
            };
            return match tns.lookup(n) {
                Some(v) if v.is_private() && tns.name != self.ns.name => {
                    Err(self.err(pos, format!("{name} is private to {}", tns.name)))
                }
                Some(v) => Ok(Some(v)),
                None => Err(self.err(pos, format!("no var {n} in namespace {target}"))),
            };
        }
        if let Some(v) = self.ns.lookup(name) {
            return Ok(Some(v));
        }
        if let Some(target) = self.ns.referred(name, self.host.namespaces()) {
            return match self
                .host
                .namespaces()
                .get(&target)
                .and_then(|t| t.lookup(name))
            {
                Some(v) if v.is_private() => {
                    Err(self.err(pos, format!("{target}/{name} is private (referred)")))
                }
                Some(v) => Ok(Some(v)),
                None => Err(self.err(
                    pos,
                    format!("no var {name} in namespace {target} (referred)"),
                )),
            };
        }
        Ok(self.host.core().lookup(name))
    }

    fn is_core(&mut self, name: &str) -> bool {
        let depth = self.fns.len() - 1;
        if self.resolve_local_peek(depth, name) {
            return false;
        }
        self.ns.lookup(name).is_none()
            && self.host.core().lookup(name).is_some()
            && self.ns.referred(name, self.host.namespaces()).is_none()
            || std::ptr::eq(self.ns, self.host.core())
    }

    fn resolve_local_peek(&self, depth: usize, name: &str) -> bool {
        (0..=depth).any(|d| {
            let st = &self.fns[d];
            st.locals.iter().any(|(n, _)| n == name)
                || st.captures.iter().any(|(n, _)| n == name)
                || st.self_name.as_deref() == Some(name)
        })
    }

    fn load_loc(&mut self, loc: Loc, dst: Reg) {
        match loc {
            Loc::Reg(r) => {
                if r != dst {
                    self.emit(Instr::Move { dst, src: r });
                }
            }
            Loc::Capture(i) => {
                self.emit(Instr::LoadCapture { dst, i });
            }
            Loc::SelfRef => {
                self.emit(Instr::LoadSelf { dst });
            }
        }
    }

    // ---- expressions --------------------------------------------------------

    /// Compiles `f` into register `dst`; in tail position, returns it.
    fn expr(&mut self, f: &Form, dst: Reg, tail: bool) -> R<()> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(
                f.pos,
                format!("expression nested more than {MAX_NESTING} deep"),
            ));
        }
        self.depth += 1;
        let r = self.expr_inner(f, dst, tail);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, f: &Form, dst: Reg, tail: bool) -> R<()> {
        self.line(f.pos);
        if let (Some(m), FormKind::Vector(_) | FormKind::Map(_) | FormKind::Set(_)) =
            (&f.meta, &f.kind)
        {
            // A literal with metadata (`^{:k v} [...]`): a constant when
            // both are, else `(with-meta literal meta)`.
            if is_constant(f) {
                let k = self.literal(f)?;
                self.emit(Instr::LoadConst { dst, k });
                return Ok(());
            }
            let mut bare = f.clone();
            bare.meta = None;
            let call = vec![
                Form::new(FormKind::Symbol("lona.core/with-meta".into()), f.pos),
                bare,
                (**m).clone(),
            ];
            return self.expr(&Form::new(FormKind::List(call), f.pos), dst, tail);
        }
        match &f.kind {
            FormKind::Nil => {
                self.emit(Instr::LoadNil { dst });
            }
            FormKind::Bool(b) => self.load_const(Term::bool(*b), dst),
            FormKind::Int(_)
            | FormKind::BigInt(_)
            | FormKind::Float(_)
            | FormKind::Str(_)
            | FormKind::Binary(_)
            | FormKind::Regex(_)
            | FormKind::Keyword(_) => {
                let k = self.literal(f)?;
                self.emit(Instr::LoadConst { dst, k });
            }
            FormKind::Set(items) => {
                if items.iter().all(is_constant) {
                    for (i, x) in items.iter().enumerate() {
                        if items[..i].iter().any(|y| y.same_as(x)) {
                            return Err(
                                self.err(x.pos, format!("duplicate element in set literal: {x}"))
                            );
                        }
                    }
                    let k = self.literal(f)?;
                    self.emit(Instr::LoadConst { dst, k });
                } else {
                    // (hash-set a b ...)
                    let mut call = vec![Form::new(
                        FormKind::Symbol("lona.core/hash-set".into()),
                        f.pos,
                    )];
                    call.extend(items.iter().cloned());
                    return self.expr(&Form::new(FormKind::List(call), f.pos), dst, tail);
                }
            }
            FormKind::Symbol(s) => {
                // A local returned from the tail: return its register.
                if tail && self.st().exit.is_none() && !s.contains('/') {
                    let depth = self.fns.len() - 1;
                    if let Some(Loc::Reg(r)) = self.resolve_local(depth, s) {
                        self.emit(Instr::Ret { r });
                        return Ok(());
                    }
                }
                self.symbol(s, f.pos, dst)?
            }
            FormKind::Vector(items) => self.collection(items, f.pos, dst, Coll::Vector)?,
            FormKind::Map(pairs) => {
                let items: Vec<Form> = pairs
                    .iter()
                    .flat_map(|(k, v)| [k.clone(), v.clone()])
                    .collect();
                self.collection(&items, f.pos, dst, Coll::Map)?
            }
            FormKind::List(items) => {
                if items.is_empty() {
                    self.load_const(Term::EMPTY_LIST, dst);
                } else {
                    return self.list(f, items, dst, tail);
                }
            }
        }
        self.ret_if(dst, tail);
        Ok(())
    }

    fn symbol(&mut self, s: &str, pos: Pos, dst: Reg) -> R<()> {
        let depth = self.fns.len() - 1;
        if !s.contains('/') || s == "/" {
            if let Some(loc) = self.resolve_local(depth, s) {
                self.load_loc(loc, dst);
                return Ok(());
            }
        }
        match self.resolve_var(s, pos)? {
            Some(v) => {
                let var = self.var_index(v);
                self.emit(Instr::LoadVar { dst, var });
                Ok(())
            }
            None => Err(self.err(pos, format!("unable to resolve symbol: {s}"))),
        }
    }

    fn collection(&mut self, items: &[Form], pos: Pos, dst: Reg, kind: Coll) -> R<()> {
        if items.iter().all(is_constant) {
            let f = Form::new(
                match kind {
                    Coll::Vector => FormKind::Vector(items.to_vec()),
                    Coll::Map => FormKind::Map(
                        items
                            .chunks(2)
                            .map(|p| (p[0].clone(), p[1].clone()))
                            .collect(),
                    ),
                },
                pos,
            );
            let k = self.literal(&f)?;
            self.emit(Instr::LoadConst { dst, k });
            return Ok(());
        }
        if items.len() > 255 * if kind == Coll::Map { 2 } else { 1 } {
            return Err(self.err(
                pos,
                "collection literal too large (over 255 elements); build it with a function",
            ));
        }
        let m = self.mark();
        let first = self.alloc_n(items.len(), pos)?;
        for (i, it) in items.iter().enumerate() {
            self.expr(it, first + i as Reg, false)?;
        }
        match kind {
            Coll::Vector => self.emit(Instr::MakeVector {
                dst,
                from: first,
                n: items.len() as u8,
            }),
            Coll::Map => self.emit(Instr::MakeMap {
                dst,
                from: first,
                n: (items.len() / 2) as u8,
            }),
        };
        self.release(m);
        Ok(())
    }

    fn list(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let head = &items[0];
        if let Some(name) = head.as_symbol() {
            let local = self.resolve_local_peek(self.fns.len() - 1, name);
            if !local {
                match name {
                    "quote" => {
                        self.arity(f, 2, "quote takes one form")?;
                        let k = self.literal(&items[1])?;
                        self.emit(Instr::LoadConst { dst, k });
                        self.ret_if(dst, tail);
                        return Ok(());
                    }
                    "if" => return self.if_(f, items, dst, tail),
                    "do" => return self.body(&items[1..], f.pos, dst, tail),
                    "def" => return self.def(f, items, dst, tail),
                    "defn" | "defn-" => return self.defn(f, items, dst, tail, name == "defn-"),
                    "declare" => return self.declare(f, items, dst, tail),
                    "fn" => return self.fn_form(f, items, dst, tail),
                    "let" => return self.let_(f, items, dst, tail),
                    "loop" => return self.loop_(f, items, dst, tail),
                    "recur" => return self.recur(f, items, tail),
                    "match" => return self.match_(f, items, dst, tail),
                    "try" => return self.try_(f, items, dst, tail),
                    "apply" if items.len() >= 3 => return self.apply(f, items, dst, tail),
                    "stacktrace" => {
                        self.arity(f, 1, "stacktrace takes no arguments")?;
                        self.emit(Instr::StackTrace { dst });
                        self.ret_if(dst, tail);
                        return Ok(());
                    }
                    "ns" => return Err(self.err(f.pos, "ns must be a top-level form")),
                    "receive" => return self.receive(f, items, dst, tail),
                    "defmacro" => return self.defmacro(f, items, dst, tail),
                    "syntax-quote" => {
                        self.arity(f, 2, "syntax-quote takes one form")?;
                        let code = self.syntax_quote(&items[1])?;
                        return self.expr(&code, dst, tail);
                    }
                    "unquote" | "unquote-splicing" => {
                        return Err(
                            self.err(f.pos, format!("{name} (~) outside a syntax-quote (`)"))
                        )
                    }
                    _ => {}
                }
                if let Some(v) = self.macro_var(name) {
                    let e = self.expand_macro(v, f)?;
                    return self.expr(&e, dst, tail);
                }
                let err = |pos: Pos, m: String| CompileError {
                    file: self.file.clone(),
                    pos,
                    message: m,
                };
                if let Some(e) = expand::expand(name, f, &err)? {
                    return self.expr(&e, dst, tail);
                }
                if let Some(e) = self.code_call(name, f, items) {
                    return self.expr(&e, dst, tail);
                }
                if self.is_core(name) {
                    if let Some(()) = self.intrinsic(name, &items[1..], dst, tail)? {
                        return Ok(());
                    }
                }
            }
        }
        self.call(f, items, dst, tail)
    }

    fn arity(&self, f: &Form, n: usize, msg: &str) -> R<()> {
        if f.as_list().map(|l| l.len()) != Some(n) {
            return Err(self.err(f.pos, msg));
        }
        Ok(())
    }

    /// A register holding the value of `f`: its own if it is a local in a
    /// register, else `dst` after compiling into it.
    fn operand(&mut self, f: &Form, scratch: Reg) -> R<Reg> {
        if let Some(s) = f.as_symbol() {
            if !s.contains('/') {
                let depth = self.fns.len() - 1;
                if let Some(Loc::Reg(r)) = self.resolve_local(depth, s) {
                    return Ok(r);
                }
            }
        }
        self.expr(f, scratch, false)?;
        Ok(scratch)
    }

    fn small_literal(f: &Form) -> Option<i16> {
        match f.kind {
            FormKind::Int(i) => i16::try_from(i).ok(),
            _ => None,
        }
    }

    fn intrinsic(&mut self, name: &str, args: &[Form], dst: Reg, tail: bool) -> R<Option<()>> {
        let pos = args.first().map(|a| a.pos).unwrap_or_default();
        match (name, args.len()) {
            ("inc" | "dec", 1) => {
                let m = self.mark();
                let t = self.alloc(pos)?;
                let a = self.operand(&args[0], t)?;
                let imm = if name == "inc" { 1 } else { -1 };
                self.emit(Instr::AddImm { dst, a, imm });
                self.release(m);
            }
            ("+" | "-", 2)
                if Self::small_literal(&args[1]).is_some_and(|v| v.checked_neg().is_some()) =>
            {
                let v = Self::small_literal(&args[1]).unwrap_or(0);
                let m = self.mark();
                let t = self.alloc(pos)?;
                let a = self.operand(&args[0], t)?;
                let imm = if name == "+" { v } else { -v };
                self.emit(Instr::AddImm { dst, a, imm });
                self.release(m);
            }
            ("+" | "-" | "*", n) if n >= 3 => {
                // `(op a b c ...)` is `(op (op a b) c ...)`: the built-in
                // folds left to right too (`builtins/core.rs`, `fold`), so
                // results and errors are the same, and each step is one
                // instruction the compiling tier does inline.
                let head = Form::new(FormKind::Symbol(name.to_string()), pos);
                let pair = |x: Form, y: &Form| {
                    Form::new(FormKind::List(vec![head.clone(), x, y.clone()]), y.pos)
                };
                let nested = args[1..].iter().fold(args[0].clone(), pair);
                self.expr(&nested, dst, tail)?;
                return Ok(Some(()));
            }
            ("+" | "-" | "*" | "<" | "<=" | ">" | ">=" | "=" | "==" | "cons", 2) => {
                let m = self.mark();
                let t1 = self.alloc(pos)?;
                let a = self.operand(&args[0], t1)?;
                let t2 = self.alloc(pos)?;
                let b = self.operand(&args[1], t2)?;
                let i = match name {
                    "+" => Instr::Add { dst, a, b },
                    "-" => Instr::Sub { dst, a, b },
                    "*" => Instr::Mul { dst, a, b },
                    "<" => Instr::Lt { dst, a, b },
                    "<=" => Instr::Le { dst, a, b },
                    ">" => Instr::Gt { dst, a, b },
                    ">=" => Instr::Ge { dst, a, b },
                    "=" => Instr::Eq { dst, a, b },
                    "cons" => Instr::Cons { dst, a, b },
                    _ => Instr::NumEq { dst, a, b },
                };
                self.emit(i);
                self.release(m);
            }
            _ => return Ok(None),
        }
        self.ret_if(dst, tail);
        Ok(Some(()))
    }

    /// Compiles a test for `if`: jumps to the returned patch when false.
    fn test(&mut self, f: &Form) -> R<Patch> {
        // Fused compare-and-branch for (< a b), (<= a b), (= a b) on core.
        if let Some(items) = f.as_list() {
            if items.len() == 3 {
                if let Some(op) = items[0].as_symbol() {
                    if matches!(op, "<" | "<=" | ">" | ">=" | "=") && self.is_core(op) {
                        let m = self.mark();
                        self.line(f.pos);
                        let (x, y) = if matches!(op, ">" | ">=") {
                            (&items[2], &items[1])
                        } else {
                            (&items[1], &items[2])
                        };
                        let t1 = self.alloc(f.pos)?;
                        let a = self.operand(x, t1)?;
                        let at = if op == "<" && Self::small_literal(y).is_some() {
                            let imm = Self::small_literal(y).unwrap_or(0);
                            self.emit(Instr::JumpUnlessLtImm {
                                a,
                                imm,
                                to: u32::MAX,
                            })
                        } else {
                            let t2 = self.alloc(f.pos)?;
                            let b = self.operand(y, t2)?;
                            match op {
                                "<" | ">" => self.emit(Instr::JumpUnlessLt { a, b, to: u32::MAX }),
                                "<=" | ">=" => {
                                    self.emit(Instr::JumpUnlessLe { a, b, to: u32::MAX })
                                }
                                _ => self.emit(Instr::JumpUnlessEq { a, b, to: u32::MAX }),
                            }
                        };
                        self.release(m);
                        return Ok(vec![at]);
                    }
                }
            }
        }
        let m = self.mark();
        let t = self.alloc(f.pos)?;
        let r = self.operand(f, t)?;
        let at = self.emit(Instr::JumpIfFalse { r, to: u32::MAX });
        self.release(m);
        Ok(vec![at])
    }

    fn if_(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        if !(3..=4).contains(&items.len()) {
            return Err(self.err(
                f.pos,
                "if takes a test, a then form and an optional else form",
            ));
        }
        let else_patch = self.test(&items[1])?;
        self.expr(&items[2], dst, tail)?;
        let end = if tail {
            None
        } else {
            Some(self.emit(Instr::Jump { to: u32::MAX }))
        };
        self.bind(else_patch);
        match items.get(3) {
            Some(e) => self.expr(e, dst, tail)?,
            None => {
                self.emit(Instr::LoadNil { dst });
                self.ret_if(dst, tail);
            }
        }
        if let Some(end) = end {
            self.bind(vec![end]);
        }
        Ok(())
    }

    fn body(&mut self, forms: &[Form], pos: Pos, dst: Reg, tail: bool) -> R<()> {
        if forms.is_empty() {
            self.emit(Instr::LoadNil { dst });
            self.ret_if(dst, tail);
            return Ok(());
        }
        let last = forms.len() - 1;
        for (i, f) in forms.iter().enumerate() {
            if i == last {
                self.expr(f, dst, tail)?;
            } else {
                let m = self.mark();
                let t = self.alloc(pos)?;
                self.expr(f, t, false)?;
                self.release(m);
            }
        }
        Ok(())
    }

    fn def(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        if !(2..=4).contains(&items.len()) {
            return Err(self.err(f.pos, "def takes a name and a value"));
        }
        let Some(name) = items[1]
            .as_symbol()
            .filter(|s| !s.contains('/') || *s == "/")
        else {
            return Err(self.err(items[1].pos, "def needs an unqualified symbol as its name"));
        };
        let v = self.ns.intern(name);
        // (def name "doc" value)
        let value = items.last().filter(|_| items.len() > 2);
        match value {
            Some(value) => self.expr(value, dst, false)?,
            None => {
                self.emit(Instr::LoadNil { dst });
            }
        }
        self.set_var(v, dst, tail);
        Ok(())
    }

    /// Binds `v` to the value in `dst`; the form's value is the var's
    /// qualified symbol.
    fn set_var(&mut self, v: &'static Var, dst: Reg, tail: bool) {
        let var = self.var_index(v);
        self.emit(Instr::DefVar { var, src: dst });
        // SAFETY: the var's symbol is an immediate.
        let sym = unsafe { lona_term::permanent_term(v.symbol) };
        self.load_const(sym, dst);
        self.ret_if(dst, tail);
    }

    fn declare(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        for it in &items[1..] {
            match it.as_symbol() {
                Some(s) if !s.contains('/') => {
                    self.ns.intern(s);
                }
                _ => return Err(self.err(it.pos, "declare takes unqualified symbols")),
            }
        }
        let _ = f;
        self.emit(Instr::LoadNil { dst });
        self.ret_if(dst, tail);
        Ok(())
    }

    fn bind_all(&mut self, bound: Vec<(String, Reg)>) {
        let st = self.st();
        for b in bound {
            st.locals.push(b);
        }
    }

    /// The binding vector of `let`/`loop`: present, with an even count.
    fn binding_vector<'f>(
        &self,
        f: &Form,
        items: &'f [Form],
        what: &str,
        pair: &str,
    ) -> R<&'f [Form]> {
        let Some(bindings) = items.get(1).and_then(|b| b.as_vector()) else {
            return Err(self.err(
                f.pos,
                format!("{what} needs a binding vector: ({what} [{pair} ...] body...)"),
            ));
        };
        if !bindings.len().is_multiple_of(2) {
            return Err(self.err(
                items[1].pos,
                format!("{what} needs an even number of forms in its binding vector"),
            ));
        }
        Ok(bindings)
    }

    /// Destructures the value in `r` by the binding form `form` and makes
    /// its names visible; a literal that does not match raises
    /// `[:badmatch value]`.
    fn bind_form(&mut self, form: &Form, r: Reg) -> R<()> {
        let mut fail = Vec::new();
        let mut bound = Vec::new();
        self.destructure(form, r, &mut fail, &mut bound)?;
        if !fail.is_empty() {
            let ok = self.emit(Instr::Jump { to: u32::MAX });
            self.bind(fail);
            self.emit(Instr::Badmatch { r });
            self.bind(vec![ok]);
        }
        self.bind_all(bound);
        Ok(())
    }

    fn let_(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let bindings = self.binding_vector(f, items, "let", "pattern value")?;
        let m = self.mark();
        for pair in bindings.chunks(2) {
            let r = self.alloc(pair[1].pos)?;
            self.expr(&pair[1], r, false)?;
            self.bind_form(&pair[0], r)?;
        }
        self.body(&items[2..], f.pos, dst, tail)?;
        self.release(m);
        Ok(())
    }

    fn loop_(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let bindings = self.binding_vector(f, items, "loop", "binding init")?;
        let m = self.mark();
        let n = bindings.len() / 2;
        let first = self.alloc_n(n, f.pos)?;
        let mut names = Vec::new();
        let mut forms = Vec::new();
        for (i, pair) in bindings.chunks(2).enumerate() {
            self.expr(&pair[1], first + i as Reg, false)?;
            match pair[0].as_symbol() {
                Some(name) if name != "&" && name != "_" => {
                    names.push((name.to_string(), first + i as Reg))
                }
                _ => forms.push((&pair[0], first + i as Reg)),
            }
        }
        // Names become visible after all inits, as Clojure's loop.
        self.bind_all(names);
        let pc = self.pc();
        // Binding forms are destructured at the top of every iteration.
        for (form, r) in forms {
            self.bind_form(form, r)?;
        }
        let saved = self.st().loop_target.replace(LoopTarget { pc, first, n });
        let r = if tail {
            self.body(&items[2..], f.pos, dst, true)
        } else {
            // A loop not in tail position: the tails of its body leave the
            // loop (value in dst, jump to the end) instead of returning, so
            // `recur` there is still the back-edge.
            let prev = self.st().exit.replace((dst, Vec::new()));
            let r = self.body(&items[2..], f.pos, dst, true);
            let (_, ends) = std::mem::replace(&mut self.st().exit, prev).expect("loop exit");
            self.bind(ends);
            r
        };
        self.st().loop_target = saved;
        r?;
        self.release(m);
        Ok(())
    }

    fn recur(&mut self, f: &Form, items: &[Form], tail: bool) -> R<()> {
        if !tail {
            return Err(self.err(f.pos, "recur must be in tail position"));
        }
        let Some(target) = self.st().loop_target.clone() else {
            return Err(self.err(f.pos, "recur outside a loop or function"));
        };
        let args = &items[1..];
        if args.len() != target.n {
            return Err(self.err(
                f.pos,
                format!(
                    "recur with {} arguments, the loop has {}",
                    args.len(),
                    target.n
                ),
            ));
        }
        let m = self.mark();
        let tmp = self.st().next_reg as Reg;
        self.args_into(args, tmp, f.pos)?;
        for i in 0..args.len() {
            self.emit(Instr::Move {
                dst: target.first + i as Reg,
                src: tmp + i as Reg,
            });
        }
        self.release(m);
        self.emit(Instr::Loop { to: target.pc });
        Ok(())
    }

    fn match_(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        if items.len() < 2 {
            return Err(self.err(f.pos, "match needs a value and clauses"));
        }
        let m = self.mark();
        let t = self.alloc(f.pos)?;
        // A local is matched in place (locals never change while in scope).
        let subj = self.operand(&items[1], t)?;
        let clauses = self.split_clauses(&items[2..], f.pos)?;
        let mut ends = Vec::new();
        for (pat, guard, body) in clauses {
            let cm = self.mark();
            let mut fail = Vec::new();
            let mut bound = Vec::new();
            self.pattern(pat, subj, &mut fail, &mut bound)?;
            self.bind_all(bound);
            if let Some(g) = guard {
                self.guard(g, &mut fail)?;
            }
            self.expr(body, dst, tail)?;
            if !tail {
                ends.push(self.emit(Instr::Jump { to: u32::MAX }));
            }
            self.bind(fail);
            self.release(cm);
        }
        self.emit(Instr::CaseClause { r: subj });
        self.bind(ends);
        self.release(m);
        Ok(())
    }

    /// `pattern [:when guard] body` triples.
    fn split_clauses<'f>(
        &self,
        forms: &'f [Form],
        pos: Pos,
    ) -> R<Vec<(&'f Form, Option<&'f Form>, &'f Form)>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < forms.len() {
            let pat = &forms[i];
            if forms.get(i + 1).and_then(|k| k.as_keyword()) == Some("when") {
                let (Some(g), Some(b)) = (forms.get(i + 2), forms.get(i + 3)) else {
                    return Err(self.err(pat.pos, "expected pattern :when guard body"));
                };
                out.push((pat, Some(g), b));
                i += 4;
            } else {
                let Some(b) = forms.get(i + 1) else {
                    return Err(self.err(pat.pos, "pattern without a body"));
                };
                out.push((pat, None, b));
                i += 2;
            }
        }
        let _ = pos;
        Ok(out)
    }

    /// A guard: false, nil or an exception means the clause fails.
    fn guard(&mut self, g: &Form, fail: &mut Patch) -> R<()> {
        let m = self.mark();
        let t = self.alloc_n(2, g.pos)?;
        let begin = self.emit(Instr::TryBegin {
            r: t,
            handler: u32::MAX,
        });
        self.expr(g, t, false)?;
        self.emit(Instr::TryEnd);
        fail.push(self.emit(Instr::JumpIfFalse { r: t, to: u32::MAX }));
        let skip = self.emit(Instr::Jump { to: u32::MAX });
        self.bind(vec![begin]);
        fail.push(self.emit(Instr::Jump { to: u32::MAX }));
        self.bind(vec![skip]);
        self.release(m);
        Ok(())
    }

    fn try_(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let mut body = Vec::new();
        let mut catches = Vec::new();
        let mut finally = None;
        for it in &items[1..] {
            match it
                .as_list()
                .and_then(|l| l.first())
                .and_then(|h| h.as_symbol())
            {
                Some("catch") => catches.push(it),
                Some("finally") => {
                    if finally.is_some() {
                        return Err(self.err(it.pos, "try has at most one finally"));
                    }
                    finally = Some(it)
                }
                _ => {
                    if !catches.is_empty() || finally.is_some() {
                        return Err(self.err(it.pos, "catch and finally come last in try"));
                    }
                    body.push(it.clone())
                }
            }
        }
        let m = self.mark();
        let cf = self.alloc_n(2, f.pos)?;
        let fin_begin = finally.map(|_| {
            self.emit(Instr::TryBegin {
                r: cf,
                handler: u32::MAX,
            })
        });
        let c = self.alloc_n(2, f.pos)?;
        let begin = self.emit(Instr::TryBegin {
            r: c,
            handler: u32::MAX,
        });
        self.body(&body, f.pos, dst, false)?;
        self.emit(Instr::TryEnd);
        let mut ok = vec![self.emit(Instr::Jump { to: u32::MAX })];
        self.bind(vec![begin]);
        for cl in catches {
            let l = cl.as_list().unwrap_or(&[]);
            if l.len() < 3 {
                return Err(self.err(
                    cl.pos,
                    "catch needs a class, a pattern and a body: (catch :error e body...)",
                ));
            }
            let cm = self.mark();
            let mut fail = Vec::new();
            match l[1].as_keyword() {
                Some(k @ ("error" | "throw" | "exit")) => {
                    let k = self.konst(Term::keyword(k));
                    let k = u16::try_from(k).map_err(|_| {
                        self.err(l[1].pos, "function too large: more than 65536 constants")
                    })?;
                    fail.push(self.emit(Instr::TestEqConst {
                        r: c,
                        k,
                        fail: u32::MAX,
                    }));
                }
                Some("_") | None if l[1].as_symbol() == Some("_") => {}
                _ => {
                    return Err(self.err(l[1].pos, "catch class must be :error, :throw, :exit or _"))
                }
            }
            let mut bound = Vec::new();
            let (pat, guard, body_at) = if l.get(3).and_then(|x| x.as_keyword()) == Some("when") {
                (&l[2], l.get(4), 5)
            } else {
                (&l[2], None, 3)
            };
            self.pattern(pat, c + 1, &mut fail, &mut bound)?;
            self.bind_all(bound);
            if let Some(g) = guard {
                self.guard(g, &mut fail)?;
            }
            self.body(l.get(body_at..).unwrap_or(&[]), cl.pos, dst, false)?;
            ok.push(self.emit(Instr::Jump { to: u32::MAX }));
            self.bind(fail);
            self.release(cm);
        }
        self.emit(Instr::Reraise { r: c });
        self.bind(ok);
        if let (Some(fb), Some(fin)) = (fin_begin, finally) {
            self.emit(Instr::TryEnd);
            let fl = fin.as_list().unwrap_or(&[]);
            let t = self.alloc(fin.pos)?;
            self.body(&fl[1..], fin.pos, t, false)?;
            let end = self.emit(Instr::Jump { to: u32::MAX });
            self.bind(vec![fb]);
            self.body(&fl[1..], fin.pos, t, false)?;
            self.emit(Instr::Reraise { r: cf });
            self.bind(vec![end]);
        }
        self.release(m);
        self.ret_if(dst, tail);
        Ok(())
    }

    fn apply(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        if items.len() > 250 {
            return Err(self.err(f.pos, "too many arguments"));
        }
        let m = self.mark();
        let a = self.alloc_n(items.len() - 1, f.pos)?;
        for (i, it) in items[1..].iter().enumerate() {
            self.expr(it, a + i as Reg, false)?;
        }
        let n = (items.len() - 3) as u8;
        self.line(f.pos);
        if self.real_tail(tail) {
            self.emit(Instr::TailApply { a, n });
        } else {
            self.emit(Instr::Apply { a, n });
            if a != dst {
                self.emit(Instr::Move { dst, src: a });
            }
            self.ret_if(dst, tail);
        }
        self.release(m);
        Ok(())
    }

    /// Compiles `args` into consecutive registers from `first` (which must
    /// be the next free register). Each is allocated just before it is
    /// compiled, so it is the topmost register then and a call there needs
    /// no move.
    fn args_into(&mut self, args: &[Form], first: Reg, pos: Pos) -> R<()> {
        for (i, it) in args.iter().enumerate() {
            let r = self.alloc(pos)?;
            debug_assert_eq!(r as usize, first as usize + i);
            self.expr(it, r, false)?;
        }
        Ok(())
    }

    fn call(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let argc = items.len() - 1;
        if argc > 200 {
            return Err(self.err(f.pos, "too many arguments (over 200); use apply"));
        }
        let m = self.mark();
        // When dst is the topmost register, the call happens right there
        // (its result lands in dst with no move).
        let a = if dst as usize + 1 == self.st().next_reg {
            dst
        } else {
            self.alloc(f.pos)?
        };
        // A call of a var goes through the var (hot code loading).
        let mut var = None;
        if let Some(s) = items[0].as_symbol() {
            let local = !s.contains('/') && self.resolve_local_peek(self.fns.len() - 1, s);
            if !local {
                match self.resolve_var(s, items[0].pos)? {
                    Some(v) => var = Some(self.var_index(v)),
                    None => {
                        return Err(self.err(items[0].pos, format!("unable to resolve symbol: {s}")))
                    }
                }
            }
        }
        if var.is_none() {
            self.expr(&items[0], a, false)?;
        }
        self.args_into(&items[1..], a + 1, f.pos)?;
        self.line(f.pos);
        let argc = argc as u8;
        let real_tail = self.real_tail(tail);
        match (var, real_tail) {
            (Some(var), true) => {
                self.emit(Instr::TailCallVar { a, argc, var });
            }
            (Some(var), false) => {
                self.emit(Instr::CallVar { a, argc, var });
            }
            (None, true) => {
                self.emit(Instr::TailCall { a, argc });
            }
            (None, false) => {
                self.emit(Instr::Call { a, argc });
            }
        }
        if !real_tail {
            if a != dst {
                self.emit(Instr::Move { dst, src: a });
            }
            self.ret_if(dst, tail);
        }
        self.release(m);
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Coll {
    Vector,
    Map,
}

fn split_qualified(name: &str) -> Option<(&str, &str)> {
    if name == "/" {
        return None;
    }
    let i = name.find('/')?;
    let (ns, n) = (&name[..i], &name[i + 1..]);
    (!ns.is_empty() && !n.is_empty()).then_some((ns, n))
}

impl<X: 'static> Drop for Compiler<'_, X> {
    /// A compile that failed frees what it made: none of it was published
    /// (no closure of it exists, no var holds it).
    fn drop(&mut self) {
        for p in self.made.drain(..) {
            // SAFETY: leaked from a box by `finish` (this is the box's own
            // pointer), never published.
            drop(unsafe { Box::from_raw(p.as_ptr()) });
        }
    }
}
