//! Floats in compiled code: `+`, `-`, `*` and the comparisons of a
//! float with a float or a small integer, inline, where the function's
//! arithmetic has met floats (`JitSlot::floats`).
//!
//! A float is boxed (`lona_term`'s `term.rs`: a header of kind `Float`,
//! arity 1, then the `f64`'s bits). The code for one such instruction is:
//!
//! 1. Both operands small integers: the integer code, as in a function
//!    that never met a float (the facts it learns go along).
//! 2. Else each operand is made an `f64`: a small integer converted (as
//!    `num.rs`'s `to_f64`), a float's bits loaded; anything else (a big
//!    integer, not a number) leaves, and the interpreter does it.
//! 3. Arithmetic: the result, if finite (else it leaves, and the
//!    interpreter raises `:badarith`, as `num::arith` does), is put in a
//!    new float bumped from the young block (`alloc_inline`; where it
//!    does not fit, `callout::float`). A comparison is IEEE 754's ordered
//!    one: false when either side is NaN, as `num::relation` has it.
//!
//! A function whose arithmetic has never met a float is translated
//! without step 2's paths: an integer loop keeps its facts (after a
//! two-way instruction the result is a merge of two values, of which
//! nothing is known).

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F64, I64};
use cranelift_codegen::ir::{Block, InstBuilder, MemFlags, Value};

use super::{mem, Translator};
use crate::tag;

/// An arithmetic instruction's operation.
#[derive(Clone, Copy)]
pub(super) enum FOp {
    Add,
    Sub,
    Mul,
}

impl Translator<'_, '_> {
    /// Whether the instruction at `pc` on `x` and `y` gets a float path:
    /// the function met floats and the two are not known to be small.
    pub(super) fn float_path(&self, x: Value, y: Value) -> bool {
        self.floats && (self.kind(x) & super::SMALL == 0 || self.kind(y) & super::SMALL == 0)
    }

    /// Step 1 for the instruction on registers `a` and `b`, if it gets a
    /// float path: the block that path starts in (the current block is
    /// then the integer path's).
    pub(super) fn float_split(&mut self, a: u8, b: u8) -> Option<Block> {
        let (x, y) = (self.r(a), self.r(b));
        self.float_path(x, y).then(|| self.split_small(x, y))
    }

    /// The float path of an arithmetic instruction writing `dst`, if it
    /// has one (`float_split`): the new float into `dst`, and on to the
    /// next instruction.
    pub(super) fn float_arith_at(
        &mut self,
        float: Option<Block>,
        op: FOp,
        (dst, x, y): (u8, Value, Value),
        pc: u32,
    ) {
        self.float_into(float, dst, pc, |tr| tr.float_arith(op, x, y, pc));
    }

    /// The float path of a comparison writing `dst`, if it has one.
    pub(super) fn float_compare_at(
        &mut self,
        float: Option<Block>,
        cc: IntCC,
        (dst, x, y): (u8, Value, Value),
        pc: u32,
    ) {
        self.float_into(float, dst, pc, |tr| {
            let c = tr.float_compare(cc, x, y, pc);
            tr.bool_word(c)
        });
    }

    /// In the float path's block, if there is one: `value` into `dst`,
    /// and on to the next instruction.
    fn float_into(
        &mut self,
        float: Option<Block>,
        dst: u8,
        pc: u32,
        value: impl FnOnce(&mut Self) -> Value,
    ) {
        if let Some(fb) = float {
            self.b.switch_to_block(fb);
            let v = value(self);
            self.set(dst, v);
            self.goto(self.next(pc));
        }
    }

    /// Step 1's branch: on to the returned block if `x` and `y` are both
    /// small integers (facts learnt there), else to `float` (no facts).
    pub(super) fn split_small(&mut self, x: Value, y: Value) -> Block {
        let (int, float) = (self.b.create_block(), self.b.create_block());
        let ok = self.both_small(x, y);
        self.b.ins().brif(ok, int, &[], float, &[]);
        self.b.seal_block(float);
        self.follow(int);
        self.learn(x, super::SMALL);
        self.learn(y, super::SMALL);
        float
    }

    /// Step 2: `x` as an `f64`, or leave at `pc`.
    fn as_f64(&mut self, x: Value, pc: u32) -> Value {
        let (small, other, join) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.append_block_param(join, F64);
        let is_small = self.is_small(x);
        self.b.ins().brif(is_small, small, &[], other, &[]);
        self.b.switch_to_block(small);
        self.b.seal_block(small);
        let i = self.b.ins().sshr_imm(x, 3);
        let f = self.b.ins().fcvt_from_sint(F64, i);
        self.b.ins().jump(join, &[f.into()]);
        self.b.switch_to_block(other);
        self.b.seal_block(other);
        // A boxed word (tag 000, never 0) whose header is a float's.
        let t = self.b.ins().band_imm(x, 0b111);
        let t0 = self.b.ins().icmp_imm(IntCC::Equal, t, 0);
        let nz = self.b.ins().icmp_imm(IntCC::NotEqual, x, 0);
        let boxed = self.b.ins().band(t0, nz);
        self.guard(boxed, pc);
        let h = self.b.ins().load(I64, mem(), x, 0);
        let is_float = self
            .b
            .ins()
            .icmp_imm(IntCC::Equal, h, tag::FLOAT_HEADER as i64);
        self.guard(is_float, pc);
        let f = self.b.ins().load(F64, mem(), x, 8);
        self.b.ins().jump(join, &[f.into()]);
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        self.b.block_params(join)[0]
    }

    /// Steps 2 and 3 of an arithmetic instruction from the current block
    /// (`split_small`'s `float`): the new float, or leave at `pc`.
    pub(super) fn float_arith(&mut self, op: FOp, x: Value, y: Value, pc: u32) -> Value {
        let fx = self.as_f64(x, pc);
        let fy = self.as_f64(y, pc);
        let r = match op {
            FOp::Add => self.b.ins().fadd(fx, fy),
            FOp::Sub => self.b.ins().fsub(fx, fy),
            FOp::Mul => self.b.ins().fmul(fx, fy),
        };
        let bits = self.b.ins().bitcast(I64, MemFlags::new(), r);
        // Finite: the exponent is not all ones (infinities and NaN).
        const EXP: i64 = 0x7ff0_0000_0000_0000;
        let e = self.b.ins().band_imm(bits, EXP);
        let finite = self.b.ins().icmp_imm(IntCC::NotEqual, e, EXP);
        self.guard(finite, pc);
        let head = self.b.ins().iconst(I64, tag::FLOAT_HEADER as i64);
        // A boxed word is the address itself (tag 0b000).
        self.alloc_inline(pc, &[head, bits], 0, |tr| {
            tr.helper(
                crate::jit::callout::float as *const () as usize,
                &[tr.ctx, bits],
                1,
            )[0]
        })
    }

    /// Steps 2 and 3 of a comparison (`cc` as the signed integer one):
    /// whether it holds, or leave at `pc`.
    pub(super) fn float_compare(&mut self, cc: IntCC, x: Value, y: Value, pc: u32) -> Value {
        let fx = self.as_f64(x, pc);
        let fy = self.as_f64(y, pc);
        let fcc = match cc {
            IntCC::SignedLessThan => FloatCC::LessThan,
            IntCC::SignedLessThanOrEqual => FloatCC::LessThanOrEqual,
            IntCC::SignedGreaterThan => FloatCC::GreaterThan,
            IntCC::SignedGreaterThanOrEqual => FloatCC::GreaterThanOrEqual,
            _ => FloatCC::Equal,
        };
        self.b.ins().fcmp(fcc, fx, fy)
    }
}
