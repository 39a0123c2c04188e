//! [`Ctx`]: a native process's API, a thin `async` layer over
//! [`StepCx`](crate::StepCx) (see the module doc of `native`).

use super::receive::{Charge, Done, ExitNow, Receive, ReceiveTimeout, RecvCore, YieldNow};
use super::timeout::{Deadline, Sleep};
use super::with_cx;
use crate::base::envelope::Envelope;
use crate::base::error::{SendError, SpawnError};
use crate::base::pid::Dest;
use crate::rules::signal::{AliveReply, InfoReply};
use crate::sched::cx::{SpawnOpts, StepCx};
use crate::sched::timer::TimerRef;
use crate::{Handle, Pid, Priority, ProcessInfo, Reason, Ref, RegisterError};
use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

/// A native process's handle on the runtime (module doc of `native`).
/// Only usable inside its own process; not `Clone`, so a child process
/// cannot capture its parent's (each gets its own).
///
/// Every operation takes effect when it is called: `let _ = ctx.link(p);`
/// links. The future it returns hands back the result and is the
/// operation's await point (it yields once first when the call spent the
/// slice); only `receive` and its variants, `charge`, `yield_now`, `sleep`,
/// and the waiting half of `is_alive` and `process_info`, do their work when
/// awaited.
#[derive(Debug)]
pub struct Ctx {
    pid: Pid,
}

impl Ctx {
    pub(crate) fn new(pid: Pid) -> Ctx {
        Ctx { pid }
    }

    /// Run `f` on the process's `StepCx` now; the future returned is the
    /// operation's `await` point (module doc of `native`).
    #[inline]
    fn op<R>(&self, f: impl FnOnce(&mut StepCx<'_>) -> R) -> Done<R> {
        Done::call(self.pid, f)
    }

    /// This process's pid (Erlang's `self()`).
    #[inline]
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// A handle to the runtime, e.g. to give to another thread.
    pub fn handle(&self) -> Handle {
        with_cx(self.pid, |cx| cx.handle())
    }

    /// Charge `n` reductions (at most a slice's); yields first if the slice
    /// cannot pay them.
    #[inline]
    pub fn charge(&self, n: u32) -> Charge {
        Charge {
            pid: self.pid,
            n: n.min(crate::SLICE_REDUCTIONS),
        }
    }

    /// Reductions left in the current slice.
    #[inline]
    pub fn budget_left(&self) -> u32 {
        with_cx(self.pid, |cx| cx.budget())
    }

    /// `fut`, given up after `after`: `Err(Elapsed)` if it is not done by
    /// then (it is dropped). The deadline is one of the runtime's timers,
    /// which wakes the process; `Duration::MAX` (anything beyond
    /// [`MAX_DELAY`](crate::MAX_DELAY)) never elapses. Bounds any wait:
    /// `ctx.timeout(d, stream.read(&mut buf))`, `ctx.timeout(d,
    /// listener.accept())`.
    ///
    /// It never ends early. Below one second it ends on time; from one
    /// second on it may end up to a sixteenth of `after` late (a 60 s idle
    /// timeout within 61.9 s), because its timer is armed that much later
    /// and, when `fut` is done first, kept for the process's next timeout
    /// to reuse: a loop of reads each bounded by a long timeout then sets
    /// a timer every few seconds rather than one per read. Such a kept
    /// timer fires once as a spurious wake-up if nothing reuses it, and is
    /// counted by [`Handle::pending_timers`](crate::Handle::pending_timers)
    /// until then.
    pub fn timeout<F: std::future::Future>(&self, after: Duration, fut: F) -> Deadline<F> {
        Deadline::new(self.pid, after, fut)
    }

    /// Wait `after` (Lonala's `sleep`, Erlang's `timer:sleep/1`), on one of
    /// the runtime's timers: the worker runs other processes meanwhile.
    ///
    /// - The mailbox is untouched: messages arriving during the sleep stay
    ///   there, in order, for the next receive (they wake the process,
    ///   which checks the clock and sleeps on).
    /// - Never ends early: the timer is rounded up to the millisecond.
    /// - `Duration::ZERO` completes at once (it is an await point that
    ///   charges one reduction, and yields first if the slice is spent).
    /// - A delay beyond [`MAX_DELAY`](crate::MAX_DELAY), such as
    ///   `Duration::MAX` or [`INFINITY`](crate::INFINITY), never ends and
    ///   holds no timer.
    /// - The process stays killable while it sleeps: an exit signal ends it
    ///   as at any wait, and its timer is cancelled. Dropping the future
    ///   (say, inside [`Ctx::timeout`]) cancels it too.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rt = lona_runtime::Runtime::builder().workers(1).build().unwrap();
    /// let got = rt.block_on(|ctx| async move {
    ///     ctx.send(ctx.pid(), "kept").await;
    ///     ctx.sleep(Duration::from_millis(5)).await;
    ///     ctx.receive::<&str>().await
    /// });
    /// assert_eq!(got, Ok("kept"));
    /// ```
    pub fn sleep(&self, after: Duration) -> Sleep {
        Sleep::new(self.pid, after)
    }

    /// Give the worker to the other runnable processes: back of the queue.
    #[inline]
    pub fn yield_now(&self) -> YieldNow {
        YieldNow {
            pid: self.pid,
            done: false,
        }
    }

    /// Send `msg` to `to` (Erlang's `!`); silently dropped if `to` is gone.
    pub fn send<M: Send + 'static>(&self, to: Pid, msg: M) -> impl Future<Output = ()> + Send {
        self.op(move |cx| cx.send(to, msg))
    }

