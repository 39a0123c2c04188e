//! The `Process` abstraction the scheduler drives, and the private state
//! every process has (what a process sees of the runtime while it runs is
//! [`StepCx`](crate::StepCx), in `cx`).
//!
//! A process has three operations (`docs/design.md`, "Scheduler"): init,
//! step and close. Here they are [`Process::init`]
//! (once, on its first run, in its own context), [`Process::step`] (run for
//! at most the reductions left in the slice and say how it ended: yielded,
//! waiting, exited) and [`Process::close`] (release resources, with the exit
//! reason). Native `async` Rust processes (`native`) are one implementation;
//! the Lonala interpreter is another (`lona-vm`'s `LonaProcess`, which
//! steps its VM for the slice's reductions).

use crate::base::mailbox::Mailbox;
use crate::sched::cx::StepCx;
use crate::sched::table;
use crate::sched::ticket::Ticket;
use crate::{Pid, Reason, Ref, RUNTIME_PID};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hasher for pids and refs, the keys of links and monitors: both are
/// unique 64-bit ids the runtime makes (not chosen by users), so one
/// multiply spreads them well; SipHash's flood resistance would only cost
/// time on every link, monitor and exit. Written here because it is eight
/// lines; a crate (rustc-hash) would do the same.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(*b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Reductions in one slice (`docs/design.md`, D6: 2,000).
pub const SLICE_REDUCTIONS: u32 = 2000;

/// A process the scheduler can run.
pub trait Process: Send + 'static {
    /// Called once, on the process's first run, before the first `step`.
    fn init(&mut self, _cx: &mut StepCx<'_>) {}

    /// Run until the slice's reductions are spent ([`Step::Yield`]), the
    /// process must wait for a message ([`Step::Wait`]) or it ends
    /// ([`Step::Exit`]). A process that returns `Wait` is stepped again when
    /// anything arrives in its inbox (also spuriously: it must re-check).
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step;

    /// Called once when the process ends, whatever the reason (also when it
    /// is killed while waiting, or panicked in `step`).
    fn close(&mut self, _reason: &Reason) {}

    /// What the process runs, for `process_info` and the node's process
    /// list (a Lonala process names the function of its current frame).
    /// Asked between steps, on the worker that owns the process, never
    /// while `step` runs; it must be cheap and must not panic.
    fn current_function(&self) -> Option<String> {
        None
    }

    /// Words of the process's own term heap, if it has one (a Lonala
    /// process), for `process_info`. Asked as `current_function` is.
    fn heap_words(&self) -> Option<usize> {
        None
    }

    /// A visit ([`visit_all`](crate::visit_all)): `what` is whatever its
    /// sender asks of every process (a language's code collector asking
    /// which code the process holds). Called between steps, on the worker
    /// that owns the process; a process that knows nothing of `what`
    /// ignores it, as the default does.
    fn visit(&mut self, _what: &dyn std::any::Any) {}
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

/// Links and monitors: allocated on first use, so a process that has none
/// costs one word for them.
#[derive(Default)]
pub(crate) struct Extra {
    /// Visits that came while the process was inside `step` (`visit`).
    pub(crate) visits: Vec<Ticket>,
    /// Linked processes: `ACTIVE`, or the id of an unlink this process sent
    /// and that the other side has not acknowledged yet (links rule 6).
    pub(crate) links: IdMap<Pid, u64>,
    /// Monitors this process holds: ref -> monitored pid.
    pub(crate) monitors: IdMap<Ref, Pid>,
    /// Monitors on this process: ref -> watcher.
    pub(crate) monitored_by: IdMap<Ref, Pid>,
    /// Active aliases of this process (links rule 11); the value is unused.
    pub(crate) aliases: IdMap<Ref, ()>,
    /// A wake-up timer a finished `Ctx::timeout` left armed, and when it
    /// fires, for the next one to reuse (`native/timeout.rs`, step 4).
    pub(crate) spare_wake: Option<(crate::sched::timer::TimerRef, std::time::Instant)>,
}

/// A process's place in the process table: its state word, its inbox,
/// and its [`Private`] part.
pub(crate) type Slot = table::Slot<Private>;

/// The process table, of [`Slot`]s.
pub(crate) type Table = table::Table<Private>;

/// The owner-private part of a process (see `table::Slot` for who may
/// touch it).
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
    /// is not reported as a crash: its cause already was, or was handled),
    /// or the process reports its own end (`StepCx::suppress_crash_report`).
    pub(crate) exit_by_signal: bool,
    pub(crate) trap_exit: bool,
    /// Set when a signal (or the process itself) ended it; acted on by the
    /// worker after the current step.
    /// (Boxed: rare, and a `Reason` inline would cost every slot 16 bytes.)
    pub(crate) pending_exit: Option<Box<Reason>>,
    pub(crate) reductions: u64,
    /// Source of receive ids (for the mailbox cursor) and timeout tokens.
    pub(crate) receive_seq: u32,
    /// Token of the most recent receive timeout that fired. (Pending
    /// receive timers are tracked by the timer wheel per target and
    /// cancelled when the process ends, however many are armed.)
    pub(crate) fired_timeout: u32,
    pub(crate) extra: Option<Box<Extra>>,
    /// The process that spawned it (Erlang's `parent`), or [`RUNTIME_PID`]
    /// for one started from outside any process (no process has that
    /// pid). Set by every spawn; [`Private::parent`] reads it. A bare pid:
    /// an `Option<Pid>` would take 16 bytes of every slot instead of 8.
    pub(crate) parent: Pid,
}

