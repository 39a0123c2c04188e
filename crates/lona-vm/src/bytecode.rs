//! The bytecode: instructions, function prototypes and their entries.
//!
//! # Machine model
//!
//! A Lonala process runs on a **register stack** (one `Vec` of term words
//! per process) and a **frame stack** (one [`crate::vm`] frame per active
//! call). A function sees a window of the register stack starting at its
//! *base*: registers `r0, r1, ...` are `stack[base + i]`. The word just
//! below the window, `stack[base - 1]`, is the *callee slot*: it holds the
//! closure being run (read by [`Instr::LoadCapture`] and [`Instr::LoadSelf`])
//! and receives the function's result on return.
//!
//! **Calling convention.** To call, a function puts the callee in some
//! register `a` and the arguments in `a+1 .. a+1+argc`; the callee's window
//! starts at `a+1`, so the arguments are its `r0..`, with no copying. The
//! result comes back in `a`. A tail call moves callee and arguments down to
//! the current callee slot and window and reuses the frame, so tail calls
//! of any kind (self, mutual, through a closure) run in constant space.
//!
//! **Reductions and safepoints.** Every call, tail call and loop back-edge
//! ([`Instr::Loop`]) costs one reduction. When the budget is spent, or the
//! heap asked for a collection, the interpreter stops *before* executing the
//! instruction, saving its state; a collection happens there, with the
//! register stack as its roots, and a yield returns to the scheduler. No
//! other instruction can move the heap, so only these points need the
//! registers to be exact roots.
//!
//! Instructions are a Rust enum of at most 8 bytes, so the interpreter's
//! `match` becomes one jump table; operands are register numbers (`u8`,
//! relative to the base), constant indices (`u32` into [`Proto::consts`])
//! and absolute jump targets (`u32`).

use std::sync::Arc;

use lona_term::RawTerm;

use crate::var::Var;

/// A register number, relative to the frame's base.
pub type Reg = u8;

/// `RecvWait`'s register operand when the receive has no timeout.
pub const NO_TIMEOUT: Reg = Reg::MAX;

/// The signature of a built-in function written in Rust.
///
/// Built-ins are leaf functions: they never call back into Lonala. They get
/// their arguments as raw words of the process heap and may allocate on it
/// (allocation never moves the heap; see [`crate::vm`]).
pub(crate) type NativeFn =
    fn(&mut crate::native::NativeCx<'_, '_>, &[RawTerm]) -> crate::native::NResult;

