//! What the translator needs to know of a prototype before it emits
//! anything: its arities, how each instruction is translated (`how`:
//! inline, a built-in's call, or a side exit), whether the function is
//! worth compiling (`check`), and which registers are live and written
//! (so only those are loaded and written back).
//!
//! What an instruction is comes from the opcode table
//! (`bytecode/ops.rs`): `how` takes its [`Jit`] treatment from the row
//! (only a call through a var is decided here, from its callee), `check`
//! and `successors` its [`Flow`], what it covers and whether it only
//! raises. Liveness and written registers still match the instructions
//! themselves: the table does not say which registers an instruction
//! reads and writes (a call's window, a vector's range).

use crate::bytecode::{Instr, Proto};
use crate::tag;
use lona_compiler::bytecode::ops::{Flow, Jit, Raising};

/// Why a prototype is not compiled.
pub type Why = String;

/// The fixed arities of `p` that may be compiled: `(argc, entry pc,
/// nregs)` each, at most [`MAX_ARGS`](super::MAX_ARGS) arguments and 64
/// registers (a variadic arity stays interpreted; calls of it leave).
pub fn arities(p: &Proto) -> Result<Vec<(usize, u32, u32)>, Why> {
    if p.ext.native.is_some() {
        return Err("a built-in".into());
    }
    let mut found = Vec::new();
    let mut why = "no fixed arity";
    for (argc, e) in p.entries.iter().enumerate() {
        if e.pc == u32::MAX {
            continue;
        }
        if argc > super::MAX_ARGS {
            why = "more arguments than compiled code takes";
        } else if e.nregs > 64 {
            why = "more than 64 registers";
        } else {
            found.push((argc, e.pc, e.nregs as u32));
        }
    }
    if found.is_empty() {
        return Err(why.into());
    }
    Ok(found)
}

/// The closure var `var` holds, if it is one of `p` (a call through it
/// is a call of this function itself). A var's value is permanent: the
/// word stays valid and names that closure alone.
pub fn self_var(p: &'static Proto, var: u32) -> Option<u64> {
    let w = p.vars[var as usize].get()?.bits();
    (tag::closure_code(w)? == p.code_id()).then_some(w)
}

/// How an instruction is translated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum How {
    /// Machine code of its own (calls of itself among them).
    Inline,
    /// A call through a var that held this built-in closure when compiled
    /// (`callout::call`, after checking the var still holds it).
    NativeVar(u64),
    /// A tail call of such a built-in: called, then its value returned.
    NativeTail(u64),
    /// Left to the interpreter: compiled code leaves at it.
    SideExit,
}

/// The built-in closure var `var` holds, if it is one taking `argc`
/// arguments.
pub fn native_var(p: &'static Proto, var: u32, argc: usize) -> Option<u64> {
    let w = p.vars[var as usize].get()?.bits();
    // SAFETY: closures carry leaked Proto addresses.
    let q = unsafe { Proto::from_code(tag::closure_code(w)?) };
    let (lo, hi) = q.native_arity;
    (q.ext.native.is_some() && argc >= lo as usize && (hi == u16::MAX || argc <= hi as usize))
        .then_some(w)
}

/// How instruction `ins` of `p` (of arity `argc`) is translated: as the
/// opcode table says ([`Op::jit`](lona_compiler::bytecode::ops::Op::jit)), and
/// for a call through a var, as its callee when compiled decides.
pub fn how(p: &'static Proto, argc: usize, ins: Instr) -> How {
    match ins.op().jit {
        Jit::Inline => How::Inline,
        Jit::SideExit => How::SideExit,
        Jit::Callee => how_callee(p, argc, ins),
    }
}

