//! Visits: a piece of work run inside every process of every runtime, by
//! the worker that owns it, between two of its steps. A language's code
//! collector uses it to ask each process which code it still holds; the
//! runtime only carries the question ([`Process::visit`](crate::Process::visit)).
//!
//! 1. [`visit_all`] takes a snapshot of the live processes of every
//!    runtime of the OS process and sends each a `Signal::Visit` holding a
//!    ticket of the visit's round (`sched::ticket`).
//! 2. A live process acts on it when it drains its inbox (`links`): the worker calls
//!    [`Process::visit`](crate::Process::visit) on its body (a waiting process is woken for it;
//!    one inside `step`, draining from there, is visited right after the
//!    step), then drops the ticket.
//! 3. A ticket dropped in any other way (the process was gone, ended with
//!    the signal unread, or its runtime was dropped) counts as done too:
//!    that process holds nothing any more.
//! 4. [`Visit::wait`] returns once every ticket is dropped.
//!
//! A process spawned after the snapshot is not visited: the caller must
//! see to it that such a process cannot hold what it asks about (the code
//! collector does: through pinned messages and marked globals).

use std::any::Any;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::rules::signal::Signal;
use crate::sched::shared::Shared;
use crate::sched::ticket::Round;

/// Every runtime made in this OS process (dropped ones fail to upgrade).
/// Written when a runtime is built; read by [`visit_all`].
static RUNTIMES: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

pub(crate) fn register(shared: &Arc<Shared>) {
    let mut all = RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(shared));
}

/// A visit under way ([`visit_all`]).
pub struct Visit {
    round: Arc<Round>,
    /// Processes asked.
    pub processes: usize,
}

impl Visit {
    /// Waits until every process asked was visited or is gone (step 4);
    /// false if `timeout` passed first.
    pub fn wait(&self, timeout: Duration) -> bool {
        self.round.wait(timeout)
    }
}

/// Runs [`Process::visit`](crate::Process::visit)`(what)` in every live process of every runtime
/// (module documentation); [`Visit::wait`] tells when all have run it.
pub fn visit_all(what: Arc<dyn Any + Send + Sync>) -> Visit {
    let round = Round::new(what);
    // The sender's own ticket keeps the count above zero while sending.
    let own = round.ticket();
    let runtimes: Vec<Arc<Shared>> = RUNTIMES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    let mut processes = 0;
    for shared in runtimes {
        for pid in shared.pids() {
            processes += 1;
            shared.signal(pid, Signal::Visit(round.ticket()));
        }
    }
    drop(own);
    Visit { round, processes }
}
