//! The compiling tier (`docs/jit.md`): hot functions become machine code
//! (Cranelift) that works on the interpreter's own state.
//!
//! # What is compiled (this first step)
//!
//! Each fixed arity of a prototype (`Proto`) of at most [`MAX_ARGS`]
//! arguments, on its own: the one whose call made the prototype hot, then
//! each other at its first call after that. The translator (`translate/`,
//! `how`) makes machine code
//! of moves, constants, jumps, small-integer arithmetic and comparison,
//! list and vector patterns, captured values, cons cells (inline), calls
//! and tail calls of itself, calls of other compiled functions (native
//! calls), of built-ins (`native.rs`, `intrinsic.rs`) and tail calls of
//! built-ins, returns; any other instruction is a side exit (the
//! interpreter finishes the frame from there), allowed where a loop, a
//! call of itself or a return is reachable from the entry without
//! passing one (`check`). Functions without a loop or a call of
//! themselves (leaves) are only called by compiled code; code that
//! leaves early on most entries is given up (`JitSlot::judge`).
//!
//! # The protocol between the tiers
//!
//! 1. The interpreter counts calls of, and self tail calls in, each
//!    prototype (`JitSlot::tick`); at [`threshold`] the prototype is
//!    queued for the compiling thread (`queue.rs`; a few hundred
//!    microseconds, once, off the workers, which go on interpreting it
//!    meanwhile), checked there and compiled, or marked never to be
//!    compiled. It is compiled quick first, and optimised once it has run
//!    a while (`optimise.rs`).
//! 2. Where the interpreter has just made a compiled prototype's frame
//!    current (a call it pushed, a self tail call it took), it enters the
//!    machine code (`enter`) with the frame's base, closure, arguments
//!    and reductions, and a `CompiledCx`: its frame stack's buffer and room,
//!    its register stack, `cur`.
//! 3. Machine code keeps registers in machine registers (Cranelift SSA)
//!    and charges a reduction where the interpreter's `safepoint!` would.
//!    A call of itself is a native call (arguments and reductions in
//!    machine registers, the reductions left coming back as a second
//!    return value); it writes nothing to the interpreter's stacks, but
//!    it first checks that they could take the callee's window and this
//!    frame, should the interpreter have to take over.
//! 4. The interpreter takes over, at the start of an instruction,
//!    whenever the machine code meets what it does not do itself: a
//!    number that is not a small integer or an overflow, a var that no
//!    longer holds this function, the last reduction of the slice, a full
//!    frame stack or register stack, native recursion past
//!    [`NATIVE_STACK`] bytes. The leaving activation writes its live
//!    registers to the register stack and its pc and base into `cur`, and
//!    returns 0 ("left"); each compiled caller on the way out writes its
//!    own live registers and its frame (at the place its native depth
//!    gives it) and returns 0 too. The interpreter then sets the frame
//!    stack's length, makes the leaver current and runs that instruction
//!    itself: the slow path, the raise, the collection and the yield are
//!    the interpreter's, unchanged.
//! 5. A return to a compiled caller is a native return of the value. A
//!    return from the activation the interpreter entered writes the value
//!    into the callee slot and pops the caller's frame as `Ret` does
//!    (never 0: no term word is 0); the interpreter makes that frame
//!    current and goes on.
//!
//! So reductions, preemption points, stack traces, errors and the
//! collector's roots are the interpreter's by construction (a collection
//! runs only in the interpreter, with every frame and register in
//! memory); `tests/jit.rs` and `lona`'s `tests/tiers.rs` compare the two
//! tiers.

#[cfg(feature = "jit")]
pub(crate) mod analysis;
#[cfg(feature = "jit")]
mod code_heap;
#[cfg(feature = "jit")]
pub(crate) mod compiler;

pub(crate) mod callout;
pub(crate) mod intrinsic;
#[cfg(feature = "jit")]
pub(crate) mod optimise;
#[cfg(feature = "jit")]
pub(crate) mod queue;
mod share;
#[cfg(feature = "jit")]
mod translate;
#[cfg(feature = "jit")]
mod warm;

pub use share::count_reductions;
pub(crate) use share::{add_all, add_compiled, counting};

#[cfg(feature = "jit")]
pub use queue::{set_background, settle};
#[cfg(feature = "jit")]
pub(crate) use queue::{started as compiles_started, wait_finished as wait_compiles};

/// Without the compiling tier no compile is ever started.
#[cfg(not(feature = "jit"))]
pub(crate) fn compiles_started() -> u64 {
    0
}

/// Without the compiling tier there is no compile to wait for.
#[cfg(not(feature = "jit"))]
pub(crate) fn wait_compiles(_n: u64, _timeout: std::time::Duration) -> bool {
    true
}

/// Whether functions found hot are compiled off the workers (the
/// default; `jit/queue.rs`). Without the compiling tier there is nothing
/// to compile.
#[cfg(not(feature = "jit"))]
pub fn set_background(_on: bool) {}

/// Waits until every compile queued so far is done (`jit/queue.rs`).
/// Without the compiling tier there is none.
#[cfg(not(feature = "jit"))]
pub fn settle() {}

/// Warms the code generator up on a thread of its own, once per OS
/// process, unless the tier is the interpreter's (`warm.rs`): the first
/// function found hot is then compiled as fast as any other.
pub(crate) fn warm_up() {
    #[cfg(feature = "jit")]
    warm::warm_up();
}

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::bytecode::Proto;
#[cfg(feature = "jit")]
use compiler::{compiler, Codegen, Compiler, OPTIMISED_INSTS, SELF};

/// The most native stack compiled calls may take below the interpreter's
/// frame before the interpreter takes the next call (and the native stack
/// unwinds to it): some thousands of calls, within any thread's stack
/// (a worker's is 16 MiB, `lona_runtime::DEFAULT_STACK_SIZE`; a test
/// thread's 2 MiB).
pub const NATIVE_STACK: usize = 256 << 10;

/// Which tier runs Lonala code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The interpreter only.
    Interp,
    /// Hot functions compiled (the default where the tier is built).
    Jit,
    /// Every function that can be compiled is, at its first call.
    JitEager,
}

