//! The opcode table: every instruction's name, operands, effect and
//! properties in one place (what Lua's `lopcodes.h` and `luaP_opmodes`
//! are for Lua).
//!
//! One invocation of `instructions!` below lists the instruction set. Each
//! entry is a variant of [`Instr`] (its fields, each with the kind of
//! operand it is), its doc comment (the effect) and its flags; the macro
//! makes from it the enum, the fieldless [`Opcode`], the row [`OPS`]`[i]`
//! of each, [`Instr::op`] (an instruction's row, by one exhaustive match)
//! and [`Instr::operands`] (its operand values, in the row's order).
//!
//! Who reads it:
//! * the disassembler ([`Proto::disassemble`](super::Proto::disassemble)):
//!   names and operands by their kinds (`r3`, `k7`, `var ns/name`, `->12`);
//! * the compiling tier (`jit/analysis.rs`): what is compiled inline,
//!   left to the interpreter or depends on the callee ([`Jit`]), which
//!   instructions only raise ([`Raising::Always`]), where control goes
//!   ([`Flow`], [`Op::covers`]);
//! * the interpreter only in tests (`vm/tests.rs`): its dispatch matches
//!   [`Instr`] directly and never looks a row up; the tests check the flags
//!   against the source of its arms.

use std::fmt::{self, Write};

use super::{Proto, Reg, NO_TIMEOUT};

/// What an operand is: how the disassembler prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A register of the frame: `r3`.
    Reg,
    /// A register, or [`NO_TIMEOUT`]: `r3` or `no-timeout`.
    Timeout,
    /// An index into [`Proto::consts`]: `k7` (and the constant's value).
    Const,
    /// An index into [`Proto::vars`]: `var ns/name`.
    Var,
    /// An index into [`Proto::protos`]: `fn ns/name`.
    Proto,
    /// An index into [`Proto::recv_filters`]: `filter 0`.
    Filter,
    /// An absolute pc the instruction may jump to: `->12`.
    Target,
    /// An absolute pc a raise continues at (a handler): `catch ->12`.
    Handler,
    /// A number of registers, elements or arguments: `argc=2`.
    Count,
    /// An element or capture index: `i=0`.
    Index,
    /// A signed small integer: `imm=-1`.
    Imm,
}

/// One operand of an instruction: its field's name and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The field of the [`Instr`] variant.
    pub name: &'static str,
    /// What it is.
    pub kind: Kind,
}

/// Whether an instruction raises an exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raising {
    /// Never.
    Never,
    /// On some operands or states (a bad argument, an unbound var, its
    /// callee raising).
    Maybe,
    /// Always: raising a new error is all it does (a failed match).
    Always,
    /// Always, again: the exception a handler caught, its trace kept.
    Again,
}

/// Whether an instruction may end the process's slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Yields {
    /// Never.
    No,
    /// A safepoint: a reduction is taken before it; with none left, or a
    /// collection asked for, the slice ends there and the instruction runs
    /// again on resuming.
    Safepoint,
    /// In a receive: a reduction per message passed over (a yield when
    /// they run out), or a wait for a message.
    Receive,
}

/// Where control goes after an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// To the next instruction (after what a superinstruction covers).
    Next,
    /// To the next instruction or to its [`Kind::Target`].
    Branch,
    /// To its [`Kind::Target`] only.
    Jump,
    /// Out of the function, to the caller.
    Return,
    /// Into the function it tail-calls (the frame is reused).
    TailCall,
    /// To a handler, or out of the process: it always raises.
    Raise,
}

/// How the compiling tier treats an instruction (`jit/analysis.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jit {
    /// Compiled into machine code of its own.
    Inline,
    /// Left to the interpreter: compiled code leaves at it.
    SideExit,
    /// Depends on the var's callee when compiled (a call of the function
    /// itself, of a built-in, of any closure): `analysis::how` decides.
    Callee,
}

/// A row of the table: one instruction kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Its place in [`OPS`].
    pub code: Opcode,
    /// Its name as printed (the variant's).
    pub name: &'static str,
    /// Its operands, in the variant's field order.
    pub operands: &'static [Operand],
    /// Its effect in one line: the variant's doc comment.
    pub effect: &'static str,
    /// Whether it raises.
    pub raising: Raising,
    /// Whether it may allocate on the process heap (a result, an error's
    /// reason, a message joining the heap; a call: what its callee does).
    pub allocates: bool,
    /// Whether it may end the slice.
    pub yields: Yields,
    /// Where control goes after it.
    pub flow: Flow,
    /// For a superinstruction, how many of the instructions after it it
    /// stands for (they stay in the code, skipped: `bytecode::fuse`).
    pub covers: u8,
    /// How the compiling tier treats it.
    pub jit: Jit,
}

