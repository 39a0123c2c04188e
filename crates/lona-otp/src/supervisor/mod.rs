//! [`Supervisor`]: Erlang's `supervisor` (static children) for native Lona
//! processes. Dynamic children of one spec: [`DynamicSupervisor`](crate::DynamicSupervisor).
//!
//! # Rules (OTP design principles, "Supervisor Behaviour", and `supervisor.erl`)
//! 1. **The supervisor traps exits** and is a [`Server`]; its children are
//!    linked to it (their start function spawns them linked).
//! 2. **Start** ([`Supervisor::start_link`]): the specs are checked
//!    (duplicate ids, unknown dependencies and cycles are errors, rule 9),
//!    then the children start one by one in start order. Start returns
//!    when every child has started; if one fails (an error, a panic), the
//!    ones already started are stopped in reverse order and start fails
//!    with [`SupervisorError::FailedToStartChild`] (the supervisor exits
//!    with that reason).
//! 3. **Stop**: children are stopped in reverse start order, each by its
//!    [`Shutdown`] (module `stop`: monitor, unlink, `shutdown` exit, `kill`
//!    after the timeout; `BrutalKill` kills at once), waiting for each to
//!    have fully ended. This happens when the supervisor stops: its
//!    parent's exit signal (shutdown), [`SupervisorRef::stop`], or the
//!    restart intensity (rule 6).
//! 4. **A child's end** (its `Exit` through the link):
//!    - `Permanent`: restarted, whatever the reason;
//!    - `Transient`: restarted unless the reason is `normal`, `shutdown` or
//!      `{shutdown, _}` ([`ShutdownWith`]);
//!    - `Temporary`: never restarted, and its spec is removed.
//!
//!    An abnormal end is reported (`child_terminated`, `log::error`).
//! 5. **Restart** follows the [`Strategy`] (module `strategy`): the group
//!    to restart is the child, plus every other child (one-for-all) or the
//!    children after it in start order (rest-for-one), plus every child
//!    that depends on one of those, transitively. The running members are
//!    stopped (reverse start order, rule 3), then all are started again
//!    (start order), except temporary ones, which are removed. A restart
//!    starts a child only after its previous incarnation has fully ended
//!    (the `Exit` comes after the runtime released its name and ended
//!    it), so a registered name is the child's stable identity. A start
//!    that fails during a restart counts as one more restart and is tried
//!    again.
//! 6. **Intensity**: more than `intensity` restarts within `period`
//!    (default 1 in 5 s) and the supervisor reports
//!    `reached_max_restart_intensity`, stops every child (rule 3) and exits
//!    with `shutdown`.
//! 7. **Calls**: [`SupervisorRef::which_children`],
//!    [`SupervisorRef::count_children`], [`SupervisorRef::terminate_child`]
//!    (stops that child only, keeps its spec unless temporary),
//!    [`SupervisorRef::restart_child`] (starts a stopped child's spec),
//!    [`SupervisorRef::delete_child`] (removes a stopped child's spec),
//!    [`SupervisorRef::start_child`] (adds a spec and starts it). Each
//!    fails with a [`SupervisorError`] saying why.
//! 8. **Reports** through the `log` crate, target `lona::otp::supervisor`:
//!    `info` for a started child, `error` for a crash, a failed start or
//!    stop, and the intensity reached.
//! 9. **Dependencies**: a spec may name ids it depends on
//!    ([`ChildSpec::depends_on`]); start follows a topological order (ties
//!    by spec order, module `graph`), stop its reverse.
//! 10. **Ending the node** ([`Supervisor::ends_node`], for a program's top
//!     supervisor; OTP: the top supervisor's death ends the node): when it
//!     gives up (rule 6), after stopping its children, it ends the process
//!     that started it (the program's main, whose `block_on` returns): an
//!     exit signal with reason [`SupervisorGaveUp`], then `kill`, which a
//!     process trapping exits cannot ignore. Any other end (an orderly
//!     stop, its parent's shutdown) leaves the starter alone.

mod graph;
pub(crate) mod spec;
pub(crate) mod stop;
pub(crate) mod strategy;

