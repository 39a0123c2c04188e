//! Lonala processes for a Rust program, without glue: supervised by a
//! [`lona_otp::Supervisor`] ([`child_spec`], [`server_child_spec`]) and
//! called from a native process ([`call`], [`cast`]) with serde values
//! ([`crate::bridge`]).
//!
//! ```
//! use lona_otp::{Strategy, Supervisor};
//! use lona_runtime::Runtime;
//! use lona_vm::{eval_str, otp, Env};
//!
//! let env = Env::stdout();
//! eval_str(&env, "counter.lona", r#"
//!     (ns counter)
//!     (defn init [n] [:ok n])
//!     (defn handle-call [msg _from n]
//!       (match msg
//!         :get [:reply n n]
//!         [:add k] [:reply (+ n k) (+ n k)]))
//!     (defn handle-cast [_ n] [:noreply n])
//! "#).unwrap();
//!
//! /// `:get` and `[:add k]` in Lonala.
//! #[derive(serde::Serialize)]
//! enum Counter { Get, Add(i64) }
//!
//! let rt = Runtime::new().unwrap();
//! let got = rt.block_on(move |ctx| async move {
//!     let spec = otp::server_child_spec("counter", &env, "counter", 40, Some("counter")).unwrap();
//!     Supervisor::new(Strategy::OneForOne).child(spec).start_link(&ctx, None).await.unwrap();
//!     let _: i64 = otp::call(&ctx, "counter", &Counter::Add(2)).await.unwrap();
//!     otp::call::<i64>(&ctx, "counter", &Counter::Get).await
//! });
//! assert_eq!(got.unwrap().unwrap(), 42);
//! ```
//!
//! The call follows `lona.server`'s protocol and rule 3 (its source,
//! `lonala/server.lona`): the request goes as `[:$gen_call [caller tag]
//! request]`, the server answers `[tag reply]` to the alias `tag`, which
//! is also the reference of a monitor of the server for the call. So
//! a reply after the caller gave up is dropped, the server's end is
//! noticed at once, and only the reply is deserialized (other messages
//! in the mailbox are looked at, never converted).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use lona_otp::ChildSpec;
use lona_runtime::{Ctx, Dest, Down, Envelope, Pid, Reason, Ref, SpawnOpts};
use lona_term::{Fragment, Heap, Term, View};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::bridge::{from_term, to_term, BridgeError, PidTerm};
use crate::error::LookupError;
use crate::process::LonaProcess;
use crate::Env;

/// The default timeout of [`call`]: 5,000 ms, as `lona.server/call`'s and
/// gen_server's.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(5000);

/// Why a [`call`] to a Lonala server failed.
#[derive(Clone, Debug, PartialEq)]
pub enum LonaCallError {
    /// No server there: a dead pid, a name nobody holds, or the server
    /// ended before it could see the request.
    NoProc,
    /// The server ended with this reason before replying (a Lonala
    /// reason: [`crate::bridge::from_reason`] reads it).
    Exit(Reason),
    /// No reply within the timeout.
    Timeout,
    /// The request could not be made a term; nothing was sent.
    Request(BridgeError),
    /// The reply came but is not the type asked for.
    Reply(BridgeError),
}

impl LonaCallError {
    /// The error as an exit reason, as `lona.server/call` would exit its
    /// caller with (`:noproc`, the server's reason, `"timeout"`; a
    /// conversion error as its text).
    pub fn reason(&self) -> Reason {
        match self {
            LonaCallError::NoProc => Reason::NoProc,
            LonaCallError::Exit(r) => r.clone(),
            LonaCallError::Timeout => Reason::from("timeout"),
            other => Reason::from(other.to_string()),
        }
    }
}

impl fmt::Display for LonaCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LonaCallError::NoProc => f.write_str("Lonala call failed: noproc (no such server)"),
            LonaCallError::Exit(r) => write!(f, "Lonala call failed: the server ended with {r:?}"),
            LonaCallError::Timeout => f.write_str("Lonala call failed: timeout"),
            LonaCallError::Request(e) => write!(f, "Lonala call failed: the request: {e}"),
            LonaCallError::Reply(e) => write!(f, "Lonala call failed: the reply: {e}"),
        }
    }
}

