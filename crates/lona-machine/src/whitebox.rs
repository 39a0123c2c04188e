//! The machine's internals for `lona-vm`'s white-box tests (its
//! `src/whitebox/`, which run programs through the node's evaluator):
//! only with the feature `whitebox`, which `lona-vm` enables for its own
//! tests (a dev-dependency). Not an API: with it, safe code can reach the
//! tier's states and free compiled code; without it (every build but
//! those tests) none of this exists.

pub use crate::builtins::install;
pub use crate::bytecode::{bare, Entry, Instr, Proto, NO_TIMEOUT};
#[cfg(feature = "jit")]
pub use crate::purge::registered;

/// The compiling tier's internals.
pub mod jit {
    /// What a prototype is before emitting anything.
    #[cfg(feature = "jit")]
    pub mod analysis {
        pub use crate::jit::analysis::*;
    }

    /// Cranelift's context and the code heap.
    #[cfg(feature = "jit")]
    pub mod compiler {
        pub use crate::jit::compiler::heap_extent;
    }

    /// The two tiers of machine code.
    #[cfg(feature = "jit")]
    pub mod optimise {
        pub use crate::jit::optimise::{optimise_after, quick_tier};
    }

    /// The compiling thread's queue.
    #[cfg(feature = "jit")]
    pub mod queue {
        pub use crate::jit::queue::GATE;
    }

    use crate::bytecode::Proto;
    use crate::slot::Entry;

    /// Compiles `p`'s arity `argc` now (`jit::compile`).
    pub fn compile(p: &'static Proto, argc: usize) -> Option<Entry> {
        crate::jit::compile(p, argc)
    }

    /// Bytes of live machine code.
    pub fn code_bytes() -> usize {
        crate::jit::code_bytes()
    }

    /// Frees `p`'s machine code.
    #[cfg(feature = "jit")]
    ///
    /// # Safety
    ///
    /// As `jit::free_code`: no thread runs or will enter `p`'s code.
    pub unsafe fn free_code(p: &Proto) {
        // SAFETY: the caller's promise.
        unsafe { crate::jit::free_code(p) }
    }

    /// `p`'s tier state, by name.
    pub fn state_name(p: &Proto) -> &'static str {
        p.ext.jit.state_name()
    }

    /// The entry of `p`'s compiled arity `argc`.
    pub fn entry(p: &Proto, argc: usize) -> Option<Entry> {
        p.ext.jit.entry(argc)
    }

    /// Whether any arity of `p` is compiled.
    #[cfg(feature = "jit")]
    pub fn any_entry(p: &Proto) -> bool {
        p.ext.jit.any_entry()
    }

    /// The tier's judgement of `p` after its code ran (`left`: it left
    /// to the interpreter).
    pub fn judge(p: &'static Proto, left: bool) {
        p.ext.jit.judge(p, left)
    }

    /// Whether `p`'s arity `argc` runs the quick tier's code.
    #[cfg(feature = "jit")]
    pub fn is_quick(p: &Proto, argc: usize) -> bool {
        p.ext.jit.is_quick(argc)
    }

    /// Whether code at `addr` is retired (kept until its prototype dies).
    #[cfg(feature = "jit")]
    pub fn is_retired(addr: usize) -> bool {
        crate::slot::JitSlot::is_retired(addr)
    }

    /// The size and address of `p`'s arity `argc`'s code (kept until
    /// it is freed).
    pub fn arity_code(p: &Proto, argc: usize) -> (usize, usize) {
        let a = &p.ext.jit.arity[argc];
        (
            a.size.load(std::sync::atomic::Ordering::Relaxed) as usize,
            a.code.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// How many times compiled code of `p` was entered.
    pub fn entries(p: &Proto) -> u32 {
        p.ext.jit.entries.load(std::sync::atomic::Ordering::Relaxed)
    }
}