    /// Send `msg` to the process registered as `name`; an error if nobody
    /// holds the name.
    pub fn send_name<M: Send + 'static>(
        &self,
        name: &str,
        msg: M,
    ) -> impl Future<Output = Result<(), SendError>> + Send {
        // The operation runs now (`op`): the name is only borrowed.
        self.op(move |cx| cx.send_name(name, msg))
    }

    /// Receive the oldest message of type `T`; others stay in the mailbox.
    pub fn receive<T: Send + 'static>(&self) -> Receive<T, fn(&T) -> bool> {
        self.receive_where(|_| true)
    }

    /// Receive the oldest `T` that `pred` accepts (selective receive). Each
    /// message the scan passes over costs a reduction, so a long scan is
    /// preempted and resumes where it stopped. With `T` = [`Envelope`] it
    /// waits for any of several types: `receive_where::<Envelope, _>(|e|
    /// e.is::<A>() || e.is::<B>())` (the crate doc, "Waiting for one of
    /// several message types").
    pub fn receive_where<T: Send + 'static, F: FnMut(&T) -> bool>(&self, pred: F) -> Receive<T, F> {
        Receive {
            core: RecvCore::new(self.pid, None),
            pred,
            _t: PhantomData,
        }
    }

    /// Like [`Ctx::receive`], giving up after `after` (`None`). A zero
    /// timeout only looks at what is already there; a timeout longer than
    /// [`MAX_DELAY`](crate::MAX_DELAY) (such as [`INFINITY`](crate::INFINITY))
    /// never expires.
    pub fn receive_timeout<T: Send + 'static>(
        &self,
        after: Duration,
    ) -> ReceiveTimeout<T, fn(&T) -> bool> {
        self.receive_where_timeout(|_| true, after)
    }

    /// Selective receive with a timeout.
    pub fn receive_where_timeout<T: Send + 'static, F: FnMut(&T) -> bool>(
        &self,
        pred: F,
        after: Duration,
    ) -> ReceiveTimeout<T, F> {
        ReceiveTimeout {
            core: RecvCore::new(self.pid, Some(after)),
            pred,
            _t: PhantomData,
        }
    }

    /// Receive the oldest message, whatever its type.
    pub fn receive_any(&self) -> Receive<Envelope, fn(&Envelope) -> bool> {
        self.receive_where(|_| true)
    }

    /// Spawn a native process.
    pub fn spawn<F, Fut>(&self, f: F) -> impl Future<Output = Result<Pid, SpawnError>> + Send
    where
        F: FnOnce(Ctx) -> Fut + Send,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_pid(SpawnOpts::default(), f)
    }

    /// Spawn and link, atomically (Erlang's `spawn_link`).
    pub fn spawn_link<F, Fut>(&self, f: F) -> impl Future<Output = Result<Pid, SpawnError>> + Send
    where
        F: FnOnce(Ctx) -> Fut + Send,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_pid(SpawnOpts::new().link(true), f)
    }

    /// `spawn_opt`, keeping the pid only.
    fn spawn_pid<F, Fut>(
        &self,
        opts: SpawnOpts,
        f: F,
    ) -> impl Future<Output = Result<Pid, SpawnError>> + Send
    where
        F: FnOnce(Ctx) -> Fut + Send,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let spawned = self.spawn_opt(opts, f);
        async move { spawned.await.map(|(p, _)| p) }
    }

    /// Spawn and monitor, atomically (Erlang's `spawn_monitor`).
    pub fn spawn_monitor<F, Fut>(
        &self,
        f: F,
    ) -> impl Future<Output = Result<(Pid, Ref), SpawnError>> + Send
    where
        F: FnOnce(Ctx) -> Fut + Send,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let spawned = self.spawn_opt(SpawnOpts::new().monitor(true), f);
        async move {
            spawned
                .await
                .map(|(p, r)| (p, r.expect("monitor requested")))
        }
    }

    /// Spawn with options (link, monitor, priority); returns the pid and,
    /// with `monitor`, the monitor's reference.
    pub fn spawn_opt<F, Fut>(
        &self,
        opts: SpawnOpts,
        f: F,
    ) -> impl Future<Output = Result<(Pid, Option<Ref>), SpawnError>> + Send
    where
        F: FnOnce(Ctx) -> Fut + Send,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.op(move |cx| {
            cx.spawn(opts, |pid| {
                Box::new(super::Native::new(f(Ctx::new(pid)))) as Box<dyn crate::Process>
            })
        })
    }

    /// Spawn any [`Process`](crate::Process) (a Lonala one, say) with
    /// options, as [`Ctx::spawn_opt`] spawns a future.
    pub fn spawn_process_opt<P: crate::Process>(
        &self,
        opts: SpawnOpts,
        process: P,
    ) -> impl Future<Output = Result<(Pid, Option<Ref>), SpawnError>> + Send {
        self.op(move |cx| cx.spawn(opts, move |_| Box::new(process) as Box<dyn crate::Process>))
    }

    /// Link to `pid` (see `links`, rule 5). `Err(Reason::NoProc)` if `pid`
    /// is known dead and this process does not trap exits; a trapping one
    /// gets `Exit { from: pid, reason: NoProc }` instead.
    pub fn link(&self, pid: Pid) -> impl Future<Output = Result<(), Reason>> + Send {
        self.op(move |cx| cx.link(pid))
    }

    /// Remove the link to `pid`, if any. After this returns no exit signal
    /// from that link takes effect.
    pub fn unlink(&self, pid: Pid) -> impl Future<Output = ()> + Send {
        self.op(move |cx| cx.unlink(pid))
    }

    /// Monitor `pid`: a [`Down`](crate::Down) message comes when it ends (at
    /// once, with `NoProc`, if it is already gone).
    pub fn monitor(&self, pid: Pid) -> impl Future<Output = Ref> + Send {
        self.op(move |cx| cx.monitor(pid))
    }

    /// Remove a monitor; returns whether it was active. After this returns
    /// no new `Down` for it arrives.
    pub fn demonitor(&self, mref: Ref) -> impl Future<Output = bool> + Send {
        self.op(move |cx| cx.demonitor(mref, false))
    }

    /// [`Ctx::demonitor`], and also remove a `Down` for it already in the
    /// mailbox (Erlang's `[flush]`). Returns whether the monitor was active.
    pub fn demonitor_flush(&self, mref: Ref) -> impl Future<Output = bool> + Send {
        self.op(move |cx| cx.demonitor(mref, true))
    }

    /// Make `r` an active alias of this process: messages sent to it with
    /// [`Ctx::send_alias`] reach the mailbox while it is active (Erlang's
    /// `alias/0`; rule 11 of `links`).
    pub fn alias(&self, r: Ref) -> impl Future<Output = ()> + Send {
        self.op(move |cx| cx.alias(r))
    }

    /// Deactivate the alias `r`; returns whether it was active. A message
    /// sent to it that has not reached the mailbox yet is dropped.
    pub fn unalias(&self, r: Ref) -> impl Future<Output = bool> + Send {
        self.op(move |cx| cx.unalias(r))
    }

    /// Send `msg` to `pid` through its alias `r`: dropped on arrival unless
    /// `r` is then an active alias of `pid`.
    pub fn send_alias<M: Send + 'static>(
        &self,
        pid: Pid,
        r: Ref,
        msg: M,
    ) -> impl Future<Output = ()> + Send {
        self.op(move |cx| cx.send_alias(pid, r, msg))
    }

    /// Set whether exit signals arrive as [`Exit`](crate::Exit) messages;
    /// returns the old setting (Erlang's `process_flag(trap_exit, On)`).
    pub fn trap_exit(&self, on: bool) -> impl Future<Output = bool> + Send {
        self.op(move |cx| cx.set_trap_exit(on))
    }

    /// This process's priority.
    pub fn priority(&self) -> Priority {
        with_cx(self.pid, |cx| cx.priority())
    }

    /// Set this process's priority; returns the old one (Erlang's
    /// `process_flag(priority, P)`; see [`StepCx::set_priority`]).
    pub fn set_priority(&self, prio: Priority) -> impl Future<Output = Priority> + Send {
        self.op(move |cx| cx.set_priority(prio))
    }

    /// End this process with `reason` (Erlang's `exit/1`). The exit is
    /// decided at the call: awaiting the future (which never completes)
    /// stops the process's code there, and it ends when its step returns.
    /// Code that goes on without awaiting it runs until its next `await`
    /// that suspends, and the process then ends with `reason` all the same.
    pub fn exit(&self, reason: Reason) -> ExitNow {
        with_cx(self.pid, |cx| cx.exit(reason));
        ExitNow { _pid: self.pid }
    }

    /// Send an exit signal to `pid` (Erlang's `exit/2`; see `links` for its
    /// effect). To oneself it takes effect before this completes.
    pub fn send_exit(&self, pid: Pid, reason: Reason) -> impl Future<Output = ()> + Send {
        let me = self.pid;
        let mut sent = self.op(move |cx| cx.send_exit(pid, reason));
        // If the signal ended us, stop at the await (it never completes).
        sent.halt = pid == me && with_cx(me, |cx| cx.exiting());
        sent
    }

    /// Register this process as `name`.
    pub fn register(&self, name: &str) -> impl Future<Output = Result<(), RegisterError>> + Send {
        self.register_pid(name, self.pid)
    }

    /// Register `pid` as `name`.
    pub fn register_pid(
        &self,
        name: &str,
        pid: Pid,
    ) -> impl Future<Output = Result<(), RegisterError>> + Send {
        self.op(move |cx| cx.register(name, pid))
    }

    /// Remove a registered name; returns whether it existed.
    pub fn unregister(&self, name: &str) -> impl Future<Output = bool> + Send {
        self.op(move |cx| cx.unregister(name))
    }

    /// The pid registered as `name`.
    pub fn whereis(&self, name: &str) -> impl Future<Output = Option<Pid>> + Send {
        self.op(move |cx| cx.whereis(name))
    }

    /// Whether `pid` is alive, with Erlang's guarantee: every signal this
    /// process sent it before has taken effect, so after
    /// `send_exit(pid, Reason::Kill)` this is `false`. Asks the process
    /// when it is alive, and waits for its answer.
    pub fn is_alive(&self, pid: Pid) -> impl Future<Output = bool> + Send + '_ {
        let asked = self.op(move |cx| cx.request_alive(pid));
        async move {
            match asked.await {
                Ok(known) => known,
                Err(tag) => {
                    self.receive_where(move |r: &AliveReply| r.tag == tag)
                        .await
                        .alive
                }
            }
        }
    }

    /// Deliver `msg` to `to` (a pid or a registered name, looked up when
    /// it fires) after `after` (Erlang's `send_after/3`).
    pub fn send_after<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> impl Future<Output = TimerRef> + Send {
        let to = to.into();
        self.op(move |cx| cx.send_after(after, to, msg))
    }

    /// Deliver [`Timeout { tref, msg }`](crate::Timeout) to `to` after
    /// `after` (Erlang's `start_timer/3`).
    pub fn start_timer<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> impl Future<Output = TimerRef> + Send {
        let to = to.into();
        self.op(move |cx| cx.start_timer(after, to, msg))
    }

    /// Cancel a timer: how long it had left (`Duration::MAX` for one that
    /// would never fire), or `None` if it had fired already.
    pub fn cancel_timer(&self, t: TimerRef) -> impl Future<Output = Option<Duration>> + Send {
        self.op(move |cx| cx.cancel_timer(t))
    }

    /// Information about a live process, `None` if it is gone (or ending).
    /// Asking another process is a signal to it, answered when it next
    /// drains, after every signal this process sent it before.
    pub fn process_info(&self, pid: Pid) -> impl Future<Output = Option<ProcessInfo>> + Send + '_ {
        let me = self.pid;
        let asked = self.op(move |cx| {
            if pid == me {
                Ok(cx.info())
            } else {
                Err(cx.request_info(pid))
            }
        });
        async move {
            match asked.await {
                Ok(info) => Some(info),
                Err(tag) => {
                    self.receive_where(move |r: &InfoReply| r.tag == tag)
                        .await
                        .info
                }
            }
        }
    }
}