impl Tier {
    /// The tier named `s` (`interp`, `jit`, `jit-eager`).
    pub fn parse(s: &str) -> Result<Tier, crate::TierError> {
        match s {
            "interp" => Ok(Tier::Interp),
            "jit" if cfg!(feature = "jit") => Ok(Tier::Jit),
            "jit-eager" if cfg!(feature = "jit") => Ok(Tier::JitEager),
            "jit" | "jit-eager" => Err(crate::TierError::NotBuilt(s.to_string())),
            _ => Err(crate::TierError::Unknown(s.to_string())),
        }
    }
}

/// The tier: 0 interp, 1 jit, 2 jit-eager; read at every tick.
static TIER: AtomicU8 = AtomicU8::new(u8::MAX);

/// Sets the node's tier (`lona run --tier`; `LONA_TIER`). Prototypes
/// already compiled stay compiled.
pub fn set_tier(t: Tier) {
    TIER.store(t as u8, Relaxed);
}

/// The tier in force: as set, else `LONA_TIER`, else `jit` where built.
pub fn tier() -> Tier {
    match TIER.load(Relaxed) {
        0 => Tier::Interp,
        1 => Tier::Jit,
        2 => Tier::JitEager,
        _ => {
            let t = std::env::var("LONA_TIER")
                .ok()
                .and_then(|s| Tier::parse(&s).ok())
                .unwrap_or(if cfg!(feature = "jit") {
                    Tier::Jit
                } else {
                    Tier::Interp
                });
            set_tier(t);
            t
        }
    }
}

static DUMP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static PERF_MAP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints each function as it is compiled (bytecode, Cranelift IR, machine
/// code) to standard error (`--jit-dump`; `LONA_JIT_DUMP=1` too).
pub fn set_dump(on: bool) {
    DUMP.store(on, Relaxed);
}

/// Appends each compiled function to `/tmp/perf-PID.map` for `perf`
/// (`--perf-map`; `LONA_PERF_MAP=1` too).
pub fn set_perf_map(on: bool) {
    PERF_MAP.store(on, Relaxed);
}

#[cfg(feature = "jit")]
fn dumping() -> bool {
    DUMP.load(Relaxed) || std::env::var_os("LONA_JIT_DUMP").is_some()
}

/// Records compiled code at `addr` (`len` bytes) in the perf map.
#[cfg(feature = "jit")]
fn perf_map(addr: usize, len: usize, name: &str) {
    if !(PERF_MAP.load(Relaxed) || std::env::var_os("LONA_PERF_MAP").is_some()) {
        return;
    }
    use std::io::Write;
    let path = format!("/tmp/perf-{}.map", std::process::id());
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Ok(mut f) = f {
        let _ = writeln!(f, "{addr:x} {len:x} lona:{name}");
    }
}

/// Calls and self tail calls after which a prototype is compiled
/// (`LONA_JIT_THRESHOLD`, default 1,000; `jit-eager`: 1).
pub fn threshold() -> u32 {
    static T: OnceLock<u32> = OnceLock::new();
    if tier() == Tier::JitEager {
        return 1;
    }
    *T.get_or_init(|| {
        std::env::var("LONA_JIT_THRESHOLD")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1000)
            .max(1)
    })
}

/// A call from compiled code of a function not compiled yet counts as
/// `threshold() / FROM_COMPILED` calls (`JitSlot::called_from_compiled`):
/// 16 such calls make it hot.
const FROM_COMPILED: u32 = 16;

/// Entries after which compiled code is judged (`JitSlot::judge`).
const JUDGE_AFTER: u32 = 1000;

/// A resting function's calls are counted in steps of this many
/// (`JitSlot::tick`).
const REST_SAMPLE: u32 = 64;

/// Times compiled code is given up and tried again before it is given up
/// for good.
const MAX_RESTS: u8 = 4;

/// Interpreter entries (calls and self tail calls, as [`threshold`]
/// counts them) a function given up `rests` times runs interpreted before
/// its code is tried again: ten times the threshold, four times longer
/// after each rest. Why code left early may pass: a function it calls
/// was not compiled yet (it is called from the interpreter, so it becomes
/// hot there) or the program moved on to other data. What does not pass
/// (a receive loop) costs a thousand entries of enter-and-leave per try,
/// ever rarer.
fn rest_length(rests: u8) -> u32 {
    threshold()
        .saturating_mul(10)
        .saturating_mul(1u32 << (2 * u32::from(rests.saturating_sub(1)).min(15)))
}

pub(crate) use crate::slot::{ArityCode, Entry, COLD, COMPILED, LEAF, NEVER, QUEUED, RESTING};
pub use crate::slot::{JitSlot, MAX_ARGS};

/// What compiled code returns: the value (0: it left) and the reductions
/// left; two integer words, returned in two registers by the C ABI as by
/// Cranelift's two return values.
#[repr(C)]
pub(crate) struct Returned {
    pub value: u64,
    pub reds: i64,
}

