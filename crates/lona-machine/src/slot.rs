//! A prototype's tier state (`JitSlot`), in the machine's part of every
//! prototype (`bytecode::ProtoExt`): the data the interpreter reads at a
//! call and the compiling tier (`jit/`) writes. Here is only its layout
//! and states; what moves it from state to state (counting calls, queuing
//! a compile, judging code, giving it up) is the compiling tier's
//! (`impl JitSlot` in `jit/mod.rs`), so that the prototype knows no
//! compiler.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, AtomicUsize};

pub(crate) const COLD: u8 = 0;
pub(crate) const COMPILED: u8 = 1;
/// Compiled, but with no loop and no call of itself: called natively by
/// compiled callers, never entered by the interpreter (entering and
/// leaving machine code costs more than a short function gains).
pub(crate) const LEAF: u8 = 3;
pub(crate) const NEVER: u8 = 2;
/// Compiled, given up for now (`JitSlot::judge`): the interpreter runs it,
/// and after a rest of interpreter entries (`jit`'s `rest_length`) the code is
/// tried again (`JitSlot::rearm`).
pub(crate) const RESTING: u8 = 4;
/// Found hot, its compile queued for the compiling thread
/// (`queue.rs`): interpreted until the thread publishes its code.
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) const QUEUED: u8 = 5;

/// A prototype's tier state. Written by the workers that call it: `heat`
/// racily (a lost count only delays compiling); `state`, `leaves`,
/// `quick` and each arity's code under the compiler's lock (`compile`,
/// `give_up`, `rearm`, `free_codes`, and `optimise`, which replaces
/// quick code); read by every caller.
///
/// Each fixed arity of a prototype up to [`MAX_ARGS`] arguments is
/// compiled on its own: the one whose call made the prototype hot, then
/// each other at its first call after that (`tried`); each has its code
/// in `arity` (`nth`'s two arities, say). The state, the counts and the
/// judgement are the prototype's.
///
/// Compiled code reads `entry` and `shape` of a callee's arity it calls
/// (`translate/calls.rs`, `closure_call`), at `layout::p_entry(argc)`
/// and `layout::p_shape(argc)` from the prototype's address.
#[derive(Debug, Default)]
#[repr(C)]
pub struct JitSlot {
    pub(crate) state: AtomicU8,
    /// How many times the code was given up (`judge`); written under the
    /// compiler's lock by `judge`'s winner and read by `tick`.
    pub(crate) rests: AtomicU8,
    /// The arities (a bit each) whose code the interpreter does not
    /// enter: leaves (no loop, no call of itself), called natively by
    /// compiled callers only. Written before the code is published.
    pub(crate) leaves: AtomicU8,
    /// The arities (a bit each) compiled or found not compilable so far:
    /// each is compiled when it is first called after the prototype is
    /// hot (the hot arity first). Written under the compiler's lock.
    pub(crate) tried: AtomicU8,
    /// A built-in's intrinsic's arity (with `intrinsic`).
    pub(crate) intrinsic_argc: AtomicU8,
    /// The jobs of this prototype queued for the compiling thread and
    /// not done (`queue.rs`): an arity's compile (`1 << argc`; a first
    /// compile is claimed by the state `QUEUED` instead) and the
    /// optimise (`queue::OPTIMISE_BIT`). Set by the worker that claims a
    /// job (`fetch_or`: one claims it), cleared by the thread when done.
    #[cfg_attr(not(feature = "jit"), allow(dead_code))]
    pub(crate) queued: AtomicU8,
    /// The arities (a bit each) whose code is the quick tier's, to be
    /// compiled again optimised (`optimise.rs`); and whether that was
    /// done (1: arities compiled from then on are optimised at once).
    /// Written under the compiler's lock.
    pub(crate) quick: AtomicU8,
    pub(crate) optimised: AtomicU8,
    pub(crate) heat: AtomicU32,
    /// Entries from the interpreter into the code, and how many of them
    /// left before the slice's end (`JitSlot::judge`); racy counts, kept
    /// until the code is judged.
    pub(crate) entries: AtomicU32,
    pub(crate) early: AtomicU32,
    /// The pc of the last early leave (`vm/tier.rs`, `judge`), which the
    /// `LONA_JIT_LOG` line of a give-up names: the instruction the tier
    /// left to the interpreter. Racy, diagnostics only.
    pub(crate) left_at: AtomicU32,
    /// Whether the interpreter's arithmetic or comparisons in this
    /// prototype met a float (`vm/mod.rs`, `arith!`): compiled from then
    /// on with float paths (`jit/translate/float.rs`). Set once, by any
    /// worker; read when compiling.
    pub(crate) floats: AtomicBool,
    /// A built-in's [`intrinsic::Intrinsic`] (0: none); set before the
    /// built-in is bound, never changed.
    pub(crate) intrinsic: AtomicUsize,
    /// The code of each arity, by its number of arguments.
    pub(crate) arity: [ArityCode; MAX_ARGS + 1],
}

/// The machine code of one arity of a prototype.
#[derive(Debug, Default)]
#[repr(C)]
pub(crate) struct ArityCode {
    /// The code's address while callers may call it (0: none, or given
    /// up). Published with Release after everything else is written.
    pub(crate) entry: AtomicUsize,
    /// `argc | nregs << 8` of the code (written before `entry` is
    /// published): what a compiled caller checks and needs.
    pub(crate) shape: AtomicU32,
    /// The code's size, and its address, kept when the code is given up
    /// (`entry` 0: an activation may still run it) until [`free_codes`].
    /// Quick code replaced by optimised code leaves here for the retired
    /// list (`optimise.rs`), which the code collector frees.
    pub(crate) size: AtomicU32,
    pub(crate) code: AtomicUsize,
}

/// The most arguments of a compiled function (they come in machine
/// registers: `(ctx, base, depth, closure, args...)`).
pub const MAX_ARGS: usize = 6;

/// The machine code of a compiled prototype: called with its arity's
/// number of arguments after `(ctx, base, depth, reductions, closure)`
/// (`jit::enter`).
pub(crate) type Entry = usize;
