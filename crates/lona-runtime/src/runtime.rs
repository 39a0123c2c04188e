//! The runtime: building it, the state its workers share, delivering
//! signals, spawning, and shutting down.
//!
//! # Lifecycle
//! 1. [`Builder::build`] starts N workers (default: available cores) and
//!    one timer thread.
//! 2. Processes are spawned from outside ([`Handle::spawn_process`], and
//!    the native layer's `Handle::spawn`, into the global injection queue)
//!    or from inside ([`Cx::spawn`](crate::Cx::spawn), into the spawner's
//!    local queue); the native layer's `Runtime::block_on` runs a main
//!    process to completion and returns its result.
//! 3. [`Runtime::shutdown`] (also on drop) sends every process an exit
//!    signal `Shutdown` (processes that trap exits get an
//!    [`Exit`](crate::Exit) message from [`RUNTIME_PID`]
//!    and may clean up), waits up to the shutdown timeout, then kills what
//!    is left (`Kill`, untrappable). Then the workers and the timer thread
//!    stop and are joined, and the process table is freed with every
//!    message still in it. A native process looping without ever calling
//!    the runtime cannot be preempted or killed; shutdown then gives up on
//!    its worker after a grace period and reports it.

use crate::envelope::{Envelope, Header};
use crate::idle::Idle;
use crate::priority::{Priority, Urgent};
use crate::process::{Private, Process};
use crate::registry::{RegisterError, Registry};
use crate::signal::{InfoTo, OneShot, ReplyTo, Signal, Timeout};
use crate::state::{Notify, State};
use crate::stats::{self, worker_infos, ProcessEntry, RuntimeInfo, Snapshot, WorkerLoad};
use crate::table::Table;
use crate::timer::{Target, TimerRef, Timers};
use crate::worker::WorkerCore;
use crate::{Pid, Reason, Ref};
use crossbeam_deque::{Injector, Stealer, Worker as Deque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The default process limit (`docs/design.md`, D4).
pub const DEFAULT_PROCESS_LIMIT: usize = 1 << 20;

/// The pid exit signals from the runtime itself (shutdown) come from.
pub const RUNTIME_PID: Pid = Pid::new(u32::MAX, u32::MAX);

/// Why a spawn failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpawnError {
    /// The process limit is reached (Erlang's `system_limit`).
    SystemLimit {
        /// The configured limit.
        limit: usize,
    },
    /// The runtime is shutting down.
    ShuttingDown,
    /// A spawn with a name ([`Cx::spawn_named`](crate::Cx::spawn_named)):
    /// the name is taken, so no process was made.
    NameTaken {
        /// The name.
        name: String,
        /// Who holds it.
        holder: Pid,
    },
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::SystemLimit { limit } => {
                write!(f, "system_limit: the process limit of {limit} is reached")
            }
            SpawnError::ShuttingDown => f.write_str("the runtime is shutting down"),
            SpawnError::NameTaken { name, holder } => {
                write!(f, "the name {name} is already registered by {holder}")
            }
        }
    }
}
impl std::error::Error for SpawnError {}

/// Why a send failed. Sending to a dead *pid* is not an error (it silently
/// succeeds, as in Erlang); sending to a name nobody holds is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// No process is registered under the name.
    NoName(String),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NoName(n) => write!(f, "no process is registered as {n:?} (badarg)"),
        }
    }
}
impl std::error::Error for SendError {}

/// Where a message or timer goes: a pid or a registered name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    /// A process.
    Pid(Pid),
    /// A registered name.
    Name(String),
}
impl From<Pid> for Dest {
    fn from(p: Pid) -> Dest {
        Dest::Pid(p)
    }
}
impl From<&str> for Dest {
    fn from(n: &str) -> Dest {
        Dest::Name(n.to_string())
    }
}
impl From<String> for Dest {
    fn from(n: String) -> Dest {
        Dest::Name(n)
    }
}