/// Runs the machine code `f` of a prototype of `args.len()` arguments for
/// the frame at `base` (its closure `me`, its arguments `args`), with
/// `reds` reductions.
///
/// # Safety
/// `f` is the code of the prototype of the frame `ctx.cur`, whose arity is
/// `args.len()`, at its entry; `ctx` describes the VM's stacks truly.
#[inline(always)]
pub(crate) unsafe fn enter(
    f: Entry,
    ctx: &mut CompiledCx,
    base: u64,
    reds: i64,
    me: u64,
    args: &[u64],
) -> Returned {
    type W = u64;
    type C = *mut CompiledCx;
    let c: C = ctx;
    // SAFETY: per the contract, `f` was compiled with exactly this
    // signature (`translate::compile`: five words, then the arguments;
    // two words back).
    unsafe {
        match *args {
            [] => std::mem::transmute::<usize, unsafe extern "C" fn(C, W, W, i64, W) -> Returned>(
                f,
            )(c, base, 0, reds, me),
            [a] => {
                std::mem::transmute::<usize, unsafe extern "C" fn(C, W, W, i64, W, W) -> Returned>(
                    f,
                )(c, base, 0, reds, me, a)
            }
            [a, b] => std::mem::transmute::<
                usize,
                unsafe extern "C" fn(C, W, W, i64, W, W, W) -> Returned,
            >(f)(c, base, 0, reds, me, a, b),
            [a, b, d] => std::mem::transmute::<
                usize,
                unsafe extern "C" fn(C, W, W, i64, W, W, W, W) -> Returned,
            >(f)(c, base, 0, reds, me, a, b, d),
            [a, b, d, e] => std::mem::transmute::<
                usize,
                unsafe extern "C" fn(C, W, W, i64, W, W, W, W, W) -> Returned,
            >(f)(c, base, 0, reds, me, a, b, d, e),
            [a, b, d, e, g] => std::mem::transmute::<
                usize,
                unsafe extern "C" fn(C, W, W, i64, W, W, W, W, W, W) -> Returned,
            >(f)(c, base, 0, reds, me, a, b, d, e, g),
            [a, b, d, e, g, h] => std::mem::transmute::<
                usize,
                unsafe extern "C" fn(C, W, W, i64, W, W, W, W, W, W, W) -> Returned,
            >(f)(c, base, 0, reds, me, a, b, d, e, g, h),
            _ => unreachable!("at most MAX_ARGS arguments are compiled"),
        }
    }
}

impl JitSlot {
    /// Gives the built-in named `name` its intrinsic, if it has one
    /// (`builtins::def`, before the prototype is shared).
    pub(crate) fn set_intrinsic(&self, name: &str) {
        if let Some((f, argc)) = intrinsic::of(name) {
            // Compiled callers check the shape of the arity they call
            // (a built-in has no code: its `entry` stays 0).
            self.arity[argc as usize].shape.store(argc as u32, Relaxed);
            self.intrinsic_argc.store(argc, Relaxed);
            self.intrinsic.store(f as usize, Relaxed);
        }
    }

    /// The built-in's intrinsic and its arity, if any.
    #[cfg_attr(not(feature = "jit"), allow(dead_code))]
    pub(crate) fn intrinsic(&self) -> Option<(intrinsic::Intrinsic, usize)> {
        let f = self.intrinsic.load(Relaxed);
        (f != 0).then(|| {
            // SAFETY: only `set_intrinsic` stores a non-zero value: an
            // `Intrinsic`'s address.
            let f = unsafe { std::mem::transmute::<usize, intrinsic::Intrinsic>(f) };
            (f, self.intrinsic_argc.load(Relaxed) as usize)
        })
    }

    /// Whether the interpreter enters this code (compiled, and no arity
    /// a leaf): only such code is judged (`judge`) when it was the one to
    /// leave. (Which arity left is not known there: a prototype with a
    /// leaf arity is taken for a leaf, and its leaves are the entered
    /// function's doing, as a leaf's are.)
    pub(crate) fn entered_by_interpreter(&self) -> bool {
        self.state.load(Relaxed) == COMPILED && self.leaves.load(Relaxed) == 0
    }

