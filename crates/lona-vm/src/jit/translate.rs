//! Bytecode to Cranelift IR, one instruction at a time (`mod.rs` has the
//! protocol). Each instruction gets a block; an instruction the machine
//! code cannot finish itself branches to its *leave* block, which writes
//! the pc into `cur` and returns 0, so the interpreter runs that
//! instruction from its start. Registers are read from and written to the
//! register stack at every use (`regs = stack + base * 8`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Block, FuncRef, InstBuilder, MemFlags, UserFuncName, Value};
use cranelift_frontend::FunctionBuilder;
use cranelift_module::{Linkage, Module};

use super::layout::*;
use super::{Compiler, MAX_DEPTH};
use crate::bytecode::{Instr, Proto};
use crate::tag;

/// Why a prototype is not compiled.
type Why = String;

/// The one arity of `p`: `(argc, entry pc, nregs)`.
fn only_arity(p: &Proto) -> Result<(usize, u32, u32), Why> {
    if p.native.is_some() {
        return Err("a built-in".into());
    }
    if p.variadic.is_some() {
        return Err("variadic".into());
    }
    let mut found = None;
    for (argc, e) in p.entries.iter().enumerate() {
        if e.pc != u32::MAX {
            if found.is_some() {
                return Err("several arities".into());
            }
            found = Some((argc, e.pc, e.nregs as u32));
        }
    }
    found.ok_or_else(|| "no arity".into())
}

/// The address of the var's value word, if the var now holds a closure of
/// `p` (a call through it is a call of this function itself).
fn self_var(p: &'static Proto, var: u32) -> Result<usize, Why> {
    let v = p.vars[var as usize];
    match v.get().and_then(|w| tag::closure_code(w.bits())) {
        Some(code) if code == p.code_id() => Ok(v.value_addr()),
        _ => Err(format!("calls {} (not itself)", v.qualified())),
    }
}

/// Checks that every instruction is one the translator knows, and that
/// none runs off the end of the code.
fn check(p: &'static Proto, argc: usize) -> Result<(), Why> {
    let n = p.code.len();
    match p.code.last() {
        Some(Instr::Jump { .. } | Instr::Loop { .. } | Instr::Ret { .. })
        | Some(Instr::TailCallVar { .. }) => {}
        _ => return Err("the code does not end in a jump or return".into()),
    }
    for (pc, ins) in p.code.iter().enumerate() {
        if matches!(ins, Instr::CallVar1Imm { .. }) && pc + 2 >= n {
            return Err("a fused call at the end".into());
        }
    }
    for ins in p.code.iter() {
        let ok = match *ins {
            Instr::Move { .. }
            | Instr::LoadConst { .. }
            | Instr::LoadNil { .. }
            | Instr::LoadSelf { .. }
            | Instr::Jump { .. }
            | Instr::Loop { .. }
            | Instr::JumpIfFalse { .. }
            | Instr::JumpIfTrue { .. }
            | Instr::Ret { .. }
            | Instr::AddRet { .. }
            | Instr::Add { .. }
            | Instr::Sub { .. }
            | Instr::AddImm { .. }
            | Instr::Lt { .. }
            | Instr::Le { .. }
            | Instr::Gt { .. }
            | Instr::Ge { .. }
            | Instr::Eq { .. }
            | Instr::NumEq { .. }
            | Instr::JumpUnlessLt { .. }
            | Instr::JumpUnlessLe { .. }
            | Instr::JumpUnlessLtImm { .. }
            | Instr::JumpUnlessEq { .. } => true,
            Instr::CallVar { argc: n, var, .. } | Instr::TailCallVar { argc: n, var, .. } => {
                self_var(p, var)?;
                n as usize == argc
            }
            Instr::CallVar1Imm { var, .. } => {
                self_var(p, var as u32)?;
                argc == 1
            }
            other => return Err(format!("{other:?}")),
        };
        if !ok {
            return Err(format!("{ins:?} with another arity"));
        }
    }
    Ok(())
}

