//! Two tiers of machine code: quick first, optimised once it pays.
//!
//! Cranelift's backtracking register allocator and its optimiser make
//! the best code, and took 0.9-1.4 ms for `fib` or `map-eager` in a
//! running program (caches full of its data): past the millisecond a
//! function may take from hot to compiled. Its single-pass allocator
//! without the optimiser compiles the same functions in 40-60% of that
//! time, and its code runs slower (`fib` and `loop` nearly twice as
//! slow; `lists` 13%). So, as JITs with tiers do:
//!
//! 1. A function found hot is compiled with the quick settings
//!    (`Codegen::isa_quick`), each arity of it on its own, and marked
//!    as quick (`JitSlot::quick`, a bit per arity). A leaf (no loop, no
//!    call of itself) is compiled optimised at once: the interpreter
//!    never enters one, so its entries never say it pays, and leaves
//!    are small.
//! 2. The interpreter's entries into the code are counted anyway, for
//!    judging it (`JitSlot::judge`). The [`OPTIMISE_AFTER`]th entry
//!    (the second under `jit-eager`: [`optimise_after`]; or a later one,
//!    should another optimise be under way then) queues the optimise for
//!    the compiling thread (`queue.rs`; under `jit-eager` it runs on
//!    the worker that made the entry, back in the interpreter once the
//!    code has returned or left), which compiles each quick arity again with the
//!    optimiser and the backtracking allocator (`optimise`), with a code
//!    generator of its own, outside the compiler's lock; arities
//!    compiled from then on are optimised at once (`JitSlot::optimised`).
//! 3. The optimised code replaces the quick code in the slot: its
//!    address is published with Release, as a first compile's is, so a
//!    compiled caller's next call of it (it reads the address at each
//!    call) and the interpreter's next entry run the new code.
//! 4. The quick code may still be running on another worker (an
//!    activation of it, or a compiled caller about to call the address
//!    it read), so it is not freed then but *retired* ([`RETIRED`]).
//!    The code collector (`purge.rs`) takes the number of retired codes
//!    at the start of a cycle ([`retired`]) and, once every process has
//!    been visited (each between two slices, where no native frame
//!    lives, and after it the process reads the new address at its next
//!    call), frees that many ([`free_retired`]): code retired before the
//!    cycle began can no longer run. A cycle given up frees none; the
//!    next one does.
//!
//! A prototype given up (`RESTING`) before step 2 is optimised after it
//! is tried again (its entries count from 0 again); the code a rest
//! keeps is the one `rearm` publishes, optimised if step 2 ran.
//! `LONA_JIT_QUICK=0` turns the quick tier off (every compile is
//! optimised), for measuring.

use std::sync::atomic::Ordering::{Relaxed, Release};
use std::sync::atomic::{AtomicU64, AtomicU8};
use std::sync::Mutex;

use super::{
    compiler, generate, install, Codegen, JitSlot, CODE_BYTES, COMPILED, COMPILE_NS, RESTING,
};
use crate::bytecode::Proto;

/// Interpreter entries into a quick prototype's code after which it is
/// compiled optimised. An entry is a call from the interpreter, or the
/// re-entry after a slice ended in the code (a slice is 2,000
/// reductions), so five come within a fraction of a millisecond of
/// running, and never for a function found hot that then stops being
/// called. Measured (alternating runs against no quick tier): at 100,
/// `loop` and `fib` lost ~1 ms to slow code; at 5, `loop` +0.3 ms, `fib`
/// +0.2 ms (the second compile); at 2, no better than 5.
pub(super) const OPTIMISE_AFTER: u32 = 5;

/// [`OPTIMISE_AFTER`], but 2 under `jit-eager`: there every function is
/// compiled at its first call, and the tests that run programs in that
/// tier see both code generators' code (the first entry runs the quick
/// code, later ones the optimised; short programs never reach 100).
pub fn optimise_after() -> u32 {
    if super::tier() == super::Tier::JitEager {
        2
    } else {
        OPTIMISE_AFTER
    }
}

