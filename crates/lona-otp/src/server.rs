//! [`Server`]: Erlang's `gen_server` for native Lona processes.
//!
//! # Rules (gen_server's, OTP design principles and `gen.erl`)
//! 1. **Start is synchronous.** [`start`] / [`start_link`] spawn the
//!    server (linked to the caller for `start_link`, atomically), register
//!    its name first when one is given, run [`Server::init`], and return
//!    only when `init` has returned. A name already taken fails with
//!    [`StartError::AlreadyStarted`] (the new process ends `normal`); an
//!    `init` that returns `Err(reason)` or panics fails with
//!    [`StartError::Init`] and the process ends with that reason (through
//!    the link, a caller of `start_link` that does not trap exits ends
//!    too, as in Erlang). When start returns an error, the process is
//!    gone and its name free.
//! 2. **Messages are handled one at a time, in arrival order**: a call by
//!    [`Server::handle_call`], a cast by [`Server::handle_cast`], anything
//!    else (an [`Exit`] of a linked process when trapping, a [`Down`] of a
//!    monitor, a message of type [`Server::Info`]) by
//!    [`Server::handle_info`]. A message of any other type is logged and
//!    dropped (gen_server's default `handle_info`).
//! 3. **A call** ([`ServerRef::call`], default timeout 5,000 ms;
//!    [`ServerRef::call_timeout`]) monitors the server, makes the
//!    monitor's reference an alias of the caller (lona-runtime's process
//!    aliases, `links` rule 11) and sends the request tagged with it; the
//!    reply is sent to that alias. The caller waits for the reply or the
//!    monitor's `Down`:
//!    - reply: the monitor is removed (with any `Down` already queued);
//!    - `Down`: the call fails with [`CallError::NoProc`] if the server was
//!      not there, else [`CallError::Exit`] with its exit reason;
//!    - no name registered: [`CallError::NoProc`] at once;
//!    - timeout: the alias is deactivated, the monitor removed, and a reply
//!      already in the mailbox is still taken (so a reply that won the race
//!      is the answer); otherwise [`CallError::Timeout`]. A reply that comes
//!      later is dropped by the runtime when it arrives: it never reaches
//!      the caller's mailbox.
//!
//!    A call never ends the caller: every failure is an error value
//!    (gen_server exits the caller instead; catch-and-return is what every
//!    Rust caller would write).
//! 4. **Replies**: [`Answer::Reply`] replies at once; [`Answer::NoReply`]
//!    keeps the [`ReplyTo`] to answer later with [`ReplyTo::reply`];
//!    [`Answer::Stop`] ends the server, replying after `terminate`.
//! 5. **A cast** ([`ServerRef::cast`]) never fails and never waits, even to
//!    a server that is gone or a name nobody holds.
//! 6. **Ending.** A handler returning [`Flow::Stop`] (or [`Answer::Stop`]),
//!    or [`ServerRef::stop`], runs [`Server::terminate`] and ends the
//!    process with the reason. When the server traps exits, an exit signal
//!    from its *parent* (the caller of `start_link`) does the same with the
//!    parent's reason (how a supervisor's shutdown reaches it), and so
//!    does one from the runtime itself ([`RUNTIME_PID`]: the runtime's
//!    shutdown, everyone's ancestor); without trapping, exit signals end
//!    it at once, without `terminate`. A handler that panics runs
//!    `terminate` with the panic as reason (and the state as the handler
//!    left it), then ends the server with that reason; its callers get
//!    [`CallError::Exit`].
//!    [`ServerRef::stop`] waits for the server to end and fails with
//!    [`CallError::NoProc`] if it was not there, or [`CallError::Exit`] if it
//!    ended with another reason.

use lona_runtime::{
    Ctx, Down, Envelope, Exit, Pid, Reason, Ref, SpawnError, SpawnOpts, RUNTIME_PID,
};
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// gen_server's default call timeout: 5,000 ms.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(5000);