use crate::server::{self, Answer, CallError, Flow, Info, ReplyTo, Server, ServerRef, StartError};
use lona_runtime::{Ctx, Exit, Pid, Reason, INFINITY};
use spec::{is_orderly, BoxFuture, ChildSpec, ChildType, Restart};
#[cfg(doc)]
use spec::{Shutdown, ShutdownWith};
use std::fmt;
use std::sync::Arc;
use strategy::{Restarts, Strategy, SupFlags};

/// Log target of the supervisor reports.
pub(crate) const LOG: &str = "lona::otp::supervisor";

/// Why a supervisor operation failed.
#[derive(Clone, Debug, PartialEq)]
pub enum SupervisorError {
    /// Two specs have this id (OTP's `duplicate_child_name`).
    DuplicateId(String),
    /// A spec depends on an id no sibling has.
    UnknownDependency {
        /// The spec.
        child: String,
        /// The id it names.
        missing: String,
    },
    /// These children depend on each other in a cycle.
    Cycle(Vec<String>),
    /// No child has this id.
    NotFound(String),
    /// The child is running (`restart_child`, `delete_child`).
    Running(String),
    /// A child with this id exists already (`start_child`).
    AlreadyPresent(String),
    /// Other children depend on it (`delete_child`).
    HasDependents {
        /// The child.
        id: String,
        /// Those that depend on it.
        dependents: Vec<String>,
    },
    /// A child failed to start with this reason.
    FailedToStartChild {
        /// The child.
        id: String,
        /// What its start function returned or died of.
        reason: Reason,
    },
    /// The supervisor could not be reached.
    Call(CallError),
}

impl fmt::Display for SupervisorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SupervisorError::*;
        match self {
            DuplicateId(id) => write!(f, "duplicate child id {id:?}"),
            UnknownDependency { child, missing } => {
                write!(
                    f,
                    "child {child:?} depends on {missing:?}, which no child is"
                )
            }
            Cycle(ids) => write!(f, "children depend on each other in a cycle: {ids:?}"),
            NotFound(id) => write!(f, "no child {id:?}"),
            Running(id) => write!(f, "child {id:?} is running"),
            AlreadyPresent(id) => write!(f, "a child {id:?} exists already"),
            HasDependents { id, dependents } => {
                write!(f, "children {dependents:?} depend on {id:?}")
            }
            FailedToStartChild { id, reason } => {
                write!(f, "failed to start child {id:?}: {reason:?}")
            }
            Call(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SupervisorError {}

/// A child as [`SupervisorRef::which_children`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildInfo {
    /// Its id.
    pub id: String,
    /// Its pid, `None` when not running.
    pub pid: Option<Pid>,
    /// Worker or supervisor.
    pub kind: ChildType,
    /// Its restart type.
    pub restart: Restart,
}

/// What [`SupervisorRef::count_children`] answers (OTP's proplist).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChildCounts {
    /// Child specs.
    pub specs: usize,
    /// Children running.
    pub active: usize,
    /// Specs of type supervisor.
    pub supervisors: usize,
    /// Specs of type worker.
    pub workers: usize,
}

/// A static supervisor to start: flags and child specs, in order.
///
/// ```
/// use lona_otp::{ChildSpec, Strategy, Supervisor};
/// use lona_runtime::Runtime;
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let running = rt.block_on(|ctx| async move {
///     ctx.trap_exit(true).await;
///     let sup = Supervisor::new(Strategy::OneForOne)
///         .child(ChildSpec::worker("a", |ctx| async move { ctx.receive::<()>().await; }))
///         .child(ChildSpec::worker("b", |ctx| async move { ctx.receive::<()>().await; }).depends_on("a"))
///         .start_link(&ctx, None)
///         .await
///         .unwrap();
///     sup.count_children(&ctx).await.unwrap().active
/// });
/// assert_eq!(running, Ok(2));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Supervisor {
    flags: SupFlags,
    children: Vec<ChildSpec>,
    ends_node: bool,
}

/// The exit reason a supervisor built with [`Supervisor::ends_node`]
/// gives the process that started it when it gives up (rule 10): what
/// `block_on` returns for a main that does not trap exits. A main that
/// traps exits gets it as an [`Exit`] message, then is killed
/// (`Reason::Killed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupervisorGaveUp {
    /// The supervisor that reached its restart intensity.
    pub supervisor: Pid,
}

