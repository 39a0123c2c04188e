//! [`DynamicSupervisor`]: OTP's `simple_one_for_one` supervisor: many
//! children of one spec, started on demand with an argument.
//!
//! # Rules (OTP's `simple_one_for_one`; the static supervisor's rules 1,
//! 4, 6 and 8 hold unchanged)
//! 1. It starts with no child; [`DynamicSupervisorRef::start_child`]
//!    starts one by calling the spec's start function with the given
//!    argument (kept, cloned, for restarts) and answers its pid or the
//!    start's error.
//! 2. Restarts are one-for-one: a child that ended is restarted (per its
//!    restart type) with the same argument, as a new pid; a start that
//!    fails during a restart counts as one more restart and is tried
//!    again, until the intensity is reached (then the supervisor stops
//!    every child and exits `shutdown`).
//! 3. Children are identified by pid: [`DynamicSupervisorRef::terminate_child`]
//!    stops one by pid (by its shutdown) and forgets it.
//! 4. When the supervisor stops, all children are stopped *at once*
//!    (module `stop`, `stop_all`): each is told `shutdown` (or killed, for
//!    `BrutalKill`), those still running after the shutdown time are
//!    killed, and the supervisor waits for every one to have ended. Their
//!    order is not defined, as in OTP.

use crate::server::{self, Answer, CallError, Flow, Info, ReplyTo, Server, ServerRef, StartError};
use crate::supervisor::spec::{
    is_orderly, BoxFuture, ChildType, Restart, Shutdown, DEFAULT_WORKER_SHUTDOWN,
};
use crate::supervisor::stop::{stop_all, stop_child};
use crate::supervisor::strategy::{Restarts, SupFlags};
use crate::supervisor::{ChildCounts, SupervisorError, LOG};
use lona_runtime::{Ctx, Pid, Reason, INFINITY};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// A dynamic child's start function: spawns the child linked to the
/// calling supervisor, given the argument of `start_child`.
pub type DynamicStartFn<A> =
    Arc<dyn for<'a> Fn(&'a Ctx, A) -> BoxFuture<'a, Result<Pid, Reason>> + Send + Sync>;

/// A dynamic supervisor to start: the one child spec and the flags.
pub struct DynamicSupervisor<A> {
    flags: SupFlags,
    start: DynamicStartFn<A>,
    restart: Restart,
    shutdown: Shutdown,
    kind: ChildType,
}

impl<A> Clone for DynamicSupervisor<A> {
    fn clone(&self) -> Self {
        DynamicSupervisor {
            flags: self.flags,
            start: self.start.clone(),
            restart: self.restart,
            shutdown: self.shutdown,
            kind: self.kind,
        }
    }
}

impl<A: Clone + Send + 'static> DynamicSupervisor<A> {
    /// Children started by `start` (which must spawn them linked), with
    /// OTP's defaults: permanent workers, shutdown 5,000 ms, 1 restart in
    /// 5 seconds.
    pub fn new<F>(start: F) -> Self
    where
        F: for<'a> Fn(&'a Ctx, A) -> BoxFuture<'a, Result<Pid, Reason>> + Send + Sync + 'static,
    {
        DynamicSupervisor {
            flags: SupFlags::default(),
            start: Arc::new(start),
            restart: Restart::Permanent,
            shutdown: DEFAULT_WORKER_SHUTDOWN,
            kind: ChildType::Worker,
        }
    }

    /// Children running `body(ctx, arg)` as native processes the
    /// supervisor spawns linked.
    pub fn worker<F, Fut>(body: F) -> Self
    where
        F: Fn(Ctx, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let body = Arc::new(body);
        DynamicSupervisor::new(move |ctx, arg: A| -> BoxFuture<'_, Result<Pid, Reason>> {
            let body = body.clone();
            Box::pin(async move {
                ctx.spawn_link(move |c| body(c, arg))
                    .await
                    .map_err(Reason::custom)
            })
        })
    }

    /// Set the children's restart type.
    pub fn restart(mut self, r: Restart) -> Self {
        self.restart = r;
        self
    }

    /// Set the children's shutdown.
    pub fn shutdown(mut self, s: Shutdown) -> Self {
        self.shutdown = s;
        self
    }

    /// Set the children's type (and so their default shutdown).
    pub fn kind(mut self, k: ChildType) -> Self {
        self.kind = k;
        self.shutdown = k.default_shutdown();
        self
    }

    /// Allow `intensity` restarts within `period`.
    pub fn intensity(mut self, intensity: u32, period: std::time::Duration) -> Self {
        self.flags.intensity = intensity;
        self.flags.period = period;
        self
    }

    /// Start it linked to the caller, registered as `name` if given.
    pub async fn start_link(
        self,
        ctx: &Ctx,
        name: Option<&str>,
    ) -> Result<DynamicSupervisorRef<A>, StartError> {
        let inner = server::start_link(ctx, DynServer::new(self), name).await?;
        Ok(DynamicSupervisorRef { inner })
    }

    /// Start it, not linked.
    pub async fn start(
        self,
        ctx: &Ctx,
        name: Option<&str>,
    ) -> Result<DynamicSupervisorRef<A>, StartError> {
        let inner = server::start(ctx, DynServer::new(self), name).await?;
        Ok(DynamicSupervisorRef { inner })
    }
}

