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
//!         ctx.send(from, n * 2).await.unwrap();
//!     }).unwrap();
//!     ctx.send(child, (me, 21u64)).await.unwrap();
//!     ctx.receive::<u64>().await
//! });
//! assert_eq!(sum, Ok(42));
//! ```
//!
//! See `docs/architecture.md` for how the pieces fit.

mod envelope;
mod idle;
mod inbox;
mod links;
mod mailbox;
mod native;
mod pid;
mod process;
mod reason;
mod registry;
mod report;
mod runtime;
mod signal;
mod state;
mod sync;
mod table;
mod timer;
mod worker;

pub use envelope::Envelope;
pub use native::{
    Charge, Ctx, ExitNow, ProcessInfo, Receive, ReceiveTimeout, SpawnOpts, Status, YieldNow,
};
pub use pid::{Pid, Ref};
pub use process::{Cx, Process, Step, SLICE_REDUCTIONS};
pub use reason::{CustomReason, PanicInfo, Reason};
pub use registry::RegisterError;
pub use runtime::{
    Builder, Dest, Handle, Runtime, SendError, ShutdownReport, SpawnError, DEFAULT_PROCESS_LIMIT,
    RUNTIME_PID,
};
pub use signal::{Down, Exit, Timeout};
pub use timer::TimerRef;
