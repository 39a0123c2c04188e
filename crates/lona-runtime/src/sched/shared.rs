//! [`Shared`]: the state the workers, the timer thread and every handle
//! share, and the core operations on it: delivering messages and signals,
//! waking and scheduling processes, spawning, registering, timers, ending.
//!
//! # Delivery
//! 1. Look the pid's slot up; if its generation is not the pid's, or it
//!    has exited, the node comes back to the caller (a message is dropped,
//!    a signal answered as by a dead process: `links`, "Delivery").
//! 2. Push the node into the slot's inbox (one CAS; fails only when the
//!    inbox is closed, i.e. the process is ending).
//! 3. `notify` the state word (`state`, protocol steps 1-3) and, when it
//!    says so, put the process in a run queue ([`Shared::schedule`]).
//!
//! Spawning (`Shared::spawn`) fills a free slot's private part before
//! anyone can signal it, reopens its inbox, then publishes the process by
//! resetting its state word and queueing it.

use crate::base::envelope::{Envelope, Header};
use crate::base::error::SpawnError;
use crate::base::pid::Dest;
use crate::base::priority::{Priority, Urgent};
use crate::base::reclaim::Reclaimer;
use crate::base::state::{Notify, State};
use crate::sched::idle::Idle;
use crate::sched::load::WorkerLoad;
use crate::sched::process::Table;
use crate::sched::process::{Private, Process};
use crate::sched::registry::{RegisterError, Registry};
use crate::sched::rules::Rules;
use crate::sched::timer::{Target, Timeout, TimerRef, Timers};
use crate::sched::worker::WorkerCore;
use crate::Pid;
use crossbeam_deque::{Injector, Stealer};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// State shared by the workers, the timer thread and every handle.
pub(crate) struct Shared {
    pub(crate) table: Table,
    pub(crate) injector: Injector<u32>,
    /// The run queues of max and high processes (`priority`).
    pub(crate) urgent: Urgent,
    pub(crate) stealers: Vec<Stealer<u32>>,
    /// Whether worker *i*'s local queue may be stolen from (`worker.rs`,
    /// step 5): written by worker *i* alone, when it changes (rarely), and
    /// read by idle workers before they touch that queue's lines.
    pub(crate) open: Box<[CachePadded<AtomicBool>]>,
    pub(crate) idle: Idle,
    pub(crate) timers: Timers,
    pub(crate) registry: Registry,
    /// Set last in shutdown: workers leave their loops.
    pub(crate) stop: AtomicBool,
    /// Set first in shutdown: exits notify `exit_cv`, spawns fail.
    pub(crate) shutting_down: AtomicBool,
    pub(crate) exit_lock: Mutex<()>,
    pub(crate) exit_cv: Condvar,
    pub(crate) workers: usize,
    /// When the node started (the clock of `loads`).
    pub(crate) epoch: Instant,
    /// Each worker's idle-time accounting, written by that worker
    /// (`load`).
    pub(crate) loads: Box<[WorkerLoad]>,
    /// Where large mailboxes of ended processes go to be freed
    /// (`reclaim`).
    pub(crate) reclaimer: Reclaimer,
    /// The signal rules, as the scheduler calls them (`sched::rules`).
    pub(crate) rules: Rules,
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
            Some(w) => self.table.alloc(&mut w.free.borrow_mut(), Some(w.index)),
            None => {
                let mut cache = Vec::new();
                let i = self.table.alloc(&mut cache, None);
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
                    Some(w) => self
                        .0
                        .table
                        .release(self.1, Some((&mut w.free.borrow_mut(), w.index))),
                    None => self.0.table.release(self.1, None),
                }
            }
        }
        let guard = Unreserve(self, index, worker);
        p.process = Some(make(pid));
        p.parent = crate::RUNTIME_PID;
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
            // Spawned like a woken receiver (`worker.rs`, step 2).
            Some(w) => w.schedule_woken(index),
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
    pub(crate) fn wait_empty(&self, deadline: Instant) -> bool {
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
    pub(crate) fn deliver_timer(&self, target: Target, node: Option<Envelope>) {
        let (pid, node) = match (target, node) {
            (Target::Pid(pid), Some(node)) => (pid, node),
            (Target::Wake(pid), _) => return self.wake(pid),
            (Target::Timeout { pid, token, signal }, _) => (pid, signal(token, pid.generation())),
            (Target::Name(name), Some(mut node)) => match self.registry.whereis(&name) {
                Some(pid) => {
                    node.set_gen(pid.generation());
                    (pid, node)
                }
                None => return, // nobody holds the name: dropped, as in Erlang
            },
            (Target::Pid(_) | Target::Name(_), None) => {
                debug_assert!(false, "a message timer without its message");
                return;
            }
        };
        // A dead target's message is dropped (contained by `Envelope`).
        let _ = self.deliver(pid, node);
    }

    /// A timer that wakes `pid` after `after` (no message), for
    /// `Ctx::timeout`.
    pub(crate) fn wake_after(&self, after: Duration, pid: Pid) -> TimerRef {
        let t = self.timers.insert_bare(after, Target::Wake(pid));
        self.cancel_if_dead(pid, t);
        t
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