    /// The tier state by name (`introspect::tier_state`).
    pub(crate) fn state_name(&self) -> &'static str {
        match self.state.load(Relaxed) {
            COLD => "cold",
            COMPILED => "compiled",
            LEAF => "leaf",
            RESTING => "resting",
            QUEUED => "queued",
            _ => "never",
        }
    }

    /// The compiled code of arity `argc`, if any.
    #[inline(always)]
    pub(crate) fn entry(&self, argc: usize) -> Option<Entry> {
        // Acquire: pairs with the Release store that publishes the address
        // after the code is finished (`compile`).
        let e = self
            .arity
            .get(argc)?
            .entry
            .load(std::sync::atomic::Ordering::Acquire);
        (e != 0).then_some(e)
    }

    /// The code of arity `argc` the interpreter enters, if any (not a
    /// leaf's).
    #[inline(always)]
    fn entered(&self, argc: usize) -> Option<Entry> {
        // After the entry's Acquire load: `leaves` was written before the
        // entry was published. (`entry` gave code: `argc <= MAX_ARGS`.)
        let e = self.entry(argc)?;
        (self.leaves.load(Relaxed) & (1 << argc) == 0).then_some(e)
    }

    /// Counts one iteration of a loop of `p` (the interpreter has just
    /// taken a `Loop` to its head `pc`) as a call, so that a function
    /// called once that loops long is compiled too; returns the code to
    /// go on in from the head (`translate/resume.rs`) and its arity's
    /// number of arguments, if there is code the interpreter enters.
    /// The arity is that of the fixed entry closest before `pc`: a guess
    /// the code checks (a pc that is no loop head of its arity leaves at
    /// once).
    #[inline]
    pub(crate) fn loop_tick(&self, p: &'static Proto, pc: u32) -> Option<(Entry, usize)> {
        match self.state.load(Relaxed) {
            COLD => {
                let h = self.heat.load(Relaxed).saturating_add(1);
                self.heat.store(h, Relaxed);
                if h < threshold() {
                    return None;
                }
            }
            COMPILED | LEAF | RESTING => {}
            _ => return None,
        }
        let (argc, at) = p
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.pc != u32::MAX && e.pc <= pc)
            .max_by_key(|(_, e)| e.pc)?;
        if p.variadic.is_some_and(|(_, v)| v.pc <= pc && v.pc > at.pc) || argc > MAX_ARGS {
            return None;
        }
        Some((self.tick(p, argc)?, argc))
    }

    /// The arities with code (compiled, not given up or freed).
    pub(crate) fn compiled_arities(&self) -> Vec<usize> {
        (0..=MAX_ARGS)
            .filter(|&k| self.entry(k).is_some())
            .collect()
    }

    /// Whether any arity has code (the tests).
    #[cfg(all(any(test, feature = "whitebox"), feature = "jit"))]
    pub(crate) fn any_entry(&self) -> bool {
        (0..=MAX_ARGS).any(|k| self.entry(k).is_some())
    }

    /// Counts one entry of the interpreter into this code, which `left`
    /// it before the slice's end (a side exit, a slow path, a call the
    /// code does not make itself). After [`JUDGE_AFTER`] entries, code
    /// that left early on most of them is given up: the interpreter runs
    /// the function from then on (entering and leaving machine code on
    /// every call costs more than it gains: a receive loop, a loop
    /// calling a function that stays interpreted), and compiled callers
    /// no longer call it natively.
    ///
    /// From its `optimise::optimise_after()`th entry on, quick code is
    /// compiled again, optimised (`optimise.rs`; at once unless another
    /// optimise is under way, else at a later entry).
    #[inline]
    pub(crate) fn judge(&self, p: &'static Proto, left: bool) {
        if self.state.load(Relaxed) != COMPILED {
            return;
        }
        let e = self.entries.load(Relaxed);
        #[cfg(feature = "jit")]
        if self.quick.load(Relaxed) != 0 && e + 1 >= optimise::optimise_after() {
            self.optimise_soon(p);
        }
        if e > JUDGE_AFTER {
            return;
        }
        self.entries.store(e + 1, Relaxed);
        let b = self.early.load(Relaxed) + left as u32;
        self.early.store(b, Relaxed);
        if e + 1 == JUDGE_AFTER && 2 * b > JUDGE_AFTER {
            self.give_up(p, b);
        }
    }

    /// Gives the code up: for now (`RESTING`), or for good after
    /// [`MAX_RESTS`] tries.
    #[cold]
    #[inline(never)]
    fn give_up(&self, p: &Proto, early: u32) {
        // Under the compiler's lock: `free_codes` and `rearm` change the
        // state under it too. (Without the tier no code is ever compiled,
        // so no slot is `COMPILED` or `RESTING`.)
        #[cfg(feature = "jit")]
        let _guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
        if self.state.load(Relaxed) != COMPILED {
            return;
        }
        let rests = self.rests.load(Relaxed) + 1;
        self.rests.store(rests, Relaxed);
        self.heat.store(0, Relaxed);
        self.state
            .store(if rests > MAX_RESTS { NEVER } else { RESTING }, Relaxed);
        // Callers read the address with Acquire (`entry`); a running
        // activation keeps its code (only `free_codes` frees it).
        for a in &self.arity {
            a.entry.store(0, std::sync::atomic::Ordering::Release);
        }
        GIVEN_UP.fetch_add(1, Relaxed);
        if std::env::var_os("LONA_JIT_LOG").is_some() {
            let pc = self.left_at.load(Relaxed) as usize;
            eprintln!(
                "jit: giving up {}: it left early {early} times in {JUDGE_AFTER} entries, last at pc {pc} ({}){}",
                p.name,
                p.code.get(pc).map_or_else(|| "?".to_string(), |i| format!("{i:?}")),
                if rests > MAX_RESTS {
                    " (for good)"
                } else {
                    " (for now)"
                }
            );
        }
    }

    /// Ends a rest: the code is called again and judged afresh, unless it
    /// was freed meanwhile (`free_codes` leaves `NEVER`).
    #[cold]
    #[inline(never)]
    fn rearm(&self, p: &Proto, argc: usize) -> Option<Entry> {
        #[cfg(feature = "jit")]
        let _guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
        let kept = self.arity.iter().any(|a| a.code.load(Relaxed) != 0);
        if self.state.load(Relaxed) != RESTING || !kept {
            return self.entered(argc);
        }
        self.entries.store(0, Relaxed);
        self.early.store(0, Relaxed);
        self.state.store(COMPILED, Relaxed);
        for a in &self.arity {
            // Release: as when the code was first installed (`compile`).
            a.entry
                .store(a.code.load(Relaxed), std::sync::atomic::Ordering::Release);
        }
        REARMED.fetch_add(1, Relaxed);
        if std::env::var_os("LONA_JIT_LOG").is_some() {
            eprintln!("jit: trying {} again", p.name);
        }
        self.entered(argc)
    }

    /// Counts one call of `p` (whose slot this is) with `argc` arguments;
    /// compiles it when hot. Returns the code of that arity for the
    /// interpreter to enter, if it is compiled now or was already.
    #[inline(always)]
    pub(crate) fn tick(&self, p: &'static Proto, argc: usize) -> Option<Entry> {
        match self.state.load(Relaxed) {
            COLD => {
                // Saturating: `called_from_compiled` adds in steps.
                let h = self.heat.load(Relaxed).saturating_add(1);
                self.heat.store(h, Relaxed);
                if h >= threshold() {
                    self.hot(p, argc)
                } else {
                    None
                }
            }
            COMPILED => self.entered(argc).or_else(|| self.untried(p, argc)),
            LEAF => self.untried(p, argc),
            RESTING => self.resting(p, argc),
            _ => None,
        }
    }

    /// A call of an arity without code to enter, of a compiled
    /// prototype: the arity is compiled now if it never was tried.
    #[inline(always)]
    fn untried(&self, p: &'static Proto, argc: usize) -> Option<Entry> {
        if argc <= MAX_ARGS && self.tried.load(Relaxed) & (1 << argc) == 0 {
            self.hot(p, argc)
        } else {
            None
        }
    }

    /// A call of this cold prototype that compiled code could not make
    /// natively (it has no code yet): it counts as [`FROM_COMPILED`] of
    /// the interpreter's calls. The caller leaves at each such call, and
    /// with the callee's thousand calls counted one by one it left on
    /// most of its entries and was given up first (`(map count xs)`:
    /// `map-eager` compiled, `count` not yet).
    #[cold]
    pub(crate) fn called_from_compiled(&self) {
        if self.state.load(Relaxed) == COLD {
            let h = self.heat.load(Relaxed);
            self.heat.store(
                h.saturating_add((threshold() / FROM_COMPILED).max(1)),
                Relaxed,
            );
        }
    }

    /// A call of a resting function (`tick`): out of line, for the
    /// interpreter's call paths inline `tick`.
    #[cold]
    #[inline(never)]
    fn resting(&self, p: &'static Proto, argc: usize) -> Option<Entry> {
        // A rest is long (thousands of calls, on every worker):
        // the slot's shared count is written at one call in
        // `REST_SAMPLE` of this thread's (written at each, the
        // slot's cache line went back and forth between the
        // workers: `pairs` 133 -> 180 ms).
        thread_local! {
            static CALLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
        }
        let n = CALLS.with(|c| {
            let n = c.get().wrapping_add(1);
            c.set(n);
            n
        });
        if !n.is_multiple_of(REST_SAMPLE) {
            return None;
        }
        let h = self.heat.load(Relaxed) + REST_SAMPLE;
        self.heat.store(h, Relaxed);
        if h >= rest_length(self.rests.load(Relaxed)) {
            self.rearm(p, argc)
        } else {
            None
        }
    }

    /// Arity `argc` found hot: the prototype's first (`COLD`) or another
    /// one first called after that (`untried`).
    #[cold]
    #[inline(never)]
    fn hot(&self, p: &'static Proto, argc: usize) -> Option<Entry> {
        if tier() == Tier::Interp {
            // A cold prototype stays interpreted for good; code made
            // before `--tier interp` was set stays, and no more is made.
            let _ = self.state.compare_exchange(COLD, NEVER, Relaxed, Relaxed);
            return None;
        }
        #[cfg(feature = "jit")]
        if queue::background() {
            // Claimed by one worker (`queue.rs`, step 1); the others, and
            // this one, interpret the function meanwhile.
            let claimed = if self.state.load(Relaxed) == COLD {
                self.state
                    .compare_exchange(COLD, QUEUED, Relaxed, Relaxed)
                    .is_ok()
            } else {
                // An untried arity of compiled code (`untried`: at most
                // `MAX_ARGS`).
                let bit = 1u8 << argc;
                self.queued.fetch_or(bit, Relaxed) & bit == 0
            };
            if !claimed || queue::push(p, queue::Job::Compile(argc)) {
                return None;
            }
        }
        compile(p, argc)
    }

    /// Quick code to be compiled again, optimised: by the compiling
    /// thread (once: the first worker to claim it queues it), or here.
    #[cfg(feature = "jit")]
    #[cold]
    #[inline(never)]
    fn optimise_soon(&self, p: &'static Proto) {
        if queue::background() {
            let bit = queue::OPTIMISE_BIT;
            // Queued already (each interpreter entry comes here until the
            // thread is done): a load, not a write to the slot's line
            // that every worker calling the function reads.
            if self.queued.load(Relaxed) & bit != 0 {
                return;
            }
            if self.queued.fetch_or(bit, Relaxed) & bit != 0 || queue::push(p, queue::Job::Optimise)
            {
                return;
            }
            self.queued.fetch_and(!bit, Relaxed);
        }
        self.optimise(p);
    }
}