/// One instruction. Each variant documents its effect; `R[x]` is register
/// `x` of the current frame, `K[k]` constant `k`, `pc` the next instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Instr {
    // ---- moves and constants ------------------------------------------
    /// `R[dst] = R[src]`
    Move { dst: Reg, src: Reg },
    /// `R[dst] = K[k]` (an immediate or a permanent literal).
    LoadConst { dst: Reg, k: u32 },
    /// `R[dst] = nil`
    LoadNil { dst: Reg },
    /// `R[dst] = ` the value of var `V[var]`; raises `[:undef sym]` if
    /// the var is unbound.
    LoadVar { dst: Reg, var: u32 },
    /// `R[dst] = ` captured value `i` of the running closure.
    LoadCapture { dst: Reg, i: u8 },
    /// `R[dst] = ` the running closure itself (a named `fn` calling itself).
    LoadSelf { dst: Reg },
    /// `R[dst] = ` a new closure of prototype `P[proto]` capturing
    /// `R[from] .. R[from + n]`.
    Closure {
        dst: Reg,
        from: Reg,
        n: u8,
        proto: u32,
    },
    /// `R[dst] = ` a vector of `R[from] .. R[from + n]`.
    MakeVector { dst: Reg, from: Reg, n: u8 },
    /// `R[dst] = ` a list of `R[from] .. R[from + n]`.
    // The VM runs it; the compiler does not emit it at present (it was
    // unseen while the module was public).
    #[allow(dead_code)]
    MakeList { dst: Reg, from: Reg, n: u8 },
    /// `R[dst] = ` a map of the `n` pairs `R[from] R[from+1] ...` (a later
    /// equal key wins).
    MakeMap { dst: Reg, from: Reg, n: u8 },
    /// Sets var `V[var]` to `R[src]` (copied to permanent memory unless it
    /// already is there): `def`.
    DefVar { var: u32, src: Reg },

    // ---- control ------------------------------------------------------
    /// `pc = to`
    Jump { to: u32 },
    /// Back-edge of a `loop`/`recur`: costs a reduction (a safepoint), then
    /// `pc = to`.
    Loop { to: u32 },
    /// `if R[r] is nil or false: pc = to`
    JumpIfFalse { r: Reg, to: u32 },
    /// `if R[r] is neither nil nor false: pc = to`
    // As `MakeList`: the VM runs it, the compiler does not emit it now.
    #[allow(dead_code)]
    JumpIfTrue { r: Reg, to: u32 },

    // ---- calls ----------------------------------------------------------
    /// Calls `R[a]` with `R[a+1] .. R[a+1+argc]`; the result lands in `R[a]`.
    /// A reduction and a safepoint.
    Call { a: Reg, argc: u8 },
    /// Calls the function in var `V[var]` as `Call` does (the closure is
    /// stored in `R[a]` first). Redefining the var changes what the next
    /// call runs: hot code loading.
    CallVar { a: Reg, argc: u8, var: u32 },
    /// `Call` in tail position: reuses the current frame.
    TailCall { a: Reg, argc: u8 },
    /// `CallVar` in tail position: reuses the current frame.
    TailCallVar { a: Reg, argc: u8, var: u32 },
    /// `apply`: calls `R[a]` with `R[a+1] .. R[a+n]` followed by the
    /// elements of the list or vector `R[a+n+1]`; result in `R[a]`.
    Apply { a: Reg, n: u8 },
    /// `Apply` in tail position.
    TailApply { a: Reg, n: u8 },
    /// Returns `R[r]` to the caller (into its callee slot).
    Ret { r: Reg },

    // ---- superinstructions (made by the peephole pass, `fuse`) -----------
    /// `AddImm { dst: a+1, a: src, imm }` then the `CallVar { a, argc: 1,
    /// var }` that follows it (which stays in the code, skipped): the
    /// recursive step `(f (- n 1))`.
    CallVar1Imm {
        a: Reg,
        src: Reg,
        imm: i16,
        var: u16,
    },
    /// `Add { dst: r, a, b }` then the `Ret { r }` that follows it.
    AddRet { r: Reg, a: Reg, b: Reg },

    // ---- arithmetic and comparison (small integers inline) ---------------
    /// `R[dst] = R[a] + R[b]` (`:badarith` unless both numbers).
    Add { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] - R[b]`
    Sub { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] * R[b]`
    Mul { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] + imm` (`inc`, `dec`, `(+ x 1)`, `(- n 2)`).
    AddImm { dst: Reg, a: Reg, imm: i16 },
    /// `R[dst] = R[a] < R[b]` (numbers only, else `:badarg`); likewise
    /// `Le`, `Gt`, `Ge`.
    Lt { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] <= R[b]`
    Le { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] > R[b]`
    Gt { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = R[a] >= R[b]`
    Ge { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = (= R[a] R[b])`: structural equality.
    Eq { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = (cons R[a] R[b])`: a new cell when `R[b]` is a list, else
    /// the list of `R[a]` and the elements of `R[b]`.
    Cons { dst: Reg, a: Reg, b: Reg },
    /// `R[dst] = (== R[a] R[b])`: numeric equality.
    NumEq { dst: Reg, a: Reg, b: Reg },
    /// `if not (R[a] < R[b]): pc = to` (fused compare and branch, `:badarg`
    /// unless numbers); likewise the others.
    JumpUnlessLt { a: Reg, b: Reg, to: u32 },
    /// `if not (R[a] <= R[b]): pc = to`
    JumpUnlessLe { a: Reg, b: Reg, to: u32 },
    /// `if not (R[a] < imm): pc = to`
    JumpUnlessLtImm { a: Reg, imm: i16, to: u32 },
    /// `if not (R[a] = R[b]): pc = to`
    JumpUnlessEq { a: Reg, b: Reg, to: u32 },

    // ---- pattern tests: each jumps to `fail` when the test is false --------
    /// `R[r]` is a vector of exactly `n` elements.
    TestVector { r: Reg, n: u16, fail: u32 },
    /// `R[r]` is a vector of at least `n` elements.
    TestVectorMin { r: Reg, n: u16, fail: u32 },
    /// `R[dst] = R[r][i]` (after a vector test).
    GetElem { dst: Reg, r: Reg, i: u16 },
    /// `R[dst] = ` the vector of the elements of `R[r]` from `i` on.
    VectorFrom { dst: Reg, r: Reg, i: u16 },
    /// `R[r]` is a non-empty list (a cons cell).
    TestCons { r: Reg, fail: u32 },
    /// `R[r]` is a list: a cons cell or `()`.
    TestList { r: Reg, fail: u32 },
    /// `R[dst] = (first R[r])` of a cons cell (after `TestCons`).
    GetHead { dst: Reg, r: Reg },
    /// `R[dst] = (rest R[r])` of a cons cell (after `TestCons`).
    GetTail { dst: Reg, r: Reg },
    /// `R[r]` is `()` (the empty list).
    TestEmptyList { r: Reg, fail: u32 },
    /// `R[r]` equals `K[k]` structurally.
    TestEqConst { r: Reg, k: u16, fail: u32 },
    /// `R[a]` equals `R[b]` structurally (a name bound twice in a pattern).
    TestEqReg { a: Reg, b: Reg, fail: u32 },
    /// `R[r]` is a map.
    TestMap { r: Reg, fail: u32 },
    /// `R[dst] = (get R[r] R[dst])`: the key is loaded into `dst` first;
    /// jumps to `fail` (leaving `dst` as it was) if the key is missing.
    MapGet { dst: Reg, r: Reg, fail: u32 },

    // ---- receive (BEAM's loop_rec / remove_message / wait) -----------------
    // A `receive` compiles to:
    //   RecvStart; top: RecvPeek s, wait; <clause tests on s, each failing
    //   to the next>; RecvAccept; <body> ... RecvNext top;
    //   wait: RecvWait t, top; <timeout body>
    /// Begins a receive: a new receive id (the mailbox keeps its cursor
    /// under it). Raises `:receive-in-guard` inside another receive's scan.
    RecvStart,
    /// `R[dst] = ` the next message the receive has not rejected yet
    /// (draining the inbox when it has seen them all), left in the
    /// mailbox; if there is none, `pc = empty`.
    RecvPeek { dst: Reg, empty: u32 },
    /// `RecvPeek`, passing over (as `RecvNext` would) every message that
    /// fails the cheap test `F[f]` ([`RecvFilter`]: a message any clause
    /// can match passes it), in one loop; a reduction per message passed
    /// over, and a yield point (resuming here) when they run out.
    RecvScan { dst: Reg, f: u16, empty: u32 },
    /// The message `RecvPeek` showed is rejected (the cursor moves past it;
    /// a reduction and a yield point), then `pc = to`.
    RecvNext { to: u32 },
    /// The message `RecvPeek` showed matched: it leaves the mailbox (its
    /// fragment joins the heap), the timeout is cancelled, the receive ends.
    RecvAccept,
    /// Nothing (more) matched. If the timeout armed from `R[t]` (ms, a
    /// non-negative integer; `t` = [`NO_TIMEOUT`]: none) has fired, or is
    /// 0, the receive ends and execution falls through to the timeout
    /// body; otherwise the timer is armed (once) and the process waits,
    /// then resumes at `to` (the `RecvPeek`).
    RecvWait { t: Reg, to: u32 },

    // ---- errors -----------------------------------------------------------
    /// Raises `[:badmatch R[r]]` (class `:error`).
    Badmatch { r: Reg },
    /// Raises `[:case-clause R[r]]`.
    CaseClause { r: Reg },
    /// Raises `:function-clause`.
    FunctionClause,
    /// Pushes an exception handler: if anything raises before the matching
    /// `TryEnd`, the frames above this one are dropped, `R[r]` gets the
    /// class (`:error`, `:throw`, `:exit`), `R[r+1]` the value and
    /// `pc = handler`.
    TryBegin { r: Reg, handler: u32 },
    /// Pops the innermost handler (the protected code ended normally).
    TryEnd,
    /// Raises class `R[r]` with value `R[r+1]`, keeping the current stack
    /// trace (re-raising from a `catch` that did not match, or a `finally`).
    Reraise { r: Reg },
    /// `R[dst] = ` the current exception's stack trace (`(stacktrace)`).
    StackTrace { dst: Reg },
}

