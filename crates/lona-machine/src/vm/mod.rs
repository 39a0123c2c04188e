//! The interpreter: a register machine over one process heap.
//!
//! # State
//!
//! * `stack`: the register stack (term words). Frames are windows on it
//!   (`bytecode.rs` explains the calling convention). It is the process's
//!   memory together with the heap, and the collector's root set:
//!   `stack[..top]`, where `top` is the end of the current frame's window.
//!   Words above `top` are set to `nil` after each collection, so every
//!   word of the stack is always a valid term.
//! * `frames`: the callers of the current function (prototype, return pc,
//!   base, window size); the current one is `cur`. Nothing is kept on the
//!   Rust stack between instructions, so [`Vm::run`] can return after any
//!   safepoint and be called again to resume: that is how a process is
//!   preempted, and later how `receive` waits.
//! * `handlers`: active `try` regions, innermost last.
//!
//! # Memory and its limit
//!
//! Register stack, frames and handlers are counted by `:max-heap-size`
//! with the heap, and grow fallibly: `memory.rs`.
//!
//! # The loop
//!
//! 1. Load the current frame into locals (prototype, code pointer, pc,
//!    base, register pointer, reductions left).
//! 2. Fetch, advance `pc`, dispatch on the instruction.
//! 3. Calls and back-edges are *safepoints*: they first take a reduction;
//!    if none is left, or the heap asked for a collection, `pc` is wound
//!    back to the instruction, the locals are written back, the collection
//!    runs (roots: the stack), and the loop either yields or reloads and
//!    re-executes the instruction.
//! 4. A raise captures the stack trace (`trace.rs`), pops the innermost handler, drops
//!    the frames above it and continues at its handler; with no handler
//!    [`Vm::run`] returns [`Outcome::Raised`].
//!
//! Small integers are added, subtracted and compared on their tagged
//! words without untagging (`tag.rs` shows why that is exact); anything
//! else takes the slow path in [`crate::num`].

mod call; // entering any callable, returns, apply
mod memory;
mod tier; // entering compiled code (`jit`)
mod trace;

use std::sync::Arc;
use std::time::Duration;

use lona_runtime::{StepCx, TimerRef};
use lona_term::{Fragment, GcKind, Heap, HeapError, RawTerm, Term, View};

use crate::bytecode::{Instr, Proto, NO_TIMEOUT};
use crate::env::Env;
use crate::native::{BuiltinCx, Class, Raise, Request};
use crate::num;
use crate::tag::{self, NIL};

/// Why [`Vm::run`] returned.
#[derive(Debug)]
pub enum Outcome {
    /// The call finished with this value.
    Done(RawTerm),
    /// The reduction budget is spent; call `run` again to continue.
    Yield,
    /// An exception nothing caught.
    Raised(Raise),
    /// `(halt n)`.
    Halt(i32),
    /// Waiting in a `receive` (or a signal ended the process): call `run`
    /// again when a message or timeout arrives.
    Wait,
    /// A collection found the heap larger than its `max_heap_size`: the
    /// process must be killed (Erlang's `max_heap_size`).
    HeapLimit(HeapError),
}

pub(crate) use crate::frame::Frame;

#[derive(Clone, Copy, Debug)]
struct Handler {
    /// `frames.len()` when the region began.
    depth: u32,
    pc: u32,
    reg: u8,
}

/// Most registers a process's stack may hold (512 MiB of words): deeper
/// recursion raises `:system-limit`.
pub const MAX_STACK_WORDS: usize = 64 << 20;

/// One process's interpreter. See the module documentation.
pub struct Vm {
    /// The process heap.
    pub heap: Heap,
    stack: Vec<u64>,
    frames: Vec<Frame>,
    cur: Frame,
    handlers: Vec<Handler>,
    env: Arc<Env>,
    /// Whether a call is in progress (`run` may be called).
    active: bool,
    /// Reductions spent since the VM was made.
    pub reductions: u64,
    /// The receive whose scan is in progress (its mailbox cursor id), 0
    /// when none: set by `RecvStart`, cleared when it takes a message or
    /// times out.
    recv_id: u64,
    /// A collection a built-in asked for (`(gc)`): `Some(full)`.
    gc_request: Option<bool>,
    /// What only some processes use, made at first use ([`Extra`]).
    extra: Option<Box<Extra>>,
    /// Whether the VM is a process's, which the code collector can ask
    /// what it holds (`purge`).
    pub census: lona_compiler::area::Census,
}

/// The parts of a [`Vm`] that only some processes use (one that raised,
/// waits with a timeout, keeps a dictionary, outgrew its heap or had its
/// stack limited), boxed apart and made at first use ([`Vm::extra`]): an
/// idle process holds one word for them. Inline they took 112 bytes of
/// every process; with the heap's registers and roots boxed apart too
/// (`lona_term`'s `heap::Extra`), `LonaProcess` went from 640 bytes (a
/// 768-byte block of the allocator) to 440 (448): issue 36,
/// `docs/benchmarks-history.md`, session 21. Keep out of `Vm` what an idle
/// process does not use: `tests/idle_memory.rs` fails when one costs
/// more.
pub(crate) struct Extra {
    /// The exception being handled (a root while set; [`NIL`] before
    /// the first).
    exn_reason: u64,
    /// Its stack trace (`trace.rs`).
    exn_trace: Vec<(&'static Proto, u32)>,
    /// The built-in whose call raised the exception being thrown.
    fault_native: Option<&'static Proto>,
    /// The current receive's timeout: its token and timer, once armed.
    recv_timer: Option<(u64, TimerRef)>,
    /// Set when a collection found the heap over its maximum.
    heap_error: Option<HeapError>,
    /// The process dictionary (a map in a heap root), made by its first
    /// `pd-put` (`builtins/dict.rs`, through `BuiltinCx::dict_slot`).
    pub(crate) dict: Option<lona_term::Root>,
    /// Most words the register stack may grow to.
    max_stack: usize,
}

impl crate::native::DictSlot for Option<Box<Extra>> {
    fn dict(&self) -> Option<lona_term::Root> {
        self.as_ref().and_then(|x| x.dict)
    }
    fn set_dict(&mut self, r: lona_term::Root) {
        self.get_or_insert_with(Box::default).dict = Some(r);
    }
}

impl Default for Extra {
    fn default() -> Extra {
        Extra {
            exn_reason: NIL,
            exn_trace: Vec::new(),
            fault_native: None,
            recv_timer: None,
            heap_error: None,
            dict: None,
            max_stack: MAX_STACK_WORDS,
        }
    }
}

fn idle_proto() -> &'static Proto {
    static IDLE: std::sync::OnceLock<&'static Proto> = std::sync::OnceLock::new();
    IDLE.get_or_init(|| crate::bytecode::bare("idle", Vec::new(), None).leak())
}