impl fmt::Display for SupervisorGaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "supervisor {:?} reached its restart intensity and gave up",
            self.supervisor
        )
    }
}

impl std::error::Error for SupervisorGaveUp {}

impl Supervisor {
    /// A supervisor with this strategy and OTP's default intensity (1
    /// restart in 5 seconds).
    pub fn new(strategy: Strategy) -> Supervisor {
        Supervisor {
            flags: SupFlags {
                strategy,
                ..SupFlags::default()
            },
            children: Vec::new(),
            ends_node: false,
        }
    }

    /// Make this the program's top supervisor: when it gives up (more
    /// restarts than its intensity allows), it stops its children and
    /// then ends the process that started it, even one trapping exits
    /// (rule 10 of the module doc), so that `main`'s `block_on` returns
    /// an error instead of the program living on with nothing left to
    /// serve.
    ///
    /// ```
    /// use lona_otp::{ChildSpec, Strategy, Supervisor, SupervisorGaveUp};
    /// use lona_runtime::{Reason, Runtime};
    ///
    /// let rt = Runtime::builder().workers(2).build().unwrap();
    /// let r = rt.block_on(|ctx| async move {
    ///     // A child that always fails: the supervisor gives up at once.
    ///     let failing = ChildSpec::worker("w", |ctx| async move {
    ///         ctx.exit(Reason::from("broken")).await;
    ///     });
    ///     Supervisor::new(Strategy::OneForOne)
    ///         .child(failing)
    ///         .ends_node()
    ///         .start_link(&ctx, None)
    ///         .await
    ///         .unwrap();
    ///     ctx.receive::<()>().await; // a stop message that never comes
    /// });
    /// let reason = r.unwrap_err();
    /// assert!(reason.downcast_ref::<SupervisorGaveUp>().is_some(), "{reason:?}");
    /// ```
    ///
    /// Only for a supervisor started by [`Supervisor::start_link`] or
    /// [`Supervisor::start`]; one started under another supervisor
    /// ([`Supervisor::into_child_spec`]) leaves ending to its parent.
    pub fn ends_node(mut self) -> Supervisor {
        self.ends_node = true;
        self
    }

    /// Set the flags.
    pub fn flags(mut self, flags: SupFlags) -> Supervisor {
        self.flags = flags;
        self
    }

    /// Allow `intensity` restarts within `period`.
    pub fn intensity(mut self, intensity: u32, period: std::time::Duration) -> Supervisor {
        self.flags.intensity = intensity;
        self.flags.period = period;
        self
    }

    /// Add a child spec (started after those added before, unless
    /// dependencies say otherwise).
    pub fn child(mut self, spec: ChildSpec) -> Supervisor {
        self.children.push(spec);
        self
    }

    /// Add child specs.
    pub fn children(mut self, specs: impl IntoIterator<Item = ChildSpec>) -> Supervisor {
        self.children.extend(specs);
        self
    }

    /// Start it linked to the caller (rule 2), registered as `name` if
    /// given. A failed child start is `StartError::Init` holding a
    /// [`SupervisorError`] as custom reason.
    pub async fn start_link(
        self,
        ctx: &Ctx,
        name: Option<&str>,
    ) -> Result<SupervisorRef, StartError> {
        let s = server::start_link(ctx, SupServer::new(self, ctx.pid()), name).await?;
        Ok(SupervisorRef { inner: s })
    }

    /// Start it, not linked to the caller.
    pub async fn start(self, ctx: &Ctx, name: Option<&str>) -> Result<SupervisorRef, StartError> {
        let s = server::start(ctx, SupServer::new(self, ctx.pid()), name).await?;
        Ok(SupervisorRef { inner: s })
    }

    /// A child spec starting this supervisor under another one (type
    /// `Supervisor`, shutdown `Infinity`), registered as `name` if given.
    pub fn into_child_spec(mut self, id: impl Into<String>, name: Option<&str>) -> ChildSpec {
        self.ends_node = false;
        let name: Option<Arc<str>> = name.map(Into::into);
        ChildSpec::supervisor(id, move |ctx| -> BoxFuture<'_, Result<Pid, Reason>> {
            let (sup, name) = (self.clone(), name.clone());
            Box::pin(async move {
                let r = sup.start_link(ctx, name.as_deref()).await;
                r.map(|s| s.pid()).map_err(|e| e.reason())
            })
        })
    }
}

