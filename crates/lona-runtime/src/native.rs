//! Native processes: plain `async` Rust, driven by the scheduler.
//!
//! A native process is a future; [`Native`] implements
//! [`Process`](crate::Process) by polling it. Inside, a [`Ctx`] (given to
//! the spawn closure) is the process's handle on the runtime: its pid, send,
//! receive (by type, by predicate, with timeout), spawn, links, monitors,
//! exits, names and timers.
//!
//! # Reductions (brief, decision 6)
//! Every runtime call is charged reductions. The calls that can suspend
//! (`send`, every receive, `yield_now`, `charge`, `send_exit`) yield to the
//! scheduler when the slice's 2,000 reductions are spent, the way tokio's
//! cooperative budget works; the process continues in a later slice, behind
//! every other runnable process. The synchronous calls (`spawn`, `link`,
//! `monitor`, ...) are charged too, and the next suspending call yields if
//! they used up the budget. A native loop that never calls the runtime can
//! be neither preempted nor killed: Rust has no safe way to interrupt it.
//!
//! # How calls reach the runtime
//! While a worker polls a native process, a thread-local points at the
//! process's [`Cx`]. `Ctx` methods use it; calling them from anywhere else
//! (another thread, another process, a receive predicate) panics with a
//! clear message. So the future must be polled by Lona only: awaiting
//! futures of other executors (tokio I/O) is not supported, but futures that
//! just need a waker (channels, oneshots) work, with the process as their
//! waker.

use crate::envelope::Envelope;
use crate::process::{Cx, Process, Step};
use crate::runtime::{Dest, SendError, Shared, SpawnError};
use crate::signal::{Down, Exit, Signal, Timeout};
use crate::timer::TimerRef;
use crate::{Handle, Pid, Reason, Ref, RegisterError};
use std::cell::Cell;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use std::time::Duration;

thread_local! {
    /// The `Cx` of the native process being polled on this thread (erased
    /// lifetime; valid for the duration of the poll).
    static CX: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
}

struct Restore(*mut ());
impl Drop for Restore {
    fn drop(&mut self) {
        CX.with(|c| c.set(self.0));
    }
}

