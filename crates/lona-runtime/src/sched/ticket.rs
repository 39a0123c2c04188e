//! A visit's tickets (`node::visit` has the rules; a process runs the
//! visit its ticket carries with `Private::visit`).
//!
//! Each process asked holds one [`Ticket`] of the visit's [`Round`];
//! dropping it is the answer, however it is dropped (visited, or the
//! process gone), and the round is done when every ticket is dropped.

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// One visit under way: what it asks, and how many tickets are out.
pub(crate) struct Round {
    what: Arc<dyn Any + Send + Sync>,
    left: Mutex<usize>,
    done: Condvar,
}

impl Round {
    /// A round asking `what`, with no ticket out yet.
    pub(crate) fn new(what: Arc<dyn Any + Send + Sync>) -> Arc<Round> {
        Arc::new(Round {
            what,
            left: Mutex::new(0),
            done: Condvar::new(),
        })
    }

    /// One more ticket of this round.
    pub(crate) fn ticket(self: &Arc<Round>) -> Ticket {
        *self.left.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        Ticket(self.clone())
    }

    /// Waits until every ticket is dropped; false if `timeout` passed
    /// first.
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        while *left > 0 {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            left = self
                .done
                .wait_timeout(left, end - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// One process's share of a visit: dropping it is the answer.
pub(crate) struct Ticket(Arc<Round>);

impl Ticket {
    pub(crate) fn what(&self) -> &(dyn Any + Send + Sync) {
        &*self.0.what
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut left = self.0.left.lock().unwrap_or_else(|e| e.into_inner());
        *left -= 1;
        if *left == 0 {
            self.0.done.notify_all();
        }
    }
}
