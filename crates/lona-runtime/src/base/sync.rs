//! Atomics used by the lock-free parts (`state`, `inbox`), swapped for
//! loom's model-checked versions under `--cfg loom`.
//!
//! Only the protocol modules go through this shim; the loom models in those
//! modules are the only tests run with `--cfg loom`.

#[cfg(loom)]
pub(crate) use loom::sync::atomic;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic;
