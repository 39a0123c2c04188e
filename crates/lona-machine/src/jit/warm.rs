//! Warming the code generator up before the first function is hot.
//!
//! The first compile of an OS process took ~0.7 ms more than the same
//! function compiled later (`doall`, 1,280 bytes of code: 1.17 ms first,
//! 0.4 ms after): Cranelift's code is paged in from the executable, its
//! context's buffers grow, the host's CPU features are detected. A node
//! whose tier compiles starts a thread that pays this once (`warm_up`,
//! from `Env::new`), by compiling a function of the shape and size
//! translated Lonala code has (loops over loads, tag tests and stores,
//! calls of compiled code with cold paths, two return values) with the
//! quick tier's setting (`optimise.rs`: what a function found hot is
//! compiled with), and throwing the code away. It takes the compiler's
//! lock, as a function found hot does; one found hot meanwhile waits
//! for it, as it would have paid for it itself.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlags, Signature, UserFuncName};
use cranelift_frontend::FunctionBuilder;

use super::Codegen;

/// Starts the warming thread, once per OS process; nothing if the tier is
/// the interpreter's.
pub(crate) fn warm_up() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if super::tier() == super::Tier::Interp {
        return;
    }
    ONCE.call_once(|| {
        // A thread that cannot be started leaves the first compile cold.
        let _ = std::thread::Builder::new()
            .name("lona-jit-warm".into())
            .spawn(|| {
                let t0 = std::time::Instant::now();
                // The compiler's code generator with the quick tier's
                // setting: a function found hot is compiled with it
                // (`optimise.rs`), and meanwhile waits for the lock.
                // (Warming the other two settings under it as well held
                // it for 2.5 ms: a function hot at once waited that long.)
                {
                    let mut guard = super::compiler().lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(c) = guard.as_mut().map(|c| &mut c.gen) {
                        // A panic here (a code generator bug) must not
                        // reach anyone: the context is reset for the next
                        // compile.
                        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            let isa = c.isa_quick.clone();
                            compile_sample(c, &*isa);
                        }));
                        if ok.is_err() {
                            c.reset();
                        }
                        c.ctx.clear();
                    }
                }
                if std::env::var_os("LONA_JIT_LOG").is_some() {
                    eprintln!("jit: warmed up in {} µs", t0.elapsed().as_micros());
                }
            });
    });
}

/// Sections in the sample: each a test, loads, a call of code of the
/// translator's convention and a cold path that stores and returns;
/// together about the size of the prelude's larger loops (`map-eager`,
/// ~600 instructions), so that the compiler's buffers are grown and its
/// code for calls and spills has run before the first real compile (a
/// sample of ~30 instructions left that one ~0.35 ms slower than the
/// next of its size).
const SECTIONS: usize = 12;

