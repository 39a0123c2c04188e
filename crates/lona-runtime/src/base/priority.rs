//! Process priorities (Erlang's `process_flag(priority, P)`;
//! `docs/design.md`, D20) and the run queues of the urgent levels.
//!
//! # Levels
//! [`Priority::Max`] before [`Priority::High`] before [`Priority::Normal`]
//! and [`Priority::Low`]: a runnable process of a higher level runs before
//! any of a lower one. Low and normal share time: a low process is passed
//! over ("bumped") [`LOW_BUMPS`] times while other work is queued before it
//! runs, as Erlang's `RESCHEDULE_LOW`, so it is never starved.
//!
//! # Where a runnable process waits
//! 1. *Normal* and *low* processes use the scheduler as before priorities
//!    existed: the worker's LIFO slot, its FIFO local queue, the global
//!    injector, and stealing (`worker`). Nothing on that path looks at
//!    priorities except one byte compare when a process is about to run
//!    (step 4).
//! 2. *Max* and *high* processes wait in two global FIFO queues
//!    ([`Urgent`]), one per level, shared by every worker. Every push first
//!    increments [`Urgent::queued`], every successful pop decrements it
//!    afterwards, so the count is never below the number of processes in
//!    the two queues. A push wakes an idle worker (`idle`, step 3): the
//!    increment and the push come before the pusher's fence, and the
//!    sleeper reads the count after its own, so one of the two sees the
//!    other.
//! 3. Every time a worker looks for work it first reads the count (one
//!    load of a cache line that normal-only workloads never write); only
//!    when it is non-zero does it look in the max queue, then the high
//!    queue. So an urgent process never waits behind normal work on any
//!    worker: there is nothing to steal, every worker sees it, and it
//!    waits at most for the slices the workers are in the middle of. A
//!    preempted urgent process goes to the back of its level's queue
//!    (FIFO within the level, as for normal processes).
//! 4. A *low* process popped from the LIFO slot or the local queue while
//!    other work is queued on this worker is pushed to the back of the
//!    local queue instead of running, up to [`LOW_BUMPS`] times in a row;
//!    then it runs and its count starts again. The count is four bits of
//!    the process's state word, changed only by the worker holding the
//!    popped process (it is *queued*, in no queue).
//! 5. The priority itself is two bits of the state word (`state`): set by
//!    the spawner with the generation, then changed only by the process
//!    itself (`StepCx::set_priority`, an RMW), read by whoever queues it (who
//!    has just touched that word anyway). A change takes effect the next
//!    time the process is queued. A slot stays 104 bytes.

use crate::base::sync::atomic::{AtomicUsize, Ordering::*};
use crossbeam_deque::{Injector, Steal};
use crossbeam_utils::CachePadded;
use std::fmt;

/// How many times a low-priority process is passed over for other queued
/// work before it runs (Erlang's `RESCHEDULE_LOW`).
pub(crate) const LOW_BUMPS: u8 = 8;

/// A process's scheduling priority (Erlang's `process_flag(priority, P)`).
///
/// The default is `Normal`. `Max` is meant for the runtime's own processes;
/// users may set it, as in Erlang, but a max process that does not wait
/// holds back every other process on its worker: use it with care.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Priority {
    /// Runs when nothing of a higher level is runnable, and shares time
    /// with normal processes one slice to eight (passed over up to 8 times
    /// in a row while other work is queued).
    Low = 0,
    /// The default.
    #[default]
    Normal = 1,
    /// Runs before every normal and low process.
    High = 2,
    /// Runs before everything else. Dangerous for user processes.
    Max = 3,
}