/// The default stack size of worker threads: generous, because a native
/// process runs on its worker's stack and a stack overflow aborts the whole
/// program (Rust cannot recover from one). Lonala processes keep their
/// frames on their own heaps and need little.
pub const DEFAULT_STACK_SIZE: usize = 16 << 20;

/// State shared by the workers, the timer thread and every handle.
pub(crate) struct Shared {
    pub(crate) table: Table,
    pub(crate) injector: Injector<u32>,
    /// The run queues of max and high processes (`priority`).
    pub(crate) urgent: Urgent,
    pub(crate) stealers: Vec<Stealer<u32>>,
    pub(crate) idle: Idle,
    pub(crate) timers: Timers,
    pub(crate) registry: Registry,
    /// Set last in shutdown: workers leave their loops.
    pub(crate) stop: AtomicBool,
    /// Set first in shutdown: exits notify `exit_cv`, spawns fail.
    pub(crate) shutting_down: AtomicBool,
    exit_lock: Mutex<()>,
    exit_cv: Condvar,
    pub(crate) workers: usize,
    /// When the node started (the clock of `loads`).
    pub(crate) epoch: Instant,
    /// Each worker's idle-time accounting, written by that worker
    /// (`stats`).
    pub(crate) loads: Box<[WorkerLoad]>,
}

impl Shared {
    /// Push `e` into `to`'s inbox and wake it. `Err(e)` if `to` is gone (the
    /// caller answers or drops it).
    pub(crate) fn deliver(&self, to: Pid, e: Envelope) -> Result<(), Envelope> {
        let Some(slot) = self.table.get(to.index()) else {
            return Err(e);
        };
        if !slot.state.is_alive(to.generation()) {
            return Err(e);
        }
        // SAFETY: an owned node; on success the inbox owns it.
        if let Err(back) = unsafe { slot.inbox.push(e.into_raw()) } {
            // SAFETY: handed back to us.
            return Err(unsafe { Envelope::from_raw(back) });
        }
        self.woken(to);
        Ok(())
    }

    /// Push a chain of messages (newest to oldest) into `to`'s inbox and
    /// wake it; dropped if `to` is gone.
    ///
    /// # Safety
    /// The caller owns the chain.
    pub(crate) unsafe fn deliver_chain(&self, to: Pid, newest: *mut Header, oldest: *mut Header) {
        let alive = self
            .table
            .get(to.index())
            .filter(|s| s.state.is_alive(to.generation()));
        // SAFETY: ours until pushed.
        let pushed =
            alive.is_some_and(|slot| unsafe { slot.inbox.push_chain(newest, oldest) }.is_ok());
        if !pushed {
            // A dead pid's messages are dropped; `oldest.next` may point into
            // the inbox we failed to join, so stop there.
            let mut p = newest;
            loop {
                let next = if p == oldest {
                    std::ptr::null_mut()
                } else {
                    // SAFETY: an owned node of the chain, not yet freed.
                    unsafe { (*p).next }
                };
                // SAFETY: an owned node of the chain.
                drop(unsafe { Envelope::from_raw(p) });
                if next.is_null() {
                    break;
                }
                p = next;
            }
            return;
        }
        self.woken(to);
    }

    /// After pushing to `to`'s inbox: wake it (the tail of `deliver`).
    fn woken(&self, to: Pid) {
        let Some(slot) = self.table.get(to.index()) else {
            return;
        };
        match slot.state.notify(to.generation()) {
            Notify::Schedule => self.schedule(to.index(), slot.priority()),
            Notify::Busy => {}
            Notify::Dead => {
                // The node may have landed in a newer process's inbox (the
                // slot was reused since the liveness check): wake that one so
                // its drain answers the stale node promptly (see `inbox`).
                let g = slot.state.generation();
                if g != to.generation() && slot.state.notify(g) == Notify::Schedule {
                    self.schedule(to.index(), slot.priority());
                }
            }
        }
    }

