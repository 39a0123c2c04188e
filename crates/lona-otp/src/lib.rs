//! OTP for Lona's native Rust processes: a gen_server-style [`Server`], a
//! [`Supervisor`] of static children (one-for-one, one-for-all,
//! rest-for-one, with a dependency graph between children) and a
//! [`DynamicSupervisor`] (simple_one_for_one), with Erlang/OTP's semantics.
//! Each behaviour's rules are written once at the top of the file that
//! implements it (`server.rs`, `supervisor/mod.rs`, `dynamic.rs`).
//!
//! ```
//! use lona_otp::{Answer, ChildSpec, ReplyTo, Server, ServerRef, Strategy, Supervisor};
//! use lona_runtime::{Ctx, Runtime};
//!
//! /// A counter server, registered as "counter" under a supervisor.
//! #[derive(Default)]
//! struct Counter(u64);
//! impl Server for Counter {
//!     type Call = u64; // add, answer the new count
//!     type Reply = u64;
//!     type Cast = ();
//!     type Info = ();
//!     async fn handle_call(&mut self, _: &Ctx, n: u64, _: ReplyTo<u64>) -> Answer<u64> {
//!         self.0 += n;
//!         Answer::Reply(self.0)
//!     }
//! }
//!
//! let rt = Runtime::builder().workers(2).build().unwrap();
//! let total = rt.block_on(|ctx| async move {
//!     ctx.trap_exit(true).await;
//!     let _sup = Supervisor::new(Strategy::OneForOne)
//!         .child(ChildSpec::server("counter", Some("counter"), Counter::default))
//!         .start_link(&ctx, None)
//!         .await
//!         .unwrap();
//!     let counter = ServerRef::<Counter>::named("counter");
//!     counter.call(&ctx, 40).await.unwrap();
//!     counter.call(&ctx, 2).await.unwrap()
//! });
//! assert_eq!(total, Ok(42));
//! ```

// No unsafe code here; should some come, each block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

mod dynamic;
mod server;
mod supervisor;

pub use dynamic::{DynamicStartFn, DynamicSupervisor, DynamicSupervisorRef};
pub use server::{
    start, start_link, Answer, CallError, Flow, Info, ReplyTo, Server, ServerRef, StartError,
    DEFAULT_CALL_TIMEOUT,
};
pub use supervisor::spec::{
    is_orderly, BoxFuture, ChildSpec, ChildType, Restart, Shutdown, ShutdownWith, StartFn,
    DEFAULT_WORKER_SHUTDOWN,
};
pub use supervisor::strategy::{Strategy, SupFlags};
pub use supervisor::{
    ChildCounts, ChildInfo, Supervisor, SupervisorError, SupervisorGaveUp, SupervisorRef,
};