/// [`how`] of a call through a var ([`Jit::Callee`]).
fn how_callee(p: &'static Proto, argc: usize, ins: Instr) -> How {
    match ins {
        Instr::CallVar { argc: n, var, .. } => {
            if self_var(p, var).is_some() && n as usize == argc {
                How::Inline
            } else {
                // A built-in, or any closure (`closure_call`).
                native_var(p, var, n as usize).map_or(How::Inline, How::NativeVar)
            }
        }
        Instr::TailCallVar { argc: n, var, .. } => {
            if self_var(p, var).is_some() && n as usize == argc {
                How::Inline
            } else {
                // A built-in, or any closure (`tail_closure_call`).
                native_var(p, var, n as usize).map_or(How::Inline, How::NativeTail)
            }
        }
        other => unreachable!("the table says {other:?} depends on its callee"),
    }
}

/// Whether `ins` only raises a new error (a failed match: the table's
/// [`Raising::Always`]): a side exit, but only on an error path.
pub fn only_raises(ins: Instr) -> bool {
    ins.op().raising == Raising::Always
}

/// Checks that the code is worth compiling and that none of it runs off
/// the end: instructions left to the interpreter (side exits) are
/// allowed where the function has a loop or a call of itself to gain on.
pub fn check(p: &'static Proto, argc: usize, entry: usize) -> Result<(), Why> {
    let n = p.code.len();
    match p.code.last() {
        // A superinstruction is never last: what it stands for follows it.
        Some(&last) if last.op().ends_block() && last.op().covers == 0 => {}
        Some(&last) if how(p, argc, last) == How::SideExit => {}
        other => return Err(format!("the code ends in {other:?}, not a jump or return")),
    }
    for (pc, ins) in p.code.iter().enumerate() {
        let op = ins.op();
        if op.covers > 0 && op.falls_through() && pc + 1 + op.covers as usize >= n {
            return Err("a fused call at the end".into());
        }
    }
    // Raising instructions leave too, but only on an error path.
    let exits = p
        .code
        .iter()
        .filter(|&&i| {
            (how(p, argc, i) == How::SideExit && !only_raises(i))
                || (how(p, argc, i) == How::Inline && tail_out(p, argc, i))
        })
        .count();
    // With side exits, a loop, a self call or a return must be reachable
    // from the entry without passing one: a function that always leaves
    // before it gains (a receive first, say) would pay an entry and a
    // leave on every call; one that can return is worth calling natively
    // from compiled callers.
    if exits > 0 {
        let mut seen = vec![false; n];
        let mut todo = vec![entry];
        let (mut reached, mut exit) = (false, None);
        while let Some(pc) = todo.pop() {
            if pc >= n || std::mem::replace(&mut seen[pc], true) {
                continue;
            }
            let ins = p.code[pc];
            match how(p, argc, ins) {
                How::SideExit => {
                    exit.get_or_insert(ins);
                    continue;
                }
                How::Inline if gain(p, argc, ins) => {
                    reached = true;
                    break;
                }
                How::NativeTail(_) => {
                    reached = true;
                    break;
                }
                // A tail call of another function is no gain by itself
                // (`lona.server/continue`, whose every way out is one,
                // was entered and left at every message: `call` 10%
                // slower); it is compiled where one of these is reached.
                How::Inline if tail_out(p, argc, ins) => {
                    exit.get_or_insert(ins);
                    continue;
                }
                How::Inline if ins.op().flow == Flow::Return => {
                    reached = true;
                    break;
                }
                _ => {}
            }
            todo.extend(successors(ins, pc).into_iter().flatten());
        }
        if !reached {
            return Err(format!(
                "it leaves ({exit:?}) before any loop, call of itself or return"
            ));
        }
    }
    Ok(())
}

/// The instructions of `p` reachable from `entry` (an arity's code).
pub(super) fn reachable(p: &Proto, entry: usize) -> Vec<bool> {
    let mut seen = vec![false; p.code.len()];
    let mut todo = vec![entry];
    while let Some(pc) = todo.pop() {
        if pc >= seen.len() || seen[pc] {
            continue;
        }
        seen[pc] = true;
        todo.extend(successors(p.code[pc], pc).into_iter().flatten());
    }
    seen
}