/// What a cast or info handler decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    /// Wait for the next message.
    Continue,
    /// Run [`Server::terminate`] and end with this reason.
    Stop(Reason),
}

/// What a call handler decides (gen_server's `reply` / `noreply` / `stop`).
#[derive(Debug)]
pub enum Answer<R> {
    /// Reply with this value now.
    Reply(R),
    /// Do not reply now: the handler kept the [`ReplyTo`] and answers
    /// later with [`ReplyTo::reply`] (or never: the caller times out).
    NoReply,
    /// End the server with `reason`, replying `reply` (if any) after
    /// [`Server::terminate`].
    Stop {
        /// The server's exit reason.
        reason: Reason,
        /// The reply to the caller, if any.
        reply: Option<R>,
    },
}

/// A message that is not a call or a cast (gen_server's `handle_info`).
#[derive(Debug)]
pub enum Info<M> {
    /// A message of the server's [`Server::Info`] type.
    Message(M),
    /// An exit signal of a linked process, when the server traps exits
    /// (not its parent's: that one stops the server, rule 6).
    Exit(Exit),
    /// A `Down` of a monitor the server holds.
    Down(Down),
}

/// A gen_server: a process holding `Self` as its state and handling typed
/// requests one at a time (module doc).
///
/// ```
/// use lona_otp::{Answer, Flow, Server, ServerRef};
/// use lona_runtime::{Ctx, Runtime};
///
/// struct Counter(u64);
/// impl Server for Counter {
///     type Call = ();          // "what is the count?"
///     type Reply = u64;
///     type Cast = u64;         // "add this"
///     type Info = ();
///     async fn handle_call(&mut self, _: &Ctx, _: (), _: lona_otp::ReplyTo<u64>) -> Answer<u64> {
///         Answer::Reply(self.0)
///     }
///     async fn handle_cast(&mut self, _: &Ctx, n: u64) -> Flow {
///         self.0 += n;
///         Flow::Continue
///     }
/// }
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let n = rt.block_on(|ctx| async move {
///     let s: ServerRef<Counter> = lona_otp::start(&ctx, Counter(0), None).await.unwrap();
///     s.cast(&ctx, 40).await;
///     s.cast(&ctx, 2).await;
///     s.call(&ctx, ()).await
/// });
/// assert_eq!(n, Ok(Ok(42)));
/// ```
pub trait Server: Send + Sized + 'static {
    /// A request that expects a reply.
    type Call: Send + 'static;
    /// The reply to a [`Server::Call`].
    type Reply: Send + 'static;
    /// A request without reply.
    type Cast: Send + 'static;
    /// Plain messages sent to the server's pid, handled by
    /// [`Server::handle_info`] (`()` if none).
    type Info: Send + 'static;

    /// Runs in the new process before [`start`] returns; an error fails the
    /// start and ends the process with that reason.
    fn init(&mut self, ctx: &Ctx) -> impl Future<Output = Result<(), Reason>> + Send {
        let _ = ctx;
        async { Ok(()) }
    }

    /// Handle a call; `from` answers it later when the handler returns
    /// [`Answer::NoReply`].
    fn handle_call(
        &mut self,
        ctx: &Ctx,
        request: Self::Call,
        from: ReplyTo<Self::Reply>,
    ) -> impl Future<Output = Answer<Self::Reply>> + Send;

    /// Handle a cast (default: ignore it).
    fn handle_cast(&mut self, ctx: &Ctx, msg: Self::Cast) -> impl Future<Output = Flow> + Send {
        let _ = (ctx, msg);
        async { Flow::Continue }
    }

    /// Handle any other message (default: log and ignore it; an `Exit`
    /// when trapping is ignored too, as gen_server's default).
    fn handle_info(
        &mut self,
        ctx: &Ctx,
        msg: Info<Self::Info>,
    ) -> impl Future<Output = Flow> + Send {
        let _ = ctx;
        if let Info::Message(_) = msg {
            log::warn!(target: "lona::otp", "server {} received an unexpected info message", std::any::type_name::<Self>());
        }
        async { Flow::Continue }
    }

    /// Runs before the server ends by [`Flow::Stop`], [`Answer::Stop`],
    /// [`ServerRef::stop`] or its parent's exit signal (when trapping).
    fn terminate(&mut self, ctx: &Ctx, reason: &Reason) -> impl Future<Output = ()> + Send {
        let _ = (ctx, reason);
        async {}
    }
}

/// Where to send the reply to one call (gen_server's `From`).
pub struct ReplyTo<R> {
    pid: Pid,
    tag: Ref,
    _r: PhantomData<fn(R)>,
}

impl<R> Clone for ReplyTo<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for ReplyTo<R> {}

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ReplyTo({:?}, {:?})", self.pid, self.tag)
    }
}

