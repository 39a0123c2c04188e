//! Bytecode to Cranelift IR, one instruction at a time (`mod.rs` has the
//! protocol). Each instruction gets a block; an instruction the machine
//! code cannot finish itself branches to its *leave* block, which writes
//! the registers back and the pc into `cur` and returns 0, so the
//! interpreter runs that instruction from its start.
//!
//! Registers are Cranelift variables, loaded from the register stack
//! (`regs = stack + base * 8`) on entry and written back wherever another
//! party may read them: before leaving and before a call (the callee may
//! leave, and the interpreter then continues this frame from memory).
//! Only the registers the code writes (`written`) are written back; the
//! others never differ from memory. After a call, the registers from the
//! callee slot up are the callee's and are read again.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{
    AbiParam, Block, ExtFuncData, ExternalName, FuncRef, InstBuilder, MemFlags, Signature,
    StackSlotData, StackSlotKind, UserFuncName, Value,
};
use cranelift_frontend::{FunctionBuilder, Variable};

use super::analysis::{
    base_case, check, gain, how, liveness, reachable, self_var, successors, written, BaseCase, How,
    Why,
};
mod calls;
mod facts;
mod float;
mod resume;

use super::layout::*;
use super::Codegen;
use crate::bytecode::{Instr, Proto};
use crate::tag;
use facts::{Facts, IMM, SMALL};
use float::FOp;

/// What [`compile`] made (its machine code is in the context, for
/// `Compiler::install`): whether the arity is a leaf (no loop, no call
/// of itself), whether the code is the quick tier's, and whether it has
/// a typed loop (`facts.rs`).
pub(super) struct Made {
    pub leaf: bool,
    pub quick: bool,
    pub typed_loop: bool,
}

/// Compiles arity `argc` of `p` (its code from `entry_pc`, `nregs`
/// registers); with the quick tier's settings (`optimise.rs`) if `quick`
/// and the arity is not a leaf (a leaf is only ever called by compiled
/// code, never judged by the interpreter's entries, so it is compiled
/// optimised at once: leaves are small).
pub(super) fn compile(
    c: &mut Codegen,
    p: &'static Proto,
    (argc, entry_pc, nregs): (usize, u32, u32),
    quick: bool,
) -> Result<Made, Why> {
    check(p, argc, entry_pc as usize)?;
    let leaf = !reachable(p, entry_pc as usize)
        .iter()
        .zip(p.code.iter())
        .any(|(&r, &i)| r && how(p, argc, i) == How::Inline && gain(p, argc, i));
    let quick = quick && !leaf;
    // (ctx, base, depth, reductions, the running closure, the
    // arguments...) -> (value, reductions)
    let cc = c.isa.default_call_conv();
    let mut sig = Signature::new(cc);
    for _ in 0..5 + argc {
        sig.params.push(AbiParam::new(I64));
    }
    sig.returns.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
    c.count += 1;
    c.ctx.clear();
    // First translated on the guess that every value the function
    // returns is a small integer (`Translator::ret`), which lets a call
    // of itself know its result: right for `fib`-like functions, checked
    // as the translation goes, and translated again if wrong. Only worth
    // it where the function calls itself other than in tail position
    // (else no result of a call of itself is used).
    let guess = self_call_top(p, argc, entry_pc).is_some();
    let (held, mut typed_loop) = translate(c, p, &sig, (argc, entry_pc, nregs), guess);
    if !held {
        typed_loop = translate(c, p, &sig, (argc, entry_pc, nregs), false).1;
    }
    let dump = super::dumping();
    if dump {
        eprintln!("{}\n{}", p.disassemble(), c.ctx.func.display());
        c.ctx.set_disasm(true);
    }
    let isa = if quick {
        &*c.isa_quick
    } else if c.ctx.func.dfg.num_insts() <= super::OPTIMISED_INSTS {
        &*c.isa
    } else {
        &*c.isa_big
    };
    c.ctx
        .compile(isa, &mut Default::default())
        .map_err(|e| format!("{:?}", e.inner))?;
    if dump {
        if let Some(code) = c.ctx.compiled_code().and_then(|cc| cc.vcode.as_ref()) {
            eprintln!("{code}");
        }
    }
    Ok(Made {
        leaf,
        quick,
        typed_loop,
    })
}

/// Translates `p` into `c.ctx.func` afresh (`guess`: on the guess that
/// it returns only small integers): whether the guess, if made, held at
/// every return, and whether a typed loop was made.
fn translate(
    c: &mut Codegen,
    p: &'static Proto,
    sig: &Signature,
    (argc, entry_pc, nregs): (usize, u32, u32),
    guess: bool,
) -> (bool, bool) {
    c.ctx.func.clear();
    c.ctx.func.signature = sig.clone();
    c.ctx.func.name = UserFuncName::user(0, c.count as u32);
    let cc = sig.call_conv;
    let mut b = FunctionBuilder::new(&mut c.ctx.func, &mut c.fctx);
    let me = import_me(&mut b, sig.clone());
    let t = Translator::new(&mut b, p, me, nregs, (argc, entry_pc), cc);
    let out = t.run(entry_pc, guess);
    b.seal_all_blocks();
    b.finalize();
    out
}

/// The highest callee slot of `p`'s calls of itself other than in tail
/// position (none: it makes none).
fn self_call_top(p: &'static Proto, argc: usize, entry_pc: u32) -> Option<u8> {
    arity_code(p, entry_pc)
        .filter_map(|ins| match ins {
            Instr::CallVar { a, var, argc: n }
                if n as usize == argc && self_var(p, var).is_some() =>
            {
                Some(a)
            }
            Instr::CallVar1Imm { a, var, .. } if argc == 1 && self_var(p, var as u32).is_some() => {
                Some(a)
            }
            Instr::Call { a, argc: n } if n as usize == argc => Some(a),
            _ => None,
        })
        .max()
}

/// The instructions of the arity whose entry is `entry_pc` (those
/// reachable from it; a prototype's arities share its code array).
fn arity_code(p: &'static Proto, entry_pc: u32) -> impl Iterator<Item = Instr> {
    reachable(p, entry_pc as usize)
        .into_iter()
        .zip(p.code.iter())
        .filter_map(|(r, &ins)| r.then_some(ins))
}