/// Where an arity of a function starts and how many registers it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// First instruction.
    pub pc: u32,
    /// Registers the frame uses (arguments included).
    pub nregs: u16,
}

impl Entry {
    /// No entry for this arity.
    pub const NONE: Entry = Entry {
        pc: u32::MAX,
        nregs: 0,
    };
}

/// A compiled function: the code of all its arities, its constants, and
/// where its instructions came from. Prototypes are shared by every process
/// and never freed (closures refer to them by address; see
/// [`Proto::leak`]).
pub struct Proto {
    /// `ns/name`, or `ns/fn` for an anonymous function, for traces.
    pub name: Arc<str>,
    /// The source file, for traces.
    pub file: Arc<str>,
    /// `entries[argc]`: the entry for exactly `argc` arguments
    /// ([`Entry::NONE`] if that arity does not exist).
    pub entries: Box<[Entry]>,
    /// The variadic entry: `(fixed, entry)`; called with `argc >= fixed`
    /// arguments not covered by `entries`, the arguments from `fixed` on are
    /// packed into a list in `r[fixed]`.
    pub variadic: Option<(u16, Entry)>,
    /// The instructions of every arity.
    pub code: Box<[Instr]>,
    /// Constants: immediates or permanent terms.
    pub consts: Box<[RawTerm]>,
    /// The receive filters of `RecvScan`.
    pub recv_filters: Box<[RecvFilter]>,
    /// Vars this code refers to.
    pub vars: Box<[&'static Var]>,
    /// Prototypes of the functions created inside this one.
    pub protos: Box<[&'static Proto]>,
    /// `(pc, line)`: the source line of the instructions from `pc` on.
    pub lines: Box<[(u32, u32)]>,
    /// A built-in: when set, calls run this instead of `code`.
    pub native: Option<NativeFn>,
    /// A built-in's fewest and most arguments (`u16::MAX`: any number).
    pub native_arity: (u16, u16),
    /// A native defined by the embedding program
    /// ([`Env::define_native`](crate::Env::define_native)): `native` is
    /// then the trampoline that calls it with typed terms.
    pub user_native: Option<crate::native::Native>,
    /// Number of captured values a closure of this prototype carries.
    // Recorded by the compiler for debugging; the VM reads the count from
    // the closure itself.
    #[allow(dead_code)]
    pub ncaptures: u8,
    /// The compiling tier's state of this prototype (`jit`).
    pub(crate) jit: crate::jit::JitSlot,
    /// The area that owns it (`purge`); null for code never freed
    /// (built-ins). Set once, before the prototype is published.
    pub(crate) area: std::sync::atomic::AtomicPtr<crate::purge::Area>,
    /// Its name and file for traces that outlive it (`trace`), made by
    /// the first trace through it.
    pub(crate) debug: std::sync::OnceLock<&'static crate::trace::DebugName>,
}

/// What one receive clause's pattern needs of a message, checked on the
/// raw word without allocating: a necessary condition, never a
/// sufficient one (the clause's own tests still run on what passes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// The message is this immediate word (or is not an immediate: a boxed
    /// term may still be equal to it).
    Imm(u64),
    /// A vector of `n` elements (`min`: at least `n`), whose element `i`
    /// is the immediate word `k` (or is not an immediate), when `elem` is
    /// `Some((i, k))`.
    Vector {
        n: u16,
        min: bool,
        elem: Option<(u16, u64)>,
    },
}

impl Shape {
    /// Whether the message word `w` may match.
    #[inline(always)]
    pub fn admits(self, w: u64) -> bool {
        use crate::tag;
        match self {
            Shape::Imm(k) => w == k || !tag::both_immediate(w, k),
            Shape::Vector { n, min, elem } => {
                let Some(h) = tag::boxed_header(w) else {
                    return false;
                };
                let ok = if min {
                    tag::is_vector_header_min(h, n as usize)
                } else {
                    h == tag::vector_header(n as usize)
                };
                ok && match elem {
                    None => true,
                    Some((i, k)) => {
                        // SAFETY: a vector of at least n > i elements.
                        let x = unsafe { tag::vector_elem(w, i as usize) };
                        x == k || !tag::both_immediate(x, k)
                    }
                }
            }
        }
    }
}

/// A receive's cheap test ([`Instr::RecvScan`]): a message passes if any
/// clause's [`Shape`] admits it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecvFilter {
    first: Shape,
    rest: Box<[Shape]>,
}