impl Op {
    /// A row with no flags set: never raises, allocates or yields, falls
    /// through, left to the interpreter. The macro applies the entry's
    /// flags (the builder methods below) to it.
    const fn new(
        code: Opcode,
        name: &'static str,
        operands: &'static [Operand],
        effect: &'static str,
    ) -> Op {
        Op {
            code,
            name,
            operands,
            effect: effect.trim_ascii(),
            raising: Raising::Never,
            allocates: false,
            yields: Yields::No,
            flow: Flow::Next,
            covers: 0,
            jit: Jit::SideExit,
        }
    }

    // ---- flags, one builder method each (the names the table uses) ----

    /// Compiled inline.
    const fn inline(mut self) -> Op {
        self.jit = Jit::Inline;
        self
    }
    /// A side exit.
    const fn exit(mut self) -> Op {
        self.jit = Jit::SideExit;
        self
    }
    /// Compiled as its callee decides.
    const fn callee(mut self) -> Op {
        self.jit = Jit::Callee;
        self
    }
    /// [`Raising::Maybe`].
    const fn may_raise(mut self) -> Op {
        self.raising = Raising::Maybe;
        self
    }
    /// [`Raising::Always`] and [`Flow::Raise`].
    const fn raises(mut self) -> Op {
        self.raising = Raising::Always;
        self.flow = Flow::Raise;
        self
    }
    /// [`Raising::Again`] and [`Flow::Raise`].
    const fn reraises(mut self) -> Op {
        self.raising = Raising::Again;
        self.flow = Flow::Raise;
        self
    }
    /// May allocate on the process heap.
    const fn alloc(mut self) -> Op {
        self.allocates = true;
        self
    }
    /// [`Yields::Safepoint`].
    const fn safepoint(mut self) -> Op {
        self.yields = Yields::Safepoint;
        self
    }
    /// [`Yields::Receive`].
    const fn receive(mut self) -> Op {
        self.yields = Yields::Receive;
        self
    }
    /// [`Flow::Branch`].
    const fn branch(mut self) -> Op {
        self.flow = Flow::Branch;
        self
    }
    /// [`Flow::Jump`].
    const fn jump(mut self) -> Op {
        self.flow = Flow::Jump;
        self
    }
    /// [`Flow::Return`].
    const fn returns(mut self) -> Op {
        self.flow = Flow::Return;
        self
    }
    /// [`Flow::TailCall`].
    const fn tail_call(mut self) -> Op {
        self.flow = Flow::TailCall;
        self
    }
    /// A superinstruction standing for itself and the instruction after it.
    const fn fused(mut self) -> Op {
        self.covers = 1;
        self
    }

    // ---- derived properties ---------------------------------------------

    /// Whether nothing runs after it in its block: it jumps, returns,
    /// tail-calls or raises.
    pub const fn ends_block(&self) -> bool {
        matches!(
            self.flow,
            Flow::Jump | Flow::Return | Flow::TailCall | Flow::Raise
        )
    }

    /// Whether control may go on to the next instruction (after what it
    /// covers).
    pub const fn falls_through(&self) -> bool {
        matches!(self.flow, Flow::Next | Flow::Branch)
    }
}

/// Most operands an instruction has.
pub const MAX_OPERANDS: usize = 4;