impl<R: Send + 'static> ReplyTo<R> {
    /// The calling process.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Reply (gen_server's `reply/2`). Dropped by the runtime if the caller
    /// has given up (timed out) or is gone.
    pub fn reply(self, ctx: &Ctx, value: R) -> impl Future<Output = ()> + Send {
        ctx.send_alias(
            self.pid,
            self.tag,
            ReplyMsg {
                tag: self.tag,
                value,
            },
        )
    }
}

/// A reply, sent to the caller's alias `tag`.
struct ReplyMsg<R> {
    tag: Ref,
    value: R,
}

/// What a server receives from its API.
enum Request<S: Server> {
    Call { from: Pid, tag: Ref, req: S::Call },
    Cast(S::Cast),
    Stop(Reason),
}

/// Why a call failed (gen_server's `{Reason, {gen_server, call, ...}}`).
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    /// No server there: a dead pid, a name nobody holds, or the server
    /// ended before it could see the request.
    NoProc,
    /// The server ended with this reason before replying.
    Exit(Reason),
    /// No reply within the timeout.
    Timeout,
}

impl CallError {
    /// The error as an exit reason, as gen_server would exit the caller
    /// with: `noproc`, the server's reason, or a custom `"timeout"`.
    pub fn reason(&self) -> Reason {
        match self {
            CallError::NoProc => Reason::NoProc,
            CallError::Exit(r) => r.clone(),
            CallError::Timeout => Reason::from("timeout"),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::NoProc => f.write_str("server call failed: noproc (no such server)"),
            CallError::Exit(r) => write!(f, "server call failed: the server ended with {r:?}"),
            CallError::Timeout => f.write_str("server call failed: timeout"),
        }
    }
}

impl std::error::Error for CallError {}

/// Why a start failed.
#[derive(Clone, Debug, PartialEq)]
pub enum StartError {
    /// The name is held by `pid` (gen_server's `{already_started, Pid}`).
    AlreadyStarted {
        /// The name asked for.
        name: String,
        /// Its holder.
        pid: Pid,
    },
    /// `init` failed, or the process ended before `init` returned (a
    /// panic, an exit signal), with this reason.
    Init(Reason),
    /// The process could not be spawned.
    Spawn(SpawnError),
}

impl StartError {
    /// The error as an exit reason (for a supervisor's start function).
    pub fn reason(&self) -> Reason {
        match self {
            StartError::Init(r) => r.clone(),
            other => Reason::custom(other.clone()),
        }
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::AlreadyStarted { name, pid } => {
                write!(f, "already_started: the name {name:?} is held by {pid:?}")
            }
            StartError::Init(r) => write!(f, "init failed: {r:?}"),
            StartError::Spawn(e) => write!(f, "cannot spawn the server: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Target {
    Pid(Pid),
    Name(Arc<str>),
}

/// A way to address a server of type `S`: by pid or by registered name
/// (looked up at each use, so a name follows restarts).
pub struct ServerRef<S> {
    target: Target,
    _s: PhantomData<fn() -> S>,
}

impl<S> Clone for ServerRef<S> {
    fn clone(&self) -> Self {
        ServerRef {
            target: self.target.clone(),
            _s: PhantomData,
        }
    }
}

impl<S> PartialEq for ServerRef<S> {
    fn eq(&self, other: &Self) -> bool {
        self.target == other.target
    }
}

impl<S> fmt::Debug for ServerRef<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Target::Pid(p) => write!(f, "ServerRef({p:?})"),
            Target::Name(n) => write!(f, "ServerRef({n:?})"),
        }
    }
}