impl RecvFilter {
    /// The filter of a receive whose clauses have these shapes (at least
    /// one).
    pub fn new(shapes: &[Shape]) -> RecvFilter {
        RecvFilter {
            first: shapes[0],
            rest: shapes[1..].into(),
        }
    }

    /// Whether any clause may match the message word `w`.
    #[inline(always)]
    pub fn admits(&self, w: u64) -> bool {
        self.first.admits(w) || self.rest.iter().any(|s| s.admits(w))
    }
}

/// The peephole pass: turns common instruction pairs into one
/// superinstruction in place of the first. The second instruction stays
/// where it was (the superinstruction skips it), so no jump target moves,
/// and a jump to the second still runs it alone.
pub fn fuse(code: &mut [Instr]) {
    for i in 0..code.len().saturating_sub(1) {
        match (code[i], code[i + 1]) {
            (Instr::AddImm { dst, a: src, imm }, Instr::CallVar { a, argc: 1, var })
                if dst as usize == a as usize + 1 && var <= u16::MAX as u32 =>
            {
                code[i] = Instr::CallVar1Imm {
                    a,
                    src,
                    imm,
                    var: var as u16,
                };
            }
            (Instr::Add { dst, a, b }, Instr::Ret { r }) if r == dst => {
                code[i] = Instr::AddRet { r, a, b };
            }
            _ => {}
        }
    }
}

