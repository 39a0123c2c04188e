//! The node as a whole, from any thread: building it ([`Builder`]),
//! running and stopping it ([`Runtime`]), reaching it from outside a
//! process ([`Handle`]), seeing inside it (`stats`), and visiting every
//! process of every runtime (`visit`); Unix signals as messages
//! (`os_signal`).
//!
//! Uses `base`, `sched` and `rules`; only `native` is above it.
//!
//! [`Builder`]: crate::Builder
//! [`Runtime`]: crate::Runtime
//! [`Handle`]: crate::Handle

pub(crate) mod builder;
pub(crate) mod handle;
#[cfg(unix)]
pub mod os_signal;
pub(crate) mod runtime;
pub(crate) mod stats;
pub(crate) mod visit;
