//! The one state word of a process (`docs/design.md`, D2).
//!
//! ```text
//!  63            32 31       9 8       5 4    3   2        1        0
//! +----------------+----------+---------+------+--------+---------+----------+
//! |   generation   |  unused  |  bumps  | prio | EXITED | RUNNING | NOTIFIED |
//! +----------------+----------+---------+------+--------+---------+----------+
//! ```
//!
//! `prio` and `bumps` are the process's [`Priority`] and how many times in
//! a row a low-priority process was passed over (`priority`, steps 4-5).
//! They ride in this word because it has room and every party that needs
//! them already touches it (a slot's size is every process's cost). The
//! protocol below ignores them: every transition but `reset` and `retire`
//! keeps them as they are, and they change only by read-modify-writes
//! ([`State::set_priority`], [`State::bump_low`]), so they never hide or
//! undo a transition.
//!
//! | word (low bits)      | meaning                                              |
//! | -------------------- | ---------------------------------------------------- |
//! | `000` waiting        | parked on its mailbox; not queued, not running       |
//! | `001` queued         | in exactly one run queue (or about to be pushed)     |
//! | `010` running        | a worker is stepping it                              |
//! | `011` running+notify | running, and something arrived since it last looked  |
//! | `1x0`/`1x1` exited   | finishing or dead; nobody may schedule it again      |
//!
//! The generation is the slot's; it changes only when the slot is reused,
//! which is what makes a stale notification harmless.
//!
//! # Protocol
//!
//! 1. A producer (sender, timer, waker) first pushes its item into the
//!    process's inbox, then calls [`State::notify`]. `notify` is a
//!    successful read-modify-write on the word (it sets NOTIFIED, even when
//!    nothing else changes), so the notification is ordered against the
//!    owner's transitions (all of which are read-modify-writes too): either
//!    the owner's next transition sees the notification, or the
//!    notification sees the owner's transition and the owner's next drain
//!    of the inbox happens after the item was pushed. Except on its fast
//!    path: when the word is of the caller's generation, not exited, and
//!    NOTIFIED is already set (queued, or running and notified), `notify`
//!    only loads the word, writes nothing and returns [`Notify::Busy`]
//!    (compiled out under loom, which checks the read-modify-write path
//!    alone), so a busy receiver's cache line is not bounced by every
//!    sender. That is safe because the
//!    inbox push, this load, the owner's transitions that clear NOTIFIED
//!    (`start`, `park`) and its inbox take are all SeqCst: in their single
//!    order, either the load sees the flag cleared (and takes the
//!    read-modify-write path) or the owner's take comes after the push and
//!    finds the item (see `notify`).
//! 2. `notify` on *waiting* moves the process to *queued* and returns
//!    [`Notify::Schedule`]: the caller, and only that caller, pushes it into a
//!    run queue. So a process is never queued twice.
//! 3. `notify` on *running* sets NOTIFIED and returns [`Notify::Busy`]; on
//!    *queued* (or *running* and already notified) NOTIFIED is set already
//!    and the fast path returns [`Notify::Busy`] without writing. Either
//!    way the owner will see the item.
//! 4. A worker that pops the process calls [`State::start`] (*queued* →
//!    *running*, clearing NOTIFIED), then drains the inbox.
//! 5. A step that ends waiting calls [`State::park`]: *running* → *waiting*
//!    unless NOTIFIED was set meanwhile, in which case the flag is cleared,
//!    the process stays *running*, and the worker steps it again. So a
//!    message arriving while its receiver runs is never lost.
//! 6. A step that ends yielded calls [`State::requeue`] (→ *queued*) and the
//!    worker pushes it to the back of a run queue.
//! 7. An exiting process calls [`State::exit`]; from then on `notify` returns
//!    [`Notify::Dead`]. (Whether a link or monitor signal racing with the exit
//!    is answered by the dying process or by its sender is decided by the
//!    inbox being closed, see `inbox`, not by this word.) Reuse of the slot
//!    writes a new generation with [`State::reset`].
//!
//! Orderings: producers' `notify` CAS is `AcqRel` (release: the pushed item
//! happens-before whoever reads the word after it). The owner's transitions
//! that clear NOTIFIED (`start`, `park`) are `SeqCst`, as are the inbox's
//! push and take, for `notify`'s fast path (see there); on x86 these cost
//! the same as `AcqRel`.

