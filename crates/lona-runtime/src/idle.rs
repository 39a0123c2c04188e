//! Idle workers: spinning, then parking, and waking one when work appears.
//!
//! # Protocol
//! 1. A worker that finds no work spins (`docs/design.md`, "Scheduler": a tight loop for the first 4
//!    rounds, `thread::yield_now` up to 16), looking again each round.
//! 2. Then it registers as sleeping (`sleepers` list and `num_sleeping`,
//!    both under the lock), issues a SeqCst fence, and looks for work one
//!    last time; if there is some it unregisters and runs it, else it parks.
//! 3. Whoever makes work available to other workers (a push to a local queue,
//!    to the injector, or to an urgent queue of max and high processes,
//!    see `priority`) issues a SeqCst fence after the push and then
//!    reads `num_sleeping`; if non-zero it unparks one sleeper.
//!
//! The two fences order "register, then look" against "push, then read
//! the count": either the sleeper's last look sees the work, or the pusher
//! sees the sleeper and wakes it. A parked worker uses no CPU.

use crossbeam_utils::sync::{Parker, Unparker};
use std::sync::atomic::{fence, AtomicUsize, Ordering::*};
use std::sync::Mutex;

pub(crate) struct Idle {
    /// Written under `sleepers`' lock; read racily (after a fence) by pushers.
    num_sleeping: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    unparkers: Vec<Unparker>,
}

impl Idle {
    pub(crate) fn new(workers: usize) -> (Idle, Vec<Parker>) {
        let parkers: Vec<Parker> = (0..workers).map(|_| Parker::new()).collect();
        let idle = Idle {
            num_sleeping: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            unparkers: parkers.iter().map(|p| p.unparker().clone()).collect(),
        };
        (idle, parkers)
    }

    /// Step 3: after making work visible, wake one sleeper if any.
    #[inline]
    pub(crate) fn notify_one(&self) {
        // SeqCst fence, then a relaxed load: the pair with `register`'s
        // fence is what orders "push, then read the count" against
        // "register, then look" (module doc); the count itself carries no
        // data, and the lock below re-checks it.
        fence(SeqCst);
        if self.num_sleeping.load(Relaxed) == 0 {
            return;
        }
        let woken = {
            let mut s = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
            let w = s.pop();
            if w.is_some() {
                // Relaxed: changed under the lock; read per the fences above.
                self.num_sleeping.fetch_sub(1, Relaxed);
            }
            w
        };
        if let Some(w) = woken {
            self.unparkers[w].unpark();
        }
    }

    /// Wake every worker (shutdown).
    pub(crate) fn notify_all(&self) {
        let mut s = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        s.clear();
        // Relaxed: under the lock (see `notify_one`).
        self.num_sleeping.store(0, Relaxed);
        for u in &self.unparkers {
            u.unpark();
        }
    }

    /// Step 2, first half: register as sleeping.
    pub(crate) fn register(&self, worker: usize) {
        let mut s = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        if !s.contains(&worker) {
            s.push(worker);
            // Relaxed: under the lock; published by the fence below.
            self.num_sleeping.fetch_add(1, Relaxed);
        }
        drop(s);
        fence(SeqCst);
    }

    /// Unregister (found work after registering, or woke spuriously).
    pub(crate) fn unregister(&self, worker: usize) {
        let mut s = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = s.iter().position(|w| *w == worker) {
            s.swap_remove(i);
            // Relaxed: under the lock (see `notify_one`).
            self.num_sleeping.fetch_sub(1, Relaxed);
        }
    }
}