impl std::error::Error for LonaCallError {}

/// The pid of `dest` now: the pid, or the name's holder.
async fn resolve(ctx: &Ctx, dest: Dest) -> Option<Pid> {
    match dest {
        Dest::Pid(p) => Some(p),
        Dest::Name(n) => ctx.whereis(&n).await,
    }
}

/// Whether `e` is the reply tagged `tag`: a term `[tag reply]`.
fn is_reply(e: &Envelope, tag: Ref) -> bool {
    e.downcast_ref::<Fragment>()
        .is_some_and(|f| tagged(f.root(), tag).is_some())
}

/// The second element of `t` if `t` is `[tag x]`.
fn tagged(t: Term<'_>, tag: Ref) -> Option<Term<'_>> {
    match t.view() {
        View::Vector([r, x]) if matches!(r.view(), View::Ref(bits) if bits == tag.to_bits()) => {
            Some(*x)
        }
        _ => None,
    }
}

/// The reply in a message [`is_reply`] took.
fn reply_of<R: DeserializeOwned>(e: Envelope, tag: Ref) -> Result<R, LonaCallError> {
    let f = e
        .downcast::<Fragment>()
        .unwrap_or_else(|_| unreachable!("the receive took a fragment"));
    let x = tagged(f.root(), tag).unwrap_or_else(|| unreachable!("the receive took a reply"));
    from_term(x).map_err(LonaCallError::Reply)
}

/// Calls the `lona.server` `dest` (a pid or a registered name) with
/// `request` and waits up to [`DEFAULT_CALL_TIMEOUT`] for its reply,
/// deserialized as `R` ([`call_timeout`]).
pub async fn call<R: DeserializeOwned>(
    ctx: &Ctx,
    dest: impl Into<Dest>,
    request: &(impl Serialize + ?Sized),
) -> Result<R, LonaCallError> {
    call_timeout(ctx, dest, request, DEFAULT_CALL_TIMEOUT).await
}

/// Calls the `lona.server` `dest` with `request` (its `handle-call`
/// gets the term [`crate::bridge`] makes of it) and waits at most
/// `timeout` (`Duration::MAX` waits forever) for the reply, deserialized
/// as `R`. As gen_server's call, it monitors the server meanwhile: an
/// error when there is no server ([`LonaCallError::NoProc`]), when it ends
/// before replying (`Exit`, with its reason), at the timeout (`Timeout`;
/// a later reply is dropped), or when the reply is not an `R` (`Reply`).
pub async fn call_timeout<R: DeserializeOwned>(
    ctx: &Ctx,
    dest: impl Into<Dest>,
    request: &(impl Serialize + ?Sized),
    timeout: Duration,
) -> Result<R, LonaCallError> {
    let Some(pid) = resolve(ctx, dest.into()).await else {
        return Err(LonaCallError::NoProc);
    };
    let tag = ctx.monitor(pid).await;
    let msg = match gen_call(ctx.pid(), tag, request) {
        Ok(m) => m,
        Err(e) => {
            ctx.demonitor_flush(tag).await;
            return Err(LonaCallError::Request(e));
        }
    };
    ctx.alias(tag).await;
    ctx.send(pid, msg).await;
    let got = ctx
        .receive_where_timeout(
            move |e: &Envelope| {
                is_reply(e, tag) || e.downcast_ref::<Down>().is_some_and(|d| d.mref == tag)
            },
            timeout,
        )
        .await;
    ctx.unalias(tag).await;
    match got {
        Some(e) if e.downcast_ref::<Down>().is_some() => {
            let d = e
                .downcast::<Down>()
                .unwrap_or_else(|_| unreachable!("a Down"));
            match d.reason {
                Reason::NoProc => Err(LonaCallError::NoProc),
                r => Err(LonaCallError::Exit(r)),
            }
        }
        Some(e) => {
            ctx.demonitor_flush(tag).await;
            reply_of(e, tag)
        }
        None => {
            // The alias is off, so nothing more comes; a reply already
            // here still counts.
            ctx.demonitor_flush(tag).await;
            match ctx
                .receive_where_timeout(move |e: &Envelope| is_reply(e, tag), Duration::ZERO)
                .await
            {
                Some(e) => reply_of(e, tag),
                None => Err(LonaCallError::Timeout),
            }
        }
    }
}

/// `[:$gen_call [from tag] request]`.
fn gen_call(
    from: Pid,
    tag: Ref,
    request: &(impl Serialize + ?Sized),
) -> Result<Fragment, BridgeError> {
    let heap = Heap::new();
    let req = to_term(&heap, request)?;
    let from = heap.vector(&[
        to_term(&heap, &PidTerm(from))?,
        heap.reference(tag.to_bits()),
    ]);
    let t = heap.vector(&[Term::keyword("$gen_call"), from, req]);
    Ok(Fragment::new(t))
}

/// Sends `request` to the `lona.server` `dest` for its `handle-cast`,
/// without waiting: `lona.server/cast`. Never fails for want of a server
/// (a name nobody holds drops it); only a request that cannot be made a
/// term is an error.
pub async fn cast(
    ctx: &Ctx,
    dest: impl Into<Dest>,
    request: &(impl Serialize + ?Sized),
) -> Result<(), BridgeError> {
    let heap = Heap::new();
    let req = to_term(&heap, request)?;
    let msg = Fragment::new(heap.vector(&[Term::keyword("$gen_cast"), req]));
    if let Some(pid) = resolve(ctx, dest.into()).await {
        ctx.send(pid, msg).await;
    }
    Ok(())
}

/// The arguments of a call, made again for each start (a fragment is not
/// `Sync`, and a start runs on whichever thread the supervisor is on).
type Args = Arc<dyn Fn() -> Result<Fragment, BridgeError> + Send + Sync>;

fn args_of<A: Serialize + Send + Sync + 'static>(args: A) -> Args {
    Arc::new(move || crate::bridge::to_message(&args))
}

