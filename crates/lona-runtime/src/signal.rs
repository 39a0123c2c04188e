//! Control signals, and the messages some of them turn into.
//!
//! Signals travel in the receiver's inbox with its messages, so between one
//! sender and one receiver everything stays in the order sent (brief,
//! decision 3). The receiver acts on a signal when it drains its inbox; the
//! rules it applies are in `links`.

use crate::{Pid, Reason, Ref};

/// Runtime-internal signal (never visible to user code as such).
pub(crate) enum Signal {
    /// An exit signal. `link` when it comes from a link (the sender died),
    /// false when sent with `exit(pid, reason)`.
    Exit {
        from: Pid,
        reason: Reason,
        link: bool,
    },
    Link {
        from: Pid,
    },
    Unlink {
        from: Pid,
    },
    Monitor {
        from: Pid,
        mref: Ref,
    },
    Demonitor {
        mref: Ref,
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
        reply_to: Pid,
        tag: Ref,
    },
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

/// The message `start_timer` delivers: Erlang's `{timeout, TRef, Msg}`.
#[derive(Debug, PartialEq)]
pub struct Timeout<M> {
    /// The timer's reference, as `start_timer` returned it.
    pub tref: crate::TimerRef,
    /// The message given to `start_timer`.
    pub msg: M,
}
