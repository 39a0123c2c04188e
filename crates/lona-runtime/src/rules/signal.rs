//! Control signals, and the messages some of them turn into.
//!
//! Signals travel in the receiver's inbox with its messages, so between one
//! sender and one receiver everything stays in the order sent
//! (`docs/design.md`, D3). The receiver acts on a signal when it drains its
//! inbox; the rules it applies are in `links`. Where an answer to a
//! request goes ([`ReplyTo`], [`InfoTo`]) answers it here.

use crate::rules::info::Sink;
use crate::sched::shared::Shared;
use crate::{Pid, ProcessInfo, Reason, Ref};
use std::sync::{Arc, Condvar, Mutex};

/// Runtime-internal signal (never visible to user code as such).
pub(crate) enum Signal {
    /// An exit signal. `link` when it comes from a link (the sender died),
    /// false when sent with `exit(pid, reason)`.
    Exit {
        from: Pid,
        reason: Reason,
        link: bool,
    },
    /// An exit signal from a process outside this runtime (another node's,
    /// through the distribution): `origin` is what a trapping receiver is
    /// told it came from (links rule 12).
    ForeignExit {
        origin: Origin,
        reason: Reason,
        link: bool,
    },
    Link {
        from: Pid,
    },
    /// Remove the link; `id` names this unlink, acknowledged with
    /// `UnlinkAck` (links rule 6).
    Unlink {
        from: Pid,
        id: u64,
    },
    UnlinkAck {
        from: Pid,
        id: u64,
    },
    Monitor {
        from: Pid,
        mref: Ref,
    },
    Demonitor {
        mref: Ref,
    },
    /// The receiver watches `target` under `mref` from now on: a monitor
    /// made on its behalf (`Handle::monitor_for`), recorded here before
    /// `target` gets its `Monitor`, so the `Down` is the receiver's.
    MonitorOf {
        mref: Ref,
        target: Pid,
    },
    /// The receiver is linked to `target` from now on (in force, as
    /// `link` would make it): a link made on its behalf
    /// (`Handle::link_for`), recorded here before `target` gets its
    /// `Link`.
    LinkOf {
        target: Pid,
    },
    /// The monitored process `pid` went down.
    Down {
        mref: Ref,
        pid: Pid,
        reason: Reason,
    },
    /// A receive timeout fired.
    Timeout {
        token: u32,
    },
    /// `process_info` asked by `reply_to`.
    Info {
        reply_to: InfoTo,
        tag: Ref,
    },
    /// `is_alive` asked: answered after every signal sent before it.
    IsAlive {
        reply_to: ReplyTo,
        tag: Ref,
    },
    /// A message sent to an alias of the receiver (links rule 11): it joins
    /// the mailbox if the alias is active when the receiver drains it, and
    /// is dropped otherwise.
    Alias {
        alias: Ref,
        msg: crate::base::envelope::Envelope,
    },
    /// Run a visit in the receiver (`visit`): dropping the ticket answers.
    Visit(crate::sched::ticket::Ticket),
}

/// Where an answer goes: a process (as a message) or a thread outside the
/// runtime waiting on a slot.
pub(crate) enum ReplyTo {
    Process(Pid),
    Thread(Arc<OneShot>),
}

/// Where an info answer goes: a process (as an
/// [`InfoReply`] message) or a walk over every process (`stats`).
pub(crate) enum InfoTo {
    Process(Pid),
    Walk(Arc<Sink>),
}

impl ReplyTo {
    /// Answer an alive request.
    pub(crate) fn answer(self, shared: &Shared, tag: Ref, alive: bool) {
        match self {
            ReplyTo::Process(pid) => shared.send_pid(pid, AliveReply { tag, alive }),
            ReplyTo::Thread(slot) => slot.set(alive),
        }
    }
}

impl InfoTo {
    /// Answer an info request about `about`.
    pub(crate) fn answer(self, shared: &Shared, about: Pid, tag: Ref, info: Option<ProcessInfo>) {
        match self {
            InfoTo::Process(pid) => shared.send_pid(pid, InfoReply { tag, info }),
            InfoTo::Walk(sink) => sink.put(about, info),
        }
    }
}

/// A one-value slot a thread outside the runtime waits on.
#[derive(Default)]
pub(crate) struct OneShot {
    value: Mutex<Option<bool>>,
    cv: Condvar,
}

impl OneShot {
    pub(crate) fn set(&self, v: bool) {
        *self.value.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
        self.cv.notify_all();
    }

    /// Wait up to `d`; `None` if nothing came.
    pub(crate) fn wait(&self, d: std::time::Duration) -> Option<bool> {
        let g = self.value.lock().unwrap_or_else(|e| e.into_inner());
        let (g, _) = self
            .cv
            .wait_timeout_while(g, d, |v| v.is_none())
            .unwrap_or_else(|e| e.into_inner());
        *g
    }
}

/// The answer to [`StepCx::request_info`](crate::StepCx::request_info), delivered
/// as a message: `info` is `None` if the process was gone (or ending).
#[derive(Debug)]
pub struct InfoReply {
    /// The tag the request returned.
    pub tag: Ref,
    /// What the process looked like.
    pub info: Option<ProcessInfo>,
}

/// The answer to [`StepCx::request_alive`](crate::StepCx::request_alive),
/// delivered as a message after every signal the asker sent the process
/// before asking.
#[derive(Debug)]
pub struct AliveReply {
    /// The tag the request returned.
    pub tag: Ref,
    /// Whether the process was alive (and not ending) when it answered.
    pub alive: bool,
}

/// The message a process trapping exits receives for an exit signal:
/// Erlang's `{'EXIT', From, Reason}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Exit {
    /// The process that sent the signal (or died, for a link).
    pub from: Pid,
    /// Its reason.
    pub reason: Reason,
}

/// Who sent a [`ForeignExit`]: a value of the layer that delivered it (for
/// a Lonala node, the other node's pid as a term).
pub type Origin = Arc<dyn std::any::Any + Send + Sync>;

/// What a process trapping exits receives for an exit signal from outside
/// the runtime ([`Handle::send_foreign_exit`](crate::Handle::send_foreign_exit)):
/// Erlang's `{'EXIT', From, Reason}` with a `From` on another node.
#[derive(Clone)]
pub struct ForeignExit {
    /// Who sent it, as the delivering layer names it.
    pub from: Origin,
    /// Its reason.
    pub reason: Reason,
}

impl std::fmt::Debug for ForeignExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForeignExit")
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// The message a monitoring process receives when the monitored process
/// ends: Erlang's `{'DOWN', Ref, process, Pid, Reason}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Down {
    /// The reference `monitor` returned.
    pub mref: Ref,
    /// The monitored process.
    pub pid: Pid,
    /// Why it ended (`NoProc` if it was already gone).
    pub reason: Reason,
}