/// Run `f` with the current process's `Cx`, checking it is `pid`'s.
fn with_cx<R>(pid: Pid, f: impl FnOnce(&mut Cx<'_>) -> R) -> R {
    let p = CX.with(|c| c.replace(std::ptr::null_mut()));
    let _restore = Restore(p);
    if p.is_null() {
        panic!("a Lona runtime call was made outside its process (or inside a receive predicate)");
    }
    // SAFETY: set by `poll_process` to a live `Cx` for the duration of the
    // poll on this thread, and taken out of the thread-local so no other
    // `with_cx` can alias it while `f` runs.
    let cx = unsafe { &mut *(p as *mut Cx<'static>) };
    assert_eq!(cx.pid, pid, "a Ctx was used outside its own process");
    f(cx)
}

/// The runtime's shared state, reachable during a poll.
fn shared_of(pid: Pid) -> &'static Shared {
    // SAFETY (lifetime): the worker polling this process holds an
    // `Arc<Shared>` for longer than the poll; the reference is only used
    // within the calling runtime method.
    with_cx(pid, |cx| unsafe { &*(cx.shared as *const Shared) })
}

// --- wakers -------------------------------------------------------------

struct WakeTarget {
    shared: Weak<Shared>,
    pid: Pid,
}

impl Shared {
    /// Wake `pid` without a message (a waker fired).
    pub(crate) fn wake(&self, pid: Pid) {
        if let Some(slot) = self.table.get(pid.index()) {
            if slot.state.notify(pid.generation()) == crate::state::Notify::Schedule {
                self.schedule(pid.index());
            }
        }
    }
}

/// The borrowed waker handed to a poll: points at a `BorrowedWake` on the
/// worker's stack. Cloning it makes an owned, reference-counted waker.
struct BorrowedWake {
    shared: *const Shared,
    arc: *const (),
    pid: Pid,
}

static BORROWED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(borrowed_clone, borrowed_wake, borrowed_wake, borrowed_drop);
static OWNED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(owned_clone, owned_wake, owned_wake_by_ref, owned_drop);

unsafe fn borrowed_clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` is a live BorrowedWake during the poll.
    let b = unsafe { &*(data as *const BorrowedWake) };
    // SAFETY: `arc` came from Arc::as_ptr of the worker's Arc<Shared>, alive.
    let arc = unsafe {
        Arc::increment_strong_count(b.arc as *const Shared);
        Arc::from_raw(b.arc as *const Shared)
    };
    let target = Arc::new(WakeTarget {
        shared: Arc::downgrade(&arc),
        pid: b.pid,
    });
    RawWaker::new(Arc::into_raw(target) as *const (), &OWNED_VTABLE)
}
unsafe fn borrowed_wake(data: *const ()) {
    // SAFETY: as above.
    let b = unsafe { &*(data as *const BorrowedWake) };
    // SAFETY: the shared state outlives the poll.
    unsafe { (*b.shared).wake(b.pid) }
}
unsafe fn borrowed_drop(_: *const ()) {}

unsafe fn owned_clone(data: *const ()) -> RawWaker {
    // SAFETY: data is an Arc<WakeTarget> we hold a count of.
    unsafe { Arc::increment_strong_count(data as *const WakeTarget) };
    RawWaker::new(data, &OWNED_VTABLE)
}
unsafe fn owned_wake(data: *const ()) {
    // SAFETY: consumes our count.
    let t = unsafe { Arc::from_raw(data as *const WakeTarget) };
    if let Some(s) = t.shared.upgrade() {
        s.wake(t.pid);
    }
}
unsafe fn owned_wake_by_ref(data: *const ()) {
    // SAFETY: borrowed count.
    let t = unsafe { &*(data as *const WakeTarget) };
    if let Some(s) = t.shared.upgrade() {
        s.wake(t.pid);
    }
}
unsafe fn owned_drop(data: *const ()) {
    // SAFETY: releases our count.
    drop(unsafe { Arc::from_raw(data as *const WakeTarget) });
}

/// Poll `fut` as the body of the process running in `cx`.
fn poll_process<F: Future>(cx: &mut Cx<'_>, fut: Pin<&mut F>) -> Poll<F::Output> {
    let worker_arc = Arc::as_ptr(&cx.worker.shared) as *const ();
    let b = BorrowedWake {
        shared: cx.shared,
        arc: worker_arc,
        pid: cx.pid,
    };
    // SAFETY: the vtable's functions uphold the RawWaker contract for `b`,
    // which outlives the waker (ManuallyDrop: never dropped as owned).
    let waker = ManuallyDrop::new(unsafe {
        Waker::from_raw(RawWaker::new(
            &b as *const BorrowedWake as *const (),
            &BORROWED_VTABLE,
        ))
    });
    let prev = CX.with(|c| c.replace(cx as *mut Cx<'_> as *mut ()));
    let _restore = Restore(prev);
    fut.poll(&mut Context::from_waker(&waker))
}

fn pending_step(cx: &Cx<'_>) -> Step {
    if cx.yielded {
        Step::Yield
    } else {
        Step::Wait
    }
}

/// A native process: a future ending `Normal` when it completes.
pub(crate) struct Native<F> {
    fut: F,
}

impl<F> Native<F> {
    pub(crate) fn new(fut: F) -> Native<F> {
        Native { fut }
    }
}

impl<F: Future<Output = ()> + Send + 'static> Process for Native<F> {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        // SAFETY: a process lives in a Box that is never moved out of
        // (only the Box pointer moves), so `fut` is pinned in place.
        let fut = unsafe { Pin::new_unchecked(&mut self.fut) };
        match poll_process(cx, fut) {
            Poll::Ready(()) => Step::Exit(Reason::Normal),
            Poll::Pending => pending_step(cx),
        }
    }
}

/// Where a main process leaves its result for [`Runtime::block_on`].
pub(crate) struct MainResult<T> {
    slot: Mutex<Option<Result<T, Reason>>>,
    cv: Condvar,
}

impl<T> MainResult<T> {
    fn set(&self, r: Result<T, Reason>) {
        let mut g = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(r);
            self.cv.notify_all();
        }
    }

    pub(crate) fn wait(&self) -> Result<T, Reason> {
        let mut g = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = g.take() {
                return r;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The main process of [`Runtime::block_on`](crate::Runtime::block_on).
pub(crate) struct Main<T, F = ()> {
    result: Arc<MainResult<T>>,
    fut: F,
}

impl<T> Main<T> {
    pub(crate) fn new() -> (Main<T>, Arc<MainResult<T>>) {
        let result = Arc::new(MainResult {
            slot: Mutex::new(None),
            cv: Condvar::new(),
        });
        (
            Main {
                result: result.clone(),
                fut: (),
            },
            result,
        )
    }

    pub(crate) fn with<F>(self, fut: F) -> Main<T, F> {
        Main {
            result: self.result,
            fut,
        }
    }
}

impl<T: Send + 'static, F: Future<Output = T> + Send + 'static> Process for Main<T, F> {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        // SAFETY: pinned in its Box, as for `Native`.
        let fut = unsafe { Pin::new_unchecked(&mut self.fut) };
        match poll_process(cx, fut) {
            Poll::Ready(v) => {
                self.result.set(Ok(v));
                Step::Exit(Reason::Normal)
            }
            Poll::Pending => pending_step(cx),
        }
    }

    fn close(&mut self, reason: &Reason) {
        self.result.set(Err(reason.clone()));
    }
}

// --- Ctx ----------------------------------------------------------------

/// Options for [`Ctx::spawn_opt`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SpawnOpts {
    /// Link the new process to the caller, atomically.
    pub link: bool,
    /// Monitor the new process, atomically.
    pub monitor: bool,
}

/// A native process's handle on the runtime (module doc). Cheap to copy;
/// only usable inside its own process.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pid: Pid,
}

/// What a live process looks like (`process_info`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessInfo {
    /// Whether it was waiting for a message when asked.
    pub status: Status,
    /// Messages in its mailbox.
    pub message_queue_len: usize,
    /// Reductions it has been charged so far.
    pub reductions: u64,
    /// Approximate bytes it holds (its table slot, its body, its messages).
    pub memory: usize,
    /// Processes it is linked to.
    pub links: Vec<Pid>,
    /// Processes it monitors.
    pub monitors: Vec<Pid>,
    /// Processes monitoring it.
    pub monitored_by: Vec<Pid>,
    /// Its registered name.
    pub registered_name: Option<String>,
    /// Whether it traps exits.
    pub trap_exit: bool,
}

/// A process's scheduling status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Running or runnable.
    Running,
    /// Blocked in a receive.
    Waiting,
}

pub(crate) struct InfoReply {
    tag: Ref,
    info: Option<ProcessInfo>,
}

impl Ctx {
    pub(crate) fn new(pid: Pid) -> Ctx {
        Ctx { pid }
    }

    /// This process's pid (Erlang's `self()`).
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// A handle to the runtime, e.g. to give to another thread.
    pub fn handle(&self) -> Handle {
        with_cx(self.pid, |cx| Handle {
            shared: cx.worker.shared.clone(),
        })
    }

    /// Charge `n` reductions; yields first if the slice cannot pay them.
    pub fn charge(&self, n: u32) -> Charge {
        Charge {
            pid: self.pid,
            n: n.min(crate::process::SLICE_REDUCTIONS),
        }
    }

    /// Reductions left in the current slice.
    pub fn budget_left(&self) -> u32 {
        with_cx(self.pid, |cx| cx.budget)
    }

    /// Give the worker to the other runnable processes: back of the queue.
    pub fn yield_now(&self) -> YieldNow {
        YieldNow {
            pid: self.pid,
            done: false,
        }
    }

    /// Send `msg` to a pid or a registered name (Erlang's `!`). A dead pid
    /// silently drops it; an unregistered name is an error.
    pub async fn send<M: Send + 'static>(
        &self,
        to: impl Into<Dest>,
        msg: M,
    ) -> Result<(), SendError> {
        let mut what = Some((to.into(), msg));
        std::future::poll_fn(|_| {
            with_cx(self.pid, |cx| {
                if !cx.charge(1) {
                    cx.yielded = true;
                    return Poll::Pending;
                }
                let (to, msg) = what.take().expect("polled after completion");
                Poll::Ready(cx.shared.resolve(to).map(|pid| cx.send(pid, msg)))
            })
        })
        .await
    }

    /// Receive the oldest message of type `T`; others stay in the mailbox.
    pub fn receive<T: Send + 'static>(&self) -> Receive<T, fn(&T) -> bool> {
        self.receive_where(|_| true)
    }

    /// Receive the oldest `T` that `pred` accepts (selective receive).
    pub fn receive_where<T: Send + 'static, F: FnMut(&T) -> bool>(&self, pred: F) -> Receive<T, F> {
        Receive {
            core: RecvCore::new(self.pid, None),
            pred,
            _t: PhantomData,
        }
    }

    /// Like [`Ctx::receive`], giving up after `after` (`None`). A zero
    /// timeout only looks at what is already there.
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
    pub fn receive_any(&self) -> ReceiveTimeout<Envelope, fn(&Envelope) -> bool> {
        ReceiveTimeout {
            core: RecvCore::new(self.pid, None),
            pred: |_| true,
            _t: PhantomData,
        }
    }

    /// Spawn a native process (charged; the caller may yield at its next
    /// suspending call).
    pub fn spawn<F, Fut>(&self, f: F) -> Result<Pid, SpawnError>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_opt(SpawnOpts::default(), f).map(|(p, _)| p)
    }

    /// Spawn and link, atomically (Erlang's `spawn_link`).
    pub fn spawn_link<F, Fut>(&self, f: F) -> Result<Pid, SpawnError>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_opt(
            SpawnOpts {
                link: true,
                monitor: false,
            },
            f,
        )
        .map(|(p, _)| p)
    }

    /// Spawn and monitor, atomically (Erlang's `spawn_monitor`).
    pub fn spawn_monitor<F, Fut>(&self, f: F) -> Result<(Pid, Ref), SpawnError>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.spawn_opt(
            SpawnOpts {
                link: false,
                monitor: true,
            },
            f,
        )
        .map(|(p, r)| (p, r.expect("monitor requested")))
    }

    /// Spawn with options; returns the pid and, with `monitor`, the
    /// monitor's reference.
    pub fn spawn_opt<F, Fut>(&self, opts: SpawnOpts, f: F) -> Result<(Pid, Option<Ref>), SpawnError>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let me = self.pid;
        let shared = shared_of(me);
        with_cx(me, |cx| cx.budget = cx.budget.saturating_sub(1));
        let mref = opts.monitor.then(Ref::new);
        let child = shared.spawn(
            |pid| Box::new(Native::new(f(Ctx::new(pid)))),
            |p, _| {
                if opts.link {
                    p.extra().links.insert(me);
                }
                if let Some(r) = mref {
                    p.extra().monitored_by.insert(r, me);
                }
            },
        )?;
        with_cx(me, |cx| {
            if opts.link {
                cx.p.extra().links.insert(child);
            }
            if let Some(r) = mref {
                cx.p.extra().monitors.insert(r, child);
            }
        });
        Ok((child, mref))
    }

    /// Link to `pid` (see `links`, rule 5). `Err(Reason::NoProc)` if `pid`
    /// is known dead and this process does not trap exits; a trapping one
    /// gets `Exit { from: pid, reason: NoProc }` instead.
    pub fn link(&self, pid: Pid) -> Result<(), Reason> {
        with_cx(self.pid, |cx| {
            cx.charge(1);
            if pid == cx.pid || cx.p.extra.as_ref().is_some_and(|x| x.links.contains(&pid)) {
                return Ok(());
            }
            if !cx.shared.is_alive(pid) {
                if cx.p.trap_exit {
                    let e = Envelope::new(
                        Exit {
                            from: pid,
                            reason: Reason::NoProc,
                        },
                        cx.p.gen,
                        false,
                    );
                    cx.drain();
                    cx.p.mailbox.push(e);
                    return Ok(());
                }
                return Err(Reason::NoProc);
            }
            cx.p.extra().links.insert(pid);
            cx.shared.signal(pid, Signal::Link { from: cx.pid });
            Ok(())
        })
    }

    /// Remove the link to `pid`, if any. After this returns no new exit
    /// signal from that link takes effect.
    pub fn unlink(&self, pid: Pid) {
        with_cx(self.pid, |cx| {
            cx.charge(1);
            if cx.p.extra.as_mut().is_some_and(|x| x.links.remove(&pid)) {
                cx.shared.signal(pid, Signal::Unlink { from: cx.pid });
            }
        })
    }

    /// Monitor `pid`: a [`Down`] message comes when it ends (at once, with
    /// `NoProc`, if it is already gone).
    pub fn monitor(&self, pid: Pid) -> Ref {
        with_cx(self.pid, |cx| {
            cx.charge(1);
            let mref = Ref::new();
            cx.p.extra().monitors.insert(mref, pid);
            cx.shared
                .signal(pid, Signal::Monitor { from: cx.pid, mref });
            mref
        })
    }

    /// Remove a monitor; returns whether it was active. After this returns
    /// no new `Down` for it arrives.
    pub fn demonitor(&self, mref: Ref) -> bool {
        with_cx(self.pid, |cx| {
            cx.charge(1);
            match cx.p.extra.as_mut().and_then(|x| x.monitors.remove(&mref)) {
                Some(target) => {
                    cx.shared.signal(target, Signal::Demonitor { mref });
                    true
                }
                None => false,
            }
        })
    }

    /// [`Ctx::demonitor`], and also remove a `Down` for it already in the
    /// mailbox (Erlang's `[flush]`). Returns whether the monitor was active.
    pub fn demonitor_flush(&self, mref: Ref) -> bool {
        let was = self.demonitor(mref);
        with_cx(self.pid, |cx| {
            cx.drain();
            cx.p.mailbox.remove_first(|h| {
                // SAFETY: `h` is a live node of the mailbox during the call,
                // and its type is checked before the value is read.
                crate::envelope::header_is::<Down>(unsafe { &*h })
                    && unsafe { crate::envelope::value_ref::<Down>(h) }.mref == mref
            });
        });
        was
    }

    /// Set whether exit signals arrive as [`Exit`] messages; returns the old
    /// setting (Erlang's `process_flag(trap_exit, On)`).
    pub fn trap_exit(&self, on: bool) -> bool {
        with_cx(self.pid, |cx| cx.set_trap_exit(on))
    }

    /// End this process with `reason` (Erlang's `exit/1`). Never completes.
    pub fn exit(&self, reason: Reason) -> ExitNow {
        ExitNow {
            pid: self.pid,
            reason: Some(reason),
        }
    }

    /// Send an exit signal to `pid` (Erlang's `exit/2`; see `links` for its
    /// effect). To oneself it takes effect before this completes.
    pub async fn send_exit(&self, pid: Pid, reason: Reason) {
        self.charge(1).await;
        let me = self.pid;
        with_cx(me, |cx| {
            cx.shared.signal(
                pid,
                Signal::Exit {
                    from: me,
                    reason,
                    link: false,
                },
            );
            if pid == me {
                cx.drain();
            }
        });
        if pid == me {
            // If the signal ended us, stop here.
            Suspend { pid: me }.await;
        }
    }

    /// Register this process as `name`.
    pub fn register(&self, name: &str) -> Result<(), RegisterError> {
        shared_of(self.pid).register(name, self.pid)
    }

    /// Register `pid` as `name`.
    pub fn register_pid(&self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        shared_of(self.pid).register(name, pid)
    }

    /// Remove a registered name; returns whether it existed.
    pub fn unregister(&self, name: &str) -> bool {
        shared_of(self.pid).registry.remove(name).is_some()
    }

    /// The pid registered as `name`.
    pub fn whereis(&self, name: &str) -> Option<Pid> {
        shared_of(self.pid).registry.whereis(name)
    }

    /// Whether `pid` is alive.
    pub fn is_alive(&self, pid: Pid) -> bool {
        shared_of(self.pid).is_alive(pid)
    }

    /// Deliver `msg` to `to` after `after` (Erlang's `send_after/3`).
    pub fn send_after<M: Send + 'static>(&self, after: Duration, to: Pid, msg: M) -> TimerRef {
        shared_of(self.pid).send_after(after, to, msg)
    }

    /// Deliver `Timeout { tref, msg }` to `to` after `after` (Erlang's
    /// `start_timer/3`).
    pub fn start_timer<M: Send + 'static>(&self, after: Duration, to: Pid, msg: M) -> TimerRef {
        shared_of(self.pid)
            .timers
            .insert_with(after, to, true, |tref| {
                Envelope::new(Timeout { tref, msg }, to.generation(), false)
            })
    }

    /// Cancel a timer: `Some(ms_left)` if it was pending, `None` if it had
    /// fired already.
    pub fn cancel_timer(&self, t: TimerRef) -> Option<u64> {
        shared_of(self.pid).timers.cancel_remaining(t)
    }

    /// Information about a live process, `None` if it is gone. Asking
    /// another process is a signal to it, answered when it next runs (as in
    /// Erlang).
    pub async fn process_info(&self, pid: Pid) -> Option<ProcessInfo> {
        if pid == self.pid {
            return Some(with_cx(self.pid, |cx| {
                info_of(cx.shared, cx.pid, cx.p, Status::Running)
            }));
        }
        let tag = Ref::new();
        with_cx(self.pid, |cx| {
            cx.shared.signal(
                pid,
                Signal::Info {
                    reply_to: cx.pid,
                    tag,
                },
            )
        });
        self.receive_where(|r: &InfoReply| r.tag == tag).await.info
    }
}

pub(crate) fn info_of(
    shared: &Shared,
    pid: Pid,
    p: &crate::process::Private,
    status: Status,
) -> ProcessInfo {
    let (links, monitors, monitored_by) = match &p.extra {
        Some(x) => (
            x.links.iter().copied().collect(),
            x.monitors.values().copied().collect(),
            x.monitored_by.values().copied().collect(),
        ),
        None => (vec![], vec![], vec![]),
    };
    let body = p.process.as_deref().map_or(0, std::mem::size_of_val);
    ProcessInfo {
        status,
        message_queue_len: p.mailbox.len(),
        reductions: p.reductions,
        memory: std::mem::size_of::<crate::table::Slot>() + body + p.mailbox.len() * 32,
        links,
        monitors,
        monitored_by,
        registered_name: shared.registry.name_of(pid),
        trap_exit: p.trap_exit,
    }
}

pub(crate) fn reply_info(shared: &Shared, reply_to: Pid, tag: Ref, info: Option<ProcessInfo>) {
    shared.send_pid(reply_to, InfoReply { tag, info });
}

// --- futures ------------------------------------------------------------

/// Future of [`Ctx::charge`].
#[must_use = "futures do nothing unless awaited"]
pub struct Charge {
    pid: Pid,
    n: u32,
}

impl Future for Charge {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let n = self.n;
        with_cx(self.pid, |cx| {
            if cx.charge(n) {
                Poll::Ready(())
            } else {
                cx.yielded = true;
                Poll::Pending
            }
        })
    }
}

/// Future of [`Ctx::yield_now`].
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    pid: Pid,
    done: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        self.done = true;
        with_cx(self.pid, |cx| {
            cx.charge(1);
            cx.yielded = true;
        });
        Poll::Pending
    }
}

/// Future of [`Ctx::exit`]: never completes.
#[must_use = "futures do nothing unless awaited"]
pub struct ExitNow {
    pid: Pid,
    reason: Option<Reason>,
}

impl Future for ExitNow {
    type Output = Infallible;
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Infallible> {
        let reason = self.reason.take();
        with_cx(self.pid, |cx| {
            if let Some(r) = reason {
                cx.exit(r);
            }
        });
        Poll::Pending
    }
}

/// Suspends if the process has been ended, else completes.
struct Suspend {
    pid: Pid,
}

impl Future for Suspend {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if with_cx(self.pid, |cx| cx.exiting()) {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

struct RecvCore {
    pid: Pid,
    timeout: Option<Duration>,
    /// The armed timeout: its token and timer.
    timer: Option<(u32, TimerRef)>,
    /// This receive's id (0 until first polled).
    id: u32,
}

impl RecvCore {
    fn new(pid: Pid, timeout: Option<Duration>) -> RecvCore {
        RecvCore {
            pid,
            id: 0,
            timeout,
            timer: None,
        }
    }

    /// `Ready(Some)` with a match, `Ready(None)` on timeout.
    fn poll<T: Send + 'static>(&mut self, mut pred: impl FnMut(&T) -> bool) -> Poll<Option<T>> {
        with_cx(self.pid, |cx| {
            if !cx.charge(1) {
                cx.yielded = true;
                return Poll::Pending;
            }
            if self.id == 0 {
                self.id = cx.new_receive() as u32;
            }
            cx.drain();
            if cx.exiting() {
                return Poll::Pending;
            }
            let any = std::any::TypeId::of::<T>() == std::any::TypeId::of::<Envelope>();
            let found = cx.take_message(self.id as u64, |e| {
                if any {
                    // SAFETY: T is Envelope (checked above).
                    pred(unsafe { &*(e as *const Envelope as *const T) })
                } else {
                    e.downcast_ref::<T>().is_some_and(&mut pred)
                }
            });
            if let Some(e) = found {
                if let Some((_, t)) = self.timer.take() {
                    cx.cancel_timer(t);
                }
                let value = if any {
                    // SAFETY: T is Envelope; move it across the identical type.
                    let e = ManuallyDrop::new(e);
                    unsafe { std::ptr::read(&*e as *const Envelope as *const T) }
                } else {
                    match e.downcast::<T>() {
                        Ok(v) => v,
                        Err(_) => unreachable!("type checked by the predicate"),
                    }
                };
                return Poll::Ready(Some(value));
            }
            match (self.timeout, self.timer) {
                (None, _) => Poll::Pending,
                (Some(d), None) if d.is_zero() => Poll::Ready(None),
                (Some(d), None) => {
                    let (token, t) = cx.start_receive_timer(d);
                    self.timer = Some((token as u32, t));
                    Poll::Pending
                }
                (Some(_), Some((token, _))) => {
                    if cx.timed_out(token as u64) {
                        self.timer = None;
                        Poll::Ready(None)
                    } else {
                        Poll::Pending
                    }
                }
            }
        })
    }
}

impl Drop for RecvCore {
    fn drop(&mut self) {
        let Some((_, t)) = self.timer.take() else {
            return;
        };
        // Cancel if we are still inside our process; otherwise the process
        // is ending and its exit path cancels its timers.
        let p = CX.with(|c| c.get());
        if !p.is_null() {
            // SAFETY: as in `with_cx`; only reading `pid` and `shared`.
            let cx = unsafe { &*(p as *const Cx<'static>) };
            if cx.pid == self.pid {
                drop(cx.shared.timers.cancel(t));
            }
        }
    }
}

/// Future of [`Ctx::receive`] / [`Ctx::receive_where`].
#[must_use = "futures do nothing unless awaited"]
pub struct Receive<T, F> {
    core: RecvCore,
    pred: F,
    _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static, F: FnMut(&T) -> bool + Unpin> Future for Receive<T, F> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        match this.core.poll(&mut this.pred) {
            Poll::Ready(Some(v)) => Poll::Ready(v),
            _ => Poll::Pending,
        }
    }
}

/// Future of the receives with a timeout: `None` when it expired.
#[must_use = "futures do nothing unless awaited"]
pub struct ReceiveTimeout<T, F> {
    core: RecvCore,
    pred: F,
    _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static, F: FnMut(&T) -> bool + Unpin> Future for ReceiveTimeout<T, F> {
    type Output = Option<T>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        this.core.poll(&mut this.pred)
    }
}