impl Proto {
    /// A prototype with the given code and nothing else (no arities: it is
    /// entered only by the VM itself, or it is a built-in).
    pub fn bare(name: &str, code: Vec<Instr>, native: Option<(NativeFn, u16, u16)>) -> Proto {
        Proto {
            name: name.into(),
            file: if native.is_some() {
                "<builtin>".into()
            } else {
                "".into()
            },
            entries: Box::new([]),
            variadic: None,
            code: code.into(),
            consts: Box::new([]),
            recv_filters: Box::new([]),
            vars: Box::new([]),
            protos: Box::new([]),
            lines: Box::new([]),
            native: native.map(|n| n.0),
            native_arity: native.map_or((0, 0), |n| (n.1, n.2)),
            user_native: None,
            ncaptures: 0,
            jit: Default::default(),
            area: Default::default(),
            debug: Default::default(),
        }
    }

    /// Makes the prototype permanent, returning a reference valid for the
    /// rest of the process: closures store its address as their code id.
    pub fn leak(self) -> &'static Proto {
        Box::leak(Box::new(self))
    }

    /// The prototype a closure's code id names.
    ///
    /// # Safety
    /// `code` must come from a closure made by this VM (the address of a
    /// leaked `Proto`).
    #[inline]
    pub unsafe fn from_code(code: u64) -> &'static Proto {
        // SAFETY: per the caller, a leaked, never-freed Proto.
        unsafe { &*(code as usize as *const Proto) }
    }

    /// The code id closures of this prototype carry.
    #[inline]
    pub fn code_id(&'static self) -> u64 {
        self as *const Proto as usize as u64
    }

    /// The entry for `argc` arguments, if any (fixed arities first).
    #[inline]
    pub fn entry(&self, argc: usize) -> Option<(Entry, bool)> {
        if let Some(e) = self.entries.get(argc) {
            if e.pc != u32::MAX {
                return Some((*e, false));
            }
        }
        match self.variadic {
            Some((fixed, e)) if argc >= fixed as usize => Some((e, true)),
            _ => None,
        }
    }

    /// The source line of the instruction at `pc` (0 if unknown).
    pub fn line_at(&self, pc: u32) -> u32 {
        let i = self.lines.partition_point(|&(p, _)| p <= pc);
        if i == 0 {
            0
        } else {
            self.lines[i - 1].1
        }
    }

    /// A readable listing of the code, for debugging the compiler.
    pub fn disassemble(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "{} ({})", self.name, self.file);
        for (argc, e) in self.entries.iter().enumerate() {
            if e.pc != u32::MAX {
                let _ = writeln!(s, "  arity {argc}: pc {} regs {}", e.pc, e.nregs);
            }
        }
        if let Some((fixed, e)) = self.variadic {
            let _ = writeln!(s, "  arity {fixed}+: pc {} regs {}", e.pc, e.nregs);
        }
        for (pc, i) in self.code.iter().enumerate() {
            let _ = writeln!(s, "  {pc:4} {i:?}");
        }
        s
    }
}

impl std::fmt::Debug for Proto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#<proto {}>", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_at_most_eight_bytes() {
        assert!(std::mem::size_of::<Instr>() <= 8);
    }
}