/// A handle on a running dynamic supervisor.
pub struct DynamicSupervisorRef<A> {
    inner: ServerRef<DynServer<A>>,
}

impl<A> Clone for DynamicSupervisorRef<A> {
    fn clone(&self) -> Self {
        DynamicSupervisorRef {
            inner: self.inner.clone(),
        }
    }
}

impl<A> std::fmt::Debug for DynamicSupervisorRef<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DynamicSupervisorRef({:?})", self.inner)
    }
}

impl<A: Clone + Send + 'static> DynamicSupervisorRef<A> {
    /// The supervisor registered as `name`.
    pub fn named(name: &str) -> Self {
        DynamicSupervisorRef {
            inner: ServerRef::named(name),
        }
    }

    /// Its pid (for a reference made by `start_link`).
    pub fn pid(&self) -> Pid {
        self.inner.pid().unwrap_or(lona_runtime::RUNTIME_PID)
    }

    async fn ask(&self, ctx: &Ctx, req: DynCall<A>) -> Result<DynReply, SupervisorError> {
        self.inner
            .call_timeout(ctx, req, INFINITY)
            .await
            .map_err(SupervisorError::Call)
    }

    /// Start a child with `arg` (rule 1).
    pub async fn start_child(&self, ctx: &Ctx, arg: A) -> Result<Pid, SupervisorError> {
        match self.ask(ctx, DynCall::Start(arg)).await? {
            DynReply::Started(r) => r,
            _ => unreachable!("answer to Start"),
        }
    }

    /// Stop the child `pid` and forget it (rule 3).
    pub async fn terminate_child(&self, ctx: &Ctx, pid: Pid) -> Result<(), SupervisorError> {
        match self.ask(ctx, DynCall::Terminate(pid)).await? {
            DynReply::Done(r) => r,
            _ => unreachable!("answer to Terminate"),
        }
    }

    /// The running children's pids (in no particular order).
    pub async fn which_children(&self, ctx: &Ctx) -> Result<Vec<Pid>, SupervisorError> {
        match self.ask(ctx, DynCall::Which).await? {
            DynReply::Which(v) => Ok(v),
            _ => unreachable!("answer to Which"),
        }
    }

    /// How many children (every child is an active one of the one spec).
    pub async fn count_children(&self, ctx: &Ctx) -> Result<ChildCounts, SupervisorError> {
        match self.ask(ctx, DynCall::Count).await? {
            DynReply::Count(c) => Ok(c),
            _ => unreachable!("answer to Count"),
        }
    }

    /// Stop the supervisor and all its children (rule 4), and wait.
    pub async fn stop(&self, ctx: &Ctx) -> Result<(), CallError> {
        self.inner.stop(ctx, Reason::Shutdown).await
    }
}

enum DynCall<A> {
    Start(A),
    Terminate(Pid),
    Which,
    Count,
}

enum DynReply {
    Started(Result<Pid, SupervisorError>),
    Done(Result<(), SupervisorError>),
    Which(Vec<Pid>),
    Count(ChildCounts),
}

struct DynServer<A> {
    spec: DynamicSupervisor<A>,
    children: HashMap<Pid, A>,
    restarts: Restarts,
}

