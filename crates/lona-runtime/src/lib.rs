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
//! machine) implements [`Process`] and does the same through [`StepCx`].
//!
//! # `block_on(..)??`: two layers of result
//! [`Runtime::block_on`] runs its closure's future as the program's main
//! process and returns `Result<T, Reason>`: `Err` when that process ended
//! some other way than by finishing its future (killed, an exit signal it
//! did not trap, a panic, a linked process's crash; the [`Reason`] says
//! which), `Ok(T)` with the future's own output otherwise. When the
//! future itself returns a `Result`, the two stack up: the first `?`
//! takes the process's fate, the second the future's own error. Both
//! convert into `Box<dyn Error>` ([`Reason`] implements
//! [`std::error::Error`]):
//!
//! ```
//! use lona_runtime::Runtime;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//!     let rt = Runtime::builder().workers(2).build()?;
//!     let n: u32 = rt.block_on(|_ctx| async move {
//!         // The program, inside its main process; may fail on its own.
//!         let n: u32 = "42".parse()?;
//!         Ok::<_, std::num::ParseIntError>(n)
//!     })??; // the process's `Reason`, then the `ParseIntError`
//!     assert_eq!(n, 42);
//!     Ok(())
//! }
//! ```
//!
//! # Waiting for one of several message types
//! [`Ctx::receive`] waits for one type. To wait for whichever of two (or
//! more) comes first, receive an [`Envelope`], the type-erased message,
//! choosing with a predicate on it, then take the value out by its type
//! with [`Envelope::downcast`]. Other messages stay in the mailbox, in
//! order. This is how a process waits for a request *or* a stop message,
//! for a [`Down`] *or* a reply, and so on:
//!
//! ```
//! use lona_runtime::{Envelope, Runtime};
//!
//! #[derive(Debug, PartialEq)]
//! struct Job(u32);
//! #[derive(Debug, PartialEq)]
//! struct Stop;
//!
//! let rt = Runtime::builder().workers(2).build().unwrap();
//! let done = rt.block_on(|ctx| async move {
//!     let me = ctx.pid();
//!     ctx.send(me, "not for now").await;
//!     ctx.send(me, Job(1)).await;
//!     ctx.send(me, Job(2)).await;
//!     ctx.send(me, Stop).await;
//!     let mut jobs = Vec::new();
//!     loop {
//!         // The oldest `Job` or `Stop`, whichever is first.
//!         let e = ctx
//!             .receive_where::<Envelope, _>(|e| e.is::<Job>() || e.is::<Stop>())
//!             .await;
//!         match e.downcast::<Job>() {
//!             Ok(Job(n)) => jobs.push(n),
//!             Err(e) => {
//!                 assert!(e.is::<Stop>());
//!                 break;
//!             }
//!         }
//!     }
//!     // Skipped, not lost.
//!     let left: &str = ctx.receive().await;
//!     (jobs, left)
//! });
//! assert_eq!(done, Ok((vec![1, 2], "not for now")));
//! ```
//!
//! [`Ctx::receive_where_timeout`] does the same with a timeout, and
//! [`Ctx::receive_any`] takes the oldest message whatever its type.
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
pub use sched::cx::{Peeked, Scan, SpawnOpts, StepCx};

/// The old name of [`StepCx`] (it was one letter from [`Ctx`]).
#[deprecated(note = "renamed `StepCx`")]
pub type Cx<'a> = StepCx<'a>;
pub use sched::process::{Process, Step, SLICE_REDUCTIONS};
pub use sched::registry::RegisterError;
pub use sched::report::panic_reason;
pub use sched::table::MAX_PROCESS_LIMIT;
pub use sched::timer::{Timeout, TimerRef, MAX_DELAY};

/// A timeout that never expires: `receive_timeout(INFINITY)` waits like
/// `receive`. Any delay longer than [`MAX_DELAY`] is infinite.
pub const INFINITY: std::time::Duration = std::time::Duration::MAX;