    /// Send a control signal; if the target is gone, answer it (links get
    /// `noproc` exits, monitors `noproc` downs).
    pub(crate) fn signal(&self, to: Pid, sig: Signal) {
        // Messages this worker batched go first: signals never overtake
        // messages from the same sender.
        if let Some(w) = WorkerCore::current(self) {
            w.flush();
        }
        let e = Envelope::new(sig, to.generation(), true);
        if let Err(e) = self.deliver(to, e) {
            crate::links::answer_dead(self, to, e);
        }
    }

    /// Send a message to a pid (dropped if it is gone), at once. On a
    /// worker, the running process's batched messages go first, so a reply
    /// or a `Handle::send` from inside a process never overtakes what that
    /// process sent before.
    pub(crate) fn send_pid<M: Send + 'static>(&self, to: Pid, msg: M) {
        if let Some(w) = WorkerCore::current(self) {
            w.flush();
        }
        let _ = self.deliver(to, Envelope::new(msg, to.generation(), false));
    }

    /// Make the process in slot `index`, of priority `prio`, runnable (it
    /// was just moved to *queued* by whoever calls this). Max and high
    /// processes go to the global urgent queues, the others where they
    /// went before priorities existed (see `priority`).
    #[inline]
    pub(crate) fn schedule(&self, index: u32, prio: Priority) {
        if prio.is_urgent() {
            self.schedule_urgent(index, prio);
            return;
        }
        match WorkerCore::current(self) {
            Some(w) => w.schedule_woken(index),
            None => {
                self.injector.push(index);
                self.idle.notify_one();
            }
        }
    }

    /// A max or high process becomes runnable (`priority`, step 2).
    #[cold]
    pub(crate) fn schedule_urgent(&self, index: u32, prio: Priority) {
        self.urgent.push(index, prio);
        self.idle.notify_one();
    }

    /// Spawn `make(pid)` as a new process of priority `prio`; `setup` may
    /// pre-fill its private part (links, monitors) before anyone can signal
    /// it.
    ///
    /// With a `name`, the process is registered under it before it can run
    /// (atomically with becoming alive: no one sees the name without a
    /// live process behind it); if the name is taken, nothing is spawned.
    pub(crate) fn spawn(
        &self,
        prio: Priority,
        name: Option<&str>,
        make: impl FnOnce(Pid) -> Box<dyn Process>,
        setup: impl FnOnce(&mut Private, Pid),
    ) -> Result<Pid, SpawnError> {
        // Relaxed: a spawn racing the start of shutdown is killed by it (or
        // ends with the table); the flag only stops new work early.
        if self.shutting_down.load(Relaxed) {
            return Err(SpawnError::ShuttingDown);
        }
        let worker = WorkerCore::current(self);
        let index = match worker {
            Some(w) => self.table.alloc(&mut w.free.borrow_mut()),
            None => {
                let mut cache = Vec::new();
                let i = self.table.alloc(&mut cache);
                // Hand back the rest of a fresh batch.
                if !cache.is_empty() {
                    self.table.return_cache(&mut cache);
                }
                i
            }
        }
        .ok_or(SpawnError::SystemLimit {
            limit: self.table.limit(),
        })?;
        let slot = self.table.get(index).expect("allocated slot");
        // SAFETY: a free slot's private part belongs to whoever allocated it
        // until the process is queued below.
        let p = unsafe { &mut *slot.private.get() };
        let gen = slot.state.generation();
        let pid = Pid::new(index, gen);
        p.gen = gen;
        // `make` is user code (a native spawn closure): if it panics, the
        // reserved slot goes back before the panic reaches the spawner.
        struct Unreserve<'a>(&'a Shared, u32, Option<&'a WorkerCore>);
        impl Drop for Unreserve<'_> {
            fn drop(&mut self) {
                // SAFETY: still ours (never queued); drop what `setup` added.
                let p = unsafe { &mut *self.0.table.get(self.1).expect("slot").private.get() };
                p.process = None;
                p.extra = None;
                match self.2 {
                    Some(w) => self.0.table.release(self.1, Some(&mut w.free.borrow_mut())),
                    None => self.0.table.release(self.1, None),
                }
            }
        }
        let guard = Unreserve(self, index, worker);
        p.process = Some(make(pid));
        p.parent = None;
        setup(p, pid);
        let publish = move || {
            std::mem::forget(guard);
            slot.inbox.reopen();
            slot.state.reset(gen, prio);
        };
        match name {
            None => publish(),
            // On an error `publish` is dropped unrun: the guard frees the
            // slot.
            Some(n) => self.registry.insert_publishing(n, pid, publish)?,
        }
        if prio.is_urgent() {
            self.schedule_urgent(index, prio);
            return Ok(pid);
        }
        match worker {
            Some(w) => w.schedule_back(index),
            None => {
                self.injector.push(index);
                self.idle.notify_one();
            }
        }
        Ok(pid)
    }

    pub(crate) fn exited(&self) {
        let _g = self.exit_lock.lock().unwrap_or_else(|e| e.into_inner());
        self.exit_cv.notify_all();
    }

    /// Wait until no process is left or `deadline` passes.
    fn wait_empty(&self, deadline: Instant) -> bool {
        let mut g = self.exit_lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.table.live() == 0 {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            let wait = (deadline - now).min(Duration::from_millis(50));
            g = self
                .exit_cv
                .wait_timeout(g, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Every live process's pid (a snapshot).
    pub(crate) fn pids(&self) -> Vec<Pid> {
        (0..self.table.high_water())
            .filter_map(|i| {
                let slot = self.table.get(i)?;
                let g = slot.state.generation();
                slot.state.is_alive(g).then(|| Pid::new(i, g))
            })
            .collect()
    }

    /// The process `pid` ends (links rule 9): release its name, *then* mark
    /// it exited, so nobody sees it dead (a `noproc` from a new monitor or
    /// link, `is_alive` false) while its name still resolves. A name is
    /// removed and the state changed under the registry's lock, so a
    /// concurrent `register` (which checks liveness under it) cannot slip
    /// between; `process_ended` after the exit catches a `register` that
    /// started after the check (see `registry`).
    pub(crate) fn end(&self, pid: Pid, state: &State) {
        self.registry.remove_pid_then(pid, || {
            state.exit();
        });
        self.registry.process_ended(pid);
    }

    /// Register `name` for `pid` (see `registry` for why liveness is checked
    /// again after inserting).
    pub(crate) fn register(&self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        if !self.is_alive(pid) {
            return Err(RegisterError::NoProc(pid));
        }
        self.registry.insert(name, pid)?;
        // Pairs with the fence in `Registry::process_ended`.
        std::sync::atomic::fence(SeqCst);
        if !self.is_alive(pid) {
            self.registry.process_ended(pid);
            return Err(RegisterError::NoProc(pid));
        }
        Ok(())
    }

    /// `send_after`: a timer delivering `msg` to `to`.
    pub(crate) fn send_after<M: Send + 'static>(
        &self,
        after: Duration,
        to: Dest,
        msg: M,
    ) -> TimerRef {
        self.timer(after, to, |_, gen| Envelope::new(msg, gen, false))
    }

    /// `start_timer`: a timer delivering `Timeout { tref, msg }` to `to`.
    pub(crate) fn start_timer<M: Send + 'static>(
        &self,
        after: Duration,
        to: Dest,
        msg: M,
    ) -> TimerRef {
        self.timer(after, to, |tref, gen| {
            Envelope::new(Timeout { tref, msg }, gen, false)
        })
    }

    fn timer(
        &self,
        after: Duration,
        to: Dest,
        make: impl FnOnce(TimerRef, u32) -> Envelope,
    ) -> TimerRef {
        match to {
            Dest::Pid(pid) => {
                let t = self
                    .timers
                    .insert_with(after, Target::Pid(pid), |tref| make(tref, pid.generation()));
                self.cancel_if_dead(pid, t);
                t
            }
            // Readdressed when it fires (see `deliver_timer`).
            Dest::Name(n) => self
                .timers
                .insert_with(after, Target::Name(n.into()), |tref| make(tref, 0)),
        }
    }

    /// The timer thread delivers an expired timer.
    pub(crate) fn deliver_timer(&self, target: Target, mut node: Envelope) {
        let pid = match target {
            Target::Pid(pid) => pid,
            Target::Name(name) => match self.registry.whereis(&name) {
                Some(pid) => {
                    node.set_gen(pid.generation());
                    pid
                }
                None => return, // nobody holds the name: dropped, as in Erlang
            },
        };
        // A dead target's message is dropped (contained by `Envelope`).
        let _ = self.deliver(pid, node);
    }

    /// A timer for a dead target is cancelled at once (Erlang: "in the case
    /// it has terminated, the timer is automatically canceled"). Checked
    /// after inserting: the target's exit path cancels its timers after
    /// marking it exited, so one of the two sees the other (the fence pairs
    /// with the timer lock taken in `finish`).
    pub(crate) fn cancel_if_dead(&self, to: Pid, t: TimerRef) {
        std::sync::atomic::fence(SeqCst);
        if !self.is_alive(to) {
            drop(self.timers.cancel(t));
        }
    }

    /// Wake `pid` without a message (a waker fired).
    pub(crate) fn wake(&self, pid: Pid) {
        if let Some(slot) = self.table.get(pid.index()) {
            if slot.state.notify(pid.generation()) == Notify::Schedule {
                self.schedule(pid.index(), slot.priority());
            }
        }
    }

    pub(crate) fn is_alive(&self, pid: Pid) -> bool {
        self.table
            .get(pid.index())
            .is_some_and(|s| s.state.is_alive(pid.generation()))
    }
}