/// Compiles `p`: the address of its machine code.
pub(super) fn compile(c: &mut Compiler, p: &'static Proto) -> Result<usize, Why> {
    let (argc, entry_pc, nregs) = only_arity(p)?;
    check(p, argc)?;
    let mut sig = c.module.make_signature();
    sig.params.push(AbiParam::new(I64));
    sig.params.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
    c.count += 1;
    let name = format!("lona_{}_{}", c.count, p.name);
    let id = c
        .module
        .declare_function(&name, Linkage::Local, &sig)
        .map_err(|e| e.to_string())?;
    c.ctx.clear();
    c.ctx.func.signature = sig;
    c.ctx.func.name = UserFuncName::user(0, id.as_u32());
    {
        let mut b = FunctionBuilder::new(&mut c.ctx.func, &mut c.fctx);
        let me = c.module.declare_func_in_func(id, b.func);
        let t = Translator::new(&mut b, p, me, nregs);
        t.run(entry_pc);
        b.seal_all_blocks();
        b.finalize();
    }
    if std::env::var_os("LONA_JIT_DUMP").is_some() {
        eprintln!("{}\n{}", p.disassemble(), c.ctx.func.display());
    }
    c.module
        .define_function(id, &mut c.ctx)
        .map_err(|e| format!("{e:?}"))?;
    c.module.clear_context(&mut c.ctx);
    c.module.finalize_definitions().map_err(|e| e.to_string())?;
    Ok(c.module.get_finalized_function(id) as usize)
}

