//! Helpers shared by the conformance tests.
#![allow(dead_code)]

use lona_otp::{ChildSpec, SupervisorRef};
use lona_runtime::{Builder, Ctx, Exit, Pid, Reason};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub fn run<T: Send + 'static, Fut: Future<Output = T> + Send + 'static>(
    f: impl FnOnce(Ctx) -> Fut,
) -> T {
    let rt = Builder::default().workers(workers(2)).build().unwrap();
    rt.block_on(f).expect("main process ended abnormally")
}

// The worker count (`LONA_TEST_WORKERS`), written once, in the runtime's
// test helpers.
#[path = "../../../lona-runtime/tests/common/mod.rs"]
mod workers;
pub use workers::workers;

/// What the children did, in order.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    pub fn get(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A worker whose start logs `start ID` (in the supervisor, as it starts
/// it); it traps exits, and on an exit signal `shutdown` logs `stop ID`
/// and ends `shutdown`; any other exit signal (`send_exit(pid, reason)`)
/// ends it with that reason.
pub fn worker(id: &str, log: &Log) -> ChildSpec {
    let (id2, log) = (id.to_string(), log.clone());
    ChildSpec::new(id, move |ctx| {
        let (id, log) = (id2.clone(), log.clone());
        log.push(format!("start {id}"));
        let sup = ctx.pid();
        Box::pin(async move {
            let pid = ctx
                .spawn_link(move |ctx| async move {
                    ctx.trap_exit(true).await;
                    // Started (trapping) before the start returns, as
                    // proc_lib's init_ack.
                    ctx.send(sup, Ready(ctx.pid())).await;
                    let x = ctx.receive::<Exit>().await;
                    if x.reason == Reason::Shutdown {
                        log.push(format!("stop {id}"));
                    }
                    match ctx.exit(x.reason).await {}
                })
                .await
                .map_err(Reason::custom)?;
            ctx.receive_where(move |r: &Ready| r.0 == pid).await;
            Ok(pid)
        })
    })
}

/// A child's "I have started".
pub struct Ready(pub Pid);

/// The pid of child `id` now.
pub async fn pid_of(ctx: &Ctx, sup: &SupervisorRef, id: &str) -> Option<Pid> {
    sup.which_children(ctx)
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.id == id)
        .and_then(|c| c.pid)
}

/// Wait (polling, up to ~10 s) until child `id` runs with a pid other
/// than `old`.
pub async fn restarted(ctx: &Ctx, sup: &SupervisorRef, id: &str, old: Pid) -> Pid {
    for _ in 0..2000 {
        if let Some(p) = pid_of(ctx, sup, id).await {
            if p != old {
                return p;
            }
        }
        pause(ctx, 5).await;
    }
    panic!("child {id} was not restarted");
}

/// Sleep `ms` milliseconds in a process.
pub async fn pause(ctx: &Ctx, ms: u64) {
    ctx.receive_timeout::<Never>(Duration::from_millis(ms))
        .await;
}

/// A message type nobody sends.
pub struct Never;