impl Vm {
    /// An idle interpreter with an empty heap.
    ///
    /// # Safety
    ///
    /// As [`Vm::with_heap`].
    pub unsafe fn new(env: Arc<Env>) -> Vm {
        // SAFETY: the caller keeps `with_heap`'s contract; an empty heap
        // holds no word.
        unsafe { Vm::with_heap(env, Heap::new()) }
    }

    /// An idle interpreter on a given heap.
    ///
    /// # Safety
    ///
    /// The interpreter follows the words it is given as terms of its
    /// heap: every word the caller hands it afterwards ([`Vm::start`]'s
    /// function and arguments) is an immediate, a word of `heap` or of
    /// permanent memory (a var's value), and `heap`'s terms are ones the
    /// machine made (a process heap, a message's fragment adopted).
    /// `lona-vm`'s evaluator and processes keep this; safe code outside
    /// the two crates cannot make a `Vm`.
    pub unsafe fn with_heap(env: Arc<Env>, heap: Heap) -> Vm {
        // A process's (or a step's) heap: its closures are reported on
        // visits (`purge`).
        heap.set_visited(true);
        Vm {
            heap,
            // Small: an idle process is mostly this and its heap; calls
            // grow it (`ensure`).
            stack: vec![NIL; 8],
            frames: Vec::new(),
            cur: Frame {
                proto: idle_proto(),
                pc: 0,
                base: 1,
                nregs: 0,
            },
            handlers: Vec::new(),
            env,
            active: false,
            reductions: 0,
            recv_id: 0,
            gc_request: None,
            extra: None,
            census: lona_compiler::area::Census::managed(),
        }
    }

    /// The rarely used parts, made now if they were not yet.
    fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// The exception being handled ([`NIL`] if none ever was).
    fn exn_reason(&self) -> u64 {
        self.extra.as_ref().map_or(NIL, |x| x.exn_reason)
    }

    /// Most words the register stack may grow to.
    fn max_stack(&self) -> usize {
        self.extra.as_ref().map_or(MAX_STACK_WORDS, |x| x.max_stack)
    }

    /// Takes the error a collection left, if any.
    fn take_heap_error(&mut self) -> Option<HeapError> {
        self.extra.as_mut().and_then(|x| x.heap_error.take())
    }

    /// The VM is now a process's (`Census::adopt`): visited, so its
    /// heap needs no pins on the closures that enter it.
    pub fn adopt(&mut self) {
        self.census.adopt();
        self.heap.set_visited(true);
    }

    /// Reports the code and constants this VM holds to a code collector's
    /// visit (`purge`, step 3): the prototypes of its frames and its
    /// exception trace, and what its heap and register stack point to.
    pub fn report_code(&self, sweep: &lona_compiler::area::Sweep) {
        sweep.proto(self.cur.proto);
        for f in &self.frames {
            sweep.proto(f.proto);
        }
        if let Some(x) = &self.extra {
            for (p, _) in &x.exn_trace {
                sweep.proto(p);
            }
            if let Some(p) = x.fault_native {
                sweep.proto(p);
            }
        }
        sweep.heap(&self.heap, &self.stack);
        sweep.heap_word(self.exn_reason());
    }

    /// The node.
    pub fn env(&self) -> &Arc<Env> {
        &self.env
    }

    /// Words in the register stack (part of the process's memory).
    pub fn stack_words(&self) -> usize {
        self.stack.len()
    }

    /// Limits the register stack to `words` (at least 64); deeper calls
    /// raise `:system-limit`. Default `MAX_STACK_WORDS`.
    pub fn set_stack_limit(&mut self, words: usize) {
        self.extra().max_stack = words.clamp(64, MAX_STACK_WORDS);
    }

    /// Begins calling `f` with `args` (words of this heap or permanent);
    /// [`Vm::run`] carries it out.
    pub fn start(&mut self, f: RawTerm, args: &[RawTerm]) {
        self.frames.clear();
        // One frame (the trampoline's) is all a process waiting in its
        // first function needs: no room for four.
        self.frames.reserve_exact(1);
        self.handlers.clear();
        self.recv_id = 0;
        if let Some(x) = &mut self.extra {
            x.recv_timer = None;
        }
        self.stack.iter_mut().for_each(|w| *w = NIL);
        self.ensure(3 + args.len());
        self.stack[1] = f.bits();
        for (i, a) in args.iter().enumerate() {
            self.stack[2 + i] = a.bits();
        }
        // A two-instruction trampoline frame with its window at 1:
        // `stack[1]` is the callee, `stack[2..]` the arguments; the result
        // lands in `stack[1]` and is returned into `stack[0]`.
        self.cur = Frame {
            proto: trampoline(args.len()),
            pc: 0,
            base: 1,
            nregs: 1 + args.len() as u32,
        };
        self.active = true;
    }

    /// A collection at a safepoint (state synced).
    fn gc(&mut self, kind: GcKind) {
        let top = (self.cur.base + self.cur.nregs) as usize;
        self.ensure(top + 1);
        self.stack[top] = self.exn_reason();
        // SAFETY: every stack word below `top + 1` is an immediate, a word
        // of this heap written since the last collection (or updated by
        // it), or a permanent term; RawTerm is repr(transparent) over u64.
        let r = unsafe {
            let roots =
                std::slice::from_raw_parts_mut(self.stack.as_mut_ptr() as *mut RawTerm, top + 1);
            self.heap.collect_with_roots(kind, 0, roots)
        };
        if let Some(x) = &mut self.extra {
            x.exn_reason = self.stack[top];
        }
        self.shrink_stack();
        for w in &mut self.stack[top..] {
            *w = NIL;
        }
        // Over max_heap_size, heap and stack counted together: the heap is
        // consistent; the process kills itself at the safepoint
        // (`Outcome::HeapLimit`).
        let max = self.heap.config().max_heap_size;
        if let Err(e) = r {
            self.extra().heap_error = Some(e);
        } else if max > 0 && self.memory_words() > max {
            let words = self.memory_words();
            self.extra().heap_error = Some(HeapError::MaxHeapSize { words, max });
        }
    }

    /// Runs a full collection now (`(gc)`), with the VM's roots. Only when
    /// the VM is idle or from a built-in-free context.
    pub fn collect_major(&mut self) {
        self.gc(GcKind::Major);
    }

