//! The `Process` abstraction the scheduler drives, and [`Cx`], what a
//! process sees of the runtime while it runs.
//!
//! The seed (`scheduler-work-stealing.de.md`) gives a process three
//! operations, `Init`, `Step` and `Close`. Here they are [`Process::init`]
//! (once, on its first run, in its own context), [`Process::step`] (run for
//! at most the reductions left in the slice and say how it ended: yielded,
//! waiting, exited) and [`Process::close`] (release resources, with the exit
//! reason). Native `async` Rust processes (`native`) are one implementation;
//! the Lonala interpreter will be another.

use crate::envelope::{Envelope, Header};
use crate::mailbox::Mailbox;
use crate::runtime::Shared;
use crate::table::Slot;
use crate::timer::TimerRef;
use crate::worker::WorkerCore;
use crate::{Pid, Reason, Ref};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Reductions in one slice (seed v2: 2,000).
pub const SLICE_REDUCTIONS: u32 = 2000;

/// A process the scheduler can run.
pub trait Process: Send + 'static {
    /// Called once, on the process's first run, before the first `step`.
    fn init(&mut self, _cx: &mut Cx<'_>) {}

    /// Run until the slice's reductions are spent ([`Step::Yield`]), the
    /// process must wait for a message ([`Step::Wait`]) or it ends
    /// ([`Step::Exit`]). A process that returns `Wait` is stepped again when
    /// anything arrives in its inbox (also spuriously: it must re-check).
    fn step(&mut self, cx: &mut Cx<'_>) -> Step;

    /// Called once when the process ends, whatever the reason (also when it
    /// is killed while waiting, or panicked in `step`).
    fn close(&mut self, _reason: &Reason) {}
}

/// How a step ended.
#[derive(Debug)]
pub enum Step {
    /// Still runnable: goes to the back of a run queue.
    Yield,
    /// Waiting for a message, timer or wake-up.
    Wait,
    /// Ended with this reason.
    Exit(Reason),
}

/// Links, monitors and name: allocated on first use, so a process that has
/// none costs one word for them.
#[derive(Default)]
pub(crate) struct Extra {
    pub(crate) links: HashSet<Pid>,
    /// Monitors this process holds: ref -> monitored pid.
    pub(crate) monitors: HashMap<Ref, Pid>,
    /// Monitors on this process: ref -> watcher.
    pub(crate) monitored_by: HashMap<Ref, Pid>,
}

/// The owner-private part of a process (see `table::Slot` for who may
/// touch it).
#[derive(Default)]
pub(crate) struct Private {
    /// The slot's generation for this process: the state word has it too,
    /// this owner-only copy spares an atomic load per drained node.
    pub(crate) gen: u32,
    pub(crate) mailbox: Mailbox,
    pub(crate) process: Option<Box<dyn Process>>,
    pub(crate) started: bool,
    /// Its last step ended waiting (for `process_info`'s status).
    pub(crate) waiting: bool,
    /// `pending_exit` came from another process's exit signal (such an end
    /// is not reported as a crash: its cause already was, or was handled).
    pub(crate) exit_by_signal: bool,
    pub(crate) trap_exit: bool,
    /// Set when a signal (or the process itself) ended it; acted on by the
    /// worker after the current step.
    /// (Boxed: rare, and a `Reason` inline would cost every slot 16 bytes.)
    pub(crate) pending_exit: Option<Box<Reason>>,
    pub(crate) reductions: u64,
    /// Source of receive ids (for the mailbox cursor) and timeout tokens.
    pub(crate) receive_seq: u32,
    /// Token of the most recent receive timeout that fired.
    pub(crate) fired_timeout: u32,
    /// The receive timer armed last, cancelled if the process ends while it
    /// is pending (a receive future dropped by the exit path cannot reach
    /// the runtime to cancel it itself).
    pub(crate) receive_timer: Option<TimerRef>,
    pub(crate) extra: Option<Box<Extra>>,
}

impl Private {
    pub(crate) fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }
}