/// `CompiledCx::resume` when the code is entered at its entry.
pub(crate) const NO_RESUME: u64 = u64::MAX;

/// What compiled code and the interpreter share while it runs. Machine
/// code reads and writes it at the offsets `translate/mod.rs` names, so its
/// layout is fixed (`repr(C)`), and so is `frame::Frame`'s.
#[repr(C)]
pub(crate) struct CompiledCx {
    /// The lowest native stack address a compiled call may start from.
    pub sp_limit: u64,
    /// The frame stack's buffer and its first free frame at the entry.
    /// Compiled callers' frames are written only when the interpreter is
    /// to take over (a leave): the caller at native depth `d` writes its
    /// frame at `frames_top + d`, which must be below the capacity (`d <
    /// frames_room`). A return to the interpreter pops one frame (moves
    /// `frames_top` down); the interpreter sets the vector's length
    /// afterwards.
    pub frames: *mut u8,
    pub frames_top: *mut u8,
    pub frames_room: u64,
    /// The register stack: its words and how many (it does not move or
    /// grow while machine code runs).
    pub stack: *mut u64,
    pub stack_len: u64,
    /// The current frame (`Vm::cur`): at a leave, the leaver's pc and
    /// base are written into it.
    pub cur: crate::frame::Frame,
    /// The native depth of the activation that left.
    pub leave_depth: u64,
    /// Whether `cur`'s prototype and register count have been set to the
    /// leaver's (by the innermost call of another function on the way
    /// out; until then they are the entered function's).
    pub leaver_named: u64,
    /// The process heap's allocation cursor and its end
    /// (`Heap::bump_cursor`): cons cells are allocated inline.
    pub htop: *mut *mut u64,
    pub stop: *const *mut u64,
    /// The heap's overflow chunk's cursor and end
    /// (`Heap::overflow_cursor`): where the young block is full, objects
    /// are bumped from the chunk inline too, as the heap's slow path does.
    pub ovf_top: *mut *mut u64,
    pub ovf_end: *const *mut u64,
    /// Where the code is to go on instead of its entry: the pc of a
    /// loop's head (`translate/resume.rs`), or `NO_RESUME`. Set by the
    /// interpreter, cleared by the code as it takes it.
    pub resume: u64,
    /// What a built-in called from compiled code needs of the VM
    /// (`native.rs`), and what it left for the interpreter to finish.
    pub vm: callout::VmParts,
    pub pending: callout::Pending,
}