/// Arities compiled again, optimised, so far.
static OPTIMISED: AtomicU64 = AtomicU64::new(0);

/// Quick code replaced by optimised code and not yet freed (its address
/// and size, in the order retired); written under the compiler's lock
/// (`optimise`) and by the code collector (`free_retired`).
static RETIRED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Bytes of retired quick code at which a collection cycle is asked for
/// (else it waits for one started by code loading: `purge.rs`).
const POKE_AT: usize = 1 << 20;

/// Retired quick code freed so far, in bytes.
static RETIRED_FREED: AtomicU64 = AtomicU64::new(0);

/// Codes retired so far and not freed: the code collector's count at the
/// start of a cycle (before it visits any process), for [`free_retired`]
/// once it has visited them all.
pub(crate) fn retired() -> usize {
    RETIRED.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Frees the first `n` retired quick codes.
///
/// # Safety
/// They were retired before `n` was read ([`retired`]), and every
/// process has ended a slice since: no thread runs them or holds their
/// addresses (native frames never outlive a slice; a caller reads a
/// callee's address at each call, and the slot gives the new one).
pub(crate) unsafe fn free_retired(n: usize) {
    let codes: Vec<(usize, usize)> = {
        let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        let n = n.min(r.len());
        r.drain(..n).collect()
    };
    if codes.is_empty() {
        return;
    }
    let mut guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
    let Some(c) = guard.as_mut() else {
        return;
    };
    for (addr, size) in codes {
        // SAFETY: installed by `install`, retired once by `optimise`
        // (taken out of the slot then: no one else frees it); per the
        // caller, nothing runs it.
        unsafe { c.heap.free(addr as *const u8, size) };
        CODE_BYTES.fetch_sub(size, Relaxed);
        RETIRED_FREED.fetch_add(size as u64, Relaxed);
    }
}

/// Bytes of retired quick code freed so far (`jit::stats`).
pub(super) fn retired_freed() -> u64 {
    RETIRED_FREED.load(Relaxed)
}

/// Arities compiled again, optimised, so far (`jit::stats`).
pub(super) fn optimised_count() -> u64 {
    OPTIMISED.load(Relaxed)
}

/// Whether functions are compiled quick first (`LONA_JIT_QUICK=0`: no).
pub fn quick_tier() -> bool {
    static ON: AtomicU8 = AtomicU8::new(u8::MAX);
    match ON.load(Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let on = std::env::var("LONA_JIT_QUICK").map_or(true, |v| v != "0");
            ON.store(on as u8, Relaxed);
            on
        }
    }
}

/// The optimiser's code generator (made at its first use; not warmed up
/// at node start: that took 2 ms of a core at every start, to save 0.2
/// ms of the first optimise), apart from the compiler's so that
/// optimising does not hold the compiler's lock.
static OWN: Mutex<Option<Codegen>> = Mutex::new(None);