/// Whether `ins` is a tail call that may be of another function (its
/// var held another when compiled, or through a register).
pub fn tail_out(p: &'static Proto, argc: usize, ins: Instr) -> bool {
    match ins {
        Instr::TailCallVar { var, argc: n, .. } => {
            !(n as usize == argc && self_var(p, var).is_some())
        }
        Instr::TailCall { argc: n, .. } => n as usize != argc,
        _ => false,
    }
}

/// Whether compiled code gains by instruction `ins` of `p` (when it is
/// compiled inline): a loop's back-edge, a call of the function itself,
/// or a tail call (of itself, or of another function that may call it
/// back: mutual recursion runs natively, `tail_closure_call`). A call of
/// another function gains only what that call saves, not the entry and
/// leave of a function that then leaves.
pub fn gain(p: &'static Proto, argc: usize, ins: Instr) -> bool {
    match ins {
        Instr::Loop { .. } | Instr::TailCall { .. } | Instr::TailCallVar { .. } => true,
        Instr::CallVar { var, argc: n, .. } => n as usize == argc && self_var(p, var).is_some(),
        Instr::CallVar1Imm { var, .. } => argc == 1 && self_var(p, var as u32).is_some(),
        _ => false,
    }
}

/// Where control goes after `ins` at `pc` in compiled code (none: it
/// returns, raises or tail-calls), from the table's [`Flow`] and
/// [`covers`](lona_compiler::bytecode::ops::Op::covers). A side exit's is the
/// next instruction, unless it only raises.
pub fn successors(ins: Instr, pc: usize) -> [Option<usize>; 2] {
    let op = ins.op();
    if op.jit == Jit::SideExit {
        return if only_raises(ins) {
            [None, None]
        } else {
            [Some(pc + 1), None]
        };
    }
    let next = Some(pc + 1 + op.covers as usize);
    let to = ins.target().map(|t| t as usize);
    match op.flow {
        Flow::Next => [next, None],
        Flow::Branch => [next, to],
        Flow::Jump => [to, None],
        Flow::Return | Flow::TailCall | Flow::Raise => [None, None],
    }
}