/// What a process sees of the runtime during `init`/`step`.
pub struct Cx<'a> {
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

impl Cx<'_> {
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
    pub fn charge(&mut self, n: u32) -> bool {
        if self.budget < n {
            return false;
        }
        self.budget -= n;
        self.p.reductions += n as u64;
        true
    }

    /// Send `msg` to `to` (dropped if `to` is gone). Consecutive sends to one
    /// receiver are batched until the end of the step (see `worker`'s
    /// outbox); order between this process and `to` is kept.
    pub fn send<M: Send + 'static>(&mut self, to: Pid, msg: M) {
        let e = Envelope::new(msg, to.generation(), false);
        if to == self.pid {
            // To oneself: at once, so a receive in this same step sees it.
            let _ = self.shared.deliver(to, e);
        } else {
            self.worker.send_batched(to, e);
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
        std::mem::replace(&mut self.p.trap_exit, on)
    }

    /// A new receive id (non-zero) for [`Cx::take_message`].
    pub fn new_receive(&mut self) -> u64 {
        self.p.receive_seq = self.p.receive_seq.wrapping_add(1).max(1);
        self.p.receive_seq as u64
    }

    /// Move everything that arrived into the mailbox, acting on signals.
    /// Afterwards, [`Cx::exiting`] tells whether a signal ended the process.
    pub fn drain(&mut self) {
        if self.slot.inbox.is_empty() {
            return;
        }
        let (mut node, _) = self.slot.inbox.take();
        while !node.is_null() {
            // SAFETY: the chain is ours; read `next` before handing the node on.
            let next = unsafe { (*node).next };
            let e = unsafe { Envelope::from_raw(node) };
            crate::links::on_node(self, e);
            node = next;
        }
    }

    /// Whether the process has been ended by a signal (or `exit`) and must
    /// stop: the worker finishes it after this step.
    pub fn exiting(&self) -> bool {
        self.p.pending_exit.is_some()
    }

    /// End the process with `reason` after this step.
    pub fn exit(&mut self, reason: Reason) {
        if self.p.pending_exit.is_none() {
            self.p.pending_exit = Some(Box::new(reason));
        }
    }

    /// Remove and return the first message `accept` takes, resuming after
    /// the messages receive `id` already rejected (selective receive).
    pub fn take_message(
        &mut self,
        id: u64,
        accept: impl FnMut(&Envelope) -> bool,
    ) -> Option<Envelope> {
        let mut accept = accept;
        self.p.mailbox.take_first(id as u32, |h: *mut Header| {
            // SAFETY: a borrowed view of a node the mailbox owns (the node
            // pointer, so it covers the whole node); never dropped here.
            let e = std::mem::ManuallyDrop::new(unsafe { Envelope::from_raw(h) });
            accept(&e)
        })
    }

    /// Arm a receive timeout of `after`; returns its token. When it fires,
    /// [`Cx::timed_out`] with that token becomes true (and the process is
    /// woken).
    pub fn start_receive_timer(&mut self, after: Duration) -> (u64, TimerRef) {
        let token = self.new_receive();
        let node = Envelope::new(
            crate::signal::Signal::Timeout {
                token: token as u32,
            },
            self.p.gen,
            true,
        );
        let tref = self.shared.timers.insert(after, self.pid, node, false);
        self.p.receive_timer = Some(tref);
        (token, tref)
    }

    /// Whether the receive timeout `token` has fired.
    pub fn timed_out(&self, token: u64) -> bool {
        self.p.fired_timeout as u64 == token
    }

    /// Cancel a timer (no effect if it already fired).
    pub fn cancel_timer(&mut self, tref: TimerRef) {
        if self.p.receive_timer == Some(tref) {
            self.p.receive_timer = None;
        }
        drop(self.shared.timers.cancel(tref));
    }
}