/// A handle on a running static supervisor (by pid or name).
#[derive(Clone, Debug, PartialEq)]
pub struct SupervisorRef {
    inner: ServerRef<SupServer>,
}

impl SupervisorRef {
    /// The supervisor registered as `name`.
    pub fn named(name: &str) -> SupervisorRef {
        SupervisorRef {
            inner: ServerRef::named(name),
        }
    }

    /// The supervisor with this pid.
    pub fn from_pid(pid: Pid) -> SupervisorRef {
        SupervisorRef {
            inner: ServerRef::from_pid(pid),
        }
    }

    /// Its pid (for a reference made from one, as `start_link` returns).
    pub fn pid(&self) -> Pid {
        self.inner.pid().unwrap_or(lona_runtime::RUNTIME_PID)
    }

    async fn ask(&self, ctx: &Ctx, req: SupCall) -> Result<SupReply, SupervisorError> {
        self.inner
            .call_timeout(ctx, req, INFINITY)
            .await
            .map_err(SupervisorError::Call)
    }

    /// Every child, in start order (OTP's `which_children`).
    pub async fn which_children(&self, ctx: &Ctx) -> Result<Vec<ChildInfo>, SupervisorError> {
        match self.ask(ctx, SupCall::Which).await? {
            SupReply::Which(v) => Ok(v),
            _ => unreachable!("answer to Which"),
        }
    }

    /// How many specs and running children (OTP's `count_children`).
    pub async fn count_children(&self, ctx: &Ctx) -> Result<ChildCounts, SupervisorError> {
        match self.ask(ctx, SupCall::Count).await? {
            SupReply::Count(c) => Ok(c),
            _ => unreachable!("answer to Count"),
        }
    }

    async fn done(&self, ctx: &Ctx, req: SupCall) -> Result<(), SupervisorError> {
        match self.ask(ctx, req).await? {
            SupReply::Done(r) => r,
            _ => unreachable!("answer to an operation"),
        }
    }

    /// Stop a child by its shutdown; its spec stays (unless temporary).
    pub async fn terminate_child(&self, ctx: &Ctx, id: &str) -> Result<(), SupervisorError> {
        self.done(ctx, SupCall::Terminate(id.into())).await
    }

    /// Start a stopped child again from its spec; returns its pid.
    pub async fn restart_child(&self, ctx: &Ctx, id: &str) -> Result<Pid, SupervisorError> {
        match self.ask(ctx, SupCall::Restart(id.into())).await? {
            SupReply::Started(r) => r,
            _ => unreachable!("answer to Restart"),
        }
    }

    /// Remove a stopped child's spec.
    pub async fn delete_child(&self, ctx: &Ctx, id: &str) -> Result<(), SupervisorError> {
        self.done(ctx, SupCall::Delete(id.into())).await
    }

    /// Add a spec and start its child (last in start order, after its
    /// dependencies); returns its pid. On failure the spec is not kept.
    pub async fn start_child(&self, ctx: &Ctx, spec: ChildSpec) -> Result<Pid, SupervisorError> {
        match self.ask(ctx, SupCall::Start(Box::new(spec))).await? {
            SupReply::Started(r) => r,
            _ => unreachable!("answer to Start"),
        }
    }

    /// Stop the supervisor (and so its tree, rule 3) with `shutdown`, and
    /// wait until it has ended.
    pub async fn stop(&self, ctx: &Ctx) -> Result<(), CallError> {
        self.inner.stop(ctx, Reason::Shutdown).await
    }
}

enum SupCall {
    Which,
    Count,
    Terminate(String),
    Restart(String),
    Delete(String),
    Start(Box<ChildSpec>),
}

enum SupReply {
    Which(Vec<ChildInfo>),
    Count(ChildCounts),
    Done(Result<(), SupervisorError>),
    Started(Result<Pid, SupervisorError>),
}

struct Child {
    spec: ChildSpec,
    pid: Option<Pid>,
}

/// The supervisor process's state.
struct SupServer {
    flags: SupFlags,
    children: Vec<Child>,
    /// Start order: indices into `children`.
    order: Vec<usize>,
    restarts: Restarts,
    /// Specs given at start (taken by `init`).
    initial: Vec<ChildSpec>,
    /// The process that started it, to end when it gives up
    /// ([`Supervisor::ends_node`]).
    ends: Option<Pid>,
    /// It reached its restart intensity (rule 6).
    gave_up: bool,
}