use crate::base::priority::{Priority, LOW_BUMPS};
use crate::base::sync::atomic::{AtomicU64, Ordering::*};

const NOTIFIED: u64 = 0b001;
const RUNNING: u64 = 0b010;
const EXITED: u64 = 0b100;
const PRIO_SHIFT: u32 = 3;
const PRIO_MASK: u64 = 0b11 << PRIO_SHIFT;
const BUMPS_SHIFT: u32 = 5;
const BUMPS_MASK: u64 = 0b1111 << BUMPS_SHIFT;
const BUMP_ONE: u64 = 1 << BUMPS_SHIFT;
#[cfg(all(test, not(loom)))]
const LOW: u64 = 0xffff_ffff;

/// What a producer must do after [`State::notify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notify {
    /// The process was waiting: the caller must push it into a run queue.
    Schedule,
    /// The process is queued or running and will see the item.
    Busy,
    /// The process has exited, or the generation is stale.
    Dead,
}

/// How a step ended, as [`State::park`] saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Park {
    /// Now waiting; the worker lets go of it.
    Parked,
    /// Something arrived while it ran: the worker must step it again.
    Notified,
}

pub(crate) struct State(AtomicU64);

impl State {
    /// A free slot: generation 0, exited.
    pub(crate) fn new() -> State {
        State(AtomicU64::new(EXITED))
    }

    fn gen_of(word: u64) -> u32 {
        (word >> 32) as u32
    }

    pub(crate) fn generation(&self) -> u32 {
        // Acquire: pairs with `reset`/`retire`'s release stores.
        Self::gen_of(self.0.load(Acquire))
    }

    /// Whether the process of generation `gen` exists and has not exited.
    pub(crate) fn is_alive(&self, gen: u32) -> bool {
        // SeqCst: the load half of the store-load pairs with `exit` (see
        // there); a plain load on x86.
        let w = self.0.load(SeqCst);
        Self::gen_of(w) == gen && w & EXITED == 0
    }

    /// Step 1-3 of the protocol, for the process of generation `gen`.
    pub(crate) fn notify(&self, gen: u32) -> Notify {
        // Fast path: NOTIFIED already set (queued, or running and notified):
        // nothing to write, so the receiver's cache line is not bounced by
        // every sender of a busy mailbox. This plain load is enough because
        // the producer's inbox push and this load are SeqCst, and so are the
        // owner's transitions that clear NOTIFIED (`start`, `park`) and its
        // inbox take: in the single SeqCst order either this load sees the
        // clear (and we take the CAS path below) or the owner's take comes
        // after our push and sees the item. (Not under loom, which models
        // SeqCst as AcqRel; there the CAS path alone is checked.)
        let mut w = self.0.load(SeqCst);
        #[cfg(not(loom))]
        if Self::gen_of(w) == gen && w & (NOTIFIED | EXITED) == NOTIFIED {
            return Notify::Busy;
        }
        loop {
            if Self::gen_of(w) != gen || w & EXITED != 0 {
                // Final for this generation. Who answers a link or monitor
                // signal to a dead process is decided by the inbox, not here
                // (see `inbox`): `Dead` only spares a useless wake-up.
                return Notify::Dead;
            }
            let next = w | NOTIFIED;
            match self.0.compare_exchange_weak(w, next, AcqRel, Relaxed) {
                Ok(_) => {
                    return if w & (RUNNING | NOTIFIED) == 0 {
                        Notify::Schedule
                    } else {
                        Notify::Busy
                    }
                }
                Err(actual) => w = actual,
            }
        }
    }

