//! [`ChildSpec`]: how a supervisor starts, restarts and stops one child
//! (OTP's child specification: `id`, `start`, `restart`, `shutdown`,
//! `type`), plus the ids it depends on.
//!
//! Defaults are OTP's: restart `Permanent`; shutdown 5,000 ms for a worker
//! and `Infinity` for a supervisor; type `Worker`; no dependencies.

use crate::server::{start_link, Server};
use lona_runtime::{Ctx, Pid, Reason};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// A boxed future borrowing the supervisor's [`Ctx`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A start function: spawns the child *linked to the calling supervisor*
/// and returns its pid, or why it could not.
pub type StartFn = Arc<dyn for<'a> Fn(&'a Ctx) -> BoxFuture<'a, Result<Pid, Reason>> + Send + Sync>;

/// When a child that ended is restarted (OTP's restart type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Always.
    Permanent,
    /// Only after an abnormal end: not after `normal`, `shutdown` or
    /// `{shutdown, Term}` ([`ShutdownWith`](crate::ShutdownWith)).
    Transient,
    /// Never; the child's spec is removed when it ends.
    Temporary,
}

/// How a child is stopped (OTP's shutdown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// `exit(child, kill)` at once.
    BrutalKill,
    /// `exit(child, shutdown)`, then `kill` after this long.
    Timeout(Duration),
    /// `exit(child, shutdown)`, and wait as long as it takes.
    Infinity,
}

/// Whether the child is a worker or a supervisor (sets the default
/// shutdown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildType {
    /// A worker: default shutdown 5,000 ms.
    Worker,
    /// A supervisor: default shutdown `Infinity`.
    Supervisor,
}

impl ChildType {
    /// OTP's default shutdown for a child of this type.
    pub fn default_shutdown(self) -> Shutdown {
        match self {
            ChildType::Worker => DEFAULT_WORKER_SHUTDOWN,
            ChildType::Supervisor => Shutdown::Infinity,
        }
    }
}

/// A child specification.
#[derive(Clone)]
pub struct ChildSpec {
    /// Unique among the supervisor's children.
    pub id: String,
    /// Spawns the child linked to the supervisor.
    pub start: StartFn,
    /// When it is restarted.
    pub restart: Restart,
    /// How it is stopped.
    pub shutdown: Shutdown,
    /// Worker or supervisor.
    pub kind: ChildType,
    /// Ids of siblings that must run before it: it starts after them, stops
    /// before them, and is restarted with them.
    pub depends_on: Vec<String>,
}

impl fmt::Debug for ChildSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildSpec")
            .field("id", &self.id)
            .field("restart", &self.restart)
            .field("shutdown", &self.shutdown)
            .field("kind", &self.kind)
            .field("depends_on", &self.depends_on)
            .finish_non_exhaustive()
    }
}

/// The default worker shutdown: 5,000 ms.
pub const DEFAULT_WORKER_SHUTDOWN: Shutdown = Shutdown::Timeout(Duration::from_millis(5000));

impl ChildSpec {
    /// A worker started by `start` (which must spawn it linked), with OTP's
    /// defaults. `start` is usually `|ctx| Box::pin(async move { ... })`.
    pub fn new<F>(id: impl Into<String>, start: F) -> ChildSpec
    where
        F: for<'a> Fn(&'a Ctx) -> BoxFuture<'a, Result<Pid, Reason>> + Send + Sync + 'static,
    {
        ChildSpec {
            id: id.into(),
            start: Arc::new(start),
            restart: Restart::Permanent,
            shutdown: DEFAULT_WORKER_SHUTDOWN,
            kind: ChildType::Worker,
            depends_on: Vec::new(),
        }
    }

    /// A worker running `body` as a native process the supervisor spawns
    /// linked (a fresh call of `body` for each incarnation).
    pub fn worker<F, Fut>(id: impl Into<String>, body: F) -> ChildSpec
    where
        F: Fn(Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let body = Arc::new(body);
        ChildSpec::new(id, move |ctx| {
            let body = body.clone();
            Box::pin(async move {
                ctx.spawn_link(move |c| body(c))
                    .await
                    .map_err(Reason::custom)
            })
        })
    }

    /// A [`Server`] built by `make` for each incarnation and started with
    /// [`start_link`], registered as `name` if given (the name is the
    /// child's stable identity across restarts).
    pub fn server<S, F>(id: impl Into<String>, name: Option<&str>, make: F) -> ChildSpec
    where
        S: Server,
        F: Fn() -> S + Send + Sync + 'static,
    {
        let make = Arc::new(make);
        let name: Option<Arc<str>> = name.map(Into::into);
        ChildSpec::new(id, move |ctx| {
            let (make, name) = (make.clone(), name.clone());
            Box::pin(async move {
                start_link(ctx, make(), name.as_deref())
                    .await
                    .map(|s| {
                        s.pid()
                            .unwrap_or_else(|| unreachable!("start returns a pid"))
                    })
                    .map_err(|e| e.reason())
            })
        })
    }

    /// A child supervisor (type `Supervisor`, shutdown `Infinity`).
    pub fn supervisor<F>(id: impl Into<String>, start: F) -> ChildSpec
    where
        F: for<'a> Fn(&'a Ctx) -> BoxFuture<'a, Result<Pid, Reason>> + Send + Sync + 'static,
    {
        ChildSpec::new(id, start).kind(ChildType::Supervisor)
    }

    /// Set the restart type.
    pub fn restart(mut self, r: Restart) -> ChildSpec {
        self.restart = r;
        self
    }

    /// Set the shutdown.
    pub fn shutdown(mut self, s: Shutdown) -> ChildSpec {
        self.shutdown = s;
        self
    }

    /// Set the type; the shutdown becomes that type's default.
    pub fn kind(mut self, k: ChildType) -> ChildSpec {
        self.kind = k;
        self.shutdown = k.default_shutdown();
        self
    }

    /// Depend on the sibling `id` (module doc of `supervisor`, rule 9).
    pub fn depends_on(mut self, id: impl Into<String>) -> ChildSpec {
        self.depends_on.push(id.into());
        self
    }
}

/// OTP's `{shutdown, Term}` exit reason: an orderly stop with a detail.
/// A transient child ending with it is not restarted, and it is not
/// reported as a crash.
#[derive(Clone, Debug, PartialEq)]
pub struct ShutdownWith(pub String);

/// Whether `reason` is an orderly end: `normal`, `shutdown`, or
/// `{shutdown, _}` ([`ShutdownWith`]).
pub fn is_orderly(reason: &Reason) -> bool {
    matches!(reason, Reason::Normal | Reason::Shutdown)
        || reason.downcast_ref::<ShutdownWith>().is_some()
}