/// Builds the sample function in `c.ctx` and compiles it for `isa` (one
/// of the compiler's settings); the code is not installed.
fn compile_sample(c: &mut Codegen, isa: &dyn cranelift_codegen::isa::TargetIsa) {
    let cc = c.isa.default_call_conv();
    let mut sig = Signature::new(cc);
    for _ in 0..8 {
        sig.params.push(AbiParam::new(I64));
    }
    sig.returns.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
    let mut helper = Signature::new(cc);
    helper.params.push(AbiParam::new(I64));
    helper.params.push(AbiParam::new(I64));
    helper.returns.push(AbiParam::new(I64));
    let mem = MemFlags::trusted();
    {
        c.ctx.clear();
        c.ctx.func.signature = sig.clone();
        c.ctx.func.name = UserFuncName::user(0, u32::MAX);
        let mut b = FunctionBuilder::new(&mut c.ctx.func, &mut c.fctx);
        let helper = b.import_signature(helper.clone());
        let callee = b.import_signature(sig.clone());
        let (entry, head, done) = (b.create_block(), b.create_block(), b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ps = b.block_params(entry).to_vec();
        let (ctx, list, n) = (ps[0], ps[1], ps[2]);
        let zero = b.ins().iconst(I64, 0);
        b.ins().jump(head, &[list.into(), zero.into(), n.into()]);
        for _ in 0..3 {
            b.append_block_param(head, I64);
        }
        b.switch_to_block(head);
        let hp = b.block_params(head).to_vec();
        let (mut xs, mut acc, mut reds) = (hp[0], hp[1], hp[2]);
        for section in 0..SECTIONS {
            let (body, slow, left, on) = (
                b.create_block(),
                b.create_block(),
                b.create_block(),
                b.create_block(),
            );
            let tag = b.ins().band_imm(xs, 7);
            let cons = b.ins().icmp_imm(IntCC::Equal, tag, 1);
            let more = b.ins().icmp_imm(IntCC::SignedGreaterThan, reds, 1);
            let go = b.ins().band(cons, more);
            b.ins()
                .brif(go, body, &[], done, &[acc.into(), reds.into()]);
            b.switch_to_block(body);
            let cell = b.ins().band_imm(xs, -8);
            let head_w = b.ins().load(I64, mem, cell, 0);
            let tail_w = b.ins().load(I64, mem, cell, 8);
            let small = b.ins().band_imm(head_w, 15);
            let is_small = b.ins().icmp_imm(IntCC::Equal, small, 15);
            b.set_cold_block(slow);
            let call_blk = b.create_block();
            b.ins().brif(is_small, call_blk, &[], slow, &[]);
            // A call of compiled code: eight words in, two back, and a
            // cold path for "it left" that writes registers and returns.
            b.switch_to_block(call_blk);
            let f = b.ins().load(I64, mem, ctx, 104 + 8 * section as i32);
            let depth = b.ins().iadd_imm(ps[2], 1);
            let args = [ctx, cell, depth, reds, f, head_w, tail_w, acc];
            let call = b.ins().call_indirect(callee, f, &args);
            let (v, r) = (b.inst_results(call)[0], b.inst_results(call)[1]);
            b.set_cold_block(left);
            b.ins().brif(v, on, &[], left, &[]);
            b.switch_to_block(left);
            let top = b.ins().load(I64, mem, ctx, 16);
            for (i, w) in [head_w, tail_w, acc, f].into_iter().enumerate() {
                b.ins().store(mem, w, top, 8 * i as i32);
            }
            let pc = b.ins().iconst(I64, section as i64);
            b.ins().store(mem, pc, ctx, 56);
            b.ins().return_(&[zero, r]);
            b.switch_to_block(slow);
            let h = b.ins().load(I64, mem, ctx, 96);
            let call = b.ins().call_indirect(helper, h, &[ctx, head_w]);
            let w = b.inst_results(call)[0];
            b.ins().return_(&[zero, w]);
            b.switch_to_block(on);
            let k = b.ins().sshr_imm(v, 4);
            let sum = b.ins().iadd(acc, k);
            let scaled = b.ins().imul_imm(sum, 3);
            let hp = b.ins().load(I64, mem, ctx, 88);
            b.ins().store(mem, scaled, hp, 0);
            (xs, acc, reds) = (tail_w, sum, b.ins().iadd_imm(r, -1));
        }
        b.ins().jump(head, &[xs.into(), acc.into(), reds.into()]);
        b.append_block_param(done, I64);
        b.append_block_param(done, I64);
        b.switch_to_block(done);
        let dp = b.block_params(done).to_vec();
        let boxed = b.ins().ishl_imm(dp[0], 4);
        let word = b.ins().bor_imm(boxed, 15);
        b.ins().return_(&[word, dp[1]]);
        b.seal_all_blocks();
        b.finalize();
        // The code is thrown away; an error only means a colder start.
        let _ = c.ctx.compile(isa, &mut Default::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample is valid IR that every setting compiles to code of
    /// about the size of the prelude's larger loops (a bug here would
    /// only ever show as a slower first compile; the verifier is on in
    /// debug builds, as tests are, and checks the IR).
    #[test]
    fn the_sample_compiles() {
        let mut c = Codegen::new().expect("a code generator");
        for (setting, isa) in [
            ("quick", c.isa_quick.clone()),
            ("optimised", c.isa.clone()),
            ("big", c.isa_big.clone()),
        ] {
            compile_sample(&mut c, &*isa);
            let insts = c.ctx.func.dfg.num_insts();
            assert!(insts > 400, "{setting}: {insts} instructions");
            let made = c.ctx.compiled_code().expect("compiled");
            assert!(
                made.code_buffer().len() > 1000,
                "{setting}: {} bytes",
                made.code_buffer().len()
            );
            c.ctx.clear();
        }
    }
}