/// Configures and starts a [`Runtime`].
#[derive(Clone, Debug)]
pub struct Builder {
    workers: usize,
    process_limit: usize,
    shutdown_timeout: Duration,
    stack_size: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            process_limit: DEFAULT_PROCESS_LIMIT,
            shutdown_timeout: Duration::from_secs(5),
            stack_size: DEFAULT_STACK_SIZE,
        }
    }
}

impl Builder {
    /// Number of worker threads (default: available cores; at least 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n.max(1);
        self
    }

    /// Most processes alive at once (default 1,048,576); spawning past it
    /// fails with [`SpawnError::SystemLimit`]. At least 1, at most
    /// [`MAX_PROCESS_LIMIT`](crate::MAX_PROCESS_LIMIT) (larger values are
    /// lowered to it).
    pub fn process_limit(mut self, n: usize) -> Self {
        self.process_limit = n.clamp(1, crate::MAX_PROCESS_LIMIT);
        self
    }

    /// How long shutdown waits for processes to stop before killing them.
    pub fn shutdown_timeout(mut self, d: Duration) -> Self {
        self.shutdown_timeout = d;
        self
    }

    /// Stack size of each worker thread (default [`DEFAULT_STACK_SIZE`],
    /// 16 MiB; at least 64 KiB). Native processes run on it: a recursion
    /// deeper than it allows overflows the stack, which aborts the whole
    /// program (Rust cannot unwind from a stack overflow).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes.max(64 << 10);
        self
    }

    /// Start the runtime's threads.
    pub fn build(self) -> std::io::Result<Runtime> {
        let deques: Vec<Deque<u32>> = (0..self.workers).map(|_| Deque::new_fifo()).collect();
        let (idle, parkers) = Idle::new(self.workers);
        let shared = Arc::new(Shared {
            table: Table::new(self.process_limit, self.workers),
            injector: Injector::new(),
            urgent: Urgent::new(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            idle,
            timers: Timers::new(),
            registry: Registry::default(),
            stop: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            exit_lock: Mutex::new(()),
            exit_cv: Condvar::new(),
            workers: self.workers,
            epoch: Instant::now(),
            loads: (0..self.workers).map(|_| WorkerLoad::default()).collect(),
        });
        crate::report::install_hook();
        let mut rt = Runtime {
            handle: Handle {
                shared: shared.clone(),
            },
            workers: Vec::new(),
            timer: None,
            shutdown_timeout: self.shutdown_timeout,
            running_workers: Arc::new(AtomicUsize::new(0)),
            hook_installed: true,
        };
        for (i, (deque, parker)) in deques.into_iter().zip(parkers).enumerate() {
            let core = WorkerCore::new(i, shared.clone(), deque);
            let running = rt.running_workers.clone();
            // SeqCst: a plain counter read by `running_workers`; no data
            // is published through it.
            running.fetch_add(1, SeqCst);
            let h = std::thread::Builder::new()
                .name(format!("lona-worker-{i}"))
                .stack_size(self.stack_size)
                .spawn(move || {
                    // Counted down however the thread ends.
                    struct Running(Arc<AtomicUsize>);
                    impl Drop for Running {
                        fn drop(&mut self) {
                            // SeqCst: a counter (see `running_workers`).
                            self.0.fetch_sub(1, SeqCst);
                        }
                    }
                    let _running = Running(running);
                    core.run(&parker);
                });
            match h {
                Ok(h) => rt.workers.push(h),
                Err(e) => {
                    // SeqCst: a counter (see `running_workers`).
                    rt.running_workers.fetch_sub(1, SeqCst);
                    return Err(e);
                }
            }
        }
        let s = shared.clone();
        rt.timer = Some(
            std::thread::Builder::new()
                .name("lona-timer".into())
                .spawn(move || s.timers.run(|to, node| s.deliver_timer(to, node)))?,
        );
        Ok(rt)
    }
}