impl Default for Private {
    fn default() -> Private {
        Private {
            gen: 0,
            mailbox: Mailbox::default(),
            process: None,
            started: false,
            waiting: false,
            exit_by_signal: false,
            trap_exit: false,
            pending_exit: None,
            reductions: 0,
            receive_seq: 0,
            fired_timeout: 0,
            extra: None,
            parent: RUNTIME_PID,
        }
    }
}

/// A link's state in [`Extra::links`] when it is in force.
pub(crate) const ACTIVE: u64 = 0;

impl Extra {
    /// Links in force (not being unlinked).
    pub(crate) fn active_links(&self) -> impl Iterator<Item = Pid> + '_ {
        self.links
            .iter()
            .filter(|(_, s)| **s == ACTIVE)
            .map(|(p, _)| *p)
    }

    pub(crate) fn is_linked(&self, pid: Pid) -> bool {
        self.links.get(&pid) == Some(&ACTIVE)
    }
}

impl Private {
    /// The process that spawned it, if a process did.
    pub(crate) fn parent(&self) -> Option<Pid> {
        (self.parent != RUNTIME_PID).then_some(self.parent)
    }

    pub(crate) fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    /// A visit reaches this process (`node::visit`, step 2): its body is
    /// visited now, or, while the body is out (inside its own `step`),
    /// right after the step ([`Private::visits_after_step`]). Dropping the
    /// ticket answers.
    pub(crate) fn visit(&mut self, t: Ticket) {
        match self.process.as_mut() {
            Some(body) => {
                // A panicking visit costs the answer only.
                let _ =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body.visit(t.what())));
            }
            None => self.extra().visits.push(t),
        }
    }

    /// The visits that came while the process was inside `step`.
    #[cold]
    pub(crate) fn visits_after_step(&mut self) {
        let Some(x) = self.extra.as_mut() else { return };
        let visits = std::mem::take(&mut x.visits);
        for t in visits {
            self.visit(t);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod size_tests {
    use super::Slot;

    /// A slot is what every process costs in the table; keep it small
    /// (an idle native process is this plus its boxed future): the state
    /// word, the inbox, and the private part (mailbox 32 bytes, body 16,
    /// pending exit, reductions, extra and parent 8 each, generation,
    /// receive ids and flags 16). 120 bytes while the parent was an
    /// `Option<Pid>` (issue 36).
    #[test]
    fn slot_is_112_bytes_at_most() {
        let size = std::mem::size_of::<Slot>();
        eprintln!("Slot = {size} bytes");
        assert!(size <= 112, "Slot grew to {size} bytes");
    }
}
