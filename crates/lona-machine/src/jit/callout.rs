//! Calls from compiled code into Rust: built-ins, and a cons cell.
//!
//! Compiled code calls these `extern "C"` helpers with the `CompiledCx`. No
//! Rust panic may unwind through machine code (it has no unwind tables),
//! so each helper catches one and hands it to the interpreter, which
//! resumes it once the compiled frames are gone (`Pending::Panic`).
//!
//! A built-in runs exactly as the interpreter's `call_fast!` runs it. What
//! the interpreter would do after it, beyond taking its value, compiled
//! code leaves to the interpreter: the helper records it (`Pending`), the
//! machine code leaves *after* the call, and the interpreter finishes it
//! (`Vm::finish_pending`): a raise (with the built-in as the fault), a
//! request (collect, yield, a heap limit) or a redirect to another callee.

use std::sync::Arc;

use lona_runtime::StepCx;
use lona_term::RawTerm;

use super::{CompiledCx, Returned};
use crate::bytecode::Proto;
use crate::env::Env;
use crate::native::{BuiltinCx, Raise, Request};
use crate::tag;

/// The parts of the VM a built-in needs, as raw pointers taken from the
/// VM for one run of compiled code (`run_jit!`), during which the
/// interpreter touches none of them.
pub(crate) struct VmParts {
    pub heap: *const lona_term::Heap,
    pub env: *const Arc<Env>,
    pub extra: *mut dyn crate::native::DictSlot,
    /// The step's runtime context, when the VM runs as a process.
    pub rt: Option<*mut StepCx<'static>>,
}

/// What a built-in called from compiled code left for the interpreter.
#[derive(Default)]
pub(crate) enum Pending {
    #[default]
    None,
    /// The callee is not a built-in of that arity: nothing happened; the
    /// interpreter runs the call.
    NotNative,
    /// The built-in raised.
    Raise(Raise, &'static Proto),
    /// It returned `value` and asked for `Request` (not a redirect): the
    /// value goes into register `slot` of the current frame, or, after a
    /// `tail` call, is returned from it.
    Request {
        value: u64,
        slot: u8,
        q: Request,
        tail: bool,
    },
    /// It asked to call `g` with the same `argc` arguments instead: `g`
    /// goes into register `slot`, the interpreter calls it (as a tail call
    /// after a `tail` call: the current frame is its caller's no more).
    Redirect {
        g: u64,
        slot: u8,
        argc: u8,
        tail: bool,
    },
    /// It panicked (a heap limit, say): resumed by the interpreter.
    Panic(Box<dyn std::any::Any + Send>),
}

/// Set in `call`'s `slot` for a tail call.
pub(crate) const TAIL: i64 = 0x100;

/// Calls the closure `f` with the `argc` words at `args` if it is a
/// built-in taking that many (compiled code's `Call`/`CallVar` of
/// anything but itself), with `reds` reductions. Returns the value (never
/// 0 or 1), 1 when `f` is not such a built-in (nothing happened: the
/// interpreter makes the call), or 0 when the call happened and left
/// something for the interpreter to finish (`ctx.pending`). `slot` is the
/// callee register, for the interpreter, with [`TAIL`] set for a tail
/// call (the code leaves after the call then, at the pc past the tail
/// call, where the interpreter's own tail call has the frame).
///
/// # Safety
/// `ctx` is the context of the running compiled code (`run_jit!`), with
/// `vm` set; `args` points at `argc` words of the register stack, valid
/// terms of the process heap.
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) unsafe extern "C" fn call(
    ctx: *mut CompiledCx,
    f: u64,
    args: *const u64,
    argc: u64,
    reds: i64,
    slot: u64,
) -> Returned {
    // SAFETY: per the contract; nothing else touches the context now.
    let ctx = unsafe { &mut *ctx };
    // 1 (never a term word: a cons cell at address 0): nothing happened.
    let not = |ctx: &mut CompiledCx| {
        ctx.pending = Pending::NotNative;
        Returned { value: 1, reds }
    };
    let Some(code) = tag::closure_code(f) else {
        return not(ctx);
    };
    // SAFETY: closures carry leaked Proto addresses.
    let p = unsafe { Proto::from_code(code) };
    let Some(nf) = p.ext.native else {
        // A Lonala function with no code for this call: the caller leaves
        // and the interpreter calls it.
        p.ext.jit.called_from_compiled();
        return not(ctx);
    };
    let (lo, hi) = p.native_arity;
    let n = argc as usize;
    if n < lo as usize || (hi != u16::MAX && n > hi as usize) {
        return not(ctx);
    }
    let mut r = reds.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    let parts = &ctx.vm;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: per the contract: the pointers are the VM's, unused by
        // anyone else while compiled code runs; the words are terms.
        let (heap, env, extra) = unsafe { (&*parts.heap, &*parts.env, &mut *parts.extra) };
        // SAFETY: as above; the step's context outlives the run.
        let rt = parts.rt.map(|p| unsafe { &mut *p });
        // SAFETY: RawTerm is repr(transparent) over u64.
        let args: &[RawTerm] = unsafe { std::slice::from_raw_parts(args as *const RawTerm, n) };
        let mut cx = BuiltinCx {
            heap,
            env,
            reds: &mut r,
            rt,
            request: None,
            dict_slot: extra,
            user_native: p.ext.user_native,
        };
        let v = nf(&mut cx, args);
        // The common case first, testing the request's tag alone: copying
        // the whole `Option<Request>` just after the built-in wrote its tag
        // byte stalls on store forwarding (a third of this helper's time
        // in `lists`).
        if cx.request.is_none() {
            if let Ok(t) = &v {
                return Ok(t.bits());
            }
        }
        Err((v, cx.request))
    }));
    let tail = slot & TAIL as u64 != 0;
    let slot = slot as u8;
    let value = match outcome {
        Ok(Ok(v)) => {
            return Returned {
                value: v,
                reds: r as i64,
            }
        }
        Ok(Err((Ok(v), None))) => {
            return Returned {
                value: v.bits(),
                reds: r as i64,
            }
        }
        Ok(Err((Ok(g), Some(Request::Redirect)))) => {
            ctx.pending = Pending::Redirect {
                g: g.bits(),
                slot,
                argc: argc as u8,
                tail,
            };
            0
        }
        Ok(Err((Ok(v), Some(q)))) => {
            ctx.pending = Pending::Request {
                value: v.bits(),
                slot,
                q,
                tail,
            };
            0
        }
        Ok(Err((Err(e), _))) => {
            ctx.pending = Pending::Raise(e, p);
            0
        }
        Err(payload) => {
            ctx.pending = Pending::Panic(payload);
            0
        }
    };
    Returned {
        value,
        reds: r as i64,
    }
}

