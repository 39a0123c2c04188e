//! Tests of the machine's inside that run whole programs: the opcode
//! table against itself and a corpus of compiled code (`ops.rs`), the
//! interpreter against the table (`vm.rs`), the compiling tier's analysis
//! against the table's former matches (`analysis.rs`), its code heap,
//! queue and tiers (`jit.rs`). They use the evaluator and the
//! code collector, which sit above the interpreter and the tier, so they
//! live here, above everything, not beside the code they test.

#[cfg(feature = "jit")]
mod analysis;
#[cfg(feature = "jit")]
mod jit;
mod ops;
mod vm;