    /// Raises from a synced state: finds the handler or ends the call.
    /// `Some` if `run` must return.
    fn throw(&mut self, r: Raise, keep_trace: bool) -> Option<Outcome> {
        if let Class::Halt(n) = r.class {
            if let Some(x) = &mut self.extra {
                x.fault_native = None;
            }
            self.active = false;
            return Some(Outcome::Halt(n));
        }
        if !keep_trace {
            self.capture_trace();
        }
        self.extra().exn_reason = r.reason.bits();
        match self.handlers.pop() {
            None => {
                self.active = false;
                self.frames.clear();
                Some(Outcome::Raised(r))
            }
            Some(h) => {
                let d = h.depth as usize;
                if self.frames.len() > d {
                    self.cur = self.frames[d];
                    self.frames.truncate(d);
                }
                self.cur.pc = h.pc;
                let at = self.cur.base as usize + h.reg as usize;
                self.stack[at] = r.class.keyword().bits();
                self.stack[at + 1] = r.reason.bits();
                None
            }
        }
    }

    /// Runs the current call for at most `budget` reductions, outside any
    /// process: process built-ins and `receive` raise `:no-process`.
    pub fn run(&mut self, budget: i32) -> Outcome {
        self.run_in(budget, None)
    }

    /// Runs the current call for at most `budget` reductions as the
    /// process `rt` is the runtime of.
    pub fn run_in(&mut self, budget: i32, rt: Option<&mut StepCx<'_>>) -> Outcome {
        if !self.active {
            return Outcome::Done(Term::NIL.raw());
        }
        let mut reds = budget.max(1);
        let out = self.interpret(&mut reds, rt);
        let used = (budget.max(1) - reds.max(0)) as u64;
        self.reductions += used;
        if crate::jit::counting() {
            crate::jit::add_all(used as i64);
        }
        out
    }

