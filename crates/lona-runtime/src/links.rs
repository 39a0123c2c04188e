//! Links, monitors and exit signals: the rules, written once, and the code
//! that applies them (Erlang/OTP's semantics; reference manual, "Processes",
//! and module `erlang`).
//!
//! # Delivery
//! - Every signal (exit, link, unlink, monitor, demonitor, down) travels in
//!   the receiver's one inbox with its messages, so between two processes
//!   everything arrives in the order sent. A signal takes effect when the
//!   receiver drains its inbox ([`on_node`]).
//! - A signal to a process that is gone is *answered* by exactly one party
//!   (see `inbox`, "Closing"): a link with an exit signal `noproc`, a monitor
//!   with a `Down` of reason `noproc`; anything else is dropped.
//!
//! # Exit signals (`Signal::Exit`)
//! 1. Reason `Normal`, not from a link: ignored by a process that does not
//!    trap exits, unless it sent it to itself (then it ends `normal`); a
//!    trapping process gets an [`Exit`] message.
//! 2. Reason `Kill`, not from a link (`exit(pid, Kill)`): cannot be trapped;
//!    the target ends with reason `Killed`, which is what its links see.
//! 3. From a link: ignored unless the receiver is still linked to the sender
//!    (after `unlink` returns, no new exit signal from that link is acted
//!    on); the link is then gone. Reason `Normal` is ignored by a
//!    non-trapping receiver; `Kill` through a link *can* be trapped, and a
//!    non-trapping receiver ends with reason `Kill`.
//! 4. Any other reason ends a non-trapping receiver with that same reason;
//!    a trapping one receives `Exit { from, reason }` at the end of its
//!    mailbox.
//!
//! # Links
//! 5. Bidirectional, at most one per pair; linking twice or to oneself does
//!    nothing. The linker records the link at once and sends `Link`; the
//!    target records it when it drains. Link to a process that is gone: the
//!    linker gets an exit signal `noproc` through the link (rule 3/4), or,
//!    if the target is already known dead at the call, a non-trapping caller
//!    gets an error `NoProc` and a trapping one an `Exit(pid, noproc)`.
//! 6. `unlink` removes the link on the caller's side at once and sends
//!    `Unlink`. When a process ends, every linked process gets an exit signal
//!    with its reason.
//!
//! # Monitors
//! 7. One-way, fire once, independent when repeated: each `monitor` call
//!    makes a new reference. When the target ends, the watcher gets
//!    `Down { mref, pid, reason }`. Monitoring a process that is gone gives
//!    `Down` with `noproc`.
//! 8. `demonitor` removes the monitor on the caller's side at once, so a
//!    `Down` still in flight is dropped when it arrives; with `flush`, a
//!    `Down` already in the mailbox is removed too.
//!
//! # Ending
//! 9. A process ends (`finish`): it stops taking signals (its inbox is
//!    closed, and signals found in it are answered per "Delivery"), releases
//!    its registered name, *then* sends exit signals to its links and `Down`
//!    to its monitors, cancels its timers, drops its mailbox, and its slot is
//!    retired with a new generation.
//! 10. An abnormal end (not `Normal`, not `Shutdown`) of a process nobody
//!     links or monitors is reported (crash report, see `report`), when the
//!     end came from the process itself (a panic, its own `exit`); an end
//!     caused by another process's exit signal is not reported again.

use crate::envelope::{header_is, Envelope};
use crate::process::Cx;
use crate::runtime::Shared;
use crate::signal::{Down, Exit, Signal};
use crate::{Pid, Reason};

/// Act on one node taken from the inbox (rule set above).
pub(crate) fn on_node(cx: &mut Cx<'_>, e: Envelope) {
    let h = e.header();
    if h.gen != cx.p.gen {
        // Addressed to an earlier process in this slot.
        let dead = Pid::new(cx.pid.index(), h.gen);
        answer_dead(cx.shared, dead, e);
        return;
    }
    if !h.signal {
        cx.p.mailbox.push(e);
        return;
    }
    let Ok(sig) = e.downcast::<Signal>() else {
        unreachable!("signal flag on a non-signal node")
    };
    match sig {
        Signal::Exit { from, reason, link } => on_exit(cx, from, reason, link),
        Signal::Link { from } => {
            cx.p.extra().links.insert(from);
        }
        Signal::Unlink { from } => {
            if let Some(x) = cx.p.extra.as_mut() {
                x.links.remove(&from);
            }
        }
        Signal::Monitor { from, mref } => {
            cx.p.extra().monitored_by.insert(mref, from);
        }
        Signal::Demonitor { mref } => {
            if let Some(x) = cx.p.extra.as_mut() {
                x.monitored_by.remove(&mref);
            }
        }
        Signal::Down { mref, pid, reason } => {
            let active =
                cx.p.extra
                    .as_mut()
                    .is_some_and(|x| x.monitors.remove(&mref).is_some());
            if active {
                cx.p.mailbox
                    .push(Envelope::new(Down { mref, pid, reason }, cx.p.gen, false));
            }
        }
        Signal::Timeout { token } => cx.p.fired_timeout = token,
        Signal::Info { reply_to, tag } => {
            let status = if cx.p.waiting {
                crate::Status::Waiting
            } else {
                crate::Status::Running
            };
            let info = crate::native::info_of(cx.shared, cx.pid, cx.p, status);
            crate::native::reply_info(cx.shared, reply_to, tag, Some(info));
        }
    }
}