/// `[x0 x1 ...]` of the `n` words at `items` (`MakeVector` where the
/// young block has no room): the new vector, or 0 when the heap cannot
/// grow (the interpreter then runs the instruction: nothing happened).
///
/// # Safety
/// As for [`call`]; `items` points to `n` terms of the process heap (or
/// permanent), readable.
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) unsafe extern "C" fn vector(ctx: *mut CompiledCx, items: *const u64, n: u64) -> u64 {
    // SAFETY: per the contract.
    let heap = unsafe { &*(*ctx).vm.heap };
    // SAFETY: per the contract; a `RawTerm` is a `u64` (transparent).
    let items = unsafe { std::slice::from_raw_parts(items as *const RawTerm, n as usize) };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: every item is a valid word of this heap (or permanent).
        unsafe { heap.vector_raw(items).bits() }
    }))
    .unwrap_or(0)
}

/// `(cons x y)` for a list `y` (a cons cell or `()`): the new cell, or 0
/// when `y` is not a list or the heap cannot grow (the interpreter then
/// runs the instruction: nothing happened).
///
/// # Safety
/// As for [`call`]; `x` and `y` are terms of the process heap.
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) unsafe extern "C" fn cons(ctx: *mut CompiledCx, x: u64, y: u64) -> u64 {
    if !(tag::is_cons(y) || y == tag::EMPTY_LIST) {
        return 0;
    }
    // SAFETY: per the contract.
    let heap = unsafe { &*(*ctx).vm.heap };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: both are valid words of this heap (or permanent).
        unsafe { heap.cons_raw(tag::raw(x), tag::raw(y)).bits() }
    }))
    .unwrap_or(0)
}

/// A float of the `f64` bits `bits` (a float path's result, `float.rs`,
/// where the young block has no room): the new float, or 0 when the heap
/// cannot grow (the interpreter then runs the instruction: nothing
/// happened).
///
/// # Safety
/// As for [`call`].
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) unsafe extern "C" fn float(ctx: *mut CompiledCx, bits: u64) -> u64 {
    // SAFETY: per the contract.
    let heap = unsafe { &*(*ctx).vm.heap };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        heap.float(f64::from_bits(bits)).bits()
    }))
    .unwrap_or(0)
}