    #[allow(clippy::too_many_lines)]
    fn interpret(&mut self, reds_out: &mut i32, mut rt: Option<&mut StepCx<'_>>) -> Outcome {
        let mut reds = *reds_out;
        let mut proto: &'static Proto;
        let mut code: *const Instr;
        let mut ip: *const Instr;
        let mut regs: *mut u64;

        macro_rules! reload {
            () => {{
                proto = self.cur.proto;
                code = proto.code.as_ptr();
                // SAFETY: a saved pc is inside its prototype's code.
                ip = unsafe { code.add(self.cur.pc as usize) };
                // SAFETY: base + nregs < stack.len() (ensured on entry).
                regs = unsafe { self.stack.as_mut_ptr().add(self.cur.base as usize) };
            }};
        }
        macro_rules! pc {
            () => {
                // SAFETY: ip points into `code`.
                unsafe { ip.offset_from(code) as u32 }
            };
        }
        macro_rules! jump {
            ($to:expr) => {
                // SAFETY: the compiler's jump targets are inside the code.
                ip = unsafe { code.add($to as usize) }
            };
        }
        // `self.cur` holds the frame's prototype, base and window size at
        // all times (they change only at calls and returns); only the pc
        // lives in a local and is written back here.
        macro_rules! sync {
            () => {{
                self.cur.pc = pc!();
            }};
        }
        macro_rules! base {
            () => {
                (self.cur.base as usize)
            };
        }
        macro_rules! r {
            ($i:expr) => {{
                // SAFETY: the compiler only names registers below the
                // frame's nregs, and the stack holds base + nregs words.
                #[allow(unused_unsafe)]
                let w = unsafe { *regs.add($i as usize) };
                w
            }};
        }
        macro_rules! set {
            ($i:expr, $v:expr) => {{
                let v: u64 = $v;
                // SAFETY: as for `r!`.
                unsafe { *regs.add($i as usize) = v };
            }};
        }
        macro_rules! term {
            ($w:expr) => {{
                let w: u64 = $w;
                // SAFETY: register words are valid terms of this heap.
                unsafe { self.heap.term(crate::tag::raw(w)) }
            }};
        }
        macro_rules! raise {
            ($e:expr) => {{
                let e: Raise = $e;
                sync!();
                *reds_out = reds;
                if let Some(out) = self.throw(e, false) {
                    *reds_out = reds;
                    return out;
                }
                reload!();
                continue;
            }};
        }
        macro_rules! safepoint {
            () => {{
                reds -= 1;
                if reds <= 0 {
                    // SAFETY: ip was advanced past this instruction.
                    ip = unsafe { ip.sub(1) };
                    sync!();
                    if let Some(full) = self.gc_request.take() {
                        self.gc(if full { GcKind::Major } else { GcKind::Minor });
                    } else if self.heap.needs_gc() {
                        self.gc(GcKind::Minor);
                    } else {
                        self.shrink_stack();
                    }
                    *reds_out = 0;
                    if let Some(e) = self.take_heap_error() {
                        self.active = false;
                        return Outcome::HeapLimit(e);
                    }
                    return Outcome::Yield;
                }
            }};
        }
        // The function in var `V[var]`, stored into the callee slot `a`;
        // `[:undef sym]` if the var is unbound.
        macro_rules! callee_var {
            ($var:expr, $a:expr) => {{
                let v = proto.vars[$var as usize];
                let Some(fw) = v.get() else {
                    raise!(self.undef(v));
                };
                set!($a, fw.bits());
                fw
            }};
        }
        // After a tail call moved callee and arguments to the callee slot
        // (state synced): enter it, or return a built-in's result.
        macro_rules! tail_enter {
            ($argc:expr) => {{
                match self.tail_enter($argc, &mut reds, &mut rt) {
                    Ok(None) => reload!(),
                    Ok(Some(out)) => {
                        *reds_out = reds;
                        return out;
                    }
                    Err(e) => raise!(e),
                }
            }};
        }
        // Returns `v` from the current frame: into the callee slot, then
        // the caller's frame is current again (or the outermost call ends).
        macro_rules! ret_value {
            ($v:expr) => {{
                let v: u64 = $v;
                // SAFETY: base >= 1: the callee slot is below the window.
                unsafe { *regs.sub(1) = v };
                match self.frames.pop() {
                    Some(f) => {
                        self.cur = f;
                        proto = f.proto;
                        code = proto.code.as_ptr();
                        jump!(f.pc);
                        // SAFETY: the caller's window is below ours.
                        regs = unsafe { self.stack.as_mut_ptr().add(f.base as usize) };
                    }
                    None => {
                        sync!();
                        self.active = false;
                        *reds_out = reds;
                        return Outcome::Done(crate::tag::raw(v));
                    }
                }
            }};
        }
        // The common calls without leaving the loop: a built-in (a leaf
        // call on the registers) or a bytecode closure of a fixed arity
        // whose window fits the stack. Anything else takes `enter`.
        macro_rules! call_fast {
            ($a:expr, $argc:expr, $fw:expr) => {{
                let fw: u64 = $fw;
                if let Some(code_id) = tag::closure_code(fw) {
                    // SAFETY: closures carry leaked Proto addresses.
                    let p = unsafe { Proto::from_code(code_id) };
                    let argc = $argc as usize;
                    if let Some(nf) = p.ext.native {
                        let (lo, hi) = p.native_arity;
                        if argc >= lo as usize && (hi == u16::MAX || argc <= hi as usize) {
                            // SAFETY: the arguments are registers of the window.
                            let args = unsafe {
                                std::slice::from_raw_parts(
                                    regs.add($a as usize + 1) as *const RawTerm,
                                    argc,
                                )
                            };
                            let mut cx = BuiltinCx {
                                heap: &self.heap,
                                env: &self.env,
                                reds: &mut reds,
                                rt: rt.as_deref_mut(),
                                request: None,
                                dict_slot: &mut self.extra,
                                user_native: p.ext.user_native,
                            };
                            let r = nf(&mut cx, args);
                            // `Redirect`: leave the fast path with the new
                            // callee in the callee slot; `enter` calls it.
                            let redirect = match (cx.request, r) {
                                (Some(Request::Redirect), Ok(g)) => Some(g),
                                _ => None,
                            };
                            if let Some(g) = redirect {
                                set!($a, g.bits());
                            } else if let Some(q) = cx.request {
                                if let (Request::Yield, Ok(v)) = (q, r) {
                                    // `(yield)`: end the slice now (the
                                    // call is complete; resume after it).
                                    set!($a, v.bits());
                                    sync!();
                                    *reds_out = 0;
                                    return Outcome::Yield;
                                }
                                self.request(q, &mut reds);
                            }
                            if redirect.is_none() {
                                match r {
                                    Ok(v) => {
                                        set!($a, v.bits());
                                        continue;
                                    }
                                    Err(e) => {
                                        self.extra().fault_native = Some(p);
                                        raise!(e)
                                    }
                                }
                            }
                        }
                    } else if let Some(e) = p.entries.get(argc) {
                        let need = base!() + $a as usize + 1 + e.nregs as usize + 1;
                        if e.pc != u32::MAX && need < self.stack.len() {
                            self.push_caller(Frame {
                                pc: pc!(),
                                ..self.cur
                            });
                            self.cur = Frame {
                                proto: p,
                                pc: 0,
                                base: self.cur.base + $a as u32 + 1,
                                nregs: e.nregs as u32,
                            };
                            proto = p;
                            code = p.code.as_ptr();
                            jump!(e.pc);
                            // SAFETY: need < stack.len() checked above.
                            regs = unsafe { regs.add($a as usize + 1) };
                            if let Some(f) = p.ext.jit.tick(p, argc) {
                                run_jit!(f, argc);
                            }
                            continue;
                        }
                    }
                }
            }};
        }
        // Calls the callable in register `$a` with `$argc` arguments after
        // it the general way (`Vm::enter`; state synced): a bytecode frame
        // becomes current, or the result is in `R[$a]` already.
        macro_rules! call_slow {
            ($a:expr, $argc:expr) => {{
                match self.enter(
                    base!() + $a as usize,
                    $argc as usize,
                    false,
                    &mut reds,
                    &mut rt,
                ) {
                    Ok(_) => reload!(),
                    Err(e) => raise!(e),
                }
            }};
        }
        // The current frame's prototype has machine code `$f` and the
        // frame is at its entry: run it there (`jit/mod.rs`, the
        // protocol). It returns having popped the frame (a return) or
        // with `cur` at the instruction the interpreter is to run; either
        // way, go on from `cur`.
        macro_rules! run_jit {
            ($f:expr, $argc:expr) => {
                run_jit!($f, $argc, crate::jit::NO_RESUME)
            };
            ($f:expr, $argc:expr, $resume:expr) => {{
                sync!();
                let pending = self.run_compiled($f, $argc, $resume, &mut reds, &mut rt);
                reload!();
                // What a built-in the code called left to finish (it left
                // after the call: `jit/callout.rs`).
                use crate::jit::callout::Pending;
                match pending {
                    Pending::None | Pending::NotNative => {}
                    Pending::Raise(e, p) => {
                        self.extra().fault_native = Some(p);
                        raise!(e)
                    }
                    Pending::Request {
                        value,
                        slot,
                        q,
                        tail: true,
                    } => {
                        // As `Vm::enter` finishes a built-in's tail call.
                        set!(slot, value);
                        self.request(q, &mut reds);
                        ret_value!(value);
                    }
                    Pending::Redirect {
                        g,
                        slot,
                        argc,
                        tail: true,
                    } => {
                        // As `TailCallVar` would have moved callee and
                        // arguments down before calling.
                        set!(slot, g);
                        // SAFETY: as in `TailCallVar`: the window's
                        // registers down to its callee slot.
                        unsafe {
                            move_down(regs.add(slot as usize), regs.sub(1), argc as usize + 1)
                        };
                        sync!();
                        tail_enter!(argc as usize);
                    }
                    Pending::Request { value, slot, q, .. } => {
                        set!(slot, value);
                        if matches!(q, Request::Yield) {
                            sync!();
                            *reds_out = 0;
                            return Outcome::Yield;
                        }
                        self.request(q, &mut reds);
                    }
                    Pending::Redirect { g, slot, argc, .. } => {
                        set!(slot, g);
                        sync!();
                        call_slow!(slot, argc)
                    }
                    Pending::Panic(payload) => std::panic::resume_unwind(payload),
                }
                continue;
            }};
        }
        // The slow paths below tell the compiling tier that this
        // prototype's numbers include floats (`jit/translate/float.rs`).
        macro_rules! note_floats {
            ($x:expr, $y:expr) => {
                // Relaxed: a hint for the compiler (read when compiling);
                // written once, not at every float.
                use std::sync::atomic::Ordering::Relaxed;
                if (tag::is_float($x) || tag::is_float($y)) && !proto.ext.jit.floats.load(Relaxed) {
                    proto.ext.jit.floats.store(true, Relaxed);
                }
            };
        }
        macro_rules! arith {
            ($dst:expr, $a:expr, $b:expr, $fast:expr, $op:expr) => {{
                let (x, y) = (r!($a), r!($b));
                if tag::both_small(x, y) {
                    if let Some(v) = $fast(x, y) {
                        set!($dst, v);
                        continue;
                    }
                }
                note_floats!(x, y);
                match num::arith(&self.heap, $op, term!(x), term!(y)) {
                    Ok(v) => set!($dst, v.bits()),
                    Err(e) => raise!(e),
                }
            }};
        }
        macro_rules! cmp {
            ($dst:expr, $a:expr, $b:expr, $test:expr) => {{
                let (x, y) = (r!($a), r!($b));
                // NaN is unordered: every test false (`num::relation`).
                let o = if tag::both_small(x, y) {
                    Some((x as i64).cmp(&(y as i64)))
                } else {
                    note_floats!(x, y);
                    num::relation(term!(x), term!(y))
                };
                set!($dst, tag::bool(o.is_some_and($test)));
            }};
        }
        macro_rules! jump_unless {
            ($x:expr, $y:expr, $to:expr, $test:expr) => {{
                let (x, y): (u64, u64) = ($x, $y);
                let o = if tag::both_small(x, y) {
                    Some((x as i64).cmp(&(y as i64)))
                } else {
                    note_floats!(x, y);
                    num::relation(term!(x), term!(y))
                };
                if !o.is_some_and($test) {
                    jump!($to);
                }
            }};
        }

        reload!();
        loop {
            debug_assert!(
                (pc!() as usize) < proto.code.len(),
                "pc out of {}",
                proto.name
            );
            // SAFETY: the compiler ends every code path with a return,
            // jump or raise, so ip stays inside the code.
            let ins = unsafe { *ip };
            // SAFETY: as above: the instruction just read is not the last one
            // (every path ends in a return, jump or raise).
            ip = unsafe { ip.add(1) };
            match ins {
                Instr::Move { dst, src } => set!(dst, r!(src)),
                Instr::LoadConst { dst, k } => {
                    // SAFETY: the compiler emits only valid constant indices.
                    set!(dst, unsafe {
                        proto.consts.get_unchecked(k as usize).bits()
                    })
                }
                Instr::LoadNil { dst } => set!(dst, NIL),
                Instr::LoadVar { dst, var } => {
                    let v = proto.vars[var as usize];
                    match v.get() {
                        Some(w) => set!(dst, w.bits()),
                        None => raise!(self.undef(v)),
                    }
                }
                Instr::LoadCapture { dst, i } => {
                    // SAFETY: base >= 1 in any bytecode frame; the callee
                    // slot holds the running closure, which has the
                    // prototype's captures.
                    let f = unsafe { *regs.sub(1) };
                    // SAFETY: as above: `f` is the running closure, `i` one of its captures.
                    set!(dst, unsafe { tag::closure_captured(f, i as usize) });
                }
                // SAFETY: base >= 1 in any bytecode frame: the callee slot.
                Instr::LoadSelf { dst } => set!(dst, unsafe { *regs.sub(1) }),
                Instr::Closure {
                    dst,
                    from,
                    n,
                    proto: p,
                } => {
                    let p = proto.protos[p as usize];
                    // SAFETY: registers from..from+n are in the window.
                    let caps = unsafe {
                        std::slice::from_raw_parts(
                            regs.add(from as usize) as *const RawTerm,
                            n as usize,
                        )
                    };
                    // SAFETY: captured words are valid terms of this heap.
                    let c = unsafe { self.heap.closure_raw(p.code_id(), caps) };
                    set!(dst, c.bits());
                }
                Instr::MakeVector { dst, from, n } => {
                    // SAFETY: as for Closure.
                    let items = unsafe {
                        std::slice::from_raw_parts(
                            regs.add(from as usize) as *const RawTerm,
                            n as usize,
                        )
                    };
                    // SAFETY: the items were made on this heap (registers of this frame).
                    let v = unsafe { self.heap.vector_raw(items) };
                    set!(dst, v.bits());
                }
                Instr::MakeList { dst, from, n } => {
                    let mut acc = Term::EMPTY_LIST.raw();
                    for i in (0..n as usize).rev() {
                        // SAFETY: as for Closure.
                        acc = unsafe {
                            self.heap
                                .cons_raw(crate::tag::raw(r!(from as usize + i)), acc)
                        };
                    }
                    set!(dst, acc.bits());
                }
                Instr::MakeMap { dst, from, n } => {
                    let pairs: Vec<(Term<'_>, Term<'_>)> = (0..n as usize)
                        .map(|i| {
                            (
                                term!(r!(from as usize + 2 * i)),
                                term!(r!(from as usize + 2 * i + 1)),
                            )
                        })
                        .collect();
                    let m = self.heap.map(&pairs).bits();
                    set!(dst, m);
                }
                Instr::DefVar { var, src } => {
                    proto.vars[var as usize].set_copy(term!(r!(src)));
                }
                Instr::Jump { to } => jump!(to),
                Instr::Loop { to } => {
                    safepoint!();
                    jump!(to);
                    // An iteration counts as a call; compiled code goes
                    // on from the loop's head (`jit/translate/resume.rs`).
                    if let Some((f, argc)) = proto.ext.jit.loop_tick(proto, to) {
                        run_jit!(f, argc, u64::from(to));
                    }
                }
                Instr::JumpIfFalse { r, to } => {
                    if !tag::truthy(r!(r)) {
                        jump!(to);
                    }
                }
                Instr::JumpIfTrue { r, to } => {
                    if tag::truthy(r!(r)) {
                        jump!(to);
                    }
                }
                Instr::CallVar { a, argc, var } => {
                    safepoint!();
                    let fw = callee_var!(var, a);
                    call_fast!(a, argc, fw.bits());
                    sync!();
                    call_slow!(a, argc)
                }
                Instr::CallVar1Imm { a, src, imm, var } => {
                    safepoint!();
                    let x = r!(src);
                    let y = if tag::is_small(x) {
                        tag::add_small(x, tag::small(imm as i64))
                    } else {
                        None
                    };
                    let y = match y {
                        Some(y) => y,
                        None => {
                            let imm = Term::small_int(imm as i64).unwrap_or(Term::NIL);
                            match num::arith(&self.heap, num::Op::Add, term!(x), imm) {
                                Ok(v) => v.bits(),
                                Err(e) => raise!(e),
                            }
                        }
                    };
                    set!(a + 1, y);
                    // Skip the CallVar this instruction stands for.
                    // SAFETY: the fused CallVar follows in the code.
                    ip = unsafe { ip.add(1) };
                    let fw = callee_var!(var, a);
                    call_fast!(a, 1u8, fw.bits());
                    sync!();
                    call_slow!(a, 1)
                }
                Instr::AddRet { r, a, b } => {
                    let (x, y) = (r!(a), r!(b));
                    let v = if tag::both_small(x, y) {
                        tag::add_small(x, y)
                    } else {
                        None
                    };
                    let v = match v {
                        Some(v) => v,
                        None => match num::arith(&self.heap, num::Op::Add, term!(x), term!(y)) {
                            Ok(v) => v.bits(),
                            Err(e) => raise!(e),
                        },
                    };
                    set!(r, v);
                    // SAFETY: the fused Ret follows in the code.
                    ip = unsafe { ip.add(1) };
                    ret_value!(v);
                }
                Instr::Call { a, argc } => {
                    safepoint!();
                    call_fast!(a, argc, r!(a));
                    sync!();
                    call_slow!(a, argc)
                }
                Instr::TailCallVar { a, argc, var } => {
                    safepoint!();
                    let fw = callee_var!(var, a);
                    // A self tail call (the var still holds the running
                    // closure): a jump to the entry, with no decoding.
                    // SAFETY: base >= 1: the callee slot is below the window.
                    let same = fw.bits() == unsafe { *regs.sub(1) };
                    // Move callee and arguments down to the callee slot.
                    // SAFETY: the source is inside the window, the target
                    // starts at the callee slot below it.
                    unsafe { move_down(regs.add(a as usize), regs.sub(1), argc as usize + 1) };
                    if same {
                        if let Some(e) = proto.entries.get(argc as usize) {
                            if e.pc != u32::MAX && e.nregs as u32 == self.cur.nregs {
                                jump!(e.pc);
                                if let Some(f) = proto.ext.jit.tick(proto, argc as usize) {
                                    run_jit!(f, argc as usize);
                                }
                                continue;
                            }
                        }
                    }
                    if let Some(code_id) = tag::closure_code(fw.bits()) {
                        // SAFETY: closures carry leaked Proto addresses.
                        let p = unsafe { Proto::from_code(code_id) };
                        if p.ext.native.is_none() {
                            if let Some(e) = p.entries.get(argc as usize) {
                                if e.pc != u32::MAX
                                    && base!() + e.nregs as usize + 1 < self.stack.len()
                                {
                                    self.cur.nregs = e.nregs as u32;
                                    self.cur.proto = p;
                                    proto = p;
                                    code = p.code.as_ptr();
                                    jump!(e.pc);
                                    // Counted as a call: mutual tail
                                    // recursion becomes hot too.
                                    if let Some(f) = p.ext.jit.tick(p, argc as usize) {
                                        run_jit!(f, argc as usize);
                                    }
                                    continue;
                                }
                            }
                        }
                    }
                    sync!();
                    tail_enter!(argc as usize);
                }
                Instr::TailCall { a, argc } => {
                    safepoint!();
                    // SAFETY: as in TailCallVar.
                    unsafe { move_down(regs.add(a as usize), regs.sub(1), argc as usize + 1) };
                    sync!();
                    tail_enter!(argc as usize);
                }
                Instr::Apply { a, n } => {
                    safepoint!();
                    sync!();
                    let at = base!() + a as usize + 1 + n as usize;
                    let extra = match self.spread(at) {
                        Ok(k) => k,
                        Err(e) => raise!(e),
                    };
                    call_slow!(a, n as usize + extra)
                }
                Instr::TailApply { a, n } => {
                    safepoint!();
                    sync!();
                    let at = base!() + a as usize + 1 + n as usize;
                    let extra = match self.spread(at) {
                        Ok(k) => k,
                        Err(e) => raise!(e),
                    };
                    let argc = n as usize + extra;
                    let from = base!() + a as usize;
                    self.stack.copy_within(from..from + argc + 1, base!() - 1);
                    tail_enter!(argc);
                }
                Instr::Ret { r } => {
                    let v = r!(r);
                    ret_value!(v);
                }
                Instr::Add { dst, a, b } => arith!(dst, a, b, tag::add_small, num::Op::Add),
                Instr::Sub { dst, a, b } => arith!(dst, a, b, tag::sub_small, num::Op::Sub),
                Instr::Mul { dst, a, b } => arith!(dst, a, b, tag::mul_small, num::Op::Mul),
                Instr::AddImm { dst, a, imm } => {
                    let x = r!(a);
                    if tag::is_small(x) {
                        if let Some(v) = tag::add_small(x, tag::small(imm as i64)) {
                            set!(dst, v);
                            continue;
                        }
                    }
                    let imm = Term::small_int(imm as i64).unwrap_or(Term::NIL);
                    match num::arith(&self.heap, num::Op::Add, term!(x), imm) {
                        Ok(v) => set!(dst, v.bits()),
                        Err(e) => raise!(e),
                    }
                }
                Instr::Lt { dst, a, b } => cmp!(dst, a, b, |o: std::cmp::Ordering| o.is_lt()),
                Instr::Le { dst, a, b } => cmp!(dst, a, b, |o: std::cmp::Ordering| o.is_le()),
                Instr::Gt { dst, a, b } => cmp!(dst, a, b, |o: std::cmp::Ordering| o.is_gt()),
                Instr::Ge { dst, a, b } => cmp!(dst, a, b, |o: std::cmp::Ordering| o.is_ge()),
                Instr::Eq { dst, a, b } => {
                    let (x, y) = (r!(a), r!(b));
                    let eq = x == y
                        || (!tag::both_immediate(x, y) && lona_term::equal(term!(x), term!(y)));
                    set!(dst, tag::bool(eq));
                }
                Instr::Cons { dst, a, b } => {
                    let (x, y) = (r!(a), r!(b));
                    if tag::is_cons(y) || y == tag::EMPTY_LIST {
                        // SAFETY: both are registers: valid words of this heap.
                        let c =
                            unsafe { self.heap.cons_raw(crate::tag::raw(x), crate::tag::raw(y)) };
                        set!(dst, c.bits());
                    } else {
                        match crate::builtins::cons_any(&self.heap, term!(x), term!(y)) {
                            Ok(v) => set!(dst, v.bits()),
                            Err(e) => raise!(e),
                        }
                    }
                }
                Instr::NumEq { dst, a, b } => {
                    let (x, y) = (r!(a), r!(b));
                    let eq = if tag::both_small(x, y) {
                        x == y
                    } else {
                        note_floats!(x, y);
                        match num::num_eq(term!(x), term!(y)) {
                            Ok(b) => b,
                            Err(e) => raise!(e),
                        }
                    };
                    set!(dst, tag::bool(eq));
                }
                Instr::JumpUnlessLt { a, b, to } => {
                    jump_unless!(r!(a), r!(b), to, |o: std::cmp::Ordering| o.is_lt())
                }
                Instr::JumpUnlessLe { a, b, to } => {
                    jump_unless!(r!(a), r!(b), to, |o: std::cmp::Ordering| o.is_le())
                }
                Instr::JumpUnlessLtImm { a, imm, to } => {
                    jump_unless!(
                        r!(a),
                        tag::small(imm as i64),
                        to,
                        |o: std::cmp::Ordering| o.is_lt()
                    )
                }
                Instr::JumpUnlessEq { a, b, to } => {
                    let (x, y) = (r!(a), r!(b));
                    let eq = x == y
                        || (!tag::both_immediate(x, y) && lona_term::equal(term!(x), term!(y)));
                    if !eq {
                        jump!(to);
                    }
                }
                // A pattern looks through metadata: the tests on what they
                // wrap, when the fast test fails; the loads after them
                // likewise (`tag::unmeta`).
                Instr::TestVector { r, n, fail } => {
                    let w = r!(r);
                    if tag::vector_len(w) != Some(n as usize)
                        && tag::vector_len(tag::unmeta(w)) != Some(n as usize)
                    {
                        jump!(fail);
                    }
                }
                Instr::TestVectorMin { r, n, fail } => {
                    match tag::vector_len(r!(r)).or_else(|| tag::vector_len(tag::unmeta(r!(r)))) {
                        Some(len) if len >= n as usize => {}
                        _ => jump!(fail),
                    }
                }
                Instr::GetElem { dst, r, i } => {
                    // SAFETY: preceded by a vector test covering index i
                    // (of the value inside, for a value with metadata).
                    set!(dst, unsafe {
                        tag::vector_elem(tag::unmeta(r!(r)), i as usize)
                    })
                }
                Instr::VectorFrom { dst, r, i } => {
                    let t = term!(r!(r)).unmeta();
                    let View::Vector(items) = t.view() else {
                        raise!(Raise::badarg())
                    };
                    let rest = &items[(i as usize).min(items.len())..];
                    let v = if rest.iter().all(|x| self.heap.owns(*x)) {
                        self.heap.vector(rest).bits()
                    } else {
                        // A receive pattern looks at a message in place,
                        // in its fragment: the new vector gets copies.
                        let own: Vec<_> = rest.iter().map(|x| self.heap.copy_from(*x)).collect();
                        self.heap.vector(&own).bits()
                    };
                    set!(dst, v);
                }
                Instr::TestCons { r, fail } => {
                    if !tag::is_cons(r!(r)) && !tag::is_cons(tag::unmeta(r!(r))) {
                        jump!(fail);
                    }
                }
                Instr::TestList { r, fail } => {
                    let x = r!(r);
                    if !(tag::is_cons(x) || x == tag::EMPTY_LIST || tag::is_cons(tag::unmeta(x))) {
                        jump!(fail);
                    }
                }
                // SAFETY: the compiler emits GetHead and GetTail only right
                // after a TestCons of the same register (`compiler/pattern.rs`):
                // it holds a cons (or wraps one, with metadata).
                Instr::GetHead { dst, r } => set!(dst, unsafe { tag::head(tag::unmeta(r!(r))) }),
                // SAFETY: as for GetHead.
                Instr::GetTail { dst, r } => set!(dst, unsafe { tag::tail(tag::unmeta(r!(r))) }),
                Instr::TestEmptyList { r, fail } => {
                    if r!(r) != tag::EMPTY_LIST {
                        jump!(fail);
                    }
                }
                Instr::TestEqConst { r, k, fail } => {
                    let x = r!(r);
                    let y = proto.consts[k as usize].bits();
                    let eq = x == y
                        || (!tag::both_immediate(x, y)
                            && lona_term::equal_exact(term!(x), term!(y)));
                    if !eq {
                        jump!(fail);
                    }
                }
                Instr::TestEqReg { a, b, fail } => {
                    let (x, y) = (r!(a), r!(b));
                    let eq = x == y
                        || (!tag::both_immediate(x, y)
                            && lona_term::equal_exact(term!(x), term!(y)));
                    if !eq {
                        jump!(fail);
                    }
                }
                Instr::TestMap { r, fail } => {
                    if !matches!(term!(r!(r)).unmeta().view(), View::Map(_)) {
                        jump!(fail);
                    }
                }
                Instr::MapGet { dst, r, fail } => {
                    let key = term!(r!(dst));
                    match crate::builtins::get(term!(r!(r)).unmeta(), key) {
                        Some(v) => set!(dst, v.bits()),
                        None => jump!(fail),
                    }
                }
                Instr::Badmatch { r } => {
                    let v = self
                        .heap
                        .vector(&[lona_term::kw!("badmatch"), term!(r!(r))])
                        .raw();
                    raise!(Raise::error(term!(v.bits())))
                }
                Instr::CaseClause { r } => {
                    let v = self
                        .heap
                        .vector(&[lona_term::kw!("case-clause"), term!(r!(r))])
                        .raw();
                    raise!(Raise::error(term!(v.bits())))
                }
                Instr::FunctionClause => raise!(Raise::error(lona_term::kw!("function-clause"))),
                Instr::TryBegin { r, handler } => {
                    if self.handlers.len() == self.handlers.capacity() {
                        self.grow_handlers();
                    }
                    self.handlers.push(Handler {
                        depth: self.frames.len() as u32,
                        pc: handler,
                        reg: r,
                    });
                }
                Instr::TryEnd => {
                    self.handlers.pop();
                }
                Instr::Reraise { r } => {
                    let class = Class::from_keyword(term!(r!(r))).unwrap_or(Class::Error);
                    let e = Raise {
                        class,
                        reason: crate::tag::raw(r!(r + 1)),
                    };
                    sync!();
                    if let Some(out) = self.throw(e, true) {
                        *reds_out = reds;
                        return out;
                    }
                    reload!();
                }
                Instr::StackTrace { dst } => {
                    let t = self.trace_term();
                    set!(dst, t.bits());
                }
                Instr::RecvStart => {
                    let Some(cx) = rt.as_deref_mut() else {
                        raise!(Raise::error(lona_term::kw!("no-process")))
                    };
                    if self.recv_id != 0 {
                        // A guard of another receive is receiving: its
                        // scan would lose its place (the guard fails).
                        raise!(Raise::error(lona_term::kw!("receive-in-guard")))
                    }
                    self.recv_id = cx.new_receive();
                    if let Some(x) = &mut self.extra {
                        x.recv_timer = None;
                    }
                }
                Instr::RecvPeek { dst, empty } => {
                    let Some(cx) = rt.as_deref_mut() else {
                        raise!(Raise::error(lona_term::kw!("no-process")))
                    };
                    let w = cx
                        .peek_message(self.recv_id)
                        .map(|e| crate::msg::message_term(&self.heap, &e));
                    match w {
                        Some(w) => set!(dst, w.bits()),
                        None if cx.exiting() => {
                            // A signal ended the process: stop here (the
                            // worker ends it after this step).
                            // SAFETY: ip was advanced past this instruction.
                            ip = unsafe { ip.sub(1) };
                            sync!();
                            *reds_out = reds;
                            return Outcome::Wait;
                        }
                        None => jump!(empty),
                    }
                }
                Instr::RecvScan { dst, f, empty } => {
                    let Some(cx) = rt.as_deref_mut() else {
                        raise!(Raise::error(lona_term::kw!("no-process")))
                    };
                    let filter = &proto.recv_filters[f as usize];
                    let heap = &self.heap;
                    let mut w = crate::tag::raw(0);
                    let limit = reds.max(1) as u32;
                    let (seen, rejected) = cx.peek_matching(self.recv_id, limit, |e| {
                        w = crate::msg::message_term(heap, e);
                        filter.admits(w.bits())
                    });
                    let seen = seen.is_some();
                    reds -= rejected as i32;
                    if seen {
                        set!(dst, w.bits());
                    } else if rejected >= limit {
                        // A long scan yields, and resumes here after the
                        // messages it rejected (as `RecvNext` does).
                        // SAFETY: ip was advanced past this instruction.
                        ip = unsafe { ip.sub(1) };
                        sync!();
                        *reds_out = 0;
                        return Outcome::Yield;
                    } else if cx.exiting() {
                        // SAFETY: as above.
                        ip = unsafe { ip.sub(1) };
                        sync!();
                        *reds_out = reds;
                        return Outcome::Wait;
                    } else {
                        jump!(empty);
                    }
                }
                Instr::RecvNext { to } => {
                    if let Some(cx) = rt.as_deref_mut() {
                        cx.skip_message(self.recv_id);
                    }
                    jump!(to);
                    reds -= 1;
                    if reds <= 0 {
                        // A long scan yields; it resumes after the messages
                        // it rejected (the mailbox keeps the cursor).
                        sync!();
                        *reds_out = 0;
                        return Outcome::Yield;
                    }
                }
                Instr::RecvAccept => {
                    if let Some(cx) = rt.as_deref_mut() {
                        if let Some(e) = cx.take_peeked(self.recv_id) {
                            if let Ok(f) = e.downcast::<Fragment>() {
                                // Same words: the registers holding parts of
                                // the message stay valid.
                                self.heap.attach(f);
                            }
                        }
                        if let Some((_, t)) = self.extra.as_mut().and_then(|x| x.recv_timer.take())
                        {
                            cx.cancel_receive_timer(t);
                        }
                    }
                    self.recv_id = 0;
                }
                Instr::RecvWait { t, to } => {
                    let Some(cx) = rt.as_deref_mut() else {
                        raise!(Raise::error(lona_term::kw!("no-process")))
                    };
                    let armed = self.extra.as_ref().and_then(|x| x.recv_timer.as_ref());
                    match armed.map(|(token, _)| *token) {
                        Some(token) if cx.timed_out(token) => {
                            if let Some(x) = &mut self.extra {
                                x.recv_timer = None;
                            }
                            self.recv_id = 0;
                            continue;
                        }
                        Some(_) => {}
                        None if t != NO_TIMEOUT => {
                            let v = term!(r!(t));
                            let ms = match v.view() {
                                View::Int(n) if n >= 0 => Some(n as u64),
                                // Longer than any timer: an infinite wait.
                                View::BigInt(b) if b.sign() != num_bigint::Sign::Minus => None,
                                View::Keyword(k) if k.name() == "infinity" => None,
                                _ => {
                                    self.recv_id = 0;
                                    let r = self.heap.vector(&[lona_term::kw!("timeout-value"), v]);
                                    raise!(Raise::error(r))
                                }
                            };
                            match ms {
                                Some(0) => {
                                    self.recv_id = 0;
                                    continue;
                                }
                                Some(ms) => {
                                    let timer = cx.start_receive_timer(Duration::from_millis(ms));
                                    self.extra().recv_timer = timer;
                                }
                                None => {}
                            }
                        }
                        None => {}
                    }
                    jump!(to);
                    sync!();
                    *reds_out = reds;
                    // A process that lives by receiving may never spend a
                    // slice's budget, so it would never reach the
                    // safepoint's collection: the messages it took (now
                    // heap fragments) would pile up. Collect before
                    // sleeping when they outweigh the young block. (A
                    // peeked message still in the mailbox is outside the
                    // heap; the collector leaves such words alone.)
                    if self.heap.needs_gc() {
                        self.gc(GcKind::Minor);
                        if let Some(e) = self.take_heap_error() {
                            self.active = false;
                            return Outcome::HeapLimit(e);
                        }
                    }
                    return Outcome::Wait;
                }
            }
        }
    }

