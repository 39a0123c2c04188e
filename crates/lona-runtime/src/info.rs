//! `process_info`: what a live process looks like from outside.
//!
//! A process answers for itself (its private part is its own), so asking
//! another process is a signal, answered when it next drains its inbox: an
//! [`InfoReply`](crate::InfoReply) message, after every signal the asker
//! sent it before. A process that is gone, or ending, answers `None`.

use crate::priority::Priority;
use crate::process::Private;
use crate::runtime::Shared;
use crate::signal::{AliveReply, InfoReply, ReplyTo};
use crate::{Pid, Ref};

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
    /// Its scheduling priority.
    pub priority: Priority,
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
    let body = p.process.as_deref().map_or(0, std::mem::size_of_val);
    ProcessInfo {
        status,
        message_queue_len: p.mailbox.len(),
        reductions: p.reductions,
        memory: std::mem::size_of::<crate::table::Slot>() + body + p.mailbox.len() * 32,
        links,
        monitors,
        monitored_by,
        registered_name: shared.registry.name_of(pid),
        trap_exit: p.trap_exit,
        priority: shared
            .table
            .get(pid.index())
            .map_or(Priority::Normal, |s| s.priority()),
    }
}

pub(crate) fn reply_info(shared: &Shared, reply_to: Pid, tag: Ref, info: Option<ProcessInfo>) {
    shared.send_pid(reply_to, InfoReply { tag, info });
}

pub(crate) fn reply_alive(shared: &Shared, reply_to: ReplyTo, tag: Ref, alive: bool) {
    match reply_to {
        ReplyTo::Process(pid) => shared.send_pid(pid, AliveReply { tag, alive }),
        ReplyTo::Thread(slot) => slot.set(alive),
    }
}
