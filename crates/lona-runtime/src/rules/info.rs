//! `process_info`: what a live process looks like from outside.
//!
//! A process answers for itself (its private part is its own), so asking
//! another process is a signal, answered when it next drains its inbox: an
//! [`InfoReply`](crate::InfoReply) message, after every signal the asker
//! sent it before (or, for a walk over every process, a put into a
//! [`Sink`]; `rules::signal` sends the answer). A process that is gone,
//! or ending, answers `None`.

use crate::base::priority::Priority;
use crate::sched::cx::StepCx;
use crate::sched::process::Private;
use crate::sched::shared::Shared;
use crate::Pid;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// What a live process looks like (`process_info`).
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessInfo {
    /// Whether it was waiting for a message when asked.
    pub status: Status,
    /// Messages in its mailbox.
    pub message_queue_len: usize,
    /// Reductions it has been charged so far.
    pub reductions: u64,
    /// Approximate bytes it holds (its table slot, its body, its messages).
    pub memory: usize,
    /// Processes it is linked to.
    pub links: Vec<Pid>,
    /// Processes it monitors.
    pub monitors: Vec<Pid>,
    /// Processes monitoring it.
    pub monitored_by: Vec<Pid>,
    /// Its registered name.
    pub registered_name: Option<String>,
    /// Whether it traps exits.
    pub trap_exit: bool,
    /// What it runs, as its kind of process names it (a Lonala process:
    /// the function of its current frame, `ns/name`); see
    /// [`Process::current_function`](crate::Process::current_function).
    pub current_function: Option<String>,
    /// Words of its own term heap, for a process that has one (a Lonala
    /// process); see [`Process::heap_words`](crate::Process::heap_words).
    pub heap_words: Option<usize>,
    /// Its scheduling priority.
    pub priority: Priority,
    /// The process that spawned it (Erlang's `parent`), if a process did.
    pub parent: Option<Pid>,
}

/// A process's scheduling status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Running or runnable.
    Running,
    /// Blocked in a receive.
    Waiting,
}

/// The info of the process whose private part is `p`.
pub(crate) fn info_of(shared: &Shared, pid: Pid, p: &Private, status: Status) -> ProcessInfo {
    let (links, monitors, monitored_by) = match &p.extra {
        Some(x) => (
            x.active_links().collect(),
            x.monitors.values().copied().collect(),
            x.monitored_by.values().copied().collect(),
        ),
        None => (vec![], vec![], vec![]),
    };
    // The body is there between steps; inside its own step (a receive
    // draining signals) it is out, and describes nothing.
    let body = p.process.as_deref();
    let heap_words = body.and_then(|b| b.heap_words());
    let current_function = body.and_then(|b| b.current_function());
    let body_bytes = body.map_or(0, std::mem::size_of_val) + heap_words.unwrap_or(0) * 8;
    ProcessInfo {
        status,
        message_queue_len: p.mailbox.len(),
        reductions: p.reductions,
        memory: std::mem::size_of::<crate::sched::process::Slot>()
            + body_bytes
            + p.mailbox.len() * 32,
        links,
        monitors,
        monitored_by,
        registered_name: shared.registry.name_of(pid),
        trap_exit: p.trap_exit,
        current_function,
        heap_words,
        priority: shared
            .table
            .get(pid.index())
            .map_or(Priority::Normal, |s| s.priority()),
        parent: p.parent(),
    }
}

impl StepCx<'_> {
    /// This process's own [`ProcessInfo`].
    pub fn info(&mut self) -> ProcessInfo {
        self.charge_op();
        info_of(self.shared, self.pid, self.p, Status::Running)
    }
}

/// Where the answers of one batch of a walk over every process go
/// (`node::stats`, "The process walk", step 2): an info request's
/// answer, put by the process asked.
#[derive(Default)]
pub(crate) struct Sink {
    answers: Mutex<Vec<(Pid, Option<ProcessInfo>)>>,
    cv: Condvar,
}

impl Sink {
    pub(crate) fn put(&self, pid: Pid, info: Option<ProcessInfo>) {
        let mut g = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        g.push((pid, info));
        self.cv.notify_all();
    }

    /// Waits until `n` answers came or `deadline` passed; takes them.
    pub(crate) fn take(&self, n: usize, deadline: Instant) -> Vec<(Pid, Option<ProcessInfo>)> {
        let mut g = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        while g.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            g = self
                .cv
                .wait_timeout(g, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        std::mem::take(&mut *g)
    }
}