impl SupServer {
    fn new(s: Supervisor, starter: Pid) -> SupServer {
        SupServer {
            restarts: Restarts::new(&s.flags),
            flags: s.flags,
            children: Vec::new(),
            order: Vec::new(),
            initial: s.children,
            ends: s.ends_node.then_some(starter),
            gave_up: false,
        }
    }

    /// The children as the dependency graph sees them.
    fn nodes(&self) -> Vec<graph::Node<'_>> {
        self.children
            .iter()
            .map(|c| (c.spec.id.as_str(), c.spec.depends_on.as_slice()))
            .collect()
    }

    fn find(&self, id: &str) -> Option<usize> {
        self.children.iter().position(|c| c.spec.id == id)
    }

    /// Recompute the start order after specs were added or removed.
    fn reorder(&mut self) {
        match graph::start_order(&self.nodes()) {
            Ok(o) => self.order = o,
            Err(e) => unreachable!("specs were checked when added: {e}"),
        }
    }

    /// Start child `i` (its start function, panics contained by the
    /// runtime: a start function runs in the supervisor, so a panic there
    /// would end it; we run it and report its error).
    async fn start_one(&mut self, ctx: &Ctx, i: usize) -> Result<Pid, Reason> {
        let spec = &self.children[i].spec;
        let start = spec.start.clone();
        let r = start_contained(ctx, &start).await;
        match &r {
            Ok(pid) => {
                log::info!(target: LOG, "supervisor {:?}: started child {:?} as {pid:?}", ctx.pid(), spec.id);
                self.children[i].pid = Some(*pid);
            }
            Err(reason) => {
                log::error!(target: LOG, "supervisor {:?}: start_error: child {:?} failed to start: {reason:?}", ctx.pid(), spec.id);
            }
        }
        r
    }

    /// Stop child `i` if running (rule 3).
    async fn stop_one(&mut self, ctx: &Ctx, i: usize) {
        if let Some(pid) = self.children[i].pid.take() {
            if let Err(reason) = stop::stop_child(ctx, pid, self.children[i].spec.shutdown).await {
                log::error!(target: LOG, "supervisor {:?}: shutdown_error: child {:?} ({pid:?}) ended with {reason:?}", ctx.pid(), self.children[i].spec.id);
            }
        }
    }

    /// Stop every running child in reverse start order.
    async fn stop_all(&mut self, ctx: &Ctx) {
        for k in (0..self.order.len()).rev() {
            let i = self.order[k];
            self.stop_one(ctx, i).await;
        }
    }

    /// Remove the specs at these indices (temporary children that ended).
    fn remove(&mut self, mut gone: Vec<usize>) {
        if gone.is_empty() {
            return;
        }
        gone.sort_unstable();
        for i in gone.into_iter().rev() {
            self.children.remove(i);
        }
        self.reorder();
    }

    /// The restart group of child `i` (rule 5), as a mask over children.
    fn group(&self, i: usize) -> Vec<bool> {
        let roots: Vec<usize> = match self.flags.strategy {
            Strategy::OneForOne => vec![i],
            Strategy::OneForAll => (0..self.children.len()).collect(),
            Strategy::RestForOne => {
                let pos = self.order.iter().position(|&k| k == i).unwrap_or(0);
                self.order[pos..].to_vec()
            }
        };
        if self.flags.strategy == Strategy::OneForAll {
            return vec![true; self.children.len()];
        }
        graph::dependents_of(&self.nodes(), &roots)
    }

    /// Child `i` ended and must be restarted (rules 5, 6).
    async fn restart(&mut self, ctx: &Ctx, mut i: usize) -> Flow {
        loop {
            if !self.restarts.add() {
                log::error!(target: LOG, "supervisor {:?}: reached_max_restart_intensity ({} in {:?}), last child {:?}; shutting down",
                    ctx.pid(), self.flags.intensity, self.flags.period, self.children[i].spec.id);
                self.gave_up = true;
                return Flow::Stop(Reason::Shutdown);
            }
            let group = self.group(i);
            // Stop the running members, reverse start order.
            for k in (0..self.order.len()).rev() {
                let j = self.order[k];
                if group[j] && j != i {
                    self.stop_one(ctx, j).await;
                }
            }
            // Temporary members are not restarted: their specs go.
            let temporary: Vec<usize> = (0..self.children.len())
                .filter(|&j| group[j] && self.children[j].spec.restart == Restart::Temporary)
                .collect();
            let ids: std::collections::HashSet<String> = (0..self.children.len())
                .filter(|&j| group[j] && self.children[j].spec.restart != Restart::Temporary)
                .map(|j| self.children[j].spec.id.clone())
                .collect();
            self.remove(temporary);
            // Start the others, start order.
            let mut failed = None;
            for k in 0..self.order.len() {
                let j = self.order[k];
                if !ids.contains(&self.children[j].spec.id) {
                    continue;
                }
                if self.start_one(ctx, j).await.is_err() {
                    failed = Some(j);
                    break;
                }
            }
            match failed {
                // Rule 5: a failed start is one more restart.
                Some(j) => i = j,
                None => return Flow::Continue,
            }
        }
    }

    /// A child's exit (rule 4).
    async fn child_exit(&mut self, ctx: &Ctx, x: Exit) -> Flow {
        let Some(i) = self.children.iter().position(|c| c.pid == Some(x.from)) else {
            return Flow::Continue; // not (or no longer) our child
        };
        self.children[i].pid = None;
        let spec = &self.children[i].spec;
        let orderly = is_orderly(&x.reason);
        if !orderly {
            log::error!(target: LOG, "supervisor {:?}: child_terminated: child {:?} ({:?}) ended with {:?}", ctx.pid(), spec.id, x.from, x.reason);
        }
        match spec.restart {
            Restart::Temporary => {
                self.remove(vec![i]);
                Flow::Continue
            }
            Restart::Transient if orderly => Flow::Continue,
            _ => self.restart(ctx, i).await,
        }
    }
}