fn on_exit(cx: &mut Cx<'_>, from: Pid, reason: Reason, link: bool) {
    if link {
        // Rule 3: only a live link counts, and it is gone now.
        let linked = cx.p.extra.as_mut().is_some_and(|x| x.links.remove(&from));
        if !linked {
            return;
        }
    } else if matches!(reason, Reason::Kill) {
        // Rule 2: untrappable.
        cx.exit(Reason::Killed);
        cx.p.exit_by_signal = true;
        return;
    }
    if cx.p.trap_exit {
        cx.p.mailbox
            .push(Envelope::new(Exit { from, reason }, cx.p.gen, false));
        return;
    }
    match reason {
        // Rules 1 and 3: normal is ignored, except sent to oneself.
        Reason::Normal if link || from != cx.pid => {}
        reason => {
            cx.exit(reason);
            cx.p.exit_by_signal = from != cx.pid;
        }
    }
}

/// A node found in the inbox of a process that is ending (rule 9): unlinks
/// and demonitors still count; links and monitors are answered as to a dead
/// process; the rest is dropped.
pub(crate) fn on_node_dying(
    shared: &Shared,
    p: &mut crate::process::Private,
    pid: Pid,
    e: Envelope,
) {
    let h = e.header();
    if h.gen == p.gen && h.signal {
        if let Some(sig) = crate::envelope::Envelope::downcast_ref::<Signal>(&e) {
            match sig {
                Signal::Unlink { from } => {
                    if let Some(x) = p.extra.as_mut() {
                        x.links.remove(from);
                    }
                    return;
                }
                Signal::Demonitor { mref } => {
                    if let Some(x) = p.extra.as_mut() {
                        x.monitored_by.remove(mref);
                    }
                    return;
                }
                _ => {}
            }
        }
    }
    answer_dead(shared, Pid::new(pid.index(), h.gen), e);
}

/// Answer a node addressed to `dead`, a process that is gone: links get an
/// exit signal `noproc`, monitors a `Down` with `noproc`; the rest is
/// dropped.
pub(crate) fn answer_dead(shared: &Shared, dead: Pid, e: Envelope) {
    if !e.header().signal || !header_is::<Signal>(e.header()) {
        return;
    }
    match e.downcast::<Signal>() {
        Ok(Signal::Link { from }) => shared.signal(
            from,
            Signal::Exit {
                from: dead,
                reason: Reason::NoProc,
                link: true,
            },
        ),
        Ok(Signal::Monitor { from, mref }) => shared.signal(
            from,
            Signal::Down {
                mref,
                pid: dead,
                reason: Reason::NoProc,
            },
        ),
        Ok(Signal::Info { reply_to, tag }) => {
            crate::native::reply_info(shared, reply_to, tag, None)
        }
        _ => {}
    }
}

/// Rule 9, the signals part: tell links and monitors that `pid` ended.
/// Called after the name was released.
pub(crate) fn notify_end(
    shared: &Shared,
    pid: Pid,
    reason: &Reason,
    extra: &mut crate::process::Extra,
) {
    for to in extra.links.drain() {
        shared.signal(
            to,
            Signal::Exit {
                from: pid,
                reason: reason.clone(),
                link: true,
            },
        );
    }
    for (mref, watcher) in extra.monitored_by.drain() {
        shared.signal(
            watcher,
            Signal::Down {
                mref,
                pid,
                reason: reason.clone(),
            },
        );
    }
    for (mref, target) in extra.monitors.drain() {
        shared.signal(target, Signal::Demonitor { mref });
    }
}