/// Byte offsets in [`CompiledCx`] and in a frame, for the translator.
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) mod layout {
    pub const SP_LIMIT: i32 = 0;
    pub const FRAMES: i32 = 8;
    pub const FRAMES_TOP: i32 = 16;
    pub const FRAMES_ROOM: i32 = 24;
    pub const STACK: i32 = 32;
    pub const STACK_LEN: i32 = 40;
    pub const CUR: i32 = 48;
    pub const LEAVE_DEPTH: i32 = 72;
    pub const LEAVER_NAMED: i32 = 80;
    pub const HTOP: i32 = 88;
    pub const STOP: i32 = 96;
    pub const OVF_TOP: i32 = 104;
    pub const OVF_END: i32 = 112;
    pub const RESUME: i32 = 120;
    /// In a frame: proto (8 bytes), pc, base, nregs (4 each), padding.
    pub const F_PROTO: i32 = 0;
    pub const F_PC: i32 = 8;
    pub const F_BASE: i32 = 12;
    pub const F_NREGS: i32 = 16;
    pub const FRAME_SIZE: i64 = 24;
    /// In a prototype: the address of its code of `argc` arguments (0:
    /// not compiled) and that code's shape (`JitSlot`, `ArityCode`);
    /// `argc` at most `MAX_ARGS`.
    pub const fn p_entry(argc: usize) -> i32 {
        p_arity(argc) + std::mem::offset_of!(super::ArityCode, entry) as i32
    }
    pub const fn p_shape(argc: usize) -> i32 {
        p_arity(argc) + std::mem::offset_of!(super::ArityCode, shape) as i32
    }
    const fn p_arity(argc: usize) -> i32 {
        assert!(argc <= super::MAX_ARGS);
        P_JIT
            + std::mem::offset_of!(super::JitSlot, arity) as i32
            + (argc * std::mem::size_of::<super::ArityCode>()) as i32
    }
    pub const P_INTRINSIC: i32 = P_JIT + std::mem::offset_of!(super::JitSlot, intrinsic) as i32;
    const P_JIT: i32 = (std::mem::offset_of!(crate::bytecode::Proto, ext)
        + std::mem::offset_of!(crate::bytecode::ProtoExt, jit)) as i32;
}

const _: () = {
    use layout::*;
    use std::mem::offset_of;
    assert!(offset_of!(CompiledCx, sp_limit) == SP_LIMIT as usize);
    assert!(offset_of!(CompiledCx, frames) == FRAMES as usize);
    assert!(offset_of!(CompiledCx, frames_top) == FRAMES_TOP as usize);
    assert!(offset_of!(CompiledCx, frames_room) == FRAMES_ROOM as usize);
    assert!(offset_of!(CompiledCx, stack) == STACK as usize);
    assert!(offset_of!(CompiledCx, stack_len) == STACK_LEN as usize);
    assert!(offset_of!(CompiledCx, cur) == CUR as usize);
    assert!(offset_of!(CompiledCx, leave_depth) == LEAVE_DEPTH as usize);
    assert!(offset_of!(CompiledCx, leaver_named) == LEAVER_NAMED as usize);
    assert!(offset_of!(CompiledCx, htop) == HTOP as usize);
    assert!(offset_of!(CompiledCx, stop) == STOP as usize);
    assert!(offset_of!(CompiledCx, ovf_top) == OVF_TOP as usize);
    assert!(offset_of!(CompiledCx, ovf_end) == OVF_END as usize);
    assert!(offset_of!(CompiledCx, resume) == RESUME as usize);
};

#[cfg(not(feature = "jit"))]
pub(crate) fn compile(p: &'static Proto, _argc: usize) -> Option<Entry> {
    p.ext.jit.state.store(NEVER, Relaxed);
    None
}

/// [`free_codes`] of one prototype (tests).
///
/// # Safety
/// As for [`free_codes`].
#[cfg(all(feature = "jit", any(test, feature = "whitebox")))]
pub(crate) unsafe fn free_code(p: &Proto) {
    // SAFETY: per the caller.
    unsafe { free_codes(&[p as *const Proto]) }
}

/// Frees the machine code of each of `ps`, if it has any, for good, under
/// one taking of the compiler's lock (the code collector frees thousands
/// at once while workers compile): a slot then says
/// it has none and will never be compiled (`entry` 0, never compiled
/// again), and the memory goes to other code (`code.rs`). For the code
/// collector (`docs/jit.md`, section 7), which frees a prototype's code
/// with the prototype.
///
/// # Safety
/// Each pointer is a live prototype; no thread runs its machine code or will enter it: no activation of
/// it is on any native stack, and no thread holds its address (read from
/// the slot) to call it. The code collector frees only a prototype no
/// process can reach, once every process has passed the end of a slice
/// since (native frames never outlive a slice: section 11, I2; a
/// compiled caller reads a callee's address at each call).
#[cfg(feature = "jit")]
pub(crate) unsafe fn free_codes(ps: &[*const Proto]) {
    // Under the compiler's lock: a compile of one of them now would see
    // `NEVER`; one before has installed its code.
    let mut guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
    for p in ps {
        // SAFETY: per the caller, alive.
        let slot = unsafe { &(**p).ext.jit };
        slot.state.store(NEVER, Relaxed);
        slot.quick.store(0, Relaxed);
        for a in &slot.arity {
            a.entry.store(0, std::sync::atomic::Ordering::Release);
            let addr = a.code.swap(0, Relaxed);
            let size = a.size.swap(0, Relaxed) as usize;
            if addr == 0 {
                continue;
            }
            if let Some(c) = guard.as_mut() {
                // SAFETY: `addr` and `size` are what `install` allocated
                // for this arity (taken out of the slot: freed once); the
                // caller's promise that nothing runs it. (Quick code it
                // replaced is not here: `optimise.rs` retired it.)
                unsafe { c.heap.free(addr as *const u8, size) };
                CODE_BYTES.fetch_sub(size, Relaxed);
            }
        }
    }
}

#[cfg(feature = "jit")]
pub(crate) use optimise::{free_retired, retired};

/// Without the compiling tier no code is retired.
#[cfg(not(feature = "jit"))]
pub(crate) fn retired() -> usize {
    0
}

/// Without the compiling tier no code is retired.
///
/// # Safety
/// None needed; as the tier's.
#[cfg(not(feature = "jit"))]
pub(crate) unsafe fn free_retired(_n: usize) {}

/// Without the compiling tier there is no machine code to free.
///
/// # Safety
/// None needed; as the tier's.
#[cfg(not(feature = "jit"))]
pub(crate) unsafe fn free_codes(_ps: &[*const Proto]) {}

/// Bytes of live machine code (compiled and not freed by [`free_codes`]).
pub(crate) fn code_bytes() -> usize {
    CODE_BYTES.load(Relaxed)
}

