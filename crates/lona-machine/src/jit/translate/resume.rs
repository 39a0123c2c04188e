//! Entering compiled code in the middle of a loop (on-stack replacement,
//! in the small): the interpreter, at a `Loop` instruction of a function
//! whose code is compiled, goes on in that code at the loop's head rather
//! than interpreting the rest of the loop.
//!
//! Without it, a loop that yielded (its slice ran out at the `Loop`, as
//! it does every 2,000 reductions) or left compiled code for a slow path
//! was interpreted to its end: `dot-row` of spectral-norm, a thousand
//! iterations a call, ran four fifths interpreted.
//!
//! The protocol, for an arity whose code has a `Loop`:
//!
//! 1. The interpreter, having taken the `Loop`'s reduction, enters the
//!    code as at a call (`Vm::run_compiled`) but with `CompiledCx::resume`
//!    set to the loop head's pc; registers, frame and reductions are in
//!    memory, as at any safepoint.
//! 2. The code's first block reads `resume`. Not set (`u64::MAX`): the
//!    entry, as always. Set: it clears it (a call the code makes must
//!    not see it), loads every register live at that pc from memory and
//!    jumps to the pc's block, a loop header, which assumes nothing of
//!    the values it is reached with (`facts.rs`).
//! 3. A pc that is no loop head of this arity, or a native stack too
//!    deep to run on, leaves at once without writing anything (memory
//!    holds the registers already): the interpreter goes on at that pc
//!    as if the code had never been entered.
//!
//! Reductions are charged as before: the interpreter took the `Loop`'s,
//! the code charges from the head on.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::InstBuilder;

use super::{mem, Translator};
use crate::bytecode::Instr;
use crate::jit::layout::*;
use crate::jit::NO_RESUME;
use crate::tag;

impl Translator<'_, '_> {
    /// Steps 2 and 3, in the function's first block (current), for the
    /// loop heads among `reach`: afterwards the current block is the one
    /// the ordinary entry goes on in.
    pub(super) fn resume_dispatch(&mut self, reach: &[bool]) {
        let mut heads: Vec<u32> = reach
            .iter()
            .zip(self.p.code.iter())
            .filter_map(|(&r, ins)| match ins {
                Instr::Loop { to } if r => Some(*to),
                _ => None,
            })
            .collect();
        heads.sort_unstable();
        heads.dedup();
        if heads.is_empty() {
            return;
        }
        let r = self.b.ins().load(I64, mem(), self.ctx, RESUME);
        let (entry, resume, bail) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.set_cold_block(bail);
        let none = self.b.ins().icmp_imm(IntCC::Equal, r, NO_RESUME as i64);
        self.b.ins().brif(none, entry, &[], resume, &[]);
        self.b.switch_to_block(resume);
        self.b.seal_block(resume);
        let cleared = self.b.ins().iconst(I64, NO_RESUME as i64);
        self.b.ins().store(mem(), cleared, self.ctx, RESUME);
        let sp = self.b.ins().get_stack_pointer(I64);
        let limit = self.b.ins().load(I64, mem(), self.ctx, SP_LIMIT);
        let deep_ok = self.b.ins().icmp(IntCC::UnsignedGreaterThan, sp, limit);
        let pick = self.b.create_block();
        self.b.ins().brif(deep_ok, pick, &[], bail, &[]);
        self.b.switch_to_block(pick);
        self.b.seal_block(pick);
        let stack = self.b.ins().load(I64, mem(), self.ctx, STACK);
        let off = self.b.ins().ishl_imm(self.base, 3);
        let regs = self.b.ins().iadd(stack, off);
        let nil = self.b.ins().iconst(I64, tag::NIL as i64);
        for head in heads {
            let (go, next) = (self.b.create_block(), self.b.create_block());
            let hit = self.b.ins().icmp_imm(IntCC::Equal, r, head as i64);
            self.b.ins().brif(hit, go, &[], next, &[]);
            self.b.switch_to_block(go);
            self.b.seal_block(go);
            let live = self.live[head as usize];
            for i in 0..self.nregs as usize {
                let w = if i < 64 && live & (1u64 << i) != 0 {
                    self.b.ins().load(I64, mem(), regs, (i * 8) as i32)
                } else {
                    nil
                };
                self.b.def_var(self.vars[i], w);
            }
            self.goto(self.blocks[head as usize]);
            self.b.switch_to_block(next);
            self.b.seal_block(next);
        }
        self.goto(bail);
        // Step 3: left at `r`, nothing written.
        self.b.switch_to_block(bail);
        self.b.seal_block(bail);
        let pc = self.b.ins().ireduce(I32, r);
        self.return_left(pc);
        self.b.switch_to_block(entry);
        self.b.seal_block(entry);
    }
}
