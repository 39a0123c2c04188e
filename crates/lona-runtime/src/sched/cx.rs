//! [`StepCx`]: what a process sees of the runtime while it runs, for every kind
//! of process. Everything a process can do is a method of `StepCx`: here,
//! send, drain and selective receive, spawn, names, timers, priority and
//! trap-exit; on the floors above, what needs them: links, monitors, exit
//! signals, aliases and the questions one process asks another
//! (`rules/links.rs`), receive timeouts (`rules/timeout.rs`), its own info
//! (`rules/info.rs`), a handle (`node/handle.rs`). The native `async`
//! layer (`native`) and the Lonala interpreter are thin layers over it.
//!
//! A drain moves the process's messages into its mailbox itself and hands
//! every signal to the rules through `Shared::rules` (`sched::rules`).
//!
//! # Reductions
//! Every operation is charged: one reduction, and a selective receive one
//! more per message it rejects. Operations never block and never fail for
//! lack of budget: a caller that must be preemptible checks
//! [`StepCx::budget`] and ends its step with [`Step::Yield`](crate::Step) when
//! it is zero (the native layer does this at every call).

use crate::base::envelope::{Envelope, Header};
use crate::base::error::{SendError, SpawnError};
use crate::base::mailbox::{Ahead, Mailbox};
use crate::base::pid::Dest;
use crate::base::priority::Priority;
use crate::sched::process::{Private, Process, Slot, ACTIVE};
use crate::sched::registry::RegisterError;
use crate::sched::shared::Shared;
use crate::sched::timer::TimerRef;
use crate::sched::worker::WorkerCore;
use crate::{Pid, Reason, Ref};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::time::Duration;

/// Reductions between two [`StepCx::tick`]s (a power of two).
pub(crate) const TICK: u32 = 64;

/// Options for [`StepCx::spawn`] and `Ctx::spawn_opt` (Erlang's `spawn_opt`
/// options), built by chaining:
///
/// ```
/// use lona_runtime::{Priority, SpawnOpts};
/// let opts = SpawnOpts::new().link(true).priority(Priority::High);
/// # let _ = opts;
/// ```
///
/// The fields are private and the struct `#[non_exhaustive]`, so a new
/// option (as `priority` once was) breaks no caller: every option has a
/// default and a method that sets it.
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct SpawnOpts {
    pub(crate) link: bool,
    pub(crate) monitor: bool,
    pub(crate) priority: Priority,
}

impl SpawnOpts {
    /// The defaults: not linked, not monitored, priority `Normal`.
    pub fn new() -> SpawnOpts {
        SpawnOpts::default()
    }

    /// Link the new process to the caller, atomically (`spawn_link`).
    pub fn link(mut self, on: bool) -> SpawnOpts {
        self.link = on;
        self
    }

    /// Monitor the new process, atomically (`spawn_monitor`); the spawn
    /// then returns the monitor's reference.
    pub fn monitor(mut self, on: bool) -> SpawnOpts {
        self.monitor = on;
        self
    }

    /// The new process's priority (Erlang's `{priority, P}`; default
    /// `Normal`).
    pub fn priority(mut self, prio: Priority) -> SpawnOpts {
        self.priority = prio;
        self
    }

    /// Whether the new process is linked to the caller.
    pub fn is_link(&self) -> bool {
        self.link
    }

    /// Whether the new process is monitored by the caller.
    pub fn is_monitor(&self) -> bool {
        self.monitor
    }

    /// The new process's priority.
    pub fn get_priority(&self) -> Priority {
        self.priority
    }
}

/// How a selective receive's scan ended ([`StepCx::take_message`]).
#[derive(Debug)]
pub enum Scan {
    /// The first message the predicate accepted, removed from the mailbox.
    Found(Envelope),
    /// No message in the mailbox matches: wait for more.
    NotFound,
    /// The slice's reductions ran out mid-scan: yield; the same receive
    /// (same id) resumes after the messages it already rejected.
    OutOfBudget,
}

/// A message in the mailbox, seen by [`StepCx::peek_message`] (a borrowed
/// view: it stays in the mailbox).
pub struct Peeked<'a> {
    e: std::mem::ManuallyDrop<Envelope>,
    _borrow: PhantomData<&'a mut Mailbox>,
}

impl std::ops::Deref for Peeked<'_> {
    type Target = Envelope;
    fn deref(&self) -> &Envelope {
        &self.e
    }
}

/// What a process sees of the runtime during `init`/`step`.
pub struct StepCx<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) worker: &'a WorkerCore,
    pub(crate) slot: &'a Slot,
    pub(crate) p: &'a mut Private,
    pub(crate) pid: Pid,
    /// Reductions left in this slice.
    pub(crate) budget: u32,
    /// Set by a native process that yields on purpose.
    pub(crate) yielded: bool,
}