/// Registers live at the start of each instruction (a bit each): read
/// before being written on some path from there. A call's callee slot and
/// the registers above it are written by the call (the callee's window);
/// a tail call or return ends the frame's use of its registers.
pub(super) fn liveness(p: &Proto) -> Vec<u64> {
    let n = p.code.len();
    let bit = |r: i64| if (0..64).contains(&r) { 1u64 << r } else { 0 };
    let range = |from: i64, to: i64| (from..to).fold(0u64, |m, r| m | bit(r));
    // (uses, defs, successors) of each instruction.
    let step = |pc: usize| -> (u64, u64, [Option<usize>; 2]) {
        let next = Some(pc + 1);
        match p.code[pc] {
            Instr::Move { dst, src } => (bit(src as i64), bit(dst as i64), [next, None]),
            Instr::LoadConst { dst, .. } | Instr::LoadNil { dst } | Instr::LoadSelf { dst } => {
                (0, bit(dst as i64), [next, None])
            }
            Instr::Jump { to } | Instr::Loop { to } => (0, 0, [Some(to as usize), None]),
            Instr::JumpIfFalse { r, to } | Instr::JumpIfTrue { r, to } => {
                (bit(r as i64), 0, [next, Some(to as usize)])
            }
            Instr::Add { dst, a, b }
            | Instr::Sub { dst, a, b }
            | Instr::Lt { dst, a, b }
            | Instr::Le { dst, a, b }
            | Instr::Gt { dst, a, b }
            | Instr::Ge { dst, a, b }
            | Instr::Eq { dst, a, b }
            | Instr::NumEq { dst, a, b } => {
                (bit(a as i64) | bit(b as i64), bit(dst as i64), [next, None])
            }
            Instr::AddImm { dst, a, .. } => (bit(a as i64), bit(dst as i64), [next, None]),
            Instr::Mul { dst, a, b } => {
                (bit(a as i64) | bit(b as i64), bit(dst as i64), [next, None])
            }
            Instr::LoadCapture { dst, .. } | Instr::LoadVar { dst, .. } => {
                (0, bit(dst as i64), [next, None])
            }
            Instr::Cons { dst, a, b } => {
                (bit(a as i64) | bit(b as i64), bit(dst as i64), [next, None])
            }
            Instr::MakeVector { dst, from, n } => (
                range(from as i64, from as i64 + n as i64),
                bit(dst as i64),
                [next, None],
            ),
            Instr::GetHead { dst, r }
            | Instr::GetTail { dst, r }
            | Instr::GetElem { dst, r, .. } => (bit(r as i64), bit(dst as i64), [next, None]),
            Instr::TestCons { r, fail }
            | Instr::TestList { r, fail }
            | Instr::TestEmptyList { r, fail }
            | Instr::TestVector { r, fail, .. }
            | Instr::TestVectorMin { r, fail, .. }
            | Instr::TestEqConst { r, fail, .. } => (bit(r as i64), 0, [next, Some(fail as usize)]),
            Instr::TestEqReg { a, b, fail } => (
                bit(a as i64) | bit(b as i64),
                0,
                [next, Some(fail as usize)],
            ),
            Instr::Badmatch { r } | Instr::CaseClause { r } => (bit(r as i64), 0, [None, None]),
            Instr::FunctionClause => (0, 0, [None, None]),
            Instr::JumpUnlessLt { a, b, to }
            | Instr::JumpUnlessLe { a, b, to }
            | Instr::JumpUnlessEq { a, b, to } => {
                (bit(a as i64) | bit(b as i64), 0, [next, Some(to as usize)])
            }
            Instr::JumpUnlessLtImm { a, to, .. } => (bit(a as i64), 0, [next, Some(to as usize)]),
            Instr::CallVar { a, argc, .. } => (
                range(a as i64 + 1, a as i64 + 1 + argc as i64),
                range(a as i64, 64),
                [next, None],
            ),
            Instr::Call { a, argc } => (
                range(a as i64, a as i64 + 1 + argc as i64),
                range(a as i64, 64),
                [next, None],
            ),
            Instr::TailCall { a, argc } => {
                (range(a as i64, a as i64 + 1 + argc as i64), 0, [None, None])
            }
            Instr::CallVar1Imm { a, src, .. } => {
                (bit(src as i64), range(a as i64, 64), [Some(pc + 2), None])
            }
            Instr::TailCallVar { a, argc, .. } => (
                range(a as i64 + 1, a as i64 + 1 + argc as i64),
                0,
                [None, None],
            ),
            Instr::Ret { r } => (bit(r as i64), 0, [None, None]),
            Instr::AddRet { a, b, .. } => (bit(a as i64) | bit(b as i64), 0, [None, None]),
            _ => (u64::MAX, 0, [None, None]),
        }
    };
    let mut live = vec![0u64; n];
    loop {
        let mut changed = false;
        for pc in (0..n).rev() {
            let (uses, defs, succ) = step(pc);
            let out = succ
                .iter()
                .flatten()
                .filter(|&&s| s < n)
                .fold(0u64, |m, &s| m | live[s]);
            let new = uses | (out & !defs);
            if new != live[pc] {
                live[pc] = new;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

/// The registers the code of `p` writes.
pub(super) fn written(p: &Proto, nregs: u32) -> u64 {
    let mut w = vec![false; nregs as usize];
    let mut mark = |r: i64| {
        if r >= 0 && (r as usize) < w.len() {
            w[r as usize] = true;
        }
    };
    for ins in p.code.iter() {
        match *ins {
            Instr::Move { dst, .. }
            | Instr::LoadConst { dst, .. }
            | Instr::LoadNil { dst }
            | Instr::LoadSelf { dst }
            | Instr::Add { dst, .. }
            | Instr::Sub { dst, .. }
            | Instr::AddImm { dst, .. }
            | Instr::Lt { dst, .. }
            | Instr::Le { dst, .. }
            | Instr::Gt { dst, .. }
            | Instr::Ge { dst, .. }
            | Instr::Eq { dst, .. }
            | Instr::NumEq { dst, .. }
            | Instr::Mul { dst, .. }
            | Instr::Cons { dst, .. }
            | Instr::MakeVector { dst, .. }
            | Instr::LoadCapture { dst, .. }
            | Instr::LoadVar { dst, .. }
            | Instr::GetHead { dst, .. }
            | Instr::GetTail { dst, .. }
            | Instr::GetElem { dst, .. } => mark(dst as i64),
            Instr::AddRet { r, .. } => mark(r as i64),
            Instr::CallVar { a, argc, .. } | Instr::Call { a, argc } => {
                (0..=argc as i64).for_each(|i| mark(a as i64 + i));
            }
            Instr::CallVar1Imm { a, .. } => {
                mark(a as i64);
                mark(a as i64 + 1);
            }
            Instr::TailCallVar { argc, .. } | Instr::TailCall { argc, .. } => {
                (0..argc as i64).for_each(&mut mark)
            }
            _ => {}
        }
    }
    (0..nregs as usize)
        .filter(|&i| w[i])
        .fold(0u64, |m, i| m | 1 << i)
}

/// How a function's entry tests its base case (`base_case`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BaseTest {
    /// `R0 < limit`
    Lt,
    /// `R0 <= limit`
    Le,
    /// `R0` is the word `limit`
    Eq,
}

/// A base case a function's entry tests first: when argument 0 passes
/// `test` against the word `limit` (a small integer, for `Lt` and `Le`),
/// the function returns argument 0 (`ret` none) or the constant word
/// `ret`, and does nothing else (`Translator::base_case_inline`).
#[derive(Clone, Copy, Debug)]
pub(super) struct BaseCase {
    pub(super) test: BaseTest,
    pub(super) limit: u64,
    pub(super) ret: Option<u64>,
}

/// The base case of the code at `entry`, in one of the shapes the
/// compiler gives `(if (< n 2) n ...)`, `(if (<= n 1) n ...)` and
/// `(if (= n 0) 1 ...)`: a test of argument 0 against a constant whose
/// fall-through returns argument 0 or a constant.
pub(super) fn base_case(p: &Proto, argc: usize, entry: usize) -> Option<BaseCase> {
    if argc == 0 {
        return None;
    }
    let small = |w: u64| w & 0b111 == 0b011;
    let word = |k: u32| p.consts[k as usize].bits();
    let code = p.code.get(entry..)?;
    let (test, limit, rest) = match code {
        [Instr::JumpUnlessLtImm { a: 0, imm, .. }, rest @ ..] => {
            (BaseTest::Lt, crate::tag::small(*imm as i64), rest)
        }
        [Instr::LoadConst { dst, k }, jump, rest @ ..] if *dst != 0 => {
            let w = word(*k);
            match *jump {
                Instr::JumpUnlessLt { a: 0, b, .. } if b == *dst && small(w) => {
                    (BaseTest::Lt, w, rest)
                }
                Instr::JumpUnlessLe { a: 0, b, .. } if b == *dst && small(w) => {
                    (BaseTest::Le, w, rest)
                }
                Instr::JumpUnlessEq { a: 0, b, .. } if b == *dst => (BaseTest::Eq, w, rest),
                _ => return None,
            }
        }
        _ => return None,
    };
    let ret = match rest {
        [Instr::Ret { r: 0 }, ..] => None,
        [Instr::LoadConst { dst, k }, Instr::Ret { r }, ..] if dst == r => Some(word(*k)),
        _ => return None,
    };
    Some(BaseCase { test, limit, ret })
}