impl<S: Server> ServerRef<S> {
    /// The server with this pid.
    pub fn from_pid(pid: Pid) -> Self {
        ServerRef {
            target: Target::Pid(pid),
            _s: PhantomData,
        }
    }

    /// The server registered as `name` (whoever holds it at each use).
    pub fn named(name: &str) -> Self {
        ServerRef {
            target: Target::Name(name.into()),
            _s: PhantomData,
        }
    }

    /// The pid, for a reference made from one.
    pub fn pid(&self) -> Option<Pid> {
        match self.target {
            Target::Pid(p) => Some(p),
            Target::Name(_) => None,
        }
    }

    /// The pid of the server now: the pid, or the name's holder.
    pub async fn whereis(&self, ctx: &Ctx) -> Option<Pid> {
        match &self.target {
            Target::Pid(p) => Some(*p),
            Target::Name(n) => ctx.whereis(n).await,
        }
    }

    /// Call with the default timeout of 5,000 ms (rule 3).
    pub async fn call(&self, ctx: &Ctx, request: S::Call) -> Result<S::Reply, CallError> {
        self.call_timeout(ctx, request, DEFAULT_CALL_TIMEOUT).await
    }

    /// Call, waiting at most `timeout` (rule 3); `Duration::MAX` or
    /// [`INFINITY`](lona_runtime::INFINITY) waits forever.
    pub async fn call_timeout(
        &self,
        ctx: &Ctx,
        request: S::Call,
        timeout: Duration,
    ) -> Result<S::Reply, CallError> {
        let Some(pid) = self.whereis(ctx).await else {
            return Err(CallError::NoProc);
        };
        let tag = ctx.monitor(pid).await;
        ctx.alias(tag).await;
        let from = ctx.pid();
        ctx.send(
            pid,
            Request::<S>::Call {
                from,
                tag,
                req: request,
            },
        )
        .await;
        let is_reply = move |e: &Envelope| {
            e.downcast_ref::<ReplyMsg<S::Reply>>()
                .is_some_and(|r| r.tag == tag)
        };
        let got = ctx
            .receive_where_timeout(
                move |e: &Envelope| {
                    is_reply(e) || e.downcast_ref::<Down>().is_some_and(|d| d.mref == tag)
                },
                timeout,
            )
            .await;
        ctx.unalias(tag).await;
        match got {
            Some(e) => match e.downcast::<ReplyMsg<S::Reply>>() {
                Ok(r) => {
                    ctx.demonitor_flush(tag).await;
                    Ok(r.value)
                }
                Err(e) => match e.downcast::<Down>() {
                    Ok(d) if d.reason == Reason::NoProc => Err(CallError::NoProc),
                    Ok(d) => Err(CallError::Exit(d.reason)),
                    Err(_) => unreachable!("the receive took a reply or a Down"),
                },
            },
            None => {
                // Rule 3, timeout: the alias is off, so nothing more comes;
                // a reply already here still counts.
                ctx.demonitor_flush(tag).await;
                match ctx.receive_where_timeout(is_reply, Duration::ZERO).await {
                    Some(e) => match e.downcast::<ReplyMsg<S::Reply>>() {
                        Ok(r) => Ok(r.value),
                        Err(_) => unreachable!("the receive took a reply"),
                    },
                    None => Err(CallError::Timeout),
                }
            }
        }
    }