/// A cloneable handle to a runtime, usable from any thread. Signals sent
/// through a handle come from [`RUNTIME_PID`].
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// Spawn any [`Process`] implementation.
    pub fn spawn_process<P: Process>(&self, process: P) -> Result<Pid, SpawnError> {
        self.shared
            .spawn(Priority::Normal, None, |_| Box::new(process), |_, _| {})
    }

    /// Send `msg` to a pid; silently dropped if it is gone (as in Erlang).
    /// From inside a process, it keeps its order with that process's other
    /// sends.
    pub fn send<M: Send + 'static>(&self, to: Pid, msg: M) {
        self.shared.send_pid(to, msg);
    }

    /// Send `msg` to the process registered as `name`; an error if nobody
    /// holds it.
    pub fn send_name<M: Send + 'static>(&self, name: &str, msg: M) -> Result<(), SendError> {
        let pid = self
            .shared
            .registry
            .whereis(name)
            .ok_or_else(|| SendError::NoName(name.to_string()))?;
        self.shared.send_pid(pid, msg);
        Ok(())
    }

    /// Send an exit signal to `pid` from outside any process (from
    /// [`RUNTIME_PID`]; Erlang's `exit/2`).
    pub fn send_exit(&self, pid: Pid, reason: Reason) {
        self.shared.signal(
            pid,
            Signal::Exit {
                from: RUNTIME_PID,
                reason,
                link: false,
            },
        );
    }

    /// Register `name` for `pid`.
    pub fn register(&self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        self.shared.register(name, pid)
    }

    /// Remove a name; returns whether it was registered.
    pub fn unregister(&self, name: &str) -> bool {
        self.shared.registry.remove(name).is_some()
    }

    /// The pid registered as `name`.
    pub fn whereis(&self, name: &str) -> Option<Pid> {
        self.shared.registry.whereis(name)
    }

    /// Whether `pid` is alive. From a thread outside the runtime this has
    /// Erlang's guarantee: every signal sent through a handle before (an
    /// exit signal, say) has taken effect, so after
    /// `send_exit(pid, Reason::Kill)` it returns `false`. It asks the
    /// process and waits for the answer, which comes when the process next
    /// drains its signals (at once for a waiting process). On a worker
    /// thread (inside a process) it cannot wait and reads the process's
    /// state alone; processes use `Ctx::is_alive` for the guarantee.
    pub fn is_alive(&self, pid: Pid) -> bool {
        let shared = &*self.shared;
        if !shared.is_alive(pid) || WorkerCore::current(shared).is_some() {
            return shared.is_alive(pid);
        }
        let answer = Arc::new(OneShot::default());
        shared.signal(
            pid,
            Signal::IsAlive {
                reply_to: ReplyTo::Thread(answer.clone()),
                tag: Ref::new(),
            },
        );
        loop {
            if let Some(alive) = answer.wait(Duration::from_millis(100)) {
                return alive;
            }
            // Acquire: pairs with shutdown's store; after it no worker
            // answers, so fall back to the state word.
            if shared.stop.load(Acquire) || !shared.is_alive(pid) {
                return shared.is_alive(pid);
            }
        }
    }

    /// Live processes right now.
    pub fn process_count(&self) -> usize {
        self.shared.table.live()
    }

    /// Pids of all live processes (a snapshot).
    pub fn processes(&self) -> Vec<Pid> {
        self.shared.pids()
    }

    /// The node right now: worker load and run queues, counts
    /// ([`RuntimeInfo`]). Cheap (atomic loads, no lock): call it as often
    /// as a live view refreshes.
    pub fn runtime_info(&self) -> RuntimeInfo {
        let s = &*self.shared;
        RuntimeInfo {
            uptime: s.epoch.elapsed(),
            workers: worker_infos(s.epoch, &s.loads, |i| {
                s.stealers.get(i).map_or(0, |st| st.len())
            }),
            injector_queue: s.injector.len(),
            process_count: s.table.live(),
            process_limit: s.table.limit(),
            registered: s.registry.len(),
            timers: s.timers.pending(),
            table_bytes: s.table.bytes(),
        }
    }

    /// Every live process with its [`ProcessInfo`], walked a batch at a
    /// time without stopping the node (see `stats`, "The process walk").
    /// A process that does not answer within `patience` of its batch being
    /// asked (a native loop that never yields) is listed without info.
    /// From inside a process it cannot wait for answers: there it lists
    /// every process without info.
    pub fn snapshot(&self, patience: Duration) -> Snapshot {
        let shared = &*self.shared;
        let pids = shared.pids();
        if WorkerCore::current(shared).is_some() {
            return Snapshot {
                processes: pids
                    .into_iter()
                    .map(|pid| ProcessEntry { pid, info: None })
                    .collect(),
            };
        }
        stats::walk(pids, patience, |pid, sink| {
            shared.signal(
                pid,
                Signal::Info {
                    reply_to: InfoTo::Walk(sink.clone()),
                    tag: Ref::new(),
                },
            );
        })
    }

    /// Registered names right now.
    pub fn registered_count(&self) -> usize {
        self.shared.registry.len()
    }

    /// Timers pending right now (receive timeouts included).
    pub fn pending_timers(&self) -> usize {
        self.shared.timers.pending()
    }

    /// Deliver `msg` to `to` after `after` (Erlang's `send_after/3`). A
    /// timer aimed at a pid is cancelled if that process ends first; one
    /// aimed at a name looks it up when it fires. Delays longer than
    /// [`MAX_DELAY`](crate::MAX_DELAY) never fire.
    pub fn send_after<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.shared.send_after(after, to.into(), msg)
    }

    /// Deliver [`Timeout { tref, msg }`](crate::Timeout) to `to` after
    /// `after` (Erlang's `start_timer/3`).
    pub fn start_timer<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.shared.start_timer(after, to.into(), msg)
    }

    /// Cancel a timer: how long it had left, on the clock
    /// (`Duration::MAX` for one that would never fire), or `None` if it had
    /// already fired (or was cancelled).
    pub fn cancel_timer(&self, t: TimerRef) -> Option<Duration> {
        self.shared.timers.cancel_remaining(t)
    }

    /// Workers this runtime runs.
    pub fn workers(&self) -> usize {
        self.shared.workers
    }
}