impl Priority {
    /// Its name as in Erlang (`low`, `normal`, `high`, `max`).
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Normal => "normal",
            Priority::High => "high",
            Priority::Max => "max",
        }
    }

    /// The priority named `name` (as [`Priority::as_str`] spells it).
    pub fn from_name(name: &str) -> Option<Priority> {
        Some(match name {
            "low" => Priority::Low,
            "normal" => Priority::Normal,
            "high" => Priority::High,
            "max" => Priority::Max,
            _ => return None,
        })
    }

    /// Its two bits in the state word (`state`): normal is 0, so a fresh
    /// word is normal.
    #[inline(always)]
    pub(crate) fn to_bits(self) -> u8 {
        match self {
            Priority::Normal => 0,
            Priority::Low => 1,
            Priority::High => 2,
            Priority::Max => 3,
        }
    }

    #[inline(always)]
    pub(crate) fn from_bits(v: u8) -> Priority {
        match v & 3 {
            0 => Priority::Normal,
            1 => Priority::Low,
            2 => Priority::High,
            _ => Priority::Max,
        }
    }

    /// Whether processes of this level wait in the global [`Urgent`]
    /// queues (module doc, step 2).
    #[inline]
    pub(crate) fn is_urgent(self) -> bool {
        self >= Priority::High
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The global run queues of max and high processes (module doc, steps 2
/// and 3).
pub(crate) struct Urgent {
    /// At least the number of processes in `max` and `high` (module doc,
    /// step 2). On its own cache line: normal workloads only read it.
    queued: CachePadded<AtomicUsize>,
    max: Injector<u32>,
    high: Injector<u32>,
}

impl Urgent {
    pub(crate) fn new() -> Urgent {
        Urgent {
            queued: CachePadded::new(AtomicUsize::new(0)),
            max: Injector::new(),
            high: Injector::new(),
        }
    }

    /// Queue the process in slot `index` at level `prio` (max or high).
    /// The caller then wakes an idle worker.
    pub(crate) fn push(&self, index: u32, prio: Priority) {
        debug_assert!(prio.is_urgent());
        // Relaxed: ordered before the caller's SeqCst fence (`idle`), which
        // is what a sleeping worker's look pairs with (module doc, step 2).
        self.queued.fetch_add(1, Relaxed);
        if prio == Priority::Max {
            self.max.push(index);
        } else {
            self.high.push(index);
        }
    }

    /// Whether an urgent process may be queued (module doc, step 3).
    #[inline(always)]
    pub(crate) fn any(&self) -> bool {
        // Relaxed: a hint; a worker about to sleep reads it after its SeqCst
        // fence (`idle`), which orders it against the pusher's.
        self.queued.load(Relaxed) != 0
    }

    /// The oldest max process, else the oldest high one.
    pub(crate) fn pop(&self) -> Option<u32> {
        let i = Self::steal(&self.max).or_else(|| Self::steal(&self.high))?;
        // Relaxed: the count only gates looking (step 2); decremented after
        // the pop, so it never drops below what is queued.
        self.queued.fetch_sub(1, Relaxed);
        Some(i)
    }

    fn steal(q: &Injector<u32>) -> Option<u32> {
        loop {
            match q.steal() {
                Steal::Success(i) => return Some(i),
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order() {
        for p in [
            Priority::Low,
            Priority::Normal,
            Priority::High,
            Priority::Max,
        ] {
            assert_eq!(Priority::from_name(p.as_str()), Some(p));
            assert_eq!(Priority::from_bits(p.to_bits()), p);
        }
        assert_eq!(Priority::from_name("urgent"), None);
        assert!(Priority::Max > Priority::High && Priority::High > Priority::Normal);
        assert!(Priority::Normal > Priority::Low);
        assert_eq!(Priority::default(), Priority::Normal);
    }

    #[test]
    fn urgent_max_before_high_fifo_within() {
        let u = Urgent::new();
        assert!(!u.any());
        u.push(1, Priority::High);
        u.push(2, Priority::High);
        u.push(3, Priority::Max);
        assert!(u.any());
        assert_eq!(u.pop(), Some(3));
        assert_eq!(u.pop(), Some(1));
        assert_eq!(u.pop(), Some(2));
        assert_eq!(u.pop(), None);
        assert!(!u.any());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::{fence, AtomicBool};
    use loom::sync::{Arc, Mutex};

    /// `idle`'s protocol, transcribed with loom's primitives (the real one
    /// uses std's mutex and crossbeam's parker): a sleeper counts itself
    /// under the lock, then issues a SeqCst fence and looks for work once
    /// more; a pusher issues a SeqCst fence after its push, then reads the
    /// count and wakes a sleeper if there is one.
    struct IdleModel {
        sleeping: AtomicUsize,
        lock: Mutex<()>,
        woken: AtomicBool,
    }

    impl IdleModel {
        fn new() -> IdleModel {
            IdleModel {
                sleeping: AtomicUsize::new(0),
                lock: Mutex::new(()),
                woken: AtomicBool::new(false),
            }
        }

        fn register(&self) {
            let g = self.lock.lock().unwrap();
            self.sleeping.fetch_add(1, Relaxed);
            drop(g);
            fence(SeqCst);
        }

        fn notify_one(&self) {
            fence(SeqCst);
            if self.sleeping.load(Relaxed) == 0 {
                return;
            }
            let _g = self.lock.lock().unwrap();
            if self.sleeping.load(Relaxed) > 0 {
                self.sleeping.fetch_sub(1, Relaxed);
                self.woken.store(true, Relaxed);
            }
        }
    }

    /// A high process made runnable from one thread while a worker is
    /// about to sleep (module doc, steps 2-3): either the worker's last
    /// look (the count, then the queues) finds it, or the pusher sees the
    /// sleeper and wakes it, and the woken worker finds it. Never lost,
    /// never taken twice, and the count ends at zero.
    #[test]
    fn loom_urgent_push_vs_sleeping_worker_never_lost() {
        loom::model(|| {
            let u = Arc::new(Urgent::new());
            let idle = Arc::new(IdleModel::new());
            let (u2, i2) = (u.clone(), idle.clone());
            let pusher = loom::thread::spawn(move || {
                u2.push(7, Priority::High);
                i2.notify_one();
            });
            // The worker: register, then look once more.
            idle.register();
            let found = if u.any() { u.pop() } else { None };
            pusher.join().unwrap();
            if found.is_none() {
                assert!(idle.woken.load(Relaxed), "lost wake-up");
                // Woken, it looks again.
                assert!(u.any());
                assert_eq!(u.pop(), Some(7));
            } else {
                assert_eq!(found, Some(7));
            }
            assert!(!u.any(), "the count must end at zero");
            assert_eq!(u.pop(), None);
        });
    }

    /// Two pushers (max and high) racing a worker that looks twice: every
    /// process is taken exactly once and the count never drops below what
    /// is queued (it ends at zero, never wraps).
    #[test]
    fn loom_urgent_count_tracks_two_pushers() {
        loom::model(|| {
            let u = Arc::new(Urgent::new());
            let pushers: Vec<_> = [(1, Priority::High), (2, Priority::Max)]
                .into_iter()
                .map(|(i, p)| {
                    let u = u.clone();
                    loom::thread::spawn(move || u.push(i, p))
                })
                .collect();
            let mut got = vec![];
            for _ in 0..2 {
                if u.any() {
                    got.extend(u.pop());
                }
            }
            for h in pushers {
                h.join().unwrap();
            }
            while u.any() {
                got.push(u.pop().expect("counted, so queued"));
            }
            got.sort();
            assert_eq!(got, [1, 2]);
            assert_eq!(u.pop(), None);
        });
    }
}