/// The function itself, for its calls of itself: a direct call
/// (colocated: one PC-relative instruction), the one relocation its code
/// has (`Compiler::install` patches it).
fn import_me(b: &mut FunctionBuilder<'_>, sig: Signature) -> FuncRef {
    let signature = b.import_signature(sig);
    let name = b.func.declare_imported_user_function(super::SELF);
    b.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature,
        colocated: true,
        patchable: false,
    })
}

struct Translator<'a, 'b> {
    /// The function's arity.
    argc: usize,
    /// The calling convention of Rust's `extern "C"` helpers.
    cc: cranelift_codegen::isa::CallConv,
    b: &'a mut FunctionBuilder<'b>,
    p: &'static Proto,
    me: FuncRef,
    nregs: u32,
    /// A block per instruction.
    blocks: Vec<Block>,
    /// Each instruction's leave block, made when first needed.
    leave: Vec<Option<Block>>,
    ctx: Value,
    base: Value,
    /// The running closure (`R[-1]`): it never changes in a frame.
    me_word: Value,
    /// Native depth: 0 for the activation the interpreter entered.
    depth: Value,
    /// One variable per register.
    vars: Vec<Variable>,
    /// Reductions left: in `CompiledCx::reds` only at leaves, calls and
    /// returns.
    reds: Variable,
    /// The registers some instruction writes (a bit each): only these can
    /// differ from memory.
    written: u64,
    /// Live registers at each instruction (`liveness`).
    live: Vec<u64>,
    /// What is known of values in block `facts_at` (`facts.rs`).
    facts: Facts,
    facts_at: Option<Block>,
    /// Per instruction of the translation under way: the facts common to
    /// the edges into its block recorded so far (`facts.rs`, step 2).
    incoming: Vec<Option<Facts>>,
    /// The instruction of each block of `blocks`.
    block_pc: std::collections::HashMap<Block, u32>,
    /// Per instruction: whether an instruction at or after it can jump
    /// to it (a loop header: its block starts knowing nothing).
    back_pred: Vec<bool>,
    /// The typed loop's header (`facts.rs`): where tail calls of the
    /// function to itself go.
    loop_head: Block,
    /// The first translation's entry block.
    entry0: Block,
    /// While translating the typed loop: what it assumes of the
    /// arguments. Before: `None`, and `tail_args` gathers what the tail
    /// calls pass.
    loop_need: Option<Vec<u8>>,
    tail_args: Option<Vec<u8>>,
    /// Whether the code can run any function but itself (a call of
    /// another closure or a built-in): only then can this process change
    /// a var while the code runs.
    calls_out: bool,
    /// Whether the code may tail-call another function
    /// (`tail_closure_call`): only then can a call of itself come back
    /// having written its callee slot (`after_call`).
    tails_out: bool,
    /// The highest callee slot of the function's calls of itself (none:
    /// it makes none, other than in tail position).
    self_call_top: Option<u8>,
    /// The base case the function's entry tests first, if any
    /// (`analysis::base_case`): `base_case_inline`.
    base_case: Option<BaseCase>,
    /// The guess that the function returns only small integers (a call of
    /// itself then knows its result is one), and whether every return
    /// translated so far bears it out.
    small_rets: bool,
    rets_small: bool,
    /// Whether the function's arithmetic has met floats (`float.rs`).
    floats: bool,
}

fn mem() -> MemFlags {
    MemFlags::trusted()
}

impl<'a, 'b> Translator<'a, 'b> {
    fn new(
        b: &'a mut FunctionBuilder<'b>,
        p: &'static Proto,
        me: FuncRef,
        nregs: u32,
        (argc, entry_pc): (usize, u32),
        cc: cranelift_codegen::isa::CallConv,
    ) -> Translator<'a, 'b> {
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let params = b.block_params(start).to_vec();
        let (ctx, base, depth, reds0, me_word) =
            (params[0], params[1], params[2], params[3], params[4]);
        let mut regs = None;
        let vars: Vec<Variable> = (0..nregs).map(|_| b.declare_var(I64)).collect();
        // The arguments come as parameters (not in memory: written back
        // only where the interpreter may read them); the other registers
        // are written before they are read (`nil` until then).
        let live = liveness(p);
        let nil = b.ins().iconst(I64, tag::NIL as i64);
        for (i, v) in vars.iter().enumerate() {
            let w = if i < argc {
                params[5 + i]
            } else if live[entry_pc as usize] & (1 << i) != 0 {
                let r = *regs.get_or_insert_with(|| {
                    let stack = b.ins().load(I64, mem(), ctx, STACK);
                    let off = b.ins().ishl_imm(base, 3);
                    b.ins().iadd(stack, off)
                });
                b.ins().load(I64, mem(), r, (i * 8) as i32)
            } else {
                nil
            };
            b.def_var(*v, w);
        }
        let reds = b.declare_var(I64);
        b.def_var(reds, reds0);
        let blocks: Vec<Block> = (0..p.code.len()).map(|_| b.create_block()).collect();
        let mut back_pred = vec![false; p.code.len()];
        for (pc, &ins) in p.code.iter().enumerate() {
            for to in successors(ins, pc).into_iter().flatten() {
                if to <= pc && to < back_pred.len() {
                    back_pred[to] = true;
                }
            }
        }
        let loop_head = b.create_block();
        let calls_out = arity_code(p, entry_pc).any(|ins| match how(p, argc, ins) {
            How::NativeVar(_) | How::NativeTail(_) => true,
            How::SideExit => false,
            How::Inline => match ins {
                Instr::Call { .. } => true,
                Instr::CallVar { var, argc: n, .. } | Instr::TailCallVar { var, argc: n, .. } => {
                    n as usize != argc || self_var(p, var).is_none()
                }
                Instr::CallVar1Imm { var, .. } => argc != 1 || self_var(p, var as u32).is_none(),
                _ => false,
            },
        });
        let self_call_top = self_call_top(p, argc, entry_pc);
        let base_case = base_case(p, argc, entry_pc as usize);
        Translator {
            floats: p.ext.jit.floats.load(std::sync::atomic::Ordering::Relaxed),
            base_case,
            small_rets: false,
            rets_small: true,
            self_call_top,
            calls_out,
            tails_out: arity_code(p, entry_pc).any(|ins| match ins {
                Instr::TailCall { .. } => true,
                Instr::TailCallVar { var, argc: n, .. } => {
                    n as usize != argc || self_var(p, var).is_none()
                }
                _ => false,
            }),
            facts: Facts::default(),
            facts_at: None,
            incoming: vec![None; p.code.len()],
            block_pc: blocks
                .iter()
                .enumerate()
                .map(|(i, &b)| (b, i as u32))
                .collect(),
            back_pred,
            loop_head,
            entry0: blocks[entry_pc as usize],
            loop_need: None,
            tail_args: None,
            argc,
            cc,
            reds,
            me_word,
            vars,
            written: written(p, nregs) | ((1u64 << argc) - 1),
            depth,
            live,
            b,
            p,
            me,
            nregs,
            blocks,
            leave: vec![None; p.code.len() + 1],
            ctx,
            base,
        }
    }