    /// Cast (rule 5): never fails, never waits.
    pub async fn cast(&self, ctx: &Ctx, msg: S::Cast) {
        if let Some(pid) = self.whereis(ctx).await {
            ctx.send(pid, Request::<S>::Cast(msg)).await;
        }
    }

    /// Send a plain message of the server's [`Server::Info`] type.
    pub async fn info(&self, ctx: &Ctx, msg: S::Info) {
        if let Some(pid) = self.whereis(ctx).await {
            ctx.send(pid, msg).await;
        }
    }

    /// Stop the server with `reason` and wait until it has ended (rule 6).
    pub async fn stop(&self, ctx: &Ctx, reason: Reason) -> Result<(), CallError> {
        let Some(pid) = self.whereis(ctx).await else {
            return Err(CallError::NoProc);
        };
        let mref = ctx.monitor(pid).await;
        ctx.send(pid, Request::<S>::Stop(reason.clone())).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == mref).await;
        match d.reason {
            Reason::NoProc => Err(CallError::NoProc),
            r if r == reason => Ok(()),
            r => Err(CallError::Exit(r)),
        }
    }
}

/// The answer of a starting server to its starter.
struct Ack {
    tag: Ref,
    result: Result<(), StartError>,
}

/// Start a server, not linked (rule 1), registered as `name` if given.
pub async fn start<S: Server>(
    ctx: &Ctx,
    server: S,
    name: Option<&str>,
) -> Result<ServerRef<S>, StartError> {
    start_opt(ctx, server, name, false).await
}

/// Start a server linked to the caller (rule 1), registered as `name` if
/// given. The caller becomes its parent: when the server traps exits, the
/// parent's exit signal stops it through [`Server::terminate`].
pub async fn start_link<S: Server>(
    ctx: &Ctx,
    server: S,
    name: Option<&str>,
) -> Result<ServerRef<S>, StartError> {
    start_opt(ctx, server, name, true).await
}

#[allow(clippy::field_reassign_with_default)] // see `opts`
async fn start_opt<S: Server>(
    ctx: &Ctx,
    server: S,
    name: Option<&str>,
    link: bool,
) -> Result<ServerRef<S>, StartError> {
    let parent = ctx.pid();
    let tag = Ref::new();
    let name = name.map(str::to_string);
    let opts = SpawnOpts::new().link(link).monitor(true);
    let (pid, mref) = ctx
        .spawn_opt(opts, move |c| async move {
            if let Some(n) = &name {
                if let Err(e) = c.register(n).await {
                    let err = match e {
                        lona_runtime::RegisterError::NameTaken { name, holder } => {
                            StartError::AlreadyStarted { name, pid: holder }
                        }
                        other => StartError::Init(Reason::custom(other)),
                    };
                    c.send(
                        parent,
                        Ack {
                            tag,
                            result: Err(err),
                        },
                    )
                    .await;
                    return;
                }
            }
            let mut server = server;
            match server.init(&c).await {
                Ok(()) => {
                    c.send(
                        parent,
                        Ack {
                            tag,
                            result: Ok(()),
                        },
                    )
                    .await;
                    serve(c, server, link.then_some(parent)).await;
                }
                Err(reason) => {
                    let result = Err(StartError::Init(reason.clone()));
                    c.send(parent, Ack { tag, result }).await;
                    match c.exit(reason).await {}
                }
            }
        })
        .await
        .map_err(StartError::Spawn)?;
    let Some(mref) = mref else {
        unreachable!("spawned with a monitor")
    };
    let got = ctx
        .receive_where(move |e: &Envelope| {
            e.downcast_ref::<Ack>().is_some_and(|a| a.tag == tag)
                || e.downcast_ref::<Down>().is_some_and(|d| d.mref == mref)
        })
        .await;
    match got.downcast::<Ack>() {
        Ok(Ack { result: Ok(()), .. }) => {
            ctx.demonitor_flush(mref).await;
            Ok(ServerRef::from_pid(pid))
        }
        Ok(Ack { result: Err(e), .. }) => {
            // Rule 1: when start fails, the process is gone.
            ctx.receive_where(move |d: &Down| d.mref == mref).await;
            Err(e)
        }
        Err(e) => match e.downcast::<Down>() {
            Ok(d) => Err(StartError::Init(d.reason)),
            Err(_) => unreachable!("the receive took an Ack or a Down"),
        },
    }
}