/// A supervisor's child that runs the Lonala function `function`
/// (`"ns/name"`) on `args` (serialized by [`crate::bridge`]: a tuple or a
/// `Vec` for several arguments, `()` for none) in a process of its own,
/// spawned linked to the supervisor and registered as `name` if given
/// (the name follows restarts). The function's return is the process's
/// normal end; an error in it, a crash. OTP's defaults as
/// [`ChildSpec::new`]'s; set others with its builders.
///
/// An error now if `function` is not defined or `args` cannot be
/// serialized; a start also fails (and the supervisor reports it) if the
/// function is no longer defined then.
pub fn child_spec<A: Serialize + Send + Sync + 'static>(
    id: impl Into<String>,
    env: &Arc<Env>,
    function: &str,
    args: A,
    name: Option<&str>,
) -> Result<ChildSpec, LookupError> {
    let args = args_of(args);
    let first = args().map_err(|e| LookupError::BadArguments(e.to_string()))?;
    LonaProcess::call(env.clone(), function, &first)?;
    let env = env.clone();
    let function: Arc<str> = function.into();
    let name: Option<Arc<str>> = name.map(Into::into);
    Ok(ChildSpec::new(id, move |ctx| {
        let (env, function, name, args) =
            (env.clone(), function.clone(), name.clone(), args.clone());
        Box::pin(async move {
            let args = args().map_err(Reason::custom)?;
            let p = LonaProcess::call(env, &function, &args).map_err(Reason::custom)?;
            let (pid, _) = ctx
                .spawn_process_opt(SpawnOpts::new().link(true), p)
                .await
                .map_err(Reason::custom)?;
            if let Some(name) = &name {
                if let Err(e) = ctx.register_pid(name, pid).await {
                    ctx.send_exit(pid, Reason::Kill).await;
                    return Err(Reason::custom(e));
                }
            }
            Ok(pid)
        })
    }))
}