/// What [`Runtime::shutdown`] had to do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Processes still running after the timeout, killed.
    pub killed: usize,
    /// Processes that could not be stopped at all (never-yielding native
    /// loops); their workers were abandoned.
    pub stuck: usize,
}

/// A running Lona node.
pub struct Runtime {
    pub(crate) handle: Handle,
    workers: Vec<JoinHandle<()>>,
    timer: Option<JoinHandle<()>>,
    shutdown_timeout: Duration,
    running_workers: Arc<AtomicUsize>,
    hook_installed: bool,
}

impl std::ops::Deref for Runtime {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.handle
    }
}

impl Runtime {
    /// A runtime with default settings.
    pub fn new() -> std::io::Result<Runtime> {
        Builder::default().build()
    }

    /// Configure one.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A handle for other threads.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Stop every process (see the module doc) and the threads.
    pub fn shutdown(mut self) -> ShutdownReport {
        self.shutdown_inner()
    }

    fn shutdown_inner(&mut self) -> ShutdownReport {
        let mut report = ShutdownReport::default();
        if self.hook_installed {
            self.hook_installed = false;
            // Restored however the rest goes (the last runtime puts the
            // previous panic hook back).
            struct Uninstall;
            impl Drop for Uninstall {
                fn drop(&mut self) {
                    crate::report::uninstall_hook();
                }
            }
            let _uninstall = Uninstall;
            report = self.stop_everything();
        }
        report
    }

