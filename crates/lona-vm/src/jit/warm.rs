//! Warming the code generator up before the first function is hot.
//!
//! The first compile of an OS process took ~0.7 ms more than the same
//! function compiled later (`doall`, 1,280 bytes of code: 1.17 ms first,
//! 0.4 ms after): Cranelift's code is paged in from the executable, its
//! context's buffers grow, the host's CPU features are detected. A node
//! whose tier compiles starts a thread that pays this once (`warm_up`,
//! from `Env::new`), by compiling a function of the shape translated
//! Lonala code has (a loop over loads, tag tests and stores, an indirect
//! call on a cold path, two return values) with both of the compiler's
//! settings, and throwing the code away. It takes the compiler's lock,
//! as any compile does; a function found hot meanwhile waits for it, as
//! it would have paid for it itself.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::I64;
use cranelift_codegen::ir::{AbiParam, InstBuilder, MemFlags, Signature, UserFuncName};
use cranelift_frontend::FunctionBuilder;

use super::Compiler;

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
                let mut guard = super::compiler().lock().unwrap_or_else(|e| e.into_inner());
                if let Some(c) = guard.as_mut() {
                    // A panic here (a code generator bug) must not reach
                    // anyone: the context is reset for the next compile.
                    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        compile_sample(c);
                    }));
                    if ok.is_err() {
                        c.fctx = cranelift_frontend::FunctionBuilderContext::new();
                    }
                    c.ctx.clear();
                }
                if std::env::var_os("LONA_JIT_LOG").is_some() {
                    eprintln!("jit: warmed up in {} µs", t0.elapsed().as_micros());
                }
            });
    });
}

/// Builds the sample function in `c.ctx` and compiles it with each of the
/// compiler's settings; the code is not installed.
fn compile_sample(c: &mut Compiler) {
    let cc = c.isa.default_call_conv();
    let mut sig = Signature::new(cc);
    for _ in 0..6 {
        sig.params.push(AbiParam::new(I64));
    }
    sig.returns.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I64));
    let mut helper = Signature::new(cc);
    helper.params.push(AbiParam::new(I64));
    helper.params.push(AbiParam::new(I64));
    helper.returns.push(AbiParam::new(I64));
    for big in [false, true] {
        c.ctx.clear();
        c.ctx.func.signature = sig.clone();
        c.ctx.func.name = UserFuncName::user(0, u32::MAX);
        let mut b = FunctionBuilder::new(&mut c.ctx.func, &mut c.fctx);
        let helper = b.import_signature(helper.clone());
        let (entry, head, body, slow, done) = (
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
            b.create_block(),
        );
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ps = b.block_params(entry).to_vec();
        let (ctx, list, n) = (ps[0], ps[1], ps[2]);
        let zero = b.ins().iconst(I64, 0);
        b.ins().jump(head, &[list.into(), zero.into(), n.into()]);
        b.append_block_param(head, I64);
        b.append_block_param(head, I64);
        b.append_block_param(head, I64);
        b.switch_to_block(head);
        let hp = b.block_params(head).to_vec();
        let (xs, acc, reds) = (hp[0], hp[1], hp[2]);
        let tag = b.ins().band_imm(xs, 7);
        let cons = b.ins().icmp_imm(IntCC::Equal, tag, 1);
        let left = b.ins().icmp_imm(IntCC::SignedGreaterThan, reds, 1);
        let go = b.ins().band(cons, left);
        b.ins()
            .brif(go, body, &[], done, &[acc.into(), reds.into()]);
        b.switch_to_block(body);
        let cell = b.ins().band_imm(xs, -8);
        let head_w = b.ins().load(I64, MemFlags::trusted(), cell, 0);
        let tail_w = b.ins().load(I64, MemFlags::trusted(), cell, 8);
        let small = b.ins().band_imm(head_w, 15);
        let is_small = b.ins().icmp_imm(IntCC::Equal, small, 15);
        b.set_cold_block(slow);
        let add_body = b.create_block();
        b.ins().brif(is_small, add_body, &[], slow, &[]);
        b.switch_to_block(add_body);
        let k = b.ins().sshr_imm(head_w, 4);
        let sum = b.ins().iadd(acc, k);
        let scaled = b.ins().imul_imm(sum, 3);
        let top = b.ins().load(I64, MemFlags::trusted(), ctx, 88);
        b.ins().store(MemFlags::trusted(), scaled, top, 0);
        let more = b.ins().iadd_imm(reds, -1);
        b.ins()
            .jump(head, &[tail_w.into(), sum.into(), more.into()]);
        b.switch_to_block(slow);
        let f = b.ins().load(I64, MemFlags::trusted(), ctx, 96);
        let call = b.ins().call_indirect(helper, f, &[ctx, head_w]);
        let r = b.inst_results(call)[0];
        let none = b.ins().iconst(I64, 0);
        b.ins().return_(&[none, r]);
        b.append_block_param(done, I64);
        b.append_block_param(done, I64);
        b.switch_to_block(done);
        let dp = b.block_params(done).to_vec();
        let boxed = b.ins().ishl_imm(dp[0], 4);
        let word = b.ins().bor_imm(boxed, 15);
        b.ins().return_(&[word, dp[1]]);
        b.seal_all_blocks();
        b.finalize();
        let isa = if big { &*c.isa_big } else { &*c.isa };
        // The code is thrown away; an error only means a colder start.
        let _ = c.ctx.compile(isa, &mut Default::default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample is valid IR that both settings compile to some code
    /// (a bug here would only ever show as a slower first compile).
    #[test]
    fn the_sample_compiles() {
        let mut c = Compiler::new().expect("a compiler");
        compile_sample(&mut c);
        // The last compile (no optimiser) left its code in the context.
        let made = c.ctx.compiled_code().expect("compiled");
        assert!(
            made.code_buffer().len() > 32,
            "{} bytes",
            made.code_buffer().len()
        );
        // And it passes the verifier (on in debug builds, as tests are).
        c.ctx.clear();
        compile_sample(&mut c);
        assert!(c.ctx.compiled_code().is_some());
    }
}