struct Translator<'a, 'b> {
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
    regs: Value,
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
    ) -> Translator<'a, 'b> {
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let ctx = b.block_params(start)[0];
        let base = b.block_params(start)[1];
        let stack = b.ins().load(I64, mem(), ctx, STACK);
        let off = b.ins().ishl_imm(base, 3);
        let regs = b.ins().iadd(stack, off);
        let blocks = (0..p.code.len()).map(|_| b.create_block()).collect();
        Translator {
            b,
            p,
            me,
            nregs,
            blocks,
            leave: vec![None; p.code.len()],
            ctx,
            base,
            regs,
        }
    }

    fn run(mut self, entry_pc: u32) {
        let entry = self.blocks[entry_pc as usize];
        self.b.ins().jump(entry, &[]);
        for pc in 0..self.p.code.len() {
            let blk = self.blocks[pc];
            self.b.switch_to_block(blk);
            self.instr(pc as u32, entry_pc);
        }
        for pc in 0..self.leave.len() {
            if let Some(blk) = self.leave[pc] {
                self.b.switch_to_block(blk);
                let pcv = self.b.ins().iconst(I32, pc as i64);
                self.b.ins().store(mem(), pcv, self.ctx, CUR + F_PC);
                let base32 = self.b.ins().ireduce(I32, self.base);
                self.b.ins().store(mem(), base32, self.ctx, CUR + F_BASE);
                let zero = self.b.ins().iconst(I64, 0);
                self.b.ins().return_(&[zero]);
            }
        }
    }

    // ---- helpers --------------------------------------------------------

    fn leave(&mut self, pc: u32) -> Block {
        *self.leave[pc as usize].get_or_insert_with(|| self.b.create_block())
    }

    fn goto(&mut self, to: Block) {
        self.b.ins().jump(to, &[]);
    }

    fn next(&self, pc: u32) -> Block {
        self.blocks[pc as usize + 1]
    }

    fn r(&mut self, i: impl Into<i64>) -> Value {
        let off = (i.into() * 8) as i32;
        self.b.ins().load(I64, mem(), self.regs, off)
    }

    fn set(&mut self, i: impl Into<i64>, v: Value) {
        let off = (i.into() * 8) as i32;
        self.b.ins().store(mem(), v, self.regs, off);
    }

    /// Continues in `ok` when `cond` holds, else leaves at `pc`.
    fn guard(&mut self, cond: Value, pc: u32) {
        let ok = self.b.create_block();
        let out = self.leave(pc);
        self.b.ins().brif(cond, ok, &[], out, &[]);
        self.b.switch_to_block(ok);
    }

    fn is_small(&mut self, x: Value) -> Value {
        let t = self.b.ins().band_imm(x, 0b111);
        self.b.ins().icmp_imm(IntCC::Equal, t, 0b011)
    }

    fn both_small(&mut self, x: Value, y: Value) -> Value {
        let a = self.b.ins().band(x, y);
        let o = self.b.ins().bor(x, y);
        let a = self.b.ins().band_imm(a, 0b111);
        let o = self.b.ins().band_imm(o, 0b111);
        let a = self.b.ins().icmp_imm(IntCC::Equal, a, 0b011);
        let o = self.b.ins().icmp_imm(IntCC::Equal, o, 0b011);
        self.b.ins().band(a, o)
    }

    fn both_immediate(&mut self, x: Value, y: Value) -> Value {
        let a = self.b.ins().band_imm(x, 0b110);
        let c = self.b.ins().band_imm(y, 0b110);
        let a = self.b.ins().icmp_imm(IntCC::NotEqual, a, 0);
        let c = self.b.ins().icmp_imm(IntCC::NotEqual, c, 0);
        self.b.ins().band(a, c)
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
        s
    }

    /// The two small-integer operands of `pc`, or leave.
    fn small_pair(&mut self, a: u8, b: u8, pc: u32) -> (Value, Value) {
        let (x, y) = (self.r(a), self.r(b));
        let ok = self.both_small(x, y);
        self.guard(ok, pc);
        (x, y)
    }

    /// Takes a reduction as `safepoint!` does, leaving at `pc` (before any
    /// effect) when it would be the slice's last; returns the count to
    /// store once the instruction's other checks passed.
    fn reduction(&mut self, pc: u32) -> Value {
        let r = self.b.ins().load(I64, mem(), self.ctx, REDS);
        let ok = self.b.ins().icmp_imm(IntCC::SignedGreaterThan, r, 1);
        self.guard(ok, pc);
        self.b.ins().iadd_imm(r, -1)
    }

    /// Whether var `var` still holds the running closure (`R[-1]`).
    fn var_is_self(&mut self, var: u32) -> (Value, Value) {
        let addr = self_var(self.p, var).expect("checked");
        let a = self.b.ins().iconst(I64, addr as i64);
        let w = self.b.ins().atomic_load(I64, mem(), a);
        let me = self.r(-1i64);
        (self.b.ins().icmp(IntCC::Equal, w, me), w)
    }

    /// Returns `v` as `Ret` does: into the callee slot, the caller's frame
    /// current again. Leaves at `pc` when there is no caller frame.
    fn ret(&mut self, v: Value, pc: u32) {
        let len = self.b.ins().load(I64, mem(), self.ctx, FRAMES_LEN);
        let some = self.b.ins().icmp_imm(IntCC::NotEqual, len, 0);
        self.guard(some, pc);
        self.set(-1i64, v);
        let len = self.b.ins().iadd_imm(len, -1);
        self.b.ins().store(mem(), len, self.ctx, FRAMES_LEN);
        let frames = self.b.ins().load(I64, mem(), self.ctx, FRAMES);
        let off = self.b.ins().imul_imm(len, FRAME_SIZE);
        let f = self.b.ins().iadd(frames, off);
        let proto = self.b.ins().load(I64, mem(), f, F_PROTO);
        let pc_base = self.b.ins().load(I64, mem(), f, F_PC);
        let nr = self.b.ins().load(I32, mem(), f, F_NREGS);
        self.b.ins().store(mem(), proto, self.ctx, CUR + F_PROTO);
        self.b.ins().store(mem(), pc_base, self.ctx, CUR + F_PC);
        self.b.ins().store(mem(), nr, self.ctx, CUR + F_NREGS);
        self.b.ins().return_(&[v]);
    }

    /// A call of this function itself at `a` (callee in `R[a]` from the
    /// var, arguments from `R[a+1]`), continuing at `ret_pc`. `arg`: a
    /// first argument to store (the fused `AddImm`'s result).
    fn self_call(&mut self, pc: u32, a: u8, var: u32, arg: Option<(u8, i16)>, ret_pc: u32) {
        let reds = self.reduction(pc);
        let (same, w) = self.var_is_self(var);
        self.guard(same, pc);
        let first = arg.map(|(src, imm)| {
            let x = self.r(src);
            let ok = self.is_small(x);
            self.guard(ok, pc);
            let k = self.b.ins().iconst(I64, (imm as i64) << 3);
            self.add_words(x, k, pc)
        });
        // Room: the callee's window and the slot above it in the register
        // stack; a frame in the frame stack; native depth.
        let callee_base = self.b.ins().iadd_imm(self.base, a as i64 + 1);
        let need = self.b.ins().iadd_imm(callee_base, self.nregs as i64 + 1);
        let have = self.b.ins().load(I64, mem(), self.ctx, STACK_LEN);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThan, need, have);
        self.guard(fits, pc);
        let len = self.b.ins().load(I64, mem(), self.ctx, FRAMES_LEN);
        let cap = self.b.ins().load(I64, mem(), self.ctx, FRAMES_CAP);
        let room = self.b.ins().icmp(IntCC::UnsignedLessThan, len, cap);
        self.guard(room, pc);
        let depth = self.b.ins().load(I64, mem(), self.ctx, DEPTH);
        let shallow = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, depth, MAX_DEPTH as i64);
        self.guard(shallow, pc);
        // Effects, as the interpreter's call: the reduction, callee and
        // argument, the caller's frame pushed, the callee's current.
        self.b.ins().store(mem(), reds, self.ctx, REDS);
        self.set(a, w);
        if let Some(v) = first {
            self.set(a as i64 + 1, v);
        }
        let frames = self.b.ins().load(I64, mem(), self.ctx, FRAMES);
        let off = self.b.ins().imul_imm(len, FRAME_SIZE);
        let f = self.b.ins().iadd(frames, off);
        let proto = self.b.ins().iconst(I64, self.p.code_id() as i64);
        let rpc = self.b.ins().iconst(I32, ret_pc as i64);
        let base32 = self.b.ins().ireduce(I32, self.base);
        let nr = self.b.ins().iconst(I32, self.nregs as i64);
        self.b.ins().store(mem(), proto, f, F_PROTO);
        self.b.ins().store(mem(), rpc, f, F_PC);
        self.b.ins().store(mem(), base32, f, F_BASE);
        self.b.ins().store(mem(), nr, f, F_NREGS);
        let len1 = self.b.ins().iadd_imm(len, 1);
        self.b.ins().store(mem(), len1, self.ctx, FRAMES_LEN);
        let cb32 = self.b.ins().ireduce(I32, callee_base);
        self.b.ins().store(mem(), cb32, self.ctx, CUR + F_BASE);
        let d1 = self.b.ins().iadd_imm(depth, 1);
        self.b.ins().store(mem(), d1, self.ctx, DEPTH);
        let call = self.b.ins().call(self.me, &[self.ctx, callee_base]);
        let v = self.b.inst_results(call)[0];
        self.b.ins().store(mem(), depth, self.ctx, DEPTH);
        // 0: the interpreter takes over below; every frame is in place.
        let done = self.b.ins().icmp_imm(IntCC::NotEqual, v, 0);
        let up = self.b.create_block();
        self.b
            .ins()
            .brif(done, self.blocks[ret_pc as usize], &[], up, &[]);
        self.b.switch_to_block(up);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().return_(&[zero]);
    }

    /// `if not (x cmp y): pc = to` on small integers, else leave.
    fn jump_unless(&mut self, pc: u32, x: Value, y: Value, cc: IntCC, to: u32) {
        let c = self.b.ins().icmp(cc, x, y);
        let (t, n) = (self.next(pc), self.blocks[to as usize]);
        self.b.ins().brif(c, t, &[], n, &[]);
    }

    // ---- instructions ----------------------------------------------------

    fn instr(&mut self, pc: u32, entry_pc: u32) {
        let ins = self.p.code[pc as usize];
        match ins {
            Instr::Move { dst, src } => {
                let v = self.r(src);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::LoadConst { dst, k } => {
                let v = self
                    .b
                    .ins()
                    .iconst(I64, self.p.consts[k as usize].bits() as i64);
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
                self.b.ins().store(mem(), reds, self.ctx, REDS);
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
                let (x, y) = self.small_pair(a, b, pc);
                let y3 = self.b.ins().iadd_imm(y, -0b011);
                let v = if matches!(ins, Instr::Add { .. }) {
                    self.add_words(x, y3, pc)
                } else {
                    let (s, of) = self.b.ins().ssub_overflow(x, y3);
                    let ok = self.b.ins().icmp_imm(IntCC::Equal, of, 0);
                    self.guard(ok, pc);
                    s
                };
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::AddImm { dst, a, imm } => {
                let x = self.r(a);
                let ok = self.is_small(x);
                self.guard(ok, pc);
                let k = self.b.ins().iconst(I64, (imm as i64) << 3);
                let v = self.add_words(x, k, pc);
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
            }
            Instr::NumEq { dst, a, b } => {
                let (x, y) = self.small_pair(a, b, pc);
                let c = self.b.ins().icmp(IntCC::Equal, x, y);
                let v = self.bool_word(c);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::Eq { dst, a, b } => {
                // Equal words are equal; two different immediates are not;
                // anything else is the interpreter's (structural equality).
                let (x, y) = (self.r(a), self.r(b));
                let same = self.b.ins().icmp(IntCC::Equal, x, y);
                let imm = self.both_immediate(x, y);
                let decided = self.b.ins().bor(same, imm);
                self.guard(decided, pc);
                let v = self.bool_word(same);
                self.set(dst, v);
                self.goto(self.next(pc));
            }
            Instr::JumpUnlessEq { a, b, to } => {
                let (x, y) = (self.r(a), self.r(b));
                let same = self.b.ins().icmp(IntCC::Equal, x, y);
                let imm = self.both_immediate(x, y);
                let decided = self.b.ins().bor(same, imm);
                self.guard(decided, pc);
                let (t, n) = (self.next(pc), self.blocks[to as usize]);
                self.b.ins().brif(same, t, &[], n, &[]);
            }
            Instr::JumpUnlessLt { a, b, to } | Instr::JumpUnlessLe { a, b, to } => {
                let (x, y) = self.small_pair(a, b, pc);
                let cc = if matches!(ins, Instr::JumpUnlessLt { .. }) {
                    IntCC::SignedLessThan
                } else {
                    IntCC::SignedLessThanOrEqual
                };
                self.jump_unless(pc, x, y, cc, to);
            }
            Instr::JumpUnlessLtImm { a, imm, to } => {
                let x = self.r(a);
                let ok = self.is_small(x);
                self.guard(ok, pc);
                let y = self.b.ins().iconst(I64, tag::small(imm as i64) as i64);
                self.jump_unless(pc, x, y, IntCC::SignedLessThan, to);
            }
            Instr::CallVar { a, var, .. } => self.self_call(pc, a, var, None, pc + 1),
            Instr::CallVar1Imm { a, src, imm, var } => {
                // The fused `CallVar` at pc + 1 is skipped, as the
                // interpreter skips it.
                self.self_call(pc, a, var as u32, Some((src, imm)), pc + 2)
            }
            Instr::TailCallVar { a, argc, var } => {
                let reds = self.reduction(pc);
                let (same, _) = self.var_is_self(var);
                self.guard(same, pc);
                self.b.ins().store(mem(), reds, self.ctx, REDS);
                // Callee and arguments down to the callee slot, in order
                // (the target is below the source).
                for i in 0..=argc as i64 {
                    let v = self.r(a as i64 + i);
                    self.set(i - 1, v);
                }
                self.b.ins().jump(self.blocks[entry_pc as usize], &[]);
            }
            other => unreachable!("checked: {other:?}"),
        }
    }
}