impl<A: Clone + Send + 'static> DynServer<A> {
    fn new(spec: DynamicSupervisor<A>) -> Self {
        DynServer {
            restarts: Restarts::new(&spec.flags),
            spec,
            children: HashMap::new(),
        }
    }

    async fn start_one(&mut self, ctx: &Ctx, arg: A) -> Result<Pid, Reason> {
        let start = self.spec.start.clone();
        let r = crate::supervisor::start_contained_with(ctx, move |ctx| start(ctx, arg)).await;
        match &r {
            Ok(pid) => log::info!(target: LOG, "supervisor {:?}: started child {pid:?}", ctx.pid()),
            Err(reason) => {
                log::error!(target: LOG, "supervisor {:?}: start_error: a child failed to start: {reason:?}", ctx.pid())
            }
        }
        r
    }
}

impl<A: Clone + Send + 'static> Server for DynServer<A> {
    type Call = DynCall<A>;
    type Reply = DynReply;
    type Cast = ();
    type Info = ();

    async fn init(&mut self, ctx: &Ctx) -> Result<(), Reason> {
        ctx.trap_exit(true).await;
        Ok(())
    }

    async fn handle_call(
        &mut self,
        ctx: &Ctx,
        req: DynCall<A>,
        _: ReplyTo<DynReply>,
    ) -> Answer<DynReply> {
        Answer::Reply(match req {
            DynCall::Start(arg) => {
                let r = self.start_one(ctx, arg.clone()).await;
                DynReply::Started(match r {
                    Ok(pid) => {
                        self.children.insert(pid, arg);
                        Ok(pid)
                    }
                    Err(reason) => Err(SupervisorError::FailedToStartChild {
                        id: String::new(),
                        reason,
                    }),
                })
            }
            DynCall::Terminate(pid) => DynReply::Done(match self.children.remove(&pid) {
                None => Err(SupervisorError::NotFound(format!("{pid:?}"))),
                Some(_) => {
                    if let Err(reason) = stop_child(ctx, pid, self.spec.shutdown).await {
                        log::error!(target: LOG, "supervisor {:?}: shutdown_error: child {pid:?} ended with {reason:?}", ctx.pid());
                    }
                    Ok(())
                }
            }),
            DynCall::Which => DynReply::Which(self.children.keys().copied().collect()),
            DynCall::Count => {
                let n = self.children.len();
                let (workers, supervisors) = match self.spec.kind {
                    ChildType::Worker => (n, 0),
                    ChildType::Supervisor => (0, n),
                };
                DynReply::Count(ChildCounts {
                    specs: 1,
                    active: n,
                    workers,
                    supervisors,
                })
            }
        })
    }

    async fn handle_info(&mut self, ctx: &Ctx, msg: Info<()>) -> Flow {
        let Info::Exit(x) = msg else {
            return Flow::Continue;
        };
        let Some(arg) = self.children.remove(&x.from) else {
            return Flow::Continue;
        };
        let orderly = is_orderly(&x.reason);
        if !orderly {
            log::error!(target: LOG, "supervisor {:?}: child_terminated: child {:?} ended with {:?}", ctx.pid(), x.from, x.reason);
        }
        match self.spec.restart {
            Restart::Temporary => return Flow::Continue,
            Restart::Transient if orderly => return Flow::Continue,
            _ => {}
        }
        // Rule 2.
        loop {
            if !self.restarts.add() {
                log::error!(target: LOG, "supervisor {:?}: reached_max_restart_intensity ({} in {:?}); shutting down",
                    ctx.pid(), self.spec.flags.intensity, self.spec.flags.period);
                return Flow::Stop(Reason::Shutdown);
            }
            // A failed start (reported by start_one) is one more restart.
            if let Ok(pid) = self.start_one(ctx, arg.clone()).await {
                self.children.insert(pid, arg);
                return Flow::Continue;
            }
        }
    }

    async fn terminate(&mut self, ctx: &Ctx, _reason: &Reason) {
        let pids: Vec<Pid> = self.children.drain().map(|(p, _)| p).collect();
        for (pid, reason) in stop_all(ctx, &pids, self.spec.shutdown).await {
            log::error!(target: LOG, "supervisor {:?}: shutdown_error: child {pid:?} ended with {reason:?}", ctx.pid());
        }
    }
}