    /// Translates the function; `small_rets`: on the guess that it
    /// returns only small integers. Whether the guess (if made) held at
    /// every return, and whether a typed loop was made.
    fn run(mut self, entry_pc: u32, small_rets: bool) -> (bool, bool) {
        self.small_rets = small_rets;
        let reach = self.reachable(entry_pc);
        // Entered at a loop's head instead, if asked (`resume.rs`).
        self.resume_dispatch(&reach);
        // Native stack to run on, checked once here rather than at each
        // call: without it, the interpreter runs the function from its
        // entry (its window and its callers' frames have room: the caller
        // checked before the call).
        let sp = self.b.ins().get_stack_pointer(I64);
        let limit = self.b.ins().load(I64, mem(), self.ctx, SP_LIMIT);
        let deep_ok = self.b.ins().icmp(IntCC::UnsignedGreaterThan, sp, limit);
        self.guard(deep_ok, entry_pc);
        let entry = self.blocks[entry_pc as usize];
        self.b.ins().jump(entry, &[]);
        // The entry is reached from here and from the loop header: it
        // starts knowing nothing. Instructions that cannot be reached are
        // not translated (the `CallVar` a fused `CallVar1Imm` skips):
        // their edges would take facts from the instructions they jump to.
        self.translate_all(&reach, entry_pc);
        // The typed loop, if the tail calls pass something known.
        let head = self.loop_head;
        match self.tail_args.take() {
            Some(need) if need.iter().any(|&k| k != 0) => {
                let blocks: Vec<Block> = (0..self.p.code.len())
                    .map(|_| self.b.create_block())
                    .collect();
                self.block_pc = blocks
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| (b, i as u32))
                    .collect();
                self.blocks = blocks;
                self.incoming = vec![None; self.p.code.len()];
                let mark = self.b.func.layout.last_block();
                self.b.switch_to_block(head);
                for (i, &k) in need.iter().enumerate() {
                    let v = self.r(i as i64);
                    self.learn(v, k);
                }
                self.goto(self.blocks[entry_pc as usize]);
                self.record_edges(mark);
                self.loop_need = Some(need);
                self.translate_all(&reach, entry_pc);
            }
            _ => {
                // No tail call, or nothing known: the header is a jump
                // to the entry.
                self.b.switch_to_block(head);
                self.goto(self.entry0);
            }
        }
        // Each leave block writes its live registers back, then goes to
        // one shared tail with its pc: the pc, base and depth into the
        // context, and "left" returned. (A tail per leave block was a
        // fifth of a list loop's instructions, and compile time goes
        // with them.)
        let leaves: Vec<(usize, Block)> = (0..self.leave.len())
            .filter_map(|pc| self.leave[pc].map(|blk| (pc, blk)))
            .collect();
        if !leaves.is_empty() {
            let tail = self.b.create_block();
            self.b.set_cold_block(tail);
            let tail_pc = self.b.append_block_param(tail, I32);
            for (pc, blk) in leaves {
                self.b.switch_to_block(blk);
                // (One past the code: after a tail call of a built-in that
                // left something to finish; no register is read there.)
                let live = self.live.get(pc).copied().unwrap_or(0);
                self.write_back(live);
                let pcv = self.b.ins().iconst(I32, pc as i64);
                self.b.ins().jump(tail, &[pcv.into()]);
            }
            self.b.switch_to_block(tail);
            self.return_left(tail_pc);
        }
        (
            !self.small_rets || self.rets_small,
            self.loop_need.is_some(),
        )
    }

    // ---- helpers --------------------------------------------------------

    fn leave(&mut self, pc: u32) -> Block {
        *self.leave[pc as usize].get_or_insert_with(|| {
            // Cold: laid out after the hot code, so that a passed check
            // falls through rather than jumps.
            let blk = self.b.create_block();
            self.b.set_cold_block(blk);
            blk
        })
    }

    /// Where a pattern test that failed on `x` goes: out to the
    /// interpreter at `pc` if `x` is a value with metadata (which the
    /// interpreter's tests look through), else to `fail`.
    fn meta_or(&mut self, x: Value, pc: u32, fail: Block) {
        let (boxed, hdr) = (self.b.create_block(), self.b.create_block());
        let t = self.b.ins().band_imm(x, 0b111);
        let tag_ok = self.b.ins().icmp_imm(IntCC::Equal, t, 0);
        self.b.ins().brif(tag_ok, boxed, &[], fail, &[]);
        self.b.switch_to_block(boxed);
        let nonzero = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
        self.b.ins().brif(nonzero, hdr, &[], fail, &[]);
        self.b.switch_to_block(hdr);
        let h = self.b.ins().load(I64, mem(), x, 0);
        let kind = self.b.ins().band_imm(h, 0xff);
        let meta = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, kind, tag::META_HEADER as i64);
        let out = self.leave(pc);
        self.b.ins().brif(meta, out, &[], fail, &[]);
    }

    fn goto(&mut self, to: Block) {
        self.b.ins().jump(to, &[]);
    }

    fn next(&self, pc: u32) -> Block {
        self.blocks[pc as usize + 1]
    }

    fn r(&mut self, i: impl Into<i64>) -> Value {
        match i.into() {
            -1 => self.me_word,
            i => self.b.use_var(self.vars[i as usize]),
        }
    }

    fn set(&mut self, i: impl Into<i64>, v: Value) {
        let i = i.into();
        debug_assert!(i >= 0, "the callee slot is written to memory only");
        self.b.def_var(self.vars[i as usize], v);
    }

    /// Register `i` to memory.
    fn store_reg(&mut self, i: i64, v: Value) {
        let regs = self.regs();
        self.b.ins().store(mem(), v, regs, (i * 8) as i32);
    }

    /// The frame's registers' address, `stack + base * 8`, computed where
    /// needed (cold paths) rather than kept live across calls.
    fn regs(&mut self) -> Value {
        let stack = self.b.ins().load(I64, mem(), self.ctx, STACK);
        let off = self.b.ins().ishl_imm(self.base, 3);
        self.b.ins().iadd(stack, off)
    }

    /// The registers of `set` that may differ from memory, to memory.
    fn write_back(&mut self, set: u64) {
        let m = set & self.written;
        if m == 0 {
            return;
        }
        // The window's address once for all of them (it is a cold path,
        // but its size is compile time).
        let regs = self.regs();
        for i in 0..self.vars.len() as i64 {
            if m & (1 << i) != 0 {
                let v = self.r(i);
                self.b.ins().store(mem(), v, regs, (i * 8) as i32);
            }
        }
    }

    /// Continues in `ok` when `cond` holds, else leaves at `pc`.
    /// An object of `words` bumped from the young block (as `Heap::alloc`
    /// takes them), its word its address with `tag`; where the block has
    /// no room, `slow` makes it through the heap's slow path (a helper:
    /// the word, or 0 when the heap cannot grow, and the code leaves at
    /// `pc`, where the interpreter runs the instruction).
    fn alloc_inline(
        &mut self,
        pc: u32,
        words: &[Value],
        tag: i64,
        slow: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        let hp = self.b.ins().load(I64, mem(), self.ctx, HTOP);
        let top = self.b.ins().load(I64, mem(), hp, 0);
        let sp = self.b.ins().load(I64, mem(), self.ctx, STOP);
        let stop = self.b.ins().load(I64, mem(), sp, 0);
        let end = self.b.ins().iadd_imm(top, 8 * words.len() as i64);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, stop);
        let (fast, cold, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.set_cold_block(cold);
        self.b.append_block_param(join, I64);
        self.b.ins().brif(fits, fast, &[], cold, &[]);
        self.b.switch_to_block(fast);
        self.bump(words, (top, end, hp), tag, join);
        // The young block is full: the overflow chunk, if there is one
        // with room (`Heap::overflow_cursor`), else the slow path.
        self.b.switch_to_block(cold);
        let (bump, slow_blk) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(slow_blk);
        let op = self.b.ins().load(I64, mem(), self.ctx, OVF_TOP);
        let otop = self.b.ins().load(I64, mem(), op, 0);
        let ep = self.b.ins().load(I64, mem(), self.ctx, OVF_END);
        let oend = self.b.ins().load(I64, mem(), ep, 0);
        let after = self.b.ins().iadd_imm(otop, 8 * words.len() as i64);
        let room = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, after, oend);
        let some = self.b.ins().icmp_imm(IntCC::NotEqual, otop, 0);
        let ok = self.b.ins().band(room, some);
        self.b.ins().brif(ok, bump, &[], slow_blk, &[]);
        self.b.switch_to_block(bump);
        self.bump(words, (otop, after, op), tag, join);
        self.b.switch_to_block(slow_blk);
        let out = slow(self);
        let ok = self.b.ins().icmp_imm(IntCC::NotEqual, out, 0);
        self.guard(ok, pc);
        self.b.ins().jump(join, &[out.into()]);
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }

    /// Takes `words` at `top` of a cursor (at address `at`, moved to
    /// `end`) and goes to `join` with the object's word (`tag` on the
    /// address).
    fn bump(
        &mut self,
        words: &[Value],
        (top, end, at): (Value, Value, Value),
        tag: i64,
        join: Block,
    ) {
        for (i, &w) in words.iter().enumerate() {
            self.b.ins().store(mem(), w, top, 8 * i as i32);
        }
        self.b.ins().store(mem(), end, at, 0);
        let v = if tag == 0 {
            top
        } else {
            self.b.ins().bor_imm(top, tag)
        };
        self.b.ins().jump(join, &[v.into()]);
    }

    /// Returns "left" at the pc `pc` (an `I32`): pc, base and native
    /// depth into the context, 0 and the reductions left back.
    fn return_left(&mut self, pc: Value) {
        self.b.ins().store(mem(), pc, self.ctx, CUR + F_PC);
        let base32 = self.b.ins().ireduce(I32, self.base);
        self.b.ins().store(mem(), base32, self.ctx, CUR + F_BASE);
        self.b.ins().store(mem(), self.depth, self.ctx, LEAVE_DEPTH);
        let zero = self.b.ins().iconst(I64, 0);
        let r = self.b.use_var(self.reds);
        self.b.ins().return_(&[zero, r]);
    }

    fn guard(&mut self, cond: Value, pc: u32) {
        let ok = self.b.create_block();
        let out = self.leave(pc);
        self.b.ins().brif(cond, ok, &[], out, &[]);
        self.follow(ok);
    }

    fn is_small(&mut self, x: Value) -> Value {
        let t = self.b.ins().band_imm(x, 0b111);
        self.b.ins().icmp_imm(IntCC::Equal, t, 0b011)
    }

    fn both_small(&mut self, x: Value, y: Value) -> Value {
        // Both tags are 011 exactly when (x ^ 3) | (y ^ 3) has no tag bit.
        let a = self.b.ins().bxor_imm(x, 0b011);
        let c = self.b.ins().bxor_imm(y, 0b011);
        let o = self.b.ins().bor(a, c);
        let t = self.b.ins().band_imm(o, 0b111);
        self.b.ins().icmp_imm(IntCC::Equal, t, 0)
    }

    /// Goes to `yes` if the words are the same, to `no` if they differ
    /// and both are immediates, else leaves at `pc` (structural equality
    /// is the interpreter's).
    fn equal_words(&mut self, pc: u32, x: Value, y: Value, yes: Block, no: Block) {
        let differ = self.b.create_block();
        let same = self.b.ins().icmp(IntCC::Equal, x, y);
        self.b.ins().brif(same, yes, &[], differ, &[]);
        self.follow(differ);
        for w in [x, y] {
            if self.kind(w) & IMM == 0 {
                let t = self.b.ins().band_imm(w, 0b110);
                let imm = self.b.ins().icmp_imm(IntCC::NotEqual, t, 0);
                self.guard(imm, pc);
                self.learn(w, IMM);
            }
        }
        self.goto(no);
    }

    fn bool_word(&mut self, c: Value) -> Value {
        let t = self.b.ins().iconst(I64, tag::TRUE as i64);
        let f = self.b.ins().iconst(I64, tag::FALSE as i64);
        self.b.ins().select(c, t, f)
    }

    /// `x + y` of two small-integer words (`y` untagged: `y - 3`), or leave.
    fn add_words(&mut self, x: Value, y_untagged: Value, pc: u32) -> Value {
        let (s, of) = self.b.ins().sadd_overflow(x, y_untagged);
        let ok = self.b.ins().icmp_imm(IntCC::Equal, of, 0);
        self.guard(ok, pc);
        self.learn(s, SMALL);
        s
    }

    /// `x + imm` of a small-integer word and a constant, or leave. The
    /// overflow is found by comparing the sum with `x` (it wrapped if it
    /// moved the wrong way): a compare and a branch, where
    /// `sadd_overflow`'s flag becomes `seto; test; jz`.
    fn add_imm_words(&mut self, x: Value, imm: i64, pc: u32) -> Value {
        let s = self.b.ins().iadd_imm(x, imm << 3);
        let cc = if imm >= 0 {
            IntCC::SignedGreaterThanOrEqual
        } else {
            IntCC::SignedLessThan
        };
        let ok = self.b.ins().icmp(cc, s, x);
        self.guard(ok, pc);
        self.learn(s, SMALL);
        s
    }

    /// The two small-integer operands of `pc`, or leave (each checked
    /// unless known).
    fn small_pair(&mut self, a: u8, b: u8, pc: u32) -> (Value, Value) {
        let (x, y) = (self.r(a), self.r(b));
        match (self.kind(x) & SMALL != 0, self.kind(y) & SMALL != 0) {
            (true, true) => {}
            (true, false) => self.guard_small(y, pc),
            (false, true) => self.guard_small(x, pc),
            (false, false) => {
                let ok = self.both_small(x, y);
                self.guard(ok, pc);
                self.learn(x, SMALL);
                self.learn(y, SMALL);
            }
        }
        (x, y)
    }

    /// Takes a reduction as `safepoint!` does, leaving at `pc` (before any
    /// effect) when it would be the slice's last; returns the count to
    /// store once the instruction's other checks passed.
    fn reduction(&mut self, pc: u32) -> Value {
        let r = self.b.use_var(self.reds);
        let ok = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, r, 1);
        self.guard(ok, pc);
        self.b.ins().iadd_imm(r, -1)
    }

    /// Returns `(v, reductions left)`.
    fn return_with(&mut self, v: Value) {
        let r = self.b.use_var(self.reds);
        self.b.ins().return_(&[v, r]);
    }

    /// The value of var `var` now (read as `Var::get` reads it).
    fn var_value(&mut self, var: u32) -> Value {
        let addr = self.p.vars[var as usize].value_addr();
        let a = self.b.ins().iconst(I64, addr as i64);
        self.b.ins().atomic_load(I64, mem(), a)
    }

    /// Leaves at `pc` unless var `var` still holds `word` (the closure it
    /// held when this code was compiled); that closure, as a constant.
    fn var_still(&mut self, var: u32, word: u64, pc: u32) -> Value {
        let w = self.var_value(var);
        let same = self.b.ins().icmp_imm(IntCC::Equal, w, word as i64);
        self.guard(same, pc);
        self.b.ins().iconst(I64, word as i64)
    }

    /// Returns `v` as `Ret` does: into the callee slot, the caller's frame
    /// popped (a compiled caller goes on from its own state; the
    /// interpreter makes the popped frame current). Leaves at `pc` when
    /// there is no caller frame.
    fn ret(&mut self, v: Value, pc: u32) {
        if self.kind(v) & SMALL == 0 {
            self.rets_small = false;
        }
        let (native, outer) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(outer);
        self.b.ins().brif(self.depth, native, &[], outer, &[]);
        // To a compiled caller: the value is all it needs.
        self.b.switch_to_block(native);
        self.return_with(v);
        // To the interpreter: into the callee slot, the caller's frame
        // popped.
        self.b.switch_to_block(outer);
        let top = self.b.ins().load(I64, mem(), self.ctx, FRAMES_TOP);
        let bottom = self.b.ins().load(I64, mem(), self.ctx, FRAMES);
        let some = self.b.ins().icmp(IntCC::UnsignedGreaterThan, top, bottom);
        self.guard(some, pc);
        self.store_reg(-1, v);
        let top = self.b.ins().iadd_imm(top, -FRAME_SIZE);
        self.b.ins().store(mem(), top, self.ctx, FRAMES_TOP);
        self.return_with(v);
    }

    /// `if not (x cmp y): pc = to` on small integers, else leave.
    fn jump_unless(&mut self, pc: u32, x: Value, y: Value, cc: IntCC, to: u32) {
        let c = self.b.ins().icmp(cc, x, y);
        let (t, n) = (self.next(pc), self.blocks[to as usize]);
        self.b.ins().brif(c, t, &[], n, &[]);
    }

    // ---- instructions ----------------------------------------------------

    fn instr(&mut self, pc: u32) {
        let ins = self.p.code[pc as usize];
        match how(self.p, self.argc, ins) {
            How::SideExit => {
                let out = self.leave(pc);
                self.goto(out);
                return;
            }
            How::NativeVar(word) => {
                let Instr::CallVar { a, argc, var } = ins else {
                    unreachable!("only a CallVar is a built-in's call")
                };
                self.builtin_call(pc, a, argc, var, word, false);
                return;
            }
            How::NativeTail(word) => {
                let Instr::TailCallVar { a, argc, var } = ins else {
                    unreachable!("only a TailCallVar is a built-in's tail call")
                };
                self.native_tail(pc, a, argc, var, word);
                return;
            }
            How::Inline => {}
        }
        match ins {
            Instr::Cons { dst, a, b } => {
                // Onto a list (else the interpreter's `cons_any`): two
                // words bumped from the young block, as `Heap::cons_raw`
                // takes them; where they do not fit, the heap's slow path
                // (an overflow chunk, a collection wanted) through
                // `callout::cons`.
                let (x, y) = (self.r(a), self.r(b));
                let t = self.b.ins().band_imm(y, 0b111);
                let cons = self.b.ins().icmp_imm(IntCC::Equal, t, 0b001);
                let empty = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::Equal, y, tag::EMPTY_LIST as i64);
                let list = self.b.ins().bor(cons, empty);
                self.guard(list, pc);
                let v = self.alloc_inline(pc, &[x, y], 0b001, |tr| {
                    tr.helper(
                        super::callout::cons as *const () as usize,
                        &[tr.ctx, x, y],
                        1,
                    )[0]
                });
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::MakeVector { dst, from, n } => {
                // A header and `n` words bumped from the young block, as
                // `Heap::vector_raw` lays them out; where they do not
                // fit, the heap's slow path through `callout::vector`,
                // from the words put in a stack slot.
                let items: Vec<Value> = (0..n as i64).map(|i| self.r(from as i64 + i)).collect();
                let head = self
                    .b
                    .ins()
                    .iconst(I64, ((n as u64) << 8 | tag::VECTOR_HEADER) as i64);
                let words: Vec<Value> =
                    std::iter::once(head).chain(items.iter().copied()).collect();
                // A boxed word is the address itself (tag 0b000).
                let v = self.alloc_inline(pc, &words, 0, |tr| {
                    let slot = tr.b.create_sized_stack_slot(StackSlotData::new(
                        StackSlotKind::ExplicitSlot,
                        8 * (n as u32).max(1),
                        3,
                    ));
                    for (i, &x) in items.iter().enumerate() {
                        tr.b.ins().stack_store(x, slot, 8 * i as i32);
                    }
                    let at = tr.b.ins().stack_addr(I64, slot, 0);
                    let count = tr.b.ins().iconst(I64, n as i64);
                    tr.helper(
                        super::callout::vector as *const () as usize,
                        &[tr.ctx, at, count],
                        1,
                    )[0]
                });
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::Call { a, argc } if argc as usize == self.argc => {
                // Itself (a named `fn` through its register) natively;
                // anything else as any closure.
                let w = self.r(a);
                let same = self.b.ins().icmp(IntCC::Equal, w, self.me_word);
                let (itself, other) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(same, itself, &[], other, &[]);
                self.b.switch_to_block(itself);
                self.self_call(pc, a, argc, None, None, pc + 1);
                self.b.switch_to_block(other);
                self.closure_call(pc, a, argc, w, pc + 1);
            }
            Instr::Call { a, argc } => {
                let w = self.r(a);
                self.closure_call(pc, a, argc, w, pc + 1)
            }
            Instr::Move { dst, src } => {
                let v = self.r(src);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::LoadConst { dst, k } => {
                let w = self.p.consts[k as usize].bits();
                let v = self.b.ins().iconst(I64, w as i64);
                self.learn_word(v, w);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::LoadNil { dst } => {
                let v = self.b.ins().iconst(I64, tag::NIL as i64);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::LoadSelf { dst } => {
                let v = self.r(-1i64);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::Jump { to } => {
                self.b.ins().jump(self.blocks[to as usize], &[]);
            }
            Instr::Loop { to } => {
                let reds = self.reduction(pc);
                self.b.def_var(self.reds, reds);
                self.b.ins().jump(self.blocks[to as usize], &[]);
            }
            Instr::JumpIfFalse { r, to } | Instr::JumpIfTrue { r, to } => {
                let v = self.r(r);
                let n = self.b.ins().icmp_imm(IntCC::Equal, v, tag::NIL as i64);
                let f = self.b.ins().icmp_imm(IntCC::Equal, v, tag::FALSE as i64);
                let falsy = self.b.ins().bor(n, f);
                let (yes, no) = (self.blocks[to as usize], self.next(pc));
                if matches!(ins, Instr::JumpIfFalse { .. }) {
                    self.b.ins().brif(falsy, yes, &[], no, &[]);
                } else {
                    self.b.ins().brif(falsy, no, &[], yes, &[]);
                }
            }
            Instr::Add { dst, a, b } | Instr::Sub { dst, a, b } => {
                let float = self.float_split(a, b);
                let (x, y) = self.small_pair(a, b, pc);
                let y3 = self.b.ins().iadd_imm(y, -0b011);
                let add = matches!(ins, Instr::Add { .. });
                let v = if add {
                    self.add_words(x, y3, pc)
                } else {
                    let (s, of) = self.b.ins().ssub_overflow(x, y3);
                    let ok = self.b.ins().icmp_imm(IntCC::Equal, of, 0);
                    self.guard(ok, pc);
                    self.learn(s, SMALL);
                    s
                };
                self.set(dst, v);
                self.goto(self.next(pc));
                let op = if add { FOp::Add } else { FOp::Sub };
                self.float_arith_at(float, op, (dst, x, y), pc);
            }
            Instr::AddImm { dst, a, imm } => {
                let x = self.r(a);
                self.guard_small(x, pc);
                let v = self.add_imm_words(x, imm as i64, pc);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::AddRet { r, a, b } => {
                let (x, y) = self.small_pair(a, b, pc);
                let y3 = self.b.ins().iadd_imm(y, -0b011);
                let v = self.add_words(x, y3, pc);
                self.set(r, v);
                // The fused `Ret` at pc + 1 is where to leave from now.
                self.ret(v, pc + 1);
            }
            Instr::Ret { r } => {
                let v = self.r(r);
                self.ret(v, pc);
            }
            Instr::Lt { dst, a, b }
            | Instr::Le { dst, a, b }
            | Instr::Gt { dst, a, b }
            | Instr::Ge { dst, a, b } => {
                let float = self.float_split(a, b);
                let (x, y) = self.small_pair(a, b, pc);
                let cc = match ins {
                    Instr::Lt { .. } => IntCC::SignedLessThan,
                    Instr::Le { .. } => IntCC::SignedLessThanOrEqual,
                    Instr::Gt { .. } => IntCC::SignedGreaterThan,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                let c = self.b.ins().icmp(cc, x, y);
                let v = self.bool_word(c);
                self.set(dst, v);
                self.goto(self.next(pc));
                self.float_compare_at(float, cc, (dst, x, y), pc);
            }
            Instr::NumEq { dst, a, b } => {
                let float = self.float_split(a, b);
                let (x, y) = self.small_pair(a, b, pc);
                let c = self.b.ins().icmp(IntCC::Equal, x, y);
                let v = self.bool_word(c);
                self.set(dst, v);
                self.goto(self.next(pc));
                self.float_compare_at(float, IntCC::Equal, (dst, x, y), pc);
            }
            Instr::Eq { dst, a, b } => {
                // Equal words are equal; two different immediates are not;
                // anything else is the interpreter's (structural equality).
                let (x, y) = (self.r(a), self.r(b));
                let (yes, no) = (self.b.create_block(), self.b.create_block());
                self.equal_words(pc, x, y, yes, no);
                self.b.switch_to_block(yes);
                let t = self.b.ins().iconst(I64, tag::TRUE as i64);
                self.set(dst, t);
                self.goto(self.next(pc));
                self.b.switch_to_block(no);
                let f = self.b.ins().iconst(I64, tag::FALSE as i64);
                self.set(dst, f);
                self.goto(self.next(pc));
            }
            Instr::JumpUnlessEq { a, b, to } => {
                let (x, y) = (self.r(a), self.r(b));
                let (t, n) = (self.next(pc), self.blocks[to as usize]);
                self.equal_words(pc, x, y, t, n);
            }
            Instr::JumpUnlessLt { a, b, to } | Instr::JumpUnlessLe { a, b, to } => {
                let float = self.float_split(a, b);
                let (x, y) = self.small_pair(a, b, pc);
                let cc = if matches!(ins, Instr::JumpUnlessLt { .. }) {
                    IntCC::SignedLessThan
                } else {
                    IntCC::SignedLessThanOrEqual
                };
                self.jump_unless(pc, x, y, cc, to);
                if let Some(fb) = float {
                    self.b.switch_to_block(fb);
                    let c = self.float_compare(cc, x, y, pc);
                    let (t, n) = (self.next(pc), self.blocks[to as usize]);
                    self.b.ins().brif(c, t, &[], n, &[]);
                }
            }
            Instr::JumpUnlessLtImm { a, imm, to } => {
                let x = self.r(a);
                self.guard_small(x, pc);
                let y = self.b.ins().iconst(I64, tag::small(imm as i64) as i64);
                self.jump_unless(pc, x, y, IntCC::SignedLessThan, to);
            }
            Instr::Mul { dst, a, b } => {
                // On the untagged values; the product must fit 64 bits and
                // then the small range (its tagged word shifted back out
                // unchanged).
                let float = self.float_split(a, b);
                let (x, y) = self.small_pair(a, b, pc);
                let vx = self.b.ins().sshr_imm(x, 3);
                let vy = self.b.ins().sshr_imm(y, 3);
                let (prod, of) = self.b.ins().smul_overflow(vx, vy);
                let ok = self.b.ins().icmp_imm(IntCC::Equal, of, 0);
                self.guard(ok, pc);
                let sh = self.b.ins().ishl_imm(prod, 3);
                let back = self.b.ins().sshr_imm(sh, 3);
                let fits = self.b.ins().icmp(IntCC::Equal, back, prod);
                self.guard(fits, pc);
                let v = self.b.ins().bor_imm(sh, 0b011);
                self.learn(v, SMALL);
                self.set(dst, v);
                self.goto(self.next(pc));
                self.float_arith_at(float, FOp::Mul, (dst, x, y), pc);
            }
            Instr::LoadVar { dst, var } => {
                // The var's value now (a redefinition is seen at once);
                // unbound (0) leaves, and the interpreter raises.
                let v = self.var_value(var);
                let bound = self.b.ins().icmp_imm(IntCC::NotEqual, v, 0);
                self.guard(bound, pc);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::LoadCapture { dst, i } => {
                // Captured values follow the closure's header and code id.
                let me = self.me_word;
                let v = self
                    .b
                    .ins()
                    .load(I64, mem(), me, (8 * (2 + i as i64)) as i32);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::TestCons { r, fail }
            | Instr::TestList { r, fail }
            | Instr::TestEmptyList { r, fail } => {
                let x = self.r(r);
                let t = self.b.ins().band_imm(x, 0b111);
                let cons = self.b.ins().icmp_imm(IntCC::Equal, t, 0b001);
                let empty = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::Equal, x, tag::EMPTY_LIST as i64);
                let ok = match ins {
                    Instr::TestCons { .. } => cons,
                    Instr::TestEmptyList { .. } => empty,
                    _ => self.b.ins().bor(cons, empty),
                };
                let (t, n) = (self.next(pc), self.blocks[fail as usize]);
                if matches!(ins, Instr::TestEmptyList { .. }) {
                    self.b.ins().brif(ok, t, &[], n, &[]);
                } else {
                    // A list with metadata: the interpreter's (`tag::unmeta`).
                    let other = self.b.create_block();
                    self.b.ins().brif(ok, t, &[], other, &[]);
                    self.b.switch_to_block(other);
                    self.meta_or(x, pc, n);
                }
            }
            Instr::GetHead { dst, r } | Instr::GetTail { dst, r } => {
                // After the test that made `R[r]` a cons cell: its two
                // words.
                let x = self.r(r);
                let p = self.b.ins().band_imm(x, !0b111);
                let off = if matches!(ins, Instr::GetHead { .. }) {
                    0
                } else {
                    8
                };
                let v = self.b.ins().load(I64, mem(), p, off);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::TestVector { r, n, fail } | Instr::TestVectorMin { r, n, fail } => {
                // A boxed word (tag 000, not 0) whose header is a vector's
                // of exactly (at least) `n` elements.
                let x = self.r(r);
                let (boxed, hdr) = (self.b.create_block(), self.b.create_block());
                let no = self.blocks[fail as usize];
                let t = self.b.ins().band_imm(x, 0b111);
                let tag_ok = self.b.ins().icmp_imm(IntCC::Equal, t, 0);
                self.b.ins().brif(tag_ok, boxed, &[], no, &[]);
                self.b.switch_to_block(boxed);
                let nonzero = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
                self.b.ins().brif(nonzero, hdr, &[], no, &[]);
                self.b.switch_to_block(hdr);
                let h = self.b.ins().load(I64, mem(), x, 0);
                // Not a vector's header: a value with metadata leaves for
                // the interpreter, which looks through it (`tag::unmeta`).
                let other = self.b.create_block();
                let ok = if matches!(ins, Instr::TestVector { .. }) {
                    self.b
                        .ins()
                        .icmp_imm(IntCC::Equal, h, tag::vector_header(n as usize) as i64)
                } else {
                    let kind = self.b.ins().band_imm(h, 0xff);
                    let k = self
                        .b
                        .ins()
                        .icmp_imm(IntCC::Equal, kind, tag::vector_header(0) as i64);
                    let len = self.b.ins().ushr_imm(h, 8);
                    let enough =
                        self.b
                            .ins()
                            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, len, n as i64);
                    self.b.ins().band(k, enough)
                };
                let yes = self.next(pc);
                self.b.ins().brif(ok, yes, &[], other, &[]);
                self.b.switch_to_block(other);
                let kind = self.b.ins().band_imm(h, 0xff);
                let meta = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::Equal, kind, tag::META_HEADER as i64);
                let out = self.leave(pc);
                self.b.ins().brif(meta, out, &[], no, &[]);
            }
            Instr::GetElem { dst, r, i } => {
                // After a vector test covering element `i`.
                let x = self.r(r);
                let v = self
                    .b
                    .ins()
                    .load(I64, mem(), x, (8 * (1 + i as i64)) as i32);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::TestEqConst { r, k, fail }
                if {
                    let w = self.p.consts[k as usize].bits();
                    w & 0b110 != 0 && w != tag::EMPTY_LIST
                } =>
            {
                // An immediate other than `()` equals only itself, or a
                // value with metadata around it (a symbol's): a pattern
                // such as `[:lona.core/reduced v]` fails at once on
                // anything else, boxed or not (`meta_or`).
                let x = self.r(r);
                let w = self.p.consts[k as usize].bits();
                let y = self.b.ins().iconst(I64, w as i64);
                let (t, n) = (self.next(pc), self.blocks[fail as usize]);
                let differ = self.b.create_block();
                let same = self.b.ins().icmp(IntCC::Equal, x, y);
                self.b.ins().brif(same, t, &[], differ, &[]);
                self.follow(differ);
                self.meta_or(x, pc, n);
            }
            Instr::TestEqConst { r, k, fail } => {
                let x = self.r(r);
                let y = self
                    .b
                    .ins()
                    .iconst(I64, self.p.consts[k as usize].bits() as i64);
                let (t, n) = (self.next(pc), self.blocks[fail as usize]);
                self.equal_words(pc, x, y, t, n);
            }
            Instr::TestEqReg { a, b, fail } => {
                let (x, y) = (self.r(a), self.r(b));
                let (t, n) = (self.next(pc), self.blocks[fail as usize]);
                self.equal_words(pc, x, y, t, n);
            }
            Instr::FunctionClause | Instr::Badmatch { .. } | Instr::CaseClause { .. } => {
                // A raise: the interpreter's.
                let out = self.leave(pc);
                self.goto(out);
            }
            Instr::CallVar { a, argc, var }
                if self_var(self.p, var).is_some() && argc as usize == self.argc =>
            {
                self.self_call(pc, a, argc, Some(var), None, pc + 1)
            }
            Instr::CallVar { a, argc, var } => {
                // Another function's var, read now (an unbound var's 0 is
                // no closure: the interpreter raises).
                let w = self.var_value(var);
                self.closure_call(pc, a, argc, w, pc + 1)
            }
            Instr::CallVar1Imm { a, src, imm, var }
                if self.argc == 1 && self_var(self.p, var as u32).is_some() =>
            {
                // The fused `CallVar` at pc + 1 is skipped, as the
                // interpreter skips it.
                self.self_call(pc, a, 1, Some(var as u32), Some((src, imm)), pc + 2)
            }
            Instr::CallVar1Imm { a, src, imm, var } => {
                // Another function: the argument, then a call as any
                // (leaving at `pc` redoes both, as nothing happened).
                let x = self.r(src);
                self.guard_small(x, pc);
                let v = self.add_imm_words(x, imm as i64, pc);
                self.set(a as i64 + 1, v);
                let w = self.var_value(var as u32);
                self.closure_call(pc, a, 1, w, pc + 2)
            }
            Instr::TailCallVar { a, argc, .. } | Instr::TailCall { a, argc } => {
                let reds = self.reduction(pc);
                let callee = |t: &mut Self| match ins {
                    Instr::TailCallVar { var, .. } => t.var_value(var),
                    _ => t.r(a),
                };
                if argc as usize != self.argc {
                    // Not of this arity: another function's.
                    let f = callee(self);
                    self.tail_closure_call(pc, a, argc, f, reds);
                    return;
                }
                // Arguments down to the window's start (the callee, the
                // running closure itself, is already in the callee slot),
                // once the checks passed (a leave redoes the instruction).
                let args: Vec<Value> = (1..=argc as i64).map(|i| self.r(a as i64 + i)).collect();
                let to = self.loop_target(&args);
                if let Instr::TailCallVar { var, .. } = ins {
                    // In the typed loop of a function that calls nothing
                    // else, only another process can change the var:
                    // checked every `VAR_EVERY` iterations (not read
                    // here: the loop body is a few instructions).
                    if self.loop_need.is_some() && !self.calls_out {
                        self.var_now_and_then(var, reds, pc, &args, to);
                        return;
                    }
                }
                let callee = callee(self);
                // The running closure itself, as the interpreter's self
                // tail call asks; else another function's tail call.
                let same = self.b.ins().icmp(IntCC::Equal, callee, self.me_word);
                if let Instr::TailCallVar { var, .. } = ins {
                    if self_var(self.p, var).is_some() {
                        // Its var held this function when compiled: a loop.
                        // Should it hold another one now, the interpreter
                        // makes the call (the code for another function's
                        // call here had taken the loop a register, and a
                        // spill an iteration: `loop` 27 -> 33 ms).
                        self.guard(same, pc);
                        self.loop_back(reds, &args, to);
                        return;
                    }
                }
                let (me, other) = (self.b.create_block(), self.b.create_block());
                self.b.set_cold_block(other);
                self.b.ins().brif(same, me, &[], other, &[]);
                let from = self.b.current_block();
                self.b.switch_to_block(other);
                self.b.seal_block(other);
                self.tail_closure_call(pc, a, argc, callee, reds);
                self.follow_from(from, me);
                self.loop_back(reds, &args, to);
            }
            other => unreachable!("checked: {other:?}"),
        }
    }
}
