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

// The core: processes, their queues and signals, the scheduler.
mod builder;
mod cx;
mod envelope;
mod error;
mod handle;
mod idle;
mod inbox;
mod info;
mod links;
mod live;
mod mailbox;
mod pid;
mod priority;
mod process;
mod reason;
mod reclaim;
mod registry;
mod report;
mod runtime;
mod shared;
mod signal;
mod state;
mod stats;
mod sync;
mod table;
mod timer;
mod visit;
mod worker;

// Native `async` processes, a layer over the core.
mod native;

// Sockets for processes: idle workers wait in epoll.
pub mod io;

pub use builder::{Builder, DEFAULT_PROCESS_LIMIT, DEFAULT_STACK_SIZE};
pub use cx::{Cx, Peeked, Scan, SpawnOpts};
pub use envelope::Envelope;
pub use error::{SendError, SpawnError};
pub use handle::Handle;
pub use info::{ProcessInfo, Status};
pub use native::{native_process, Deadline, Elapsed};
pub use native::{Charge, Ctx, ExitNow, Receive, ReceiveTimeout, YieldNow};
pub use pid::{Dest, RUNTIME_PID};
pub use pid::{Pid, Ref};
pub use priority::Priority;
pub use process::{Process, Step, SLICE_REDUCTIONS};
pub use reason::{CustomReason, PanicInfo, Reason};
pub use registry::RegisterError;
pub use report::panic_reason;
pub use runtime::{Runtime, ShutdownReport};
pub use signal::{AliveReply, Down, Exit, ForeignExit, InfoReply, Origin, Timeout};
pub use stats::{ProcessEntry, RuntimeInfo, Snapshot, WorkerInfo};
pub use table::MAX_PROCESS_LIMIT;
pub use timer::{TimerRef, MAX_DELAY};
pub use visit::{visit_all, Visit};

/// A timeout that never expires: `receive_timeout(INFINITY)` waits like
/// `receive`. Any delay longer than [`MAX_DELAY`] is infinite.
pub const INFINITY: std::time::Duration = std::time::Duration::MAX;