/// Run a start function; a panic in it becomes its error (the start
/// function runs inside the supervisor process).
async fn start_contained(ctx: &Ctx, start: &spec::StartFn) -> Result<Pid, Reason> {
    start_contained_with(ctx, |c| start(c)).await
}

/// [`start_contained`] for any start closure.
pub(crate) async fn start_contained_with<'a, F>(ctx: &'a Ctx, f: F) -> Result<Pid, Reason>
where
    F: FnOnce(&'a Ctx) -> BoxFuture<'a, Result<Pid, Reason>>,
{
    let fut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(ctx)));
    match fut {
        Ok(fut) => CatchUnwind(fut).await,
        Err(p) => Err(lona_runtime::panic_reason(p)),
    }
}

/// Polls a start future, turning a panic into an error.
struct CatchUnwind<'a>(BoxFuture<'a, Result<Pid, Reason>>);

impl std::future::Future for CatchUnwind<'_> {
    type Output = Result<Pid, Reason>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let f = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f.as_mut().poll(cx))) {
            Ok(p) => p,
            Err(p) => std::task::Poll::Ready(Err(lona_runtime::panic_reason(p))),
        }
    }
}

impl Server for SupServer {
    type Call = SupCall;
    type Reply = SupReply;
    type Cast = ();
    type Info = ();

    async fn init(&mut self, ctx: &Ctx) -> Result<(), Reason> {
        ctx.trap_exit(true).await;
        let specs = std::mem::take(&mut self.initial);
        let nodes: Vec<graph::Node<'_>> = specs
            .iter()
            .map(|s| (s.id.as_str(), s.depends_on.as_slice()))
            .collect();
        let order = graph::start_order(&nodes).map_err(Reason::custom)?;
        self.children = specs
            .into_iter()
            .map(|spec| Child { spec, pid: None })
            .collect();
        self.order = order;
        for k in 0..self.order.len() {
            let i = self.order[k];
            if let Err(reason) = self.start_one(ctx, i).await {
                // Rule 2: undo, then fail.
                self.stop_all(ctx).await;
                let id = self.children[i].spec.id.clone();
                return Err(Reason::custom(SupervisorError::FailedToStartChild {
                    id,
                    reason,
                }));
            }
        }
        Ok(())
    }