impl StepCx<'_> {
    /// This process's pid.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Reductions left in this slice.
    pub fn budget(&self) -> u32 {
        self.budget
    }

    /// Charge `n` reductions. Returns false (charging nothing) if the slice
    /// does not have them: the process should yield.
    #[inline]
    pub fn charge(&mut self, n: u32) -> bool {
        if self.budget < n {
            return false;
        }
        let old = self.budget;
        self.budget -= n;
        self.p.reductions += n as u64;
        self.tick(old);
        true
    }

    /// Charge `n` reductions, as many as are left if fewer.
    #[inline]
    pub(crate) fn charge_saturating(&mut self, n: u32) {
        let n = n.min(self.budget);
        let old = self.budget;
        self.budget -= n;
        self.p.reductions += n as u64;
        self.tick(old);
    }

    /// Every `TICK` reductions spent (the budget crossed a multiple of
    /// it), let the worker age its LIFO slot (see `worker`). Register-only
    /// on the common path: charging is the interpreter's hottest call.
    #[inline(always)]
    fn tick(&self, old_budget: u32) {
        if (old_budget ^ self.budget) >= TICK {
            self.worker.tick();
        }
    }

    /// One operation's reduction (module doc).
    #[inline]
    pub(crate) fn charge_op(&mut self) {
        self.charge_saturating(1);
    }

    /// Send `msg` to `to` (dropped if `to` is gone). Consecutive sends to one
    /// receiver are batched until the end of the step (see `worker`'s
    /// outbox); order between this process and `to` is kept on every path.
    #[inline]
    pub fn send<M: Send + 'static>(&mut self, to: Pid, msg: M) {
        self.charge_op();
        let e = Envelope::new(msg, to.generation(), false);
        if to == self.pid {
            // To oneself: at once, so a receive in this same step sees it.
            let _ = self.shared.deliver(to, e);
        } else {
            self.worker.send_batched(to, e);
        }
    }

    /// Send `msg` to the process registered as `name`; an error if nobody
    /// holds the name (Erlang's `badarg`).
    pub fn send_name<M: Send + 'static>(&mut self, name: &str, msg: M) -> Result<(), SendError> {
        match self.shared.registry.whereis(name) {
            Some(pid) => {
                self.send(pid, msg);
                Ok(())
            }
            None => {
                self.charge_op();
                Err(SendError::NoName(name.to_string()))
            }
        }
    }

    /// Messages waiting in the mailbox (after the last drain).
    pub fn mailbox_len(&self) -> usize {
        self.p.mailbox.len()
    }

    /// Whether the process traps exits.
    pub fn trap_exit(&self) -> bool {
        self.p.trap_exit
    }

    /// Set the trap-exit flag; returns the old value.
    pub fn set_trap_exit(&mut self, on: bool) -> bool {
        self.charge_op();
        std::mem::replace(&mut self.p.trap_exit, on)
    }

    /// This process's priority.
    pub fn priority(&self) -> Priority {
        self.slot.priority()
    }

    /// Set this process's priority; returns the old one (Erlang's
    /// `process_flag(priority, P)`). It takes effect the next time the
    /// process is queued (when this slice ends, or when it next wakes).
    /// [`Priority::Max`] is meant for the runtime's own processes: a max
    /// process that never waits holds back everything else.
    pub fn set_priority(&mut self, prio: Priority) -> Priority {
        self.charge_op();
        self.slot.state.set_priority(prio)
    }

    /// A new receive id (non-zero) for [`StepCx::take_message`].
    pub fn new_receive(&mut self) -> u64 {
        self.p.receive_seq = self.p.receive_seq.wrapping_add(1).max(1);
        self.p.receive_seq as u64
    }

    /// Move everything that arrived into the mailbox, acting on signals.
    /// Afterwards, [`StepCx::exiting`] tells whether a signal ended the process;
    /// what came behind that signal is answered as for a process that is
    /// gone (see `links`, "Delivery").
    #[inline]
    pub fn drain(&mut self) {
        if self.slot.inbox.is_empty() {
            return;
        }
        let (mut node, _) = self.slot.inbox.take();
        let mut run = Ahead::new();
        while !node.is_null() {
            // SAFETY: the chain is ours; read `next` before handing the node on.
            let next = unsafe { (*node).next };
            // SAFETY: the node is ours (taken above) and is handed on whole, once.
            let e = unsafe { Envelope::from_raw(node) };
            if self.p.pending_exit.is_none() {
                // A message of this process: straight into the mailbox
                // (the common case); anything else is the rules' (a
                // signal, or a node for an earlier process in the slot).
                let h = e.header();
                if h.gen() == self.p.gen && !h.is_signal() {
                    self.p.mailbox.push_run(e, &mut run);
                } else {
                    (self.shared.rules.on_signal)(self, e);
                }
            } else {
                (self.shared.rules.on_node_dying)(self.shared, self.p, self.pid, e);
            }
            node = next;
        }
    }

    /// Whether the process has been ended by a signal (or `exit`) and must
    /// stop: the worker finishes it after this step.
    pub fn exiting(&self) -> bool {
        self.p.pending_exit.is_some()
    }

    /// This process reports its own end (e.g. a program's main process,
    /// whose runner prints the reason): if it ends abnormally now, the
    /// runtime prints no crash report for it (`links`, rule 10).
    pub fn suppress_crash_report(&mut self) {
        self.p.exit_by_signal = true;
    }

    /// End the process with `reason` after this step (Erlang's `exit/1`).
    pub fn exit(&mut self, reason: Reason) {
        if self.p.pending_exit.is_none() {
            self.p.pending_exit = Some(Box::new(reason));
        }
    }

    /// Remove and return the first message `accept` takes, resuming after
    /// the messages receive `id` already rejected (selective receive). Each
    /// rejected message costs a reduction; when the slice runs out mid-scan
    /// the answer is [`Scan::OutOfBudget`] and the same `id` continues later.
    #[inline]
    pub fn take_message(&mut self, id: u64, accept: impl FnMut(&Envelope) -> bool) -> Scan {
        let mut accept = accept;
        let limit = self.budget.max(1);
        let (found, rejected) = self
            .p
            .mailbox
            .take_first(id as u32, limit, |h: *mut Header| {
                // SAFETY: a borrowed view of a node the mailbox owns (the node
                // pointer, so it covers the whole node); never dropped here.
                let e = std::mem::ManuallyDrop::new(unsafe { Envelope::from_raw(h) });
                accept(&e)
            });
        if rejected > 0 {
            self.charge_saturating(rejected);
        }
        match found {
            Some(e) => Scan::Found(e),
            None if rejected >= limit => Scan::OutOfBudget,
            None => Scan::NotFound,
        }
    }

    /// The message receive `id` looks at next, without removing it: the
    /// one after those it already rejected ([`StepCx::skip_message`]), or the
    /// oldest for a new receive. When it has seen every message, the inbox
    /// is drained first; `None` means there is nothing more to look at (or
    /// a signal just ended the process: check [`StepCx::exiting`]).
    ///
    /// This is selective receive one step at a time, for an interpreter
    /// whose patterns are code (BEAM's `loop_rec` / `remove_message`):
    /// look, then [`StepCx::skip_message`] or [`StepCx::take_peeked`]. The view
    /// borrows the runtime; the message itself stays where it is (its
    /// address does not change) until it is taken or the process ends.
    #[inline]
    pub fn peek_message(&mut self, id: u64) -> Option<Peeked<'_>> {
        let mut h = self.p.mailbox.peek(id as u32);
        if h.is_null() {
            self.drain();
            if self.exiting() {
                return None;
            }
            h = self.p.mailbox.peek(id as u32);
        }
        // SAFETY: a live node the mailbox owns; `Peeked` never drops it.
        NonNull::new(h).map(|_| Peeked {
            // SAFETY: as above: the mailbox's live node, never dropped through `Peeked`.
            e: std::mem::ManuallyDrop::new(unsafe { Envelope::from_raw(h) }),
            _borrow: PhantomData,
        })
    }

    /// Receive `id` rejects the message [`StepCx::peek_message`] showed it
    /// (a reduction, as in [`StepCx::take_message`]).
    #[inline]
    pub fn skip_message(&mut self, id: u64) {
        self.charge_saturating(1);
        self.p.mailbox.skip(id as u32);
    }

    /// [`StepCx::peek_message`] and [`StepCx::skip_message`] in one loop: receive
    /// `id` rejects every message `accept` rejects (a reduction each, at
    /// most `limit` of them, draining the inbox when it has seen them
    /// all), and shows the first one `accept` takes, left in the mailbox.
    /// Returns it (`None`: nothing more to look at, a signal ended the
    /// process, or `limit` messages were rejected) and how many were
    /// rejected. For a receive with a cheap test every match passes (not
    /// necessarily only matches): what it accepts, the caller examines as
    /// after `peek_message`.
    #[inline]
    pub fn peek_matching(
        &mut self,
        id: u64,
        limit: u32,
        mut accept: impl FnMut(&Envelope) -> bool,
    ) -> (Option<Peeked<'_>>, u32) {
        let mut look = |h: *mut Header| {
            // SAFETY: a borrowed view of a node the mailbox owns (the node
            // pointer, so it covers the whole node); never dropped here.
            let e = std::mem::ManuallyDrop::new(unsafe { Envelope::from_raw(h) });
            accept(&e)
        };
        let (mut h, mut rejected) = self.p.mailbox.skip_while(id as u32, limit, &mut look);
        if h.is_null() && rejected < limit {
            self.drain();
            if !self.exiting() {
                let (h2, r2) = self
                    .p
                    .mailbox
                    .skip_while(id as u32, limit - rejected, &mut look);
                h = h2;
                rejected += r2;
            }
        }
        if rejected > 0 {
            self.charge_saturating(rejected);
        }
        // SAFETY: a live node the mailbox owns; `Peeked` never drops it.
        let peeked = NonNull::new(h).map(|_| Peeked {
            // SAFETY: as above: the mailbox's live node, never dropped through `Peeked`.
            e: std::mem::ManuallyDrop::new(unsafe { Envelope::from_raw(h) }),
            _borrow: PhantomData,
        });
        (peeked, rejected)
    }

    /// Receive `id` takes the message [`StepCx::peek_message`] showed it: it
    /// leaves the mailbox, the others keep their order.
    #[inline]
    pub fn take_peeked(&mut self, id: u64) -> Option<Envelope> {
        self.p.mailbox.remove_peeked(id as u32)
    }

    /// Spawn a process built by `make` from its pid, linked and/or
    /// monitored atomically as `opts` say (Erlang's `spawn_opt`). Returns
    /// its pid and, with `monitor`, the monitor's reference.
    pub fn spawn(
        &mut self,
        opts: SpawnOpts,
        make: impl FnOnce(Pid) -> Box<dyn Process>,
    ) -> Result<(Pid, Option<Ref>), SpawnError> {
        self.spawn_inner(None, opts, make)
    }

    /// [`StepCx::spawn`] registered as `name` before the process can run
    /// (Erlang's `proc_lib` start with a name, atomic): if the name is
    /// taken, no process is made ([`SpawnError::NameTaken`]).
    pub fn spawn_named(
        &mut self,
        name: &str,
        opts: SpawnOpts,
        make: impl FnOnce(Pid) -> Box<dyn Process>,
    ) -> Result<(Pid, Option<Ref>), SpawnError> {
        self.spawn_inner(Some(name), opts, make)
    }

    fn spawn_inner(
        &mut self,
        name: Option<&str>,
        opts: SpawnOpts,
        make: impl FnOnce(Pid) -> Box<dyn Process>,
    ) -> Result<(Pid, Option<Ref>), SpawnError> {
        self.charge_op();
        let me = self.pid;
        let mref = opts.monitor.then(Ref::new);
        let child = self.shared.spawn(opts.priority, name, make, |p, _| {
            p.parent = me;
            if opts.link {
                p.extra().links.insert(me, ACTIVE);
            }
            if let Some(r) = mref {
                p.extra().monitored_by.insert(r, me);
            }
        })?;
        if opts.link {
            self.p.extra().links.insert(child, ACTIVE);
        }
        if let Some(r) = mref {
            self.p.extra().monitors.insert(r, child);
        }
        Ok((child, mref))
    }

    /// Register this process, or another, as `name`.
    pub fn register(&mut self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        self.charge_op();
        self.shared.register(name, pid)
    }

    /// Remove a registered name; returns whether it existed.
    pub fn unregister(&mut self, name: &str) -> bool {
        self.charge_op();
        self.shared.registry.remove(name).is_some()
    }

    /// The pid registered as `name`.
    pub fn whereis(&mut self, name: &str) -> Option<Pid> {
        self.charge_op();
        self.shared.registry.whereis(name)
    }

    /// Deliver `msg` to `to` after `after` (Erlang's `send_after/3`; a name
    /// is looked up when the timer fires).
    pub fn send_after<M: Send + 'static>(
        &mut self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.charge_op();
        self.shared.send_after(after, to.into(), msg)
    }

    /// Deliver [`Timeout { tref, msg }`](crate::Timeout) to `to` after
    /// `after` (Erlang's `start_timer/3`).
    pub fn start_timer<M: Send + 'static>(
        &mut self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.charge_op();
        self.shared.start_timer(after, to.into(), msg)
    }

    /// Cancel a timer: how long it had left (`Duration::MAX` for one that
    /// would never fire), or `None` if it had fired or been cancelled.
    pub fn cancel_timer(&mut self, t: TimerRef) -> Option<Duration> {
        self.charge_op();
        self.shared.timers.cancel_remaining(t)
    }

    /// Whether `pid` is alive right now, by its state word alone (no
    /// ordering with signals this process sent it; see
    /// [`StepCx::request_alive`] for Erlang's guarantee).
    pub fn is_alive_now(&mut self, pid: Pid) -> bool {
        self.charge_op();
        self.shared.is_alive(pid)
    }
}