/// What one message leads to.
enum Next<R> {
    Flow(Flow),
    /// Stop, replying after `terminate` ([`Answer::Stop`]).
    StopReply(Reason, ReplyTo<R>, R),
}

/// The server's loop (rules 2, 4, 6).
async fn serve<S: Server>(ctx: Ctx, mut server: S, parent: Option<Pid>) {
    loop {
        let e = ctx.receive_any().await;
        let next = match catch_panic(handle(&ctx, &mut server, parent, e)).await {
            Ok(next) => next,
            Err(reason) => {
                // Rule 6: a handler panicked; its state is what it left.
                server.terminate(&ctx, &reason).await;
                match ctx.exit(reason).await {}
            }
        };
        match next {
            Next::Flow(Flow::Continue) => {}
            Next::Flow(Flow::Stop(reason)) => {
                server.terminate(&ctx, &reason).await;
                match ctx.exit(reason).await {}
            }
            Next::StopReply(reason, to, r) => {
                server.terminate(&ctx, &reason).await;
                to.reply(&ctx, r).await;
                match ctx.exit(reason).await {}
            }
        }
    }
}

/// Handle one message (rules 2 and 4).
async fn handle<S: Server>(
    ctx: &Ctx,
    server: &mut S,
    parent: Option<Pid>,
    e: Envelope,
) -> Next<S::Reply> {
    match e.downcast::<Request<S>>() {
        Ok(Request::Call { from, tag, req }) => {
            let to = ReplyTo {
                pid: from,
                tag,
                _r: PhantomData,
            };
            match server.handle_call(ctx, req, to).await {
                Answer::Reply(r) => {
                    to.reply(ctx, r).await;
                    Next::Flow(Flow::Continue)
                }
                Answer::NoReply => Next::Flow(Flow::Continue),
                Answer::Stop {
                    reason,
                    reply: Some(r),
                } => Next::StopReply(reason, to, r),
                Answer::Stop {
                    reason,
                    reply: None,
                } => Next::Flow(Flow::Stop(reason)),
            }
        }
        Ok(Request::Cast(msg)) => Next::Flow(server.handle_cast(ctx, msg).await),
        Ok(Request::Stop(reason)) => Next::Flow(Flow::Stop(reason)),
        Err(e) => Next::Flow(info(ctx, server, parent, e).await),
    }
}

/// Await `fut`, turning a panic in it into `Err` with the panic's reason.
async fn catch_panic<F: Future>(fut: F) -> Result<F::Output, Reason> {
    let mut fut = std::pin::pin!(fut);
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(p) => std::task::Poll::Ready(Err(lona_runtime::panic_reason(p))),
        }
    })
    .await
}

/// Anything that is not a request (rules 2 and 6).
async fn info<S: Server>(ctx: &Ctx, server: &mut S, parent: Option<Pid>, e: Envelope) -> Flow {
    let e = match e.downcast::<Exit>() {
        Ok(x) if Some(x.from) == parent || x.from == RUNTIME_PID => return Flow::Stop(x.reason),
        Ok(x) => return server.handle_info(ctx, Info::Exit(x)).await,
        Err(e) => e,
    };
    let e = match e.downcast::<Down>() {
        Ok(d) => return server.handle_info(ctx, Info::Down(d)).await,
        Err(e) => e,
    };
    match e.downcast::<S::Info>() {
        Ok(m) => server.handle_info(ctx, Info::Message(m)).await,
        Err(e) => {
            log::warn!(target: "lona::otp", "server {} dropped an unexpected message of type {}",
                std::any::type_name::<S>(), e.type_name());
            Flow::Continue
        }
    }
}