    fn stop_everything(&mut self) -> ShutdownReport {
        let mut report = ShutdownReport::default();
        let shared = self.handle.shared.clone();
        // SeqCst: spawns and exits read it (see `Shared::spawn`, `finish`).
        shared.shutting_down.store(true, SeqCst);
        for pid in shared.pids() {
            self.handle.send_exit(pid, Reason::Shutdown);
        }
        if !shared.wait_empty(Instant::now() + self.shutdown_timeout) {
            let left = shared.pids();
            report.killed = left.len();
            for pid in left {
                self.handle.send_exit(pid, Reason::Kill);
            }
            if !shared.wait_empty(Instant::now() + Duration::from_secs(1)) {
                report.stuck = shared.table.live();
            }
        }
        // SeqCst: read by workers with acquire; every process has ended (or
        // been given up on) before this.
        shared.stop.store(true, SeqCst);
        shared.idle.notify_all();
        let grace = Instant::now() + Duration::from_secs(1);
        for h in self.workers.drain(..) {
            while !h.is_finished() && Instant::now() < grace {
                shared.idle.notify_all();
                std::thread::sleep(Duration::from_millis(1));
            }
            if h.is_finished() {
                let _ = h.join();
            }
            // else: stuck in a never-yielding native loop; abandoned.
        }
        shared.timers.stop();
        if let Some(t) = self.timer.take() {
            let _ = t.join();
        }
        if report.stuck > 0 {
            log::error!(target: "lona::shutdown", "{} processes never yielded; their workers were abandoned", report.stuck);
        }
        report
    }

    /// Worker threads still running (0 after shutdown).
    pub fn running_workers(&self) -> usize {
        // SeqCst: a counter snapshot; nothing is published through it.
        self.running_workers.load(SeqCst)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown_inner();
    }
}
