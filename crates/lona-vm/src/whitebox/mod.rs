//! Tests of the machine's inside that run whole programs: the
//! interpreter against its opcode table (`vm.rs`), the compiling tier's
//! code heap, queue and tiers (`jit.rs`). They use the evaluator and the
//! code collector, which sit above the interpreter and the tier, so they
//! live here, above everything, not beside the code they test.

#[cfg(feature = "jit")]
mod jit;
mod vm;