impl JitSlot {
    /// Compiles each quick arity of `p` (whose slot this is) again,
    /// optimised, and publishes the new code in its place (steps 2-4
    /// above). An arity whose optimised compile fails keeps its quick
    /// code, for good.
    ///
    /// Called by the compiling thread, which holds `p`'s area pinned and
    /// counts as a VM outside any process while it works (`queue.rs`),
    /// or by a worker in the interpreter, between two instructions of a
    /// process that has just run `p`'s code in this slice: either way
    /// the code collector cannot free `p` meanwhile (it frees only what
    /// no process could reach since every process last ended a slice,
    /// and no cycle overlapping an unmanaged VM frees anything), so `p`
    /// and what its code refers to may be read without the compiler's
    /// lock.
    /// The translation and Cranelift's work use the optimiser's own code
    /// generator (one optimise at a time); the compiler's lock is taken
    /// only to take the quick arities and to install each new code, so a
    /// function found hot on another worker meanwhile is not kept
    /// waiting for a millisecond of optimising.
    #[cold]
    #[inline(never)]
    pub(super) fn optimise(&self, p: &'static Proto) {
        // Another optimise under way (of this function on another
        // worker, or of another): not now, at a later entry (`judge`
        // calls again while quick arities are left), rather than wait
        // out a millisecond of it in the middle of a slice.
        let mut own = match OWN.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        let t0 = std::time::Instant::now();
        let quick = {
            let guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
            // Given up meanwhile: not now (after its rest, its entries
            // count again from 0).
            if guard.is_none() || self.state.load(Relaxed) != COMPILED {
                return;
            }
            self.optimised.store(1, Relaxed);
            self.quick.swap(0, Relaxed)
        };
        if quick == 0 {
            // Another worker took them.
            return;
        }
        if own.is_none() {
            *own = Codegen::new().ok();
        }
        let Some(gen) = own.as_mut() else {
            return;
        };
        // Its arities compiled before (so this is no error).
        let arities = super::analysis::arities(p).unwrap_or_default();
        for (k, entry_pc, nregs) in arities {
            if quick & (1 << k) == 0 {
                continue;
            }
            let t1 = std::time::Instant::now();
            let made = generate(gen, p, (k, entry_pc, nregs), false);
            let mut guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
            let Some(c) = guard.as_mut() else {
                gen.ctx.clear();
                return;
            };
            let out = made.and_then(|m| install(&mut c.heap, gen, p, m));
            let m = match out {
                Ok(m) => m,
                Err(why) => {
                    if std::env::var_os("LONA_JIT_LOG").is_some() {
                        eprintln!("jit: not optimising {} (arity {k}): {why}", p.name);
                    }
                    continue;
                }
            };
            let a = &self.arity[k];
            let state = self.state.load(Relaxed);
            if state != COMPILED && state != RESTING {
                // Given up for good meanwhile: its code is kept, never
                // called again; this one was never published.
                // SAFETY: just installed, its address known to no one.
                unsafe { c.heap.free(m.addr as *const u8, m.size) };
                CODE_BYTES.fetch_sub(m.size, Relaxed);
                continue;
            }
            let quick_code = (a.code.load(Relaxed), a.size.load(Relaxed) as usize);
            a.code.store(m.addr, Relaxed);
            a.size.store(m.size as u32, Relaxed);
            if state == COMPILED {
                // Release: as a first compile publishes its code. (A
                // resting function's code is published by `rearm`, this
                // one now.)
                a.entry.store(m.addr, Release);
            }
            // After the new address is published: a cycle that counts it
            // visits every process after that (step 4 above).
            let waiting = {
                let mut r = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
                r.push(quick_code);
                r.iter().map(|c| c.1).sum::<usize>()
            };
            if waiting >= POKE_AT {
                // Enough to ask for a cycle, whose visits cost every
                // process a microsecond or so (asked again at each retire
                // while a given-up cycle leaves it waiting).
                lona_compiler::area::request_cycle();
            }
            OPTIMISED.fetch_add(1, Relaxed);
            if std::env::var_os("LONA_JIT_LOG").is_some() {
                eprintln!(
                    "jit: optimised {} (arity {k}) at {:#x}, {} bytes ({} µs)",
                    p.name,
                    m.addr,
                    m.size,
                    t1.elapsed().as_micros()
                );
            }
        }
        COMPILE_NS.fetch_add(
            t0.elapsed().as_nanos().min(u64::MAX as u128) as u64,
            Relaxed,
        );
    }

    /// Whether quick code at `addr` is retired, not yet freed (the
    /// tests).
    #[cfg(any(test, feature = "whitebox"))]
    pub fn is_retired(addr: usize) -> bool {
        RETIRED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|&(a, _)| a == addr)
    }

    /// Whether arity `argc`'s code is the quick tier's (the tests).
    #[cfg(any(test, feature = "whitebox"))]
    pub fn is_quick(&self, argc: usize) -> bool {
        self.quick.load(Relaxed) & (1 << argc) != 0
    }
}