    async fn handle_call(
        &mut self,
        ctx: &Ctx,
        req: SupCall,
        _: ReplyTo<SupReply>,
    ) -> Answer<SupReply> {
        let reply = match req {
            SupCall::Which => SupReply::Which(
                self.order
                    .iter()
                    .map(|&i| {
                        let c = &self.children[i];
                        ChildInfo {
                            id: c.spec.id.clone(),
                            pid: c.pid,
                            kind: c.spec.kind,
                            restart: c.spec.restart,
                        }
                    })
                    .collect(),
            ),
            SupCall::Count => {
                let mut n = ChildCounts {
                    specs: self.children.len(),
                    ..ChildCounts::default()
                };
                for c in &self.children {
                    n.active += c.pid.is_some() as usize;
                    match c.spec.kind {
                        ChildType::Worker => n.workers += 1,
                        ChildType::Supervisor => n.supervisors += 1,
                    }
                }
                SupReply::Count(n)
            }
            SupCall::Terminate(id) => SupReply::Done(match self.find(&id) {
                None => Err(SupervisorError::NotFound(id)),
                Some(i) => {
                    self.stop_one(ctx, i).await;
                    if self.children[i].spec.restart == Restart::Temporary {
                        self.remove(vec![i]);
                    }
                    Ok(())
                }
            }),
            SupCall::Restart(id) => SupReply::Started(match self.find(&id) {
                None => Err(SupervisorError::NotFound(id)),
                Some(i) if self.children[i].pid.is_some() => Err(SupervisorError::Running(id)),
                Some(i) => self
                    .start_one(ctx, i)
                    .await
                    .map_err(|reason| SupervisorError::FailedToStartChild { id, reason }),
            }),
            SupCall::Delete(id) => SupReply::Done(match self.find(&id) {
                None => Err(SupervisorError::NotFound(id)),
                Some(i) if self.children[i].pid.is_some() => Err(SupervisorError::Running(id)),
                Some(i) => {
                    let dependents: Vec<String> = self
                        .children
                        .iter()
                        .filter(|c| c.spec.depends_on.contains(&id))
                        .map(|c| c.spec.id.clone())
                        .collect();
                    if dependents.is_empty() {
                        self.remove(vec![i]);
                        Ok(())
                    } else {
                        Err(SupervisorError::HasDependents { id, dependents })
                    }
                }
            }),
            SupCall::Start(spec) => SupReply::Started(self.add_child(ctx, *spec).await),
        };
        Answer::Reply(reply)
    }

    async fn handle_info(&mut self, ctx: &Ctx, msg: Info<()>) -> Flow {
        match msg {
            Info::Exit(x) => self.child_exit(ctx, x).await,
            _ => Flow::Continue,
        }
    }

    async fn terminate(&mut self, ctx: &Ctx, _reason: &Reason) {
        self.stop_all(ctx).await;
        if let (true, Some(starter)) = (self.gave_up, self.ends) {
            // Rule 10. Ordered between the two of us: a starter that does
            // not trap exits ends of the first; one that does gets it as a
            // message and is killed by the second.
            log::error!(target: LOG, "supervisor {:?}: ending the node: its starter {starter:?}", ctx.pid());
            let gave_up = SupervisorGaveUp {
                supervisor: ctx.pid(),
            };
            ctx.send_exit(starter, Reason::custom(gave_up)).await;
            ctx.send_exit(starter, Reason::Kill).await;
        }
    }
}

impl SupServer {
    /// `start_child` (rule 7).
    async fn add_child(&mut self, ctx: &Ctx, spec: ChildSpec) -> Result<Pid, SupervisorError> {
        if self.find(&spec.id).is_some() {
            return Err(SupervisorError::AlreadyPresent(spec.id));
        }
        let mut nodes = self.nodes();
        nodes.push((spec.id.as_str(), spec.depends_on.as_slice()));
        let order = graph::start_order(&nodes)?;
        let id = spec.id.clone();
        self.children.push(Child { spec, pid: None });
        self.order = order;
        let i = self.children.len() - 1;
        match self.start_one(ctx, i).await {
            Ok(pid) => Ok(pid),
            Err(reason) => {
                self.remove(vec![i]);
                Err(SupervisorError::FailedToStartChild { id, reason })
            }
        }
    }
}