/// Makes the instruction set from its entries: see the module documentation.
macro_rules! instructions {
    (
        $(#[doc = $enum_doc:literal])*
        enum Instr;
        $(
            $(#[doc = $doc:literal])*
            $(#[allow($($lint:ident),*)])*
            $variant:ident $({ $($field:ident : $ty:ty as $kind:ident),* $(,)? })?
                [$($flag:ident)*];
        )*
    ) => {
        $(#[doc = $enum_doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Instr {
            $(
                $(#[doc = $doc])*
                $(#[allow($($lint),*)])*
                $variant $({ $($field: $ty),* })?,
            )*
        }

        /// An instruction's kind: its row's index in [`OPS`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Opcode {
            $(
                #[doc = concat!("[`Instr::", stringify!($variant), "`]")]
                $variant,
            )*
        }

        /// The number of instruction kinds.
        pub const COUNT: usize = [$(stringify!($variant)),*].len();

        /// The table: one row per instruction kind, in [`Opcode`] order.
        pub static OPS: [Op; COUNT] = [
            $(
                Op::new(
                    Opcode::$variant,
                    stringify!($variant),
                    &[$($(Operand { name: stringify!($field), kind: Kind::$kind }),*)?],
                    concat!($($doc),*),
                )
                $(.$flag())*,
            )*
        ];

        impl Instr {
            /// Its kind.
            pub const fn opcode(self) -> Opcode {
                match self {
                    $(Instr::$variant { .. } => Opcode::$variant,)*
                }
            }

            /// The values of its operands, in the order of its row's
            /// [`Op::operands`] (the rest 0).
            pub fn operands(self) -> [i64; MAX_OPERANDS] {
                let v: &[i64] = match self {
                    $(
                        Instr::$variant $({ $($field),* })? =>
                            &[$($($field as i64),*)?],
                    )*
                };
                let mut out = [0; MAX_OPERANDS];
                out[..v.len()].copy_from_slice(v);
                out
            }

            /// An instruction of each kind, every operand 0, in
            /// [`Opcode`] order.
            #[doc(hidden)]
            pub fn samples() -> [Instr; COUNT] {
                [$(Instr::$variant $({ $($field: 0 as $ty),* })?,)*]
            }
        }
    };
}

instructions! {
    /// One instruction. Each variant documents its effect; `R[x]` is
    /// register `x` of the current frame, `K[k]` constant `k`, `V[v]` var
    /// `v`, `pc` the next instruction. The doc comment, the operands' kinds
    /// and the flags of each are its row of the opcode table ([`OPS`],
    /// [`Instr::op`]).
    enum Instr;

    // ---- moves and constants ------------------------------------------
    /// `R[dst] = R[src]`
    Move { dst: Reg as Reg, src: Reg as Reg } [inline];
    /// `R[dst] = K[k]` (an immediate or a permanent literal).
    LoadConst { dst: Reg as Reg, k: u32 as Const } [inline];
    /// `R[dst] = nil`
    LoadNil { dst: Reg as Reg } [inline];
    /// `R[dst] = ` the value of var `V[var]`; raises `[:undef sym]` if
    /// the var is unbound.
    LoadVar { dst: Reg as Reg, var: u32 as Var } [inline may_raise alloc];
    /// `R[dst] = ` captured value `i` of the running closure.
    LoadCapture { dst: Reg as Reg, i: u8 as Index } [inline];
    /// `R[dst] = ` the running closure itself (a named `fn` calling itself).
    LoadSelf { dst: Reg as Reg } [inline];
    /// `R[dst] = ` a new closure of prototype `P[proto]` capturing
    /// `R[from] .. R[from + n]`.
    Closure { dst: Reg as Reg, from: Reg as Reg, n: u8 as Count, proto: u32 as Proto }
        [exit alloc];
    /// `R[dst] = ` a vector of `R[from] .. R[from + n]`.
    MakeVector { dst: Reg as Reg, from: Reg as Reg, n: u8 as Count } [inline alloc];
    /// `R[dst] = ` a list of `R[from] .. R[from + n]`.
    // The VM runs it; the compiler does not emit it at present (it was
    // unseen while the module was public).
    #[allow(dead_code)]
    MakeList { dst: Reg as Reg, from: Reg as Reg, n: u8 as Count } [exit alloc];
    /// `R[dst] = ` a map of the `n` pairs `R[from] R[from+1] ...` (a later
    /// equal key wins).
    MakeMap { dst: Reg as Reg, from: Reg as Reg, n: u8 as Count } [exit alloc];
    /// Sets var `V[var]` to `R[src]` (copied to permanent memory unless it
    /// already is there): `def`.
    DefVar { var: u32 as Var, src: Reg as Reg } [exit];

    // ---- control ------------------------------------------------------
    /// `pc = to`
    Jump { to: u32 as Target } [inline jump];
    /// Back-edge of a `loop`/`recur`: costs a reduction (a safepoint), then
    /// `pc = to`. In the interpreter it may go on in the function's
    /// compiled code from `to` (`jit/translate/resume.rs`), which may
    /// raise and allocate.
    Loop { to: u32 as Target } [inline jump safepoint may_raise alloc];
    /// `if R[r] is nil or false: pc = to`
    JumpIfFalse { r: Reg as Reg, to: u32 as Target } [inline branch];
    /// `if R[r] is neither nil nor false: pc = to`
    // As `MakeList`: the VM runs it, the compiler does not emit it now.
    #[allow(dead_code)]
    JumpIfTrue { r: Reg as Reg, to: u32 as Target } [inline branch];

    // ---- calls ----------------------------------------------------------
    /// Calls `R[a]` with `R[a+1] .. R[a+1+argc]`; the result lands in `R[a]`.
    /// A reduction and a safepoint.
    Call { a: Reg as Reg, argc: u8 as Count } [inline may_raise alloc safepoint];
    /// Calls the function in var `V[var]` as `Call` does (the closure is
    /// stored in `R[a]` first). Redefining the var changes what the next
    /// call runs: hot code loading.
    CallVar { a: Reg as Reg, argc: u8 as Count, var: u32 as Var }
        [callee may_raise alloc safepoint];
    /// `Call` in tail position: reuses the current frame.
    TailCall { a: Reg as Reg, argc: u8 as Count } [inline may_raise alloc safepoint tail_call];
    /// `CallVar` in tail position: reuses the current frame.
    TailCallVar { a: Reg as Reg, argc: u8 as Count, var: u32 as Var }
        [callee may_raise alloc safepoint tail_call];
    /// `apply`: calls `R[a]` with `R[a+1] .. R[a+n]` followed by the
    /// elements of the list or vector `R[a+n+1]`; result in `R[a]`.
    Apply { a: Reg as Reg, n: u8 as Count } [exit may_raise alloc safepoint];
    /// `Apply` in tail position.
    TailApply { a: Reg as Reg, n: u8 as Count } [exit may_raise alloc safepoint tail_call];
    /// Returns `R[r]` to the caller (into its callee slot).
    Ret { r: Reg as Reg } [inline returns];

    // ---- superinstructions (made by the peephole pass, `fuse`) -----------
    /// `AddImm { dst: a+1, a: src, imm }` then the `CallVar { a, argc: 1,
    /// var }` that follows it (which stays in the code, skipped): the
    /// recursive step `(f (- n 1))`.
    CallVar1Imm { a: Reg as Reg, src: Reg as Reg, imm: i16 as Imm, var: u16 as Var }
        [inline may_raise alloc safepoint fused];
    /// `Add { dst: r, a, b }` then the `Ret { r }` that follows it.
    AddRet { r: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise alloc returns fused];

    // ---- arithmetic and comparison (small integers inline) ---------------
    /// `R[dst] = R[a] + R[b]` (`:badarith` unless both numbers).
    Add { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise alloc];
    /// `R[dst] = R[a] - R[b]`
    Sub { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise alloc];
    /// `R[dst] = R[a] * R[b]`
    Mul { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise alloc];
    /// `R[dst] = R[a] + imm` (`inc`, `dec`, `(+ x 1)`, `(- n 2)`).
    AddImm { dst: Reg as Reg, a: Reg as Reg, imm: i16 as Imm } [inline may_raise alloc];
    /// `R[dst] = R[a] < R[b]`: numbers by value, any other values by the
    /// total order of terms (it never raises); likewise `Le`, `Gt`, `Ge`.
    Lt { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline];
    /// `R[dst] = R[a] <= R[b]`
    Le { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline];
    /// `R[dst] = R[a] > R[b]`
    Gt { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline];
    /// `R[dst] = R[a] >= R[b]`
    Ge { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline];
    /// `R[dst] = (= R[a] R[b])`: structural equality.
    Eq { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline];
    /// `R[dst] = (cons R[a] R[b])`: a new cell when `R[b]` is a list, else
    /// the list of `R[a]` and the elements of `R[b]`.
    Cons { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise alloc];
    /// `R[dst] = (== R[a] R[b])`: numeric equality.
    NumEq { dst: Reg as Reg, a: Reg as Reg, b: Reg as Reg } [inline may_raise];
    /// `if not (R[a] < R[b]): pc = to` (fused compare and branch, compared
    /// as `Lt` does); likewise the others.
    JumpUnlessLt { a: Reg as Reg, b: Reg as Reg, to: u32 as Target } [inline branch];
    /// `if not (R[a] <= R[b]): pc = to`
    JumpUnlessLe { a: Reg as Reg, b: Reg as Reg, to: u32 as Target } [inline branch];
    /// `if not (R[a] < imm): pc = to`
    JumpUnlessLtImm { a: Reg as Reg, imm: i16 as Imm, to: u32 as Target } [inline branch];
    /// `if not (R[a] = R[b]): pc = to`
    JumpUnlessEq { a: Reg as Reg, b: Reg as Reg, to: u32 as Target } [inline branch];

    // ---- pattern tests: each jumps to `fail` when the test is false --------
    /// `R[r]` is a vector of exactly `n` elements.
    TestVector { r: Reg as Reg, n: u16 as Count, fail: u32 as Target } [inline branch];
    /// `R[r]` is a vector of at least `n` elements.
    TestVectorMin { r: Reg as Reg, n: u16 as Count, fail: u32 as Target } [inline branch];
    /// `R[dst] = R[r][i]` (after a vector test).
    GetElem { dst: Reg as Reg, r: Reg as Reg, i: u16 as Index } [inline];
    /// `R[dst] = ` the vector of the elements of `R[r]` from `i` on.
    VectorFrom { dst: Reg as Reg, r: Reg as Reg, i: u16 as Index } [exit may_raise alloc];
    /// `R[r]` is a non-empty list (a cons cell).
    TestCons { r: Reg as Reg, fail: u32 as Target } [inline branch];
    /// `R[r]` is a list: a cons cell or `()`.
    TestList { r: Reg as Reg, fail: u32 as Target } [inline branch];
    /// `R[dst] = (first R[r])` of a cons cell (after `TestCons`).
    GetHead { dst: Reg as Reg, r: Reg as Reg } [inline];
    /// `R[dst] = (rest R[r])` of a cons cell (after `TestCons`).
    GetTail { dst: Reg as Reg, r: Reg as Reg } [inline];
    /// `R[r]` is `()` (the empty list).
    TestEmptyList { r: Reg as Reg, fail: u32 as Target } [inline branch];
    /// `R[r]` equals `K[k]` structurally.
    TestEqConst { r: Reg as Reg, k: u16 as Const, fail: u32 as Target } [inline branch];
    /// `R[a]` equals `R[b]` structurally (a name bound twice in a pattern).
    TestEqReg { a: Reg as Reg, b: Reg as Reg, fail: u32 as Target } [inline branch];
    /// `R[r]` is a map.
    TestMap { r: Reg as Reg, fail: u32 as Target } [exit branch];
    /// `R[dst] = (get R[r] R[dst])`: the key is loaded into `dst` first;
    /// jumps to `fail` (leaving `dst` as it was) if the key is missing.
    MapGet { dst: Reg as Reg, r: Reg as Reg, fail: u32 as Target } [exit branch];

    // ---- receive (BEAM's loop_rec / remove_message / wait) -----------------
    // A `receive` compiles to:
    //   RecvStart; top: RecvPeek s, wait; <clause tests on s, each failing
    //   to the next>; RecvAccept; <body> ... RecvNext top;
    //   wait: RecvWait t, top; <timeout body>
    /// Begins a receive: a new receive id (the mailbox keeps its cursor
    /// under it). Raises `:receive-in-guard` inside another receive's scan.
    RecvStart [exit may_raise];
    /// `R[dst] = ` the next message the receive has not rejected yet
    /// (draining the inbox when it has seen them all), left in the
    /// mailbox; if there is none, `pc = empty`.
    RecvPeek { dst: Reg as Reg, empty: u32 as Target } [exit may_raise alloc receive branch];
    /// `RecvPeek`, passing over (as `RecvNext` would) every message that
    /// fails the cheap test `F[f]` ([`RecvFilter`](super::RecvFilter): a
    /// message any clause can match passes it), in one loop; a reduction
    /// per message passed over, and a yield point (resuming here) when
    /// they run out.
    RecvScan { dst: Reg as Reg, f: u16 as Filter, empty: u32 as Target }
        [exit may_raise alloc receive branch];
    /// The message `RecvPeek` showed is rejected (the cursor moves past it;
    /// a reduction and a yield point), then `pc = to`.
    RecvNext { to: u32 as Target } [exit receive jump];
    /// The message `RecvPeek` showed matched: it leaves the mailbox (its
    /// fragment joins the heap), the timeout is cancelled, the receive ends.
    RecvAccept [exit alloc];
    /// Nothing (more) matched. If the timeout armed from `R[t]` (ms, a
    /// non-negative integer; `t` = [`NO_TIMEOUT`]: none) has fired, or is
    /// 0, the receive ends and execution falls through to the timeout
    /// body; otherwise the timer is armed (once) and the process waits,
    /// then resumes at `to` (the `RecvPeek`).
    RecvWait { t: Reg as Timeout, to: u32 as Target } [exit may_raise alloc receive branch];

    // ---- errors -----------------------------------------------------------
    /// Raises `[:badmatch R[r]]` (class `:error`).
    Badmatch { r: Reg as Reg } [exit raises alloc];
    /// Raises `[:case-clause R[r]]`.
    CaseClause { r: Reg as Reg } [exit raises alloc];
    /// Raises `:function-clause`.
    FunctionClause [exit raises];
    /// Pushes an exception handler: if anything raises before the matching
    /// `TryEnd`, the frames above this one are dropped, `R[r]` gets the
    /// class (`:error`, `:throw`, `:exit`), `R[r+1]` the value and
    /// `pc = handler`.
    TryBegin { r: Reg as Reg, handler: u32 as Handler } [exit];
    /// Pops the innermost handler (the protected code ended normally).
    TryEnd [exit];
    /// Raises class `R[r]` with value `R[r+1]`, keeping the current stack
    /// trace (re-raising from a `catch` that did not match, or a `finally`).
    Reraise { r: Reg as Reg } [exit reraises];
    /// `R[dst] = ` the current exception's stack trace (`(stacktrace)`).
    StackTrace { dst: Reg as Reg } [exit alloc];
}

impl Instr {
    /// Its row of the table.
    #[inline]
    pub const fn op(self) -> &'static Op {
        &OPS[self.opcode() as usize]
    }

    /// The pc it may jump to (its [`Kind::Target`] operand), if it has one.
    pub fn target(self) -> Option<u32> {
        let op = self.op();
        let i = op.operands.iter().position(|o| o.kind == Kind::Target)?;
        Some(self.operands()[i] as u32)
    }

    /// Writes it as the disassembler shows it: its name, then its
    /// operands by their kinds, registers `r3`, constants `k7`, vars
    /// `var ns/name`, jump targets `->12`, counts, indices and immediates
    /// `name=value`. With the prototype it belongs to, constants show
    /// their values and vars and prototypes their names.
    pub fn write<X: 'static>(self, out: &mut String, p: Option<&Proto<X>>) {
        let op = self.op();
        out.push_str(op.name);
        let values = self.operands();
        for (i, (o, &v)) in op.operands.iter().zip(&values).enumerate() {
            out.push_str(if i == 0 { " " } else { ", " });
            write_operand(out, *o, v, p);
        }
    }
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write::<()>(&mut s, None);
        f.write_str(&s)
    }
}

/// Longest constant value the disassembler shows, in characters.
const CONST_SHOWN: usize = 40;

fn write_operand<X: 'static>(out: &mut String, o: Operand, v: i64, p: Option<&Proto<X>>) {
    let _ = match o.kind {
        Kind::Reg => write!(out, "r{v}"),
        Kind::Timeout if v == NO_TIMEOUT as i64 => write!(out, "no-timeout"),
        Kind::Timeout => write!(out, "r{v}"),
        Kind::Const => {
            let _ = write!(out, "k{v}");
            let c = p.and_then(|p| p.consts.get(v as usize));
            match c {
                Some(&c) if lona_term::is_permanent(c.bits()) => {
                    // SAFETY: checked just above: an immediate or a word
                    // of permanent memory (what `Proto::consts` holds).
                    let t = unsafe { lona_term::permanent_term(c) };
                    let text = t.to_string();
                    match text.char_indices().nth(CONST_SHOWN) {
                        Some((end, _)) => write!(out, " ({}...)", &text[..end]),
                        None => write!(out, " ({text})"),
                    }
                }
                _ => Ok(()),
            }
        }
        Kind::Var => match p.and_then(|p| p.vars.get(v as usize)) {
            Some(var) => write!(out, "var {}", var.qualified()),
            None => write!(out, "var #{v}"),
        },
        Kind::Proto => match p.and_then(|p| p.protos.get(v as usize)) {
            Some(q) => write!(out, "fn {}", q.name),
            None => write!(out, "fn #{v}"),
        },
        Kind::Filter => write!(out, "filter {v}"),
        Kind::Target => write!(out, "->{v}"),
        Kind::Handler => write!(out, "catch ->{v}"),
        Kind::Count | Kind::Index | Kind::Imm => write!(out, "{}={v}", o.name),
    };
}