/// A supervisor's child that runs the `lona.server` whose callbacks are
/// the namespace `module` (its `init` gets `arg`), registered as `name`
/// if given: `lona.server/start-link` for a supervisor written in Rust.
/// The start returns once `init` has (rule 1 of `lona.server`): its
/// `[:stop reason]`, an error in it, or the name being taken fail the
/// start with that reason; `:ignore` fails it with `"ignore"` (a Rust
/// supervisor keeps no child that is not running).
///
/// An error now if `module` has no `init` or `arg` cannot be serialized.
/// Loads `lona.server` if no program has yet.
pub fn server_child_spec<A: Serialize + Send + Sync + 'static>(
    id: impl Into<String>,
    env: &Arc<Env>,
    module: &str,
    arg: A,
    name: Option<&str>,
) -> Result<ChildSpec, LookupError> {
    let has_init = env
        .namespaces
        .get(module)
        .and_then(|n| n.lookup("init"))
        .is_some();
    if !has_init {
        return Err(LookupError::NoVar(module.to_string(), "init".to_string()));
    }
    if env.namespaces.get("lona.server").is_none() {
        crate::eval_str(env, "<lona_vm::otp>", "(require 'lona.server)")
            .map_err(|e| LookupError::BadArguments(format!("loading lona.server: {e}")))?;
    }
    let arg = args_of(arg);
    arg().map_err(|e| LookupError::BadArguments(e.to_string()))?;
    let env = env.clone();
    let module: Arc<str> = module.into();
    let name: Option<Arc<str>> = name.map(Into::into);
    Ok(ChildSpec::new(id, move |ctx| {
        let (env, module, name, arg) = (env.clone(), module.clone(), name.clone(), arg.clone());
        Box::pin(async move {
            let arg = arg().map_err(Reason::custom)?;
            let start = {
                let heap = Heap::new();
                let module = heap.string(&module);
                let arg = heap.copy_from(arg.root());
                let name = match &name {
                    Some(n) => heap.string(n),
                    None => Term::NIL,
                };
                let parent = crate::msg::pid_term(&heap, ctx.pid());
                Fragment::new(heap.vector(&[module, arg, name, parent]))
            };
            let p = LonaProcess::call(env, "lona.server/enter-child", &start)
                .map_err(Reason::custom)?;
            let (pid, mref) = ctx
                .spawn_process_opt(SpawnOpts::new().link(true).monitor(true), p)
                .await
                .map_err(Reason::custom)?;
            let mref = mref.unwrap_or_else(|| unreachable!("spawned with a monitor"));
            // `[pid result]` from the child once `init` has returned, or
            // its end.
            let got = ctx
                .receive_where(move |e: &Envelope| {
                    e.downcast_ref::<Down>().is_some_and(|d| d.mref == mref)
                        || e.downcast_ref::<Fragment>()
                            .is_some_and(|f| started(f.root(), pid).is_some())
                })
                .await;
            let f = match got.downcast::<Fragment>() {
                Ok(f) => f,
                Err(e) => {
                    let d = e
                        .downcast::<Down>()
                        .unwrap_or_else(|_| unreachable!("a Down"));
                    return Err(d.reason);
                }
            };
            ctx.demonitor_flush(mref).await;
            let result = started(f.root(), pid).unwrap_or_else(|| unreachable!("an ack"));
            match result.view() {
                View::Keyword(k) if k.name() == "ok" => Ok(pid),
                View::Vector([e, r]) if matches!(e.view(), View::Keyword(k) if k.name() == "error") => {
                    Err(crate::msg::term_reason(*r, None))
                }
                _ => Err(Reason::from("ignore")),
            }
        })
    }))
}

/// The result in `t` if `t` is the start acknowledgement `[pid result]`
/// of `pid`.
fn started(t: Term<'_>, pid: Pid) -> Option<Term<'_>> {
    match t.view() {
        View::Vector([p, x]) if crate::msg::term_pid(*p) == Some(pid) => Some(*x),
        _ => None,
    }
}
