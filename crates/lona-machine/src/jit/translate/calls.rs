//! Calls in compiled code (`mod.rs` has the protocol): of the function
//! itself (`self_call`, with its base case taken inline), of other
//! compiled closures (`closure_call`, natively), of built-ins (through an
//! intrinsic or `callout::call`), tail calls of other functions
//! (`tail_closure_call`, in the caller's place), and what a frame does
//! when a callee left (`after_call`): its registers and frame to memory,
//! the leaver named, the callee slot written.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, Value};

use super::super::analysis::{self_var, BaseCase, BaseTest};
use super::super::layout::*;
use super::facts::SMALL;
use super::{mem, Translator};
use crate::bytecode::Proto;
use crate::tag;

impl Translator<'_, '_> {
    /// A call of this function itself at `a` (callee in `R[a]` from the
    /// var, arguments from `R[a+1]`), continuing at `ret_pc`. `arg`: a
    /// first argument to store (the fused `AddImm`'s result).
    pub(super) fn self_call(
        &mut self,
        pc: u32,
        a: u8,
        argc: u8,
        var: Option<u32>,
        arg: Option<(u8, i16)>,
        ret_pc: u32,
    ) {
        let reds = self.reduction(pc);
        // The callee: the var's closure, or `R[a]`; either must be this
        // function (the var's, as compiled; a register's, the running
        // closure itself).
        let w = match var {
            Some(var) => {
                let word = self_var(self.p, var).expect("checked by `how`");
                if self.calls_out || !self.here().is_some_and(|f| f.var_ok) {
                    let w = self.var_still(var, word, pc);
                    if !self.calls_out {
                        self.here_mut().var_ok = true;
                    }
                    w
                } else {
                    // An earlier call of this activation found the var
                    // holding this function, and nothing this process ran
                    // since can have changed it (the function calls
                    // nothing else): another process's redefinition is
                    // seen by the callee's own first call.
                    self.b.ins().iconst(I64, word as i64)
                }
            }
            None => {
                let w = self.r(a);
                let same = self.b.ins().icmp(IntCC::Equal, w, self.me_word);
                self.guard(same, pc);
                w
            }
        };
        let first = arg.map(|(src, imm)| {
            let x = self.r(src);
            self.guard_small(x, pc);
            // (Through the flag, not `add_imm_words`: `fib` ran 4%
            // slower with the compare here.)
            let k = self.b.ins().iconst(I64, (imm as i64) << 3);
            self.add_words(x, k, pc)
        });
        if argc >= 1 {
            let arg0 = first.unwrap_or_else(|| self.r(a as i64 + 1));
            self.base_case_inline(a, arg0, reds, ret_pc);
        }
        // Room, should the callee leave: its window and the slot above it
        // in the register stack, and this frame's place in the frame
        // stack (the interpreter's invariants for a current frame). The
        // callee checks for native stack at its entry.
        // Checked once for every call of itself this activation makes
        // (the highest window of them): the stacks do not shrink while
        // it runs, nor do its base and depth change.
        let callee_base = self.b.ins().iadd_imm(self.base, a as i64 + 1);
        if !self.here().is_some_and(|f| f.room) {
            let top = self
                .b
                .ins()
                .iadd_imm(self.base, self.self_call_top.unwrap_or(a) as i64 + 1);
            let end = self.b.ins().iadd_imm(top, self.nregs as i64);
            self.room_for(end, pc);
            self.here_mut().room = true;
        }
        // The call: the reduction taken, callee and arguments as the
        // interpreter would have them (in SSA; in memory only if the
        // callee leaves).
        self.b.def_var(self.reds, reds);
        self.set(a, w);
        if let Some(v) = first {
            self.set(a as i64 + 1, v);
        }
        let depth1 = self.b.ins().iadd_imm(self.depth, 1);
        let mut args = vec![self.ctx, callee_base, depth1, reds, w];
        for i in 0..argc as i64 {
            args.push(self.r(a as i64 + 1 + i));
        }
        let call = self.b.ins().call(self.me, &args);
        self.after_call(call, a, ret_pc, None);
    }