static CODE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Compiles arity `argc` of `p` if it can be (once: later callers see
/// the result): the arity whose call found the prototype hot (`COLD`), or
/// one first called after that (`COMPILED`, `LEAF`; `JitSlot::untried`).
/// A prototype found hot through an arity that is not compiled (a
/// variadic one) has all its fixed arities compiled. Returns the code of
/// arity `argc` for the interpreter to enter, if any.
///
/// One arity at a time: a function becomes compiled within a millisecond
/// of becoming hot (`map`'s two arities took 2.8 ms together), and an
/// arity nobody calls costs nothing.
#[cfg(feature = "jit")]
pub(crate) fn compile(p: &'static Proto, argc: usize) -> Option<Entry> {
    let slot = &p.ext.jit;
    // From here: the wait for the lock (another compile, the warming up)
    // counts as time from hot to installed.
    let t0 = std::time::Instant::now();
    let mut guard = compiler().lock().unwrap_or_else(|e| e.into_inner());
    let locked = std::time::Instant::now();
    let first = match slot.state.load(Relaxed) {
        COLD | QUEUED => true,
        COMPILED | LEAF => {
            if argc > MAX_ARGS || slot.tried.load(Relaxed) & (1 << argc) != 0 {
                return slot.entered(argc);
            }
            false
        }
        _ => return None,
    };
    let Some(c) = guard.as_mut() else {
        slot.state.store(NEVER, Relaxed);
        return None;
    };
    let arities = match analysis::arities(p) {
        Ok(a) => a,
        Err(why) => {
            refuse(p, &why);
            return None;
        }
    };
    let tried = slot.tried.load(Relaxed);
    let hot: Vec<_> = arities.iter().copied().filter(|a| a.0 == argc).collect();
    let arities = if hot.is_empty() && first {
        arities
    } else {
        hot
    };
    let (mut made, mut why, mut leaves) = (0, Vec::new(), slot.leaves.load(Relaxed));
    let mut now_tried = tried | if argc <= MAX_ARGS { 1 << argc } else { 0 };
    for (k, entry_pc, nregs) in arities {
        now_tried |= 1 << k;
        // A panic in the code generator (a bug: Cranelift's verifier,
        // say) must not end the process that found the function hot: the
        // arity stays interpreted. The context is reset for the next
        // compile.
        let t1 = std::time::Instant::now();
        let quick = optimise::quick_tier() && slot.optimised.load(Relaxed) == 0;
        let out = compile_arity(c, p, (k, entry_pc, nregs), quick);
        let us = t1.elapsed().as_micros();
        match out {
            Ok(m) => {
                let a = &slot.arity[k];
                a.shape.store(k as u32 | nregs << 8, Relaxed);
                a.code.store(m.addr, Relaxed);
                a.size.store(m.size as u32, Relaxed);
                if m.leaf {
                    leaves |= 1 << k;
                }
                if m.quick {
                    slot.quick.fetch_or(1 << k, Relaxed);
                }
                // Counted here, at the first compile (not again when
                // `optimise` compiles the arity a second time).
                if m.typed_loop {
                    TYPED_LOOPS.fetch_add(1, Relaxed);
                }
                made += 1;
                if std::env::var_os("LONA_JIT_LOG").is_some() {
                    eprintln!(
                        "jit: compiled {} (arity {k}{}) at {:#x}, {} bytes ({us} µs; {} µs from hot)",
                        p.name,
                        if m.quick { ", quick" } else { "" },
                        m.addr,
                        m.size,
                        t0.elapsed().as_micros()
                    );
                }
            }
            Err(w) => why.push(format!("arity {k}: {w}")),
        }
    }
    let ns = |t: std::time::Instant| t.elapsed().as_nanos().min(u64::MAX as u128) as u64;
    COMPILE_NS.fetch_add(ns(locked), Relaxed);
    COMPILE_NS_MAX.fetch_max(ns(t0), Relaxed);
    slot.tried.store(now_tried, Relaxed);
    if made == 0 && first {
        refuse(p, &why.join("; "));
        return None;
    }
    if std::env::var_os("LONA_JIT_LOG").is_some() {
        for w in &why {
            eprintln!("jit: not compiling {} ({w})", p.name);
        }
    }
    if made == 0 {
        return None;
    }
    slot.leaves.store(leaves, Relaxed);
    let mut coded = 0u8;
    for (k, a) in slot.arity.iter().enumerate() {
        let code = a.code.load(Relaxed);
        if code != 0 {
            coded |= 1 << k;
        }
        // Release: a worker that loads the address (Acquire, `entry`)
        // sees the finished code, its shape and the leaves. (Arities
        // compiled before are stored again, unchanged.)
        a.entry.store(code, std::sync::atomic::Ordering::Release);
    }
    // A leaf while every arity with code is one.
    slot.state
        .store(if coded & !leaves == 0 { LEAF } else { COMPILED }, Relaxed);
    if first {
        COMPILED_COUNT.fetch_add(1, Relaxed);
    }
    slot.entered(argc)
}

/// Compiles arity `arity` (`(argc, entry_pc, nregs)`) of `p` in `c`,
/// with the quick tier's settings if `quick` (`translate::compile`). A
/// panic in the code generator (a bug: Cranelift's verifier, say) must
/// not end the process that found the function hot: it is an error (the
/// arity stays as it was), and the context is reset for the next compile.
#[cfg(feature = "jit")]
fn compile_arity(
    c: &mut Compiler,
    p: &'static Proto,
    arity: (usize, u32, u32),
    quick: bool,
) -> Result<Compiled, String> {
    let made = generate(&mut c.gen, p, arity, quick)?;
    install(&mut c.heap, &mut c.gen, p, made)
}

/// What [`compile_arity`] made: the code's address and size in the code
/// heap, whether the arity is a leaf, whether the code is quick.
#[cfg(feature = "jit")]
struct Compiled {
    addr: usize,
    size: usize,
    leaf: bool,
    quick: bool,
    typed_loop: bool,
}

/// Translates and compiles arity `arity` of `p` in `gen`, the machine
/// code left in its context for [`install`] (`translate::compile`). A
/// panic in the code generator (a bug: Cranelift's verifier, say) must
/// not end the process that found the function hot: it is an error (the
/// arity stays as it was), and the context is reset for the next compile.
#[cfg(feature = "jit")]
fn generate(
    gen: &mut Codegen,
    p: &'static Proto,
    arity: (usize, u32, u32),
    quick: bool,
) -> Result<translate::Made, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        translate::compile(gen, p, arity, quick)
    }))
    .unwrap_or_else(|_| {
        gen.reset();
        Err("the code generator panicked".into())
    })
}

