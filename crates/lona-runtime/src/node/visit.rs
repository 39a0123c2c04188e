//! Visits: a piece of work run inside every process of every runtime, by
//! the worker that owns it, between two of its steps. A language's code
//! collector uses it to ask each process which code it still holds; the
//! runtime only carries the question ([`Process::visit`](crate::Process::visit)).
//!
//! 1. [`visit_all`] takes a snapshot of the live processes of every
//!    runtime of the OS process and sends each a `Signal::Visit` holding a
//!    [`Ticket`].
//! 2. A live process acts on it when it drains its inbox: the worker calls
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
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::rules::signal::Signal;
use crate::sched::shared::Shared;

/// Every runtime made in this OS process (dropped ones fail to upgrade).
/// Written when a runtime is built; read by [`visit_all`].
static RUNTIMES: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

pub(crate) fn register(shared: &Arc<Shared>) {
    let mut all = RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(Arc::downgrade(shared));
}

struct State {
    what: Arc<dyn Any + Send + Sync>,
    left: Mutex<usize>,
    done: Condvar,
}

/// One process's share of a visit (step 3: dropping it is the answer).
pub(crate) struct Ticket(Arc<State>);

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

/// A visit under way ([`visit_all`]).
pub struct Visit {
    state: Arc<State>,
    /// Processes asked.
    pub processes: usize,
}

impl Visit {
    /// Waits until every process asked was visited or is gone (step 4);
    /// false if `timeout` passed first.
    pub fn wait(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        let mut left = self.state.left.lock().unwrap_or_else(|e| e.into_inner());
        while *left > 0 {
            let now = Instant::now();
            if now >= end {
                return false;
            }
            left = self
                .state
                .done
                .wait_timeout(left, end - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// Runs [`Process::visit`](crate::Process::visit)`(what)` in every live process of every runtime
/// (module documentation); [`Visit::wait`] tells when all have run it.
pub fn visit_all(what: Arc<dyn Any + Send + Sync>) -> Visit {
    let state = Arc::new(State {
        what,
        // The sender's own ticket keeps the count above zero while sending.
        left: Mutex::new(1),
        done: Condvar::new(),
    });
    let own = Ticket(state.clone());
    let runtimes: Vec<Arc<Shared>> = RUNTIMES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    let mut processes = 0;
    for shared in runtimes {
        for pid in shared.pids() {
            *state.left.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            processes += 1;
            shared.signal(pid, Signal::Visit(Ticket(state.clone())));
        }
    }
    drop(own);
    Visit { state, processes }
}

/// Step 2, for the process running on `cx`'s worker.
pub(crate) fn on_visit(p: &mut crate::sched::process::Private, t: Ticket) {
    match p.process.as_mut() {
        Some(body) => {
            // A panicking visit costs the answer only.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body.visit(t.what())));
        }
        None => p.extra().visits.push(t),
    }
}

/// The visits that came while the process was inside `step`.
#[cold]
pub(crate) fn after_step(p: &mut crate::sched::process::Private) {
    let Some(x) = p.extra.as_mut() else { return };
    let visits = std::mem::take(&mut x.visits);
    for t in visits {
        on_visit(p, t);
    }
}