    /// A new process in this slot: generation `gen`, priority `prio`,
    /// queued (the spawner pushes it into a run queue).
    pub(crate) fn reset(&self, gen: u32, prio: Priority) {
        // Release: the spawner's writes to the private part happen-before
        // whoever sees the process (a sender, or the worker that pops it).
        let prio = (prio.to_bits() as u64) << PRIO_SHIFT;
        self.0
            .store(((gen as u64) << 32) | prio | NOTIFIED, Release);
    }

    /// The process's priority.
    #[inline(always)]
    pub(crate) fn priority(&self) -> Priority {
        // Relaxed: a scheduling hint. Whoever queues the process after a
        // change is ordered after it by the transitions the owner makes
        // after changing it (all RMWs on this word).
        Priority::from_bits(((self.0.load(Relaxed) & PRIO_MASK) >> PRIO_SHIFT) as u8)
    }

    /// Set the priority (the process itself, while running); returns the
    /// old one. An RMW, so a concurrent `notify` is neither lost nor undone.
    pub(crate) fn set_priority(&self, prio: Priority) -> Priority {
        let bits = (prio.to_bits() as u64) << PRIO_SHIFT;
        // Relaxed: publishes nothing but the bits themselves (see `priority`).
        let prev = self
            .0
            .fetch_update(Relaxed, Relaxed, |w| Some((w & !PRIO_MASK) | bits))
            .unwrap_or_else(|w| w);
        Priority::from_bits(((prev & PRIO_MASK) >> PRIO_SHIFT) as u8)
    }

    /// A low-priority process was popped (it is *queued*, and the caller
    /// holds it): if `others` (other work waits on this worker) and it was
    /// passed over fewer than [`LOW_BUMPS`] times in a row, count one more
    /// and return true (the caller queues it again); otherwise clear the
    /// count and return false (it runs now). `priority`, step 4.
    pub(crate) fn bump_low(&self, others: bool) -> bool {
        // Relaxed: only the holder of a queued process changes the count;
        // an RMW so concurrent notifies (which set NOTIFIED, already set
        // while queued) keep their effect.
        let w = self.0.load(Relaxed);
        let bumps = (w & BUMPS_MASK) >> BUMPS_SHIFT;
        if others && bumps < LOW_BUMPS as u64 {
            self.0.fetch_add(BUMP_ONE, Relaxed);
            true
        } else {
            if bumps != 0 {
                self.0.fetch_and(!BUMPS_MASK, Relaxed);
            }
            false
        }
    }

    /// Step 4: queued → running.
    pub(crate) fn start(&self) {
        // RMW so it is ordered against concurrent notifies (they only ever
        // set NOTIFIED here, which we clear: we are about to drain).
        let prev = self.0.fetch_xor(NOTIFIED | RUNNING, SeqCst);
        debug_assert_eq!(
            prev & (RUNNING | EXITED | NOTIFIED),
            NOTIFIED,
            "start on {prev:#x}"
        );
    }

    /// Step 5: running → waiting, unless notified meanwhile (then the flag
    /// is cleared and it stays running). One read-modify-write either way.
    pub(crate) fn park(&self) -> Park {
        // SeqCst: clears NOTIFIED, so it takes part in `notify`'s fast path
        // argument (see there). Only the owner changes RUNNING/EXITED and
        // the generation, so the loop retries only on a concurrent notify.
        let mut w = self.0.load(Relaxed);
        loop {
            debug_assert_eq!(w & (RUNNING | EXITED), RUNNING, "park on {w:#x}");
            let (next, out) = if w & NOTIFIED == 0 {
                (w & !RUNNING, Park::Parked)
            } else {
                // The item that set it is in the inbox; the next step drains it.
                (w & !NOTIFIED, Park::Notified)
            };
            match self.0.compare_exchange_weak(w, next, SeqCst, Relaxed) {
                Ok(_) => return out,
                Err(actual) => w = actual,
            }
        }
    }