    /// Leaves at `pc` unless the register stack has room up to the
    /// callee window's `end` and the slot above it, and the frame stack
    /// for this frame (the interpreter's invariants for a current frame,
    /// should the callee leave).
    pub(super) fn room_for(&mut self, end: Value, pc: u32) {
        let need = self.b.ins().iadd_imm(end, 1);
        let have = self.b.ins().load(I64, mem(), self.ctx, STACK_LEN);
        let fits = self.b.ins().icmp(IntCC::UnsignedLessThan, need, have);
        self.guard(fits, pc);
        let room = self.b.ins().load(I64, mem(), self.ctx, FRAMES_ROOM);
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, self.depth, room);
        self.guard(ok, pc);
    }

    /// A call of itself whose first argument `arg0` meets the function's
    /// base case (`analysis::base_case`: its entry returns at once when
    /// argument 0 passes a test against a constant) is not made: the
    /// caller takes the reduction the call takes and puts the value the
    /// callee would return into `R[a]` (`fib`'s `n < 2` leaves, half its
    /// calls, had paid a whole call: prologue, checks, epilogue). Nothing
    /// else of the call is observable: the callee would have written no
    /// frame. Else on to the call in a block of its own.
    pub(super) fn base_case_inline(&mut self, a: u8, arg0: Value, reds: Value, ret_pc: u32) {
        let Some(BaseCase { test, limit, ret }) = self.base_case else {
            return;
        };
        if self.kind(arg0) & SMALL == 0 {
            return;
        }
        let cc = match test {
            BaseTest::Lt => IntCC::SignedLessThan,
            BaseTest::Le => IntCC::SignedLessThanOrEqual,
            BaseTest::Eq => IntCC::Equal,
        };
        let lim = self.b.ins().iconst(I64, limit as i64);
        let lt = self.b.ins().icmp(cc, arg0, lim);
        let (base, call) = (self.b.create_block(), self.b.create_block());
        let from = self.b.current_block();
        let saved = (self.facts.clone(), self.facts_at);
        self.b.ins().brif(lt, base, &[], call, &[]);
        self.follow_from(from, base);
        let v = match ret {
            None => arg0,
            Some(w) => {
                let v = self.b.ins().iconst(I64, w as i64);
                self.learn_word(v, w);
                v
            }
        };
        self.b.def_var(self.reds, reds);
        self.set(a, v);
        self.goto(self.blocks[ret_pc as usize]);
        (self.facts, self.facts_at) = saved;
        self.follow_from(from, call);
    }

    /// After compiled call `call` at `a`: its value into `R[a]` and on at
    /// `ret_pc`, or, if the callee left, this frame written and leave too.
    /// `callee`: the prototype and register count of a callee other than
    /// this function, for `cur` should the leaver be it (or one of its
    /// calls of itself).
    pub(super) fn after_call(
        &mut self,
        call: cranelift_codegen::ir::Inst,
        a: u8,
        ret_pc: u32,
        callee: Option<(Value, Value)>,
    ) {
        let (v, r) = (self.b.inst_results(call)[0], self.b.inst_results(call)[1]);
        self.b.def_var(self.reds, r);
        let from = self.b.current_block();
        let (done, up) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(up);
        self.b.ins().brif(v, done, &[], up, &[]);
        // The callee left, its own registers written: this frame goes to
        // memory too, registers live after the call (the callee slot
        // among them: the callee's `R[-1]`) and its place in the frame
        // stack, below the callee's; then leave in turn.
        self.b.switch_to_block(up);
        if let Some((proto, nregs)) = callee {
            self.name_leaver(proto, nregs);
        }
        // Not the registers above the callee slot: they are the callee's
        // window, written by it (what liveness calls live there, after a
        // call, is never read before it is written: the compiler's code
        // does not read a callee's registers). The callee slot holds the
        // closure called, unless that one tail-called another
        // (`slot_after_tail`).
        let ours = (1u64 << a) - 1;
        if callee.is_none() && !self.tails_out {
            // A call of itself, which tail-calls nothing else.
            self.write_back((self.live[ret_pc as usize] & ours) | 1 << a);
        } else {
            self.slot_after_tail(a, ret_pc, ours);
        }
        let top = self.b.ins().load(I64, mem(), self.ctx, FRAMES_TOP);
        let off = self.b.ins().imul_imm(self.depth, FRAME_SIZE);
        let f = self.b.ins().iadd(top, off);
        let proto = self.b.ins().iconst(I64, self.p.code_id() as i64);
        let rpc = self.b.ins().iconst(I32, ret_pc as i64);
        let base32 = self.b.ins().ireduce(I32, self.base);
        let nr = self.b.ins().iconst(I32, self.nregs as i64);
        self.b.ins().store(mem(), proto, f, F_PROTO);
        self.b.ins().store(mem(), rpc, f, F_PC);
        self.b.ins().store(mem(), base32, f, F_BASE);
        self.b.ins().store(mem(), nr, f, F_NREGS);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().return_(&[zero, r]);
        // Returned: the value is in the callee slot (registers above it
        // are dead here: `check`). From a call of itself, on the guess
        // that it returns small integers, it is one (the guess is checked
        // at every return: `run`).
        self.follow_from(from, done);
        if callee.is_none() && self.small_rets {
            self.learn(v, SMALL);
        }
        self.set(a, v);
        self.goto(self.blocks[ret_pc as usize]);
    }

    /// After a call at `a` that left: the registers `ours` live at
    /// `ret_pc` to memory, and the callee slot `R[a]` unless the callee
    /// tail-called another function, which wrote its own callee there
    /// and said so (bit 1 of `LEAVER_NAMED`, taken back here).
    pub(super) fn slot_after_tail(&mut self, a: u8, ret_pc: u32, ours: u64) {
        self.write_back(self.live[ret_pc as usize] & ours);
        let (slot, tail, on) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        let flags = self.b.ins().load(I64, mem(), self.ctx, LEAVER_NAMED);
        let wrote = self.b.ins().band_imm(flags, 2);
        self.b.ins().brif(wrote, tail, &[], slot, &[]);
        self.b.switch_to_block(slot);
        self.b.seal_block(slot);
        self.write_back(1 << a);
        self.goto(on);
        self.b.switch_to_block(tail);
        self.b.seal_block(tail);
        let named = self.b.ins().band_imm(flags, 1);
        self.b.ins().store(mem(), named, self.ctx, LEAVER_NAMED);
        self.goto(on);
        self.b.switch_to_block(on);
        self.b.seal_block(on);
    }

    /// Calls Rust helper `addr` with `args` (words): its results.
    pub(super) fn helper(&mut self, addr: usize, args: &[Value], results: usize) -> Vec<Value> {
        let mut sig = cranelift_codegen::ir::Signature::new(self.cc);
        sig.params.extend(args.iter().map(|_| AbiParam::new(I64)));
        sig.returns.extend((0..results).map(|_| AbiParam::new(I64)));
        let sig = self.b.import_signature(sig);
        let f = self.b.ins().iconst(I64, addr as i64);
        let call = self.b.ins().call_indirect(sig, f, args);
        self.b.inst_results(call).to_vec()
    }

    /// The prototype of `f`, continuing where `f` is a closure (a boxed
    /// word with a closure's header); else on to `slow`.
    pub(super) fn closure_proto(&mut self, f: Value, slow: Block) -> Value {
        let (hdr, clo) = (self.b.create_block(), self.b.create_block());
        let t = self.b.ins().band_imm(f, 0b111);
        let t0 = self.b.ins().icmp_imm(IntCC::Equal, t, 0);
        let nz = self.b.ins().icmp_imm(IntCC::NotEqual, f, 0);
        let boxed = self.b.ins().band(t0, nz);
        self.b.ins().brif(boxed, hdr, &[], slow, &[]);
        self.b.switch_to_block(hdr);
        self.b.seal_block(hdr);
        let h = self.b.ins().load(I64, mem(), f, 0);
        let k = self.b.ins().band_imm(h, 0xff);
        let is = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, k, tag::CLOSURE_HEADER as i64);
        self.b.ins().brif(is, clo, &[], slow, &[]);
        self.b.switch_to_block(clo);
        self.b.seal_block(clo);
        self.b.ins().load(I64, mem(), f, 8)
    }

    /// The machine code of prototype `proto`'s arity `argc` (0: none),
    /// read with Acquire as `JitSlot::entry` does.
    pub(super) fn entry_of(&mut self, proto: Value, argc: u8) -> Value {
        let at = self.b.ins().iadd_imm(proto, p_entry(argc as usize) as i64);
        self.b.ins().atomic_load(I64, mem(), at)
    }

    /// The shape of `proto`'s code (`argc | nregs << 8`), continuing
    /// where it takes `argc` arguments; else on to `slow`.
    pub(super) fn shape_fits(&mut self, proto: Value, argc: u8, slow: Block) -> Value {
        let shape = self.b.ins().uload32(mem(), proto, p_shape(argc as usize));
        let n = self.b.ins().band_imm(shape, 0xff);
        let fits = self.b.ins().icmp_imm(IntCC::Equal, n, argc as i64);
        let go = self.b.create_block();
        self.b.ins().brif(fits, go, &[], slow, &[]);
        self.b.switch_to_block(go);
        self.b.seal_block(go);
        shape
    }

    /// Calls compiled code `entry` for a window at `base`, native depth
    /// `depth`, closure `f` and `argc` arguments from `R[a+1]`: the call
    /// (its value and the reductions left).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_entry(
        &mut self,
        entry: Value,
        base: Value,
        depth: Value,
        reds: Value,
        f: Value,
        a: u8,
        argc: u8,
    ) -> cranelift_codegen::ir::Inst {
        let mut args = vec![self.ctx, base, depth, reds, f];
        for i in 0..argc as i64 {
            args.push(self.r(a as i64 + 1 + i));
        }
        let sig = self.b.func.dfg.ext_funcs[self.me].signature;
        let mut sig = self.b.func.dfg.signatures[sig].clone();
        sig.params.truncate(5);
        sig.params.extend((0..argc).map(|_| AbiParam::new(I64)));
        let sig = self.b.import_signature(sig);
        self.b.ins().call_indirect(sig, entry, &args)
    }

    /// On the way out of a callee of another function that left: the
    /// leaver's own leave wrote only its pc and base into `cur` (its
    /// prototype there is the entered function's), so the innermost such
    /// call names it, `proto` with `nregs` registers (deeper frames of
    /// the same callee are its calls of itself); bit 0 of
    /// `LEAVER_NAMED` says it is done.
    pub(super) fn name_leaver(&mut self, proto: Value, nregs: Value) {
        let (name, named) = (self.b.create_block(), self.b.create_block());
        // Bit 1 (`tail_closure_call`) is only ever set with bit 0.
        let set = self.b.ins().load(I64, mem(), self.ctx, LEAVER_NAMED);
        self.b.ins().brif(set, named, &[], name, &[]);
        self.b.switch_to_block(name);
        self.b.seal_block(name);
        self.b.ins().store(mem(), proto, self.ctx, CUR + F_PROTO);
        let nr = self.b.ins().ireduce(I32, nregs);
        self.b.ins().store(mem(), nr, self.ctx, CUR + F_NREGS);
        let one = self.b.ins().iconst(I64, 1);
        self.b.ins().store(mem(), one, self.ctx, LEAVER_NAMED);
        self.goto(named);
        self.b.switch_to_block(named);
        self.b.seal_block(named);
    }

    /// A call at `pc` of closure `f` (from var `var` or `R[a]`; goes into
    /// `R[a]`) with `argc` arguments: natively if it is compiled code of
    /// that arity, else through `callout::call` (`native_call`).
    pub(super) fn closure_call(&mut self, pc: u32, a: u8, argc: u8, f: Value, ret_pc: u32) {
        let slow = self.b.create_block();
        if argc as usize > crate::jit::MAX_ARGS {
            self.goto(slow);
        } else {
            let reds = self.reduction(pc);
            // A closure whose prototype has code (Acquire, as
            // `JitSlot::entry`) taking `argc` arguments.
            let proto = self.closure_proto(f, slow);
            let entry = self.entry_of(proto, argc);
            let has = self.b.create_block();
            let other = if argc == 1 || argc == 2 {
                self.b.create_block()
            } else {
                slow
            };
            self.b.ins().brif(entry, has, &[], other, &[]);
            if other != slow {
                // Not compiled code: a built-in with an intrinsic of this
                // arity?
                self.b.switch_to_block(other);
                self.b.seal_block(other);
                let ip = self.b.ins().load(I64, mem(), proto, P_INTRINSIC);
                let known = self.b.create_block();
                self.b.ins().brif(ip, known, &[], slow, &[]);
                self.b.switch_to_block(known);
                self.b.seal_block(known);
                self.shape_fits(proto, argc, slow);
                self.intrinsic_call(ip, a, argc, reds, ret_pc, slow, false);
            }
            self.b.switch_to_block(has);
            self.b.seal_block(has);
            let shape = self.shape_fits(proto, argc, slow);
            let nregs = self.b.ins().ushr_imm(shape, 8);
            // Room, should the callee leave (as in `self_call`).
            let callee_base = self.b.ins().iadd_imm(self.base, a as i64 + 1);
            let end = self.b.ins().iadd(callee_base, nregs);
            self.room_for(end, pc);
            self.b.def_var(self.reds, reds);
            self.set(a, f);
            let depth1 = self.b.ins().iadd_imm(self.depth, 1);
            let call = self.call_entry(entry, callee_base, depth1, reds, f, a, argc);
            self.after_call(call, a, ret_pc, Some((proto, nregs)));
        }
        self.b.switch_to_block(slow);
        self.native_call(pc, a, argc, f, ret_pc, false);
    }

    /// The tail call at `pc` of closure `f` (in `R[a]` or from a var),
    /// with `argc` arguments from `R[a+1]`, the call's reduction (`reds`)
    /// taken: if `f`'s prototype has code of that arity, a native call in
    /// this frame's place (its window at this base, at this depth), whose
    /// value and reductions are returned as they come; else leaves at
    /// `pc` (the interpreter makes the tail call).
    ///
    /// In this frame's place: should the callee leave, it writes its
    /// registers into this window and its frame where this one's would
    /// be, so the interpreter sees what its own tail call makes. This
    /// frame then only names the callee as the leaver (when no deeper
    /// call did) and puts the callee in the callee slot (`R[-1]`), and
    /// writes no frame of its own. The native stack grows with a chain of
    /// such calls until a callee's entry finds it too deep
    /// (`NATIVE_STACK`): that callee leaves at its entry, the chain
    /// unwinds, and the interpreter goes on in constant space.
    pub(super) fn tail_closure_call(&mut self, pc: u32, a: u8, argc: u8, f: Value, reds: Value) {
        let slow = self.leave(pc);
        if argc as usize > crate::jit::MAX_ARGS {
            self.goto(slow);
            return;
        }
        // The callee's value is returned as it comes, not through `ret`:
        // nothing is known of it, so the guess that this function returns
        // only small integers (`Translator::ret`) does not hold. (It was
        // taken as held: a call of itself then did small-integer
        // arithmetic on the big integer `reduce` returned.)
        self.rets_small = false;
        let proto = self.closure_proto(f, slow);
        let entry = self.entry_of(proto, argc);
        let has = self.b.create_block();
        self.b.ins().brif(entry, has, &[], slow, &[]);
        self.b.switch_to_block(has);
        self.b.seal_block(has);
        let shape = self.shape_fits(proto, argc, slow);
        let nregs = self.b.ins().ushr_imm(shape, 8);
        // Room for the callee's window at this base, should it leave.
        let end = self.b.ins().iadd(self.base, nregs);
        self.room_for(end, pc);
        let call = self.call_entry(entry, self.base, self.depth, reds, f, a, argc);
        let (v, r) = (self.b.inst_results(call)[0], self.b.inst_results(call)[1]);
        let (done, up) = (self.b.create_block(), self.b.create_block());
        self.b.set_cold_block(up);
        self.b.ins().brif(v, done, &[], up, &[]);
        self.b.switch_to_block(up);
        self.b.seal_block(up);
        self.name_leaver(proto, nregs);
        // The callee slot: the innermost tail call at this depth writes
        // its callee there (that is the frame the interpreter resumes)
        // and says so in bit 1, so that neither a tail call further out
        // nor the caller (`after_call`, which clears the bit) writes its
        // own.
        let (write, out) = (self.b.create_block(), self.b.create_block());
        let flags = self.b.ins().load(I64, mem(), self.ctx, LEAVER_NAMED);
        let wrote = self.b.ins().band_imm(flags, 2);
        self.b.ins().brif(wrote, out, &[], write, &[]);
        self.b.switch_to_block(write);
        self.b.seal_block(write);
        let regs = self.regs();
        self.b.ins().store(mem(), f, regs, -8);
        let flags = self.b.ins().bor_imm(flags, 2);
        self.b.ins().store(mem(), flags, self.ctx, LEAVER_NAMED);
        self.goto(out);
        self.b.switch_to_block(out);
        self.b.seal_block(out);
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().return_(&[zero, r]);
        // Returned (to the interpreter already, at depth 0: the callee
        // popped the frame below, as this frame's return would have).
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        self.b.ins().return_(&[v, r]);
    }

    /// Calls intrinsic `ip` (`intrinsic.rs`) with the arguments from
    /// `R[a+1]`: its value into `R[a]` and on at `ret_pc` (returned, for a
    /// `tail` call), the call's reduction (`reds`) taken; or on at `fail`
    /// (nothing happened) when it gives 0.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn intrinsic_call(
        &mut self,
        ip: Value,
        a: u8,
        argc: u8,
        reds: Value,
        ret_pc: u32,
        fail: Block,
        tail: bool,
    ) {
        let x = self.r(a as i64 + 1);
        let y = if argc == 2 {
            self.r(a as i64 + 2)
        } else {
            self.b.ins().iconst(I64, 0)
        };
        let mut sig = cranelift_codegen::ir::Signature::new(self.cc);
        sig.params.extend([AbiParam::new(I64), AbiParam::new(I64)]);
        sig.returns.push(AbiParam::new(I64));
        let sig = self.b.import_signature(sig);
        let call = self.b.ins().call_indirect(sig, ip, &[x, y]);
        let v = self.b.inst_results(call)[0];
        let done = self.b.create_block();
        self.b.ins().brif(v, done, &[], fail, &[]);
        self.b.switch_to_block(done);
        self.b.def_var(self.reds, reds);
        if tail {
            self.ret(v, ret_pc);
        } else {
            self.set(a, v);
            self.goto(self.blocks[ret_pc as usize]);
        }
    }

    /// The intrinsic of the built-in closure `word`, if it takes `argc`
    /// arguments: its address.
    pub(super) fn known_intrinsic(word: u64, argc: u8) -> Option<usize> {
        // SAFETY: closures carry leaked Proto addresses.
        let q = unsafe { Proto::from_code(tag::closure_code(word)?) };
        let (f, n) = q.ext.jit.intrinsic()?;
        (n == argc as usize).then_some(f as usize)
    }

    /// A call at `pc` of closure `f` (from var `var` or `R[a]`; goes into
    /// `R[a]`), with `argc` arguments, through `callout::call`: a built-in
    /// runs there; anything else is left to the interpreter (before the
    /// call: nothing happened). What a built-in leaves to finish (a raise,
    /// a request) the interpreter finishes after it (a leave at `ret_pc`).
    /// A `tail` call returns the built-in's value; what it leaves to
    /// finish, the interpreter finishes as its tail call (`native.rs`).
    pub(super) fn native_call(
        &mut self,
        pc: u32,
        a: u8,
        argc: u8,
        f: Value,
        ret_pc: u32,
        tail: bool,
    ) {
        let reds = self.reduction(pc);
        // Callee and arguments in memory, where the built-in (and the
        // interpreter, should it take over) reads them.
        self.set(a, f);
        let regs = self.regs();
        for i in 0..=argc as i64 {
            let v = self.r(a as i64 + i);
            self.b
                .ins()
                .store(mem(), v, regs, ((a as i64 + i) * 8) as i32);
        }
        let args = self.b.ins().iadd_imm(regs, 8 * (a as i64 + 1));
        let n = self.b.ins().iconst(I64, argc as i64);
        let slot = self.b.ins().iconst(
            I64,
            a as i64 | if tail { crate::jit::callout::TAIL } else { 0 },
        );
        let out = self.helper(
            crate::jit::callout::call as *const () as usize,
            &[self.ctx, f, args, n, reds, slot],
            2,
        );
        let (v, r) = (out[0], out[1]);
        // 1: not a built-in of this arity, nothing happened.
        let not = self.b.ins().icmp_imm(IntCC::Equal, v, 1);
        let (ran, before) = (self.b.create_block(), self.leave(pc));
        self.b.ins().brif(not, before, &[], ran, &[]);
        self.b.switch_to_block(ran);
        self.b.def_var(self.reds, r);
        let done = self.b.create_block();
        let after = self.leave(ret_pc);
        self.b.ins().brif(v, done, &[], after, &[]);
        self.b.switch_to_block(done);
        if tail {
            // The caller's frame exists (checked before: `native_tail`).
            self.ret(v, pc);
        } else {
            self.set(a, v);
            self.goto(self.blocks[ret_pc as usize]);
        }
    }

    /// A tail call at `pc` of the built-in closure var `var` held when
    /// compiled (`word`): called, then its value returned as `Ret` does.
    pub(super) fn native_tail(&mut self, pc: u32, a: u8, argc: u8, var: u32, word: u64) {
        // A frame to return to must exist before the built-in runs (it
        // always does: the outermost frame is `Vm::start`'s trampoline);
        // else the interpreter makes the call.
        let (outer, ok) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(self.depth, ok, &[], outer, &[]);
        self.b.switch_to_block(outer);
        let top = self.b.ins().load(I64, mem(), self.ctx, FRAMES_TOP);
        let bottom = self.b.ins().load(I64, mem(), self.ctx, FRAMES);
        let some = self.b.ins().icmp(IntCC::UnsignedGreaterThan, top, bottom);
        self.guard(some, pc);
        self.goto(ok);
        self.b.switch_to_block(ok);
        self.builtin_call(pc, a, argc, var, word, true);
    }

    /// A call (`tail`: a tail call) at `pc` of the built-in closure var
    /// `var` held when compiled (`word`), while it still does: its
    /// intrinsic if it has one for `argc` arguments, else (or when that
    /// declines) `native_call`.
    pub(super) fn builtin_call(
        &mut self,
        pc: u32,
        a: u8,
        argc: u8,
        var: u32,
        word: u64,
        tail: bool,
    ) {
        let f = self.var_still(var, word, pc);
        if let Some(ip) = Self::known_intrinsic(word, argc) {
            let reds = self.reduction(pc);
            let general = self.b.create_block();
            let ip = self.b.ins().iconst(I64, ip as i64);
            // A tail call returns (leaving at `pc` if it cannot); a call
            // goes on after itself.
            let next = if tail { pc } else { pc + 1 };
            self.intrinsic_call(ip, a, argc, reds, next, general, tail);
            self.b.switch_to_block(general);
        }
        self.native_call(pc, a, argc, f, pc + 1, tail);
    }
}
