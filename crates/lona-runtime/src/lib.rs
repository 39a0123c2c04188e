//! Lona's process runtime: isolated, preemptively scheduled processes with
//! Erlang's guarantees (ordered messages, links, monitors, exit signals,
//! registered names, timers), on a work-stealing scheduler.
//!
//! The runtime is language-agnostic: it runs anything implementing
//! [`Process`], and carries messages and exit reasons as type-erased
//! payloads (any `Send + 'static` value). Native Rust processes are `async`
//! code with a [`Ctx`]:
//!
//! ```
//! use lona_runtime::{Runtime, Pid};
//!
//! let rt = Runtime::builder().workers(2).build().unwrap();
//! let sum = rt.block_on(|ctx| async move {
//!     let me = ctx.pid();
//!     let child = ctx.spawn(move |ctx| async move {
//!         let (from, n): (Pid, u64) = ctx.receive().await;
//!         ctx.send(from, n * 2).await;
//!     }).await.unwrap();
//!     ctx.send(child, (me, 21u64)).await;
//!     ctx.receive::<u64>().await
//! });
//! assert_eq!(sum, Ok(42));
//! ```
//!
//! Any other kind of process (the Lonala interpreter, a hand-written state
//! machine) implements [`Process`] and does the same through [`Cx`].
//!
//! See `docs/architecture.md` for how the pieces fit.

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

// The floors, bottom up: each uses only the floors below it (see each
// folder's `mod.rs`, and `docs/architecture.md`).
mod base;
mod node;
mod rules;
mod sched;
// Native `async` processes, a layer over the public process API.
mod native;
// Sockets for processes: idle workers wait in epoll (`sched::reactor`).
pub mod io;
#[cfg(unix)]
pub use node::os_signal;

pub use base::envelope::Envelope;
pub use base::error::{SendError, SpawnError};
pub use base::pid::{Dest, Pid, Ref, RUNTIME_PID};
pub use base::priority::Priority;
pub use base::reason::{CustomReason, PanicInfo, Reason};
pub use native::{native_process, Deadline, Elapsed, Sleep};
pub use native::{Charge, Ctx, ExitNow, Receive, ReceiveTimeout, YieldNow};
pub use node::builder::{Builder, DEFAULT_PROCESS_LIMIT, DEFAULT_STACK_SIZE};
pub use node::handle::Handle;
pub use node::runtime::{Runtime, ShutdownReport};
pub use node::stats::{ProcessEntry, RuntimeInfo, Snapshot, WorkerInfo};
pub use node::visit::{visit_all, Visit};
pub use rules::info::{ProcessInfo, Status};
pub use rules::signal::{AliveReply, Down, Exit, ForeignExit, InfoReply, Origin};
pub use sched::cx::{Cx, Peeked, Scan, SpawnOpts};
pub use sched::process::{Process, Step, SLICE_REDUCTIONS};
pub use sched::registry::RegisterError;
pub use sched::report::panic_reason;
pub use sched::table::MAX_PROCESS_LIMIT;
pub use sched::timer::{Timeout, TimerRef, MAX_DELAY};

/// A timeout that never expires: `receive_timeout(INFINITY)` waits like
/// `receive`. Any delay longer than [`MAX_DELAY`] is infinite.
pub const INFINITY: std::time::Duration = std::time::Duration::MAX;