    fn undef(&self, v: &crate::var::Var) -> Raise {
        // SAFETY: the var's symbol is an immediate.
        let sym = unsafe { lona_term::permanent_term(v.symbol) };
        Raise::error(self.heap.vector(&[lona_term::kw!("undef"), sym]))
    }
}

/// Copies `n` words from `src` down to `dst` (`dst < src`, the ranges may
/// overlap): the arguments of a tail call. One word at a time: the counts
/// are tiny, `ptr::copy` would call `memmove`, and a vectorised copy
/// reads 16 bytes just written as two 8-byte stores, which stalls on
/// store forwarding (it cost 30% of a tail-call loop). The volatile read
/// keeps the compiler from merging the loads.
///
/// # Safety
/// Both ranges lie in the register stack and `dst <= src`.
#[inline(always)]
unsafe fn move_down(src: *const u64, dst: *mut u64, n: usize) {
    for i in 0..n {
        // SAFETY: per the caller; copying upward in address order is
        // correct for an overlapping move to a lower address.
        unsafe { *dst.add(i) = std::ptr::read_volatile(src.add(i)) };
    }
}

/// The trampoline used by [`Vm::start`]: `Call 0 argc; Ret 0`.
fn trampoline(argc: usize) -> &'static Proto {
    use std::sync::Mutex;
    static CACHE: Mutex<Vec<&'static Proto>> = Mutex::new(Vec::new());
    let mut c = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    while c.len() <= argc {
        let n = c.len();
        let code = vec![
            Instr::Call {
                a: 0,
                argc: n as u8,
            },
            Instr::Ret { r: 0 },
        ];
        c.push(crate::bytecode::bare("%start", code, None).leak());
    }
    c[argc]
}
