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
    /// Workers-poll mode: the worker waiting in `epoll_wait` (`NONE` if
    /// none). Written by that worker; read by `notify_one` after it
    /// unparks a worker, so one in epoll is woken through the reactor's
    /// waker (`worker.rs`, the park step).
    poller: AtomicUsize,
}

const NONE: usize = usize::MAX;

impl Idle {
    pub(crate) fn new(workers: usize) -> (Idle, Vec<Parker>) {
        let parkers: Vec<Parker> = (0..workers).map(|_| Parker::new()).collect();
        let idle = Idle {
            num_sleeping: AtomicUsize::new(0),
            sleepers: Mutex::new(Vec::with_capacity(workers)),
            unparkers: parkers.iter().map(|p| p.unparker().clone()).collect(),
            poller: AtomicUsize::new(NONE),
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
            // A worker parked on its parker before the one in epoll: the
            // poller keeps watching the sockets.
            let n = s.len();
            if n > 1 && s[n - 1] == self.poller.load(Relaxed) {
                s.swap(n - 1, n - 2);
            }
            let w = s.pop();
            if w.is_some() {
                // Relaxed: changed under the lock; read per the fences above.
                self.num_sleeping.fetch_sub(1, Relaxed);
            }
            w
        };
        if let Some(w) = woken {
            self.unpark(w);
        }
    }

    /// Unparks `w`, and if it waits in epoll, wakes the poll: the unpark
    /// first, then (SeqCst) the read of `poller`, against the poller's
    /// store of `poller`, then its look at its parker's token
    /// (`Parker::park_timeout(0)`): either it sees the token and does not
    /// wait in epoll, or this sees it there and wakes the poll.
    fn unpark(&self, w: usize) {
        self.unparkers[w].unpark();
        if self.poller.load(SeqCst) == w {
            if let Some(r) = crate::sched::reactor::polled() {
                r.wake_poller();
            }
        }
    }

    /// Workers-poll mode: this worker is about to wait in epoll.
    pub(crate) fn set_poller(&self, worker: usize) {
        self.poller.store(worker, SeqCst);
    }

    /// Workers-poll mode: this worker is back from epoll.
    pub(crate) fn clear_poller(&self) {
        self.poller.store(NONE, SeqCst);
    }

    /// Wake every worker (shutdown).
    pub(crate) fn notify_all(&self) {
        let mut s = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        s.clear();
        // Relaxed: under the lock (see `notify_one`).
        self.num_sleeping.store(0, Relaxed);
        for w in 0..self.unparkers.len() {
            self.unpark(w);
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