    /// Step 6: running (notified or not) → queued, in one atomic update.
    ///
    /// Two updates here (clear RUNNING, then set NOTIFIED) once let a
    /// concurrent `notify` see *waiting* in between and queue the process
    /// while this worker queued it too: two workers running one process.
    pub(crate) fn requeue(&self) {
        // AcqRel: an RMW like every transition, ordered against notifies;
        // the private part is handed to the next runner through the run
        // queue (its push/pop synchronise), not through this word.
        let prev = self.0.fetch_update(AcqRel, Relaxed, |w| {
            debug_assert_eq!(w & (RUNNING | EXITED), RUNNING, "requeue on {w:#x}");
            Some((w & !RUNNING) | NOTIFIED)
        });
        debug_assert!(prev.is_ok());
    }

    /// Step 7: running → exited (only the process's runner ends it).
    /// Returns false if it had already exited.
    pub(crate) fn exit(&self) -> bool {
        // SeqCst: pairs with the fences of `Shared::register` and
        // `Shared::cancel_if_dead` (store-load orderings: either they see
        // the process exited or its exit path sees their insertion).
        let prev = self.0.fetch_or(EXITED, SeqCst);
        prev & EXITED == 0
    }

    /// After exit: bump the generation so the slot can be reused.
    pub(crate) fn retire(&self) {
        // Relaxed load: only the exiting process's runner writes the word
        // now (notifies see EXITED and write nothing). Release store: the
        // cleaned private part happens-before a spawner that sees the new
        // generation (it also gets the slot through the table's pool lock
        // or the worker's own cache).
        let w = self.0.load(Relaxed);
        let gen = Self::gen_of(w).wrapping_add(1);
        self.0.store(((gen as u64) << 32) | EXITED, Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn lifecycle() {
        let s = State::new();
        assert_eq!(s.notify(0), Notify::Dead);
        s.reset(0, Priority::Normal);
        assert!(queued(&s));
        assert_eq!(
            s.notify(0),
            Notify::Busy,
            "queued process is not queued twice"
        );
        s.start();
        assert_eq!(s.notify(1), Notify::Dead, "stale generation");
        assert_eq!(s.park(), Park::Parked);
        assert_eq!(s.notify(0), Notify::Schedule);
        assert_eq!(s.notify(0), Notify::Busy);
        s.start();
        assert_eq!(s.notify(0), Notify::Busy);
        assert_eq!(s.park(), Park::Notified, "notify while running is not lost");
        assert_eq!(s.park(), Park::Parked);
        assert_eq!(s.notify(0), Notify::Schedule);
        s.start();
        assert!(s.exit());
        assert!(!s.exit());
        assert_eq!(s.notify(0), Notify::Dead);
        s.retire();
        assert_eq!(s.generation(), 1);
        assert_eq!(s.notify(0), Notify::Dead);
    }

    /// The review's reproduction: a worker requeueing while another thread
    /// notifies must never let the notifier schedule the process too.
    #[test]
    fn requeue_racing_notify_never_schedules_twice() {
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        use std::sync::Arc;
        let s = Arc::new(State::new());
        s.reset(0, Priority::Normal);
        let stop = Arc::new(AtomicBool::new(false));
        let doubles = Arc::new(AtomicUsize::new(0));
        let (s2, stop2, d2) = (s.clone(), stop.clone(), doubles.clone());
        let notifier = std::thread::spawn(move || {
            while !stop2.load(Relaxed) {
                if s2.notify(0) == Notify::Schedule {
                    // Not possible while the owner below holds it running
                    // or queued; count it.
                    d2.fetch_add(1, Relaxed);
                }
            }
        });
        let rounds = if cfg!(miri) { 200 } else { 200_000 };
        for _ in 0..rounds {
            s.start();
            s.requeue();
        }
        stop.store(true, Relaxed);
        notifier.join().unwrap();
        assert_eq!(
            doubles.load(Relaxed),
            0,
            "a notify scheduled a queued process"
        );
    }

    /// Priority and bump bits survive every transition and are set and
    /// cleared only by their own operations.
    #[test]
    fn priority_and_bumps_ride_along() {
        let s = State::new();
        s.reset(7, Priority::High);
        assert_eq!(s.priority(), Priority::High);
        assert!(queued(&s));
        assert_eq!(s.notify(7), Notify::Busy);
        s.start();
        assert_eq!(s.set_priority(Priority::Low), Priority::High);
        assert_eq!(s.notify(7), Notify::Busy);
        assert_eq!(s.park(), Park::Notified);
        assert_eq!(s.park(), Park::Parked);
        assert_eq!(s.priority(), Priority::Low);
        assert_eq!(s.notify(7), Notify::Schedule);
        // Queued and popped: passed over LOW_BUMPS times while others wait.
        for _ in 0..LOW_BUMPS {
            assert!(s.bump_low(true));
            assert!(queued(&s));
            assert_eq!(s.priority(), Priority::Low);
        }
        assert!(!s.bump_low(true), "runs after LOW_BUMPS bumps");
        assert!(s.bump_low(true), "the count starts again");
        assert!(!s.bump_low(false), "alone, it runs at once");
        assert!(s.bump_low(true));
        s.start();
        s.requeue();
        assert!(queued(&s));
        assert_eq!(s.priority(), Priority::Low);
        s.start();
        assert_eq!(s.set_priority(Priority::Max), Priority::Low);
        assert!(s.exit());
        s.retire();
        assert_eq!(s.generation(), 8);
        assert_eq!(s.priority(), Priority::Normal, "a free slot is normal");
    }

    fn queued(s: &State) -> bool {
        let low = s.0.load(Acquire) & LOW;
        low & (RUNNING | EXITED) == 0 && low & NOTIFIED != 0
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicUsize;
    use loom::sync::Arc;

    /// A sender pushes one item and notifies while the owner finishes a step
    /// and parks. Whatever the interleaving, the item is either seen by a
    /// step the owner runs (it re-steps on `Notified`) or the sender gets
    /// `Schedule` and queues it: never lost, never queued twice.
    #[test]
    fn loom_notify_vs_park_never_lost_never_twice() {
        loom::model(|| {
            let state = Arc::new(State::new());
            state.reset(0, Priority::Normal);
            state.start();
            let inbox = Arc::new(AtomicUsize::new(0));
            let queued = Arc::new(AtomicUsize::new(0));

            let (s2, i2, q2) = (state.clone(), inbox.clone(), queued.clone());
            let sender = loom::thread::spawn(move || {
                i2.fetch_add(1, Release);
                if s2.notify(0) == Notify::Schedule {
                    q2.fetch_add(1, Relaxed);
                }
            });

            // Owner: drain, then park; re-drain while notified.
            let mut seen = inbox.swap(0, Acquire);
            while state.park() == Park::Notified {
                seen += inbox.swap(0, Acquire);
            }
            sender.join().unwrap();
            let scheduled = queued.load(Relaxed);
            if scheduled == 1 {
                // The woken run drains the rest.
                state.start();
                seen += inbox.swap(0, Acquire);
            }
            assert!(scheduled <= 1, "queued twice");
            assert_eq!(seen, 1, "message lost");
        });
    }

    /// A worker requeues a process that spent its budget while a sender
    /// notifies it. The worker always queues it after `requeue`, so the
    /// sender must never get `Schedule` (that would queue it twice: two
    /// workers running one process). Then the queued run sees the item.
    #[test]
    fn loom_requeue_vs_notify_queued_once() {
        loom::model(|| {
            let state = Arc::new(State::new());
            state.reset(0, Priority::Normal);
            state.start();
            let inbox = Arc::new(AtomicUsize::new(0));
            let (s2, i2) = (state.clone(), inbox.clone());
            let sender = loom::thread::spawn(move || {
                i2.fetch_add(1, Release);
                s2.notify(0)
            });
            state.requeue();
            let got = sender.join().unwrap();
            assert_ne!(got, Notify::Schedule, "queued by the sender and the worker");
            // The worker's queued run: start, drain, park.
            state.start();
            let mut seen = inbox.swap(0, Acquire);
            while state.park() == Park::Notified {
                seen += inbox.swap(0, Acquire);
            }
            assert_eq!(seen, 1, "message lost");
        });
    }

    /// The process changes its priority while running as a sender
    /// notifies it; then, queued, it is passed over (`bump_low`) while
    /// another sender notifies: every notification keeps its effect (never
    /// lost, never a second queueing) and the priority bits theirs.
    #[test]
    fn loom_priority_and_bump_vs_notify() {
        loom::model(|| {
            let state = Arc::new(State::new());
            state.reset(0, Priority::Normal);
            state.start();
            let s2 = state.clone();
            let sender = loom::thread::spawn(move || s2.notify(0));
            assert_eq!(state.set_priority(Priority::Low), Priority::Normal);
            let parked = state.park();
            let first = sender.join().unwrap();
            // Whichever came first: a notify on a running process is Busy
            // and makes park report it; on a waiting one it schedules.
            match parked {
                Park::Notified => {
                    assert_eq!(first, Notify::Busy);
                    state.requeue();
                }
                Park::Parked => assert_eq!(first, Notify::Schedule),
            }
            // Queued now, exactly once. A worker pops it and bumps it while
            // another sender notifies.
            let s3 = state.clone();
            let sender = loom::thread::spawn(move || s3.notify(0));
            assert!(state.bump_low(true));
            assert_eq!(sender.join().unwrap(), Notify::Busy, "queued twice");
            assert!(!state.bump_low(false));
            assert_eq!(state.priority(), Priority::Low);
            state.start();
            assert_eq!(state.park(), Park::Parked);
            assert_eq!(state.priority(), Priority::Low);
        });
    }

    /// Two senders race to wake a waiting process: exactly one schedules it.
    #[test]
    fn loom_two_notifiers_schedule_once() {
        loom::model(|| {
            let state = Arc::new(State::new());
            state.reset(0, Priority::Normal);
            state.start();
            assert_eq!(state.park(), Park::Parked);
            let queued = Arc::new(AtomicUsize::new(0));
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    let (s, q) = (state.clone(), queued.clone());
                    loom::thread::spawn(move || {
                        if s.notify(0) == Notify::Schedule {
                            q.fetch_add(1, Relaxed);
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(queued.load(Relaxed), 1);
        });
    }

    /// The real inbox and state word together: two senders each push a
    /// message and notify while the owner drains, parks, and (when a sender
    /// scheduled it) runs again. Every message is received exactly once and
    /// the process is scheduled at most once per park.
    #[test]
    fn loom_inbox_and_state_two_senders_no_lost_wakeup() {
        use crate::base::envelope::Envelope;
        use crate::base::inbox::Inbox;
        loom::model(|| {
            let state = Arc::new(State::new());
            let inbox = Arc::new(Inbox::new_closed());
            inbox.reopen();
            state.reset(0, Priority::Normal);
            let queued = Arc::new(AtomicUsize::new(0));
            let senders: Vec<_> = (0..2u32)
                .map(|i| {
                    let (s, ib, q) = (state.clone(), inbox.clone(), queued.clone());
                    loom::thread::spawn(move || {
                        unsafe { ib.push(Envelope::new(i, 0, false).into_raw()) }.unwrap();
                        if s.notify(0) == Notify::Schedule {
                            q.fetch_add(1, Relaxed);
                        }
                    })
                })
                .collect();
            let count = |(mut p, _): (
                *mut crate::base::envelope::Header,
                *mut crate::base::envelope::Header,
            )| {
                let mut n = 0;
                while !p.is_null() {
                    let next = unsafe { (*p).next };
                    drop(unsafe { Envelope::from_raw(p) });
                    n += 1;
                    p = next;
                }
                n
            };
            // First run (the spawn queued it).
            state.start();
            let mut got = count(inbox.take());
            while state.park() == Park::Notified {
                got += count(inbox.take());
            }
            for s in senders {
                s.join().unwrap();
            }
            let wakes = queued.load(Relaxed);
            assert!(wakes <= 1, "scheduled twice while parked once");
            if wakes == 1 {
                state.start();
                got += count(inbox.take());
                while state.park() == Park::Notified {
                    got += count(inbox.take());
                }
            }
            assert_eq!(got, 2, "a message was lost or duplicated");
        });
    }
}