/// Installs the code [`generate`] left in `gen`'s context (the
/// compiler's own or the optimiser's) into the code `heap` (the
/// compiler's, under its lock); the context is emptied either way.
#[cfg(feature = "jit")]
fn install(
    heap: &mut code_heap::CodeHeap,
    gen: &mut Codegen,
    p: &Proto,
    made: translate::Made,
) -> Result<Compiled, String> {
    let out = Compiler::install(heap, gen);
    gen.ctx.clear();
    let (addr, size) = out?;
    perf_map(addr, size, &p.name);
    Ok(Compiled {
        addr,
        size,
        leaf: made.leaf,
        quick: made.quick,
        typed_loop: made.typed_loop,
    })
}

/// `p` found hot stays interpreted, for good.
#[cfg(feature = "jit")]
fn refuse(p: &Proto, why: &str) {
    REFUSED_COUNT.fetch_add(1, Relaxed);
    if std::env::var_os("LONA_JIT_LOG").is_some() {
        eprintln!("jit: not compiling {}: {why}", p.name);
    }
    p.ext.jit.state.store(NEVER, Relaxed);
}

/// Prototypes compiled so far in this OS process.
static COMPILED_COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Compiled prototypes given up (`JitSlot::judge`).
static GIVEN_UP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Given-up prototypes tried again after their rest (`JitSlot::rearm`).
static REARMED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Functions compiled with a typed loop (`translate/facts.rs`).
pub(super) static TYPED_LOOPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Prototypes found hot that could not be compiled.
static REFUSED_COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Nanoseconds spent compiling (checks and refusals included), in all;
/// and at most from an arity found hot (or first called) to its code
/// installed, the wait for the compiler's lock included.
static COMPILE_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static COMPILE_NS_MAX: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What the compiling tier has done so far in this OS process
/// (`--jit-stats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Prototypes compiled.
    pub compiled: u64,
    /// Prototypes found hot that stay interpreted (`LONA_JIT_LOG=1` says
    /// why for each).
    pub refused: u64,
    /// Compiled prototypes given up because their code left early on most
    /// entries (the interpreter runs them again, for a rest).
    pub given_up: u64,
    /// Given-up prototypes whose code was tried again after a rest.
    pub rearmed: u64,
    /// Arities compiled quick first and compiled again, optimised, once
    /// they ran long enough (`LONA_JIT_QUICK`).
    pub optimised: u64,
    /// Bytes of the quick code they replaced freed so far (by the code
    /// collector, once no process can be running it).
    pub retired_freed: u64,
    /// Time spent compiling and checking, in all, in microseconds.
    pub compile_us: u64,
    /// The longest time from an arity found hot (or, after that, first
    /// called) to its code installed, in microseconds: the compile and a
    /// wait for the compiler's lock (not the wait in the compiling
    /// thread's queue).
    pub max_us: u64,
    /// Compiles and optimises done by the compiling thread, off the
    /// workers (`LONA_JIT_SYNC=1`: none); the rest were done on the worker
    /// that found the function hot.
    pub background: u64,
    /// Bytes of live machine code (compiled, not yet freed).
    pub code_bytes: u64,
    /// Compiled functions whose tail calls of themselves go to a second
    /// translation of their body that knows what the calls pass (a
    /// *typed loop*, `jit/translate/facts.rs`).
    pub typed_loops: u64,
    /// Reductions of every Lonala process since `count_reductions(true)`
    /// (0 unless counting: `--jit-stats` turns it on).
    pub reductions: u64,
    /// Those of them run in compiled code.
    pub compiled_reductions: u64,
}

/// Arities compiled again, optimised (none without the tier).
fn optimised_count() -> u64 {
    #[cfg(feature = "jit")]
    return optimise::optimised_count();
    #[cfg(not(feature = "jit"))]
    0
}

/// Bytes of retired quick code freed (none without the tier).
fn retired_freed() -> u64 {
    #[cfg(feature = "jit")]
    return optimise::retired_freed();
    #[cfg(not(feature = "jit"))]
    0
}

/// Jobs the compiling thread has done (none without the tier).
fn background_done() -> u64 {
    #[cfg(feature = "jit")]
    return queue::done();
    #[cfg(not(feature = "jit"))]
    0
}

/// The compiling tier's figures so far.
pub fn stats() -> Stats {
    Stats {
        compiled: COMPILED_COUNT.load(Relaxed),
        refused: REFUSED_COUNT.load(Relaxed),
        given_up: GIVEN_UP.load(Relaxed),
        rearmed: REARMED.load(Relaxed),
        optimised: optimised_count(),
        retired_freed: retired_freed(),
        compile_us: COMPILE_NS.load(Relaxed) / 1000,
        max_us: COMPILE_NS_MAX.load(Relaxed) / 1000,
        background: background_done(),
        code_bytes: code_bytes() as u64,
        typed_loops: TYPED_LOOPS.load(Relaxed),
        reductions: share::read().0,
        compiled_reductions: share::read().1,
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "jit: {} functions compiled ({} given up since, {} tried again, {} with a typed loop), {} stay interpreted; {} arities compiled again optimised (their quick code freed: {} B); {} µs compiling in all ({} compiles off the workers), {} µs at most from hot to installed; {} bytes of machine code",
            self.compiled, self.given_up, self.rearmed, self.typed_loops, self.refused, self.optimised, self.retired_freed, self.compile_us, self.background, self.max_us, self.code_bytes
        )?;
        if self.reductions > 0 {
            write!(
                f,
                "; {} of {} reductions in compiled code ({:.1} %)",
                self.compiled_reductions,
                self.reductions,
                self.compiled_reductions as f64 * 100.0 / self.reductions as f64
            )?;
        }
        Ok(())
    }
}
