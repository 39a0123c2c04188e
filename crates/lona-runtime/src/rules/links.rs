//! Links, monitors and exit signals: the rules, written once, and the code
//! that applies them for every kind of process (Erlang/OTP's semantics;
//! reference manual, "Processes", and module `erlang`). The operations are
//! methods of [`StepCx`], so a native process, the Lonala interpreter and any
//! other [`Process`](crate::Process) get the same behaviour.
//!
//! # Delivery
//! - Every signal (exit, link, unlink, unlink-ack, monitor, demonitor,
//!   down, info and alive requests) travels in the receiver's one inbox with
//!   its messages, so between two processes everything arrives in the order
//!   sent. A signal takes effect when the receiver drains its inbox
//!   ([`StepCx::drain`], which hands it to `on_signal_or_stale` through
//!   [`RULES`], the scheduler's way up to this floor: `sched::rules`).
//! - A signal to a process that is gone, or that is ending, is *answered*
//!   by exactly one party (see `inbox`, "Closing"): a link with an exit
//!   signal `noproc`, a monitor with a `Down` of reason `noproc`, an info
//!   request with `None`, an alive request with `false`, an unlink with its
//!   acknowledgement; anything else is dropped. Once a drain has ended the
//!   process (an exit signal took effect), the signals behind it in the same
//!   drain are answered the same way: a process that is ending is not alive.
//!
//! # Exit signals (`Signal::Exit`)
//! 1. Reason `Normal`, not from a link: ignored by a process that does not
//!    trap exits, unless it sent it to itself (then it ends `normal`); a
//!    trapping process gets an [`Exit`] message.
//! 2. Reason `Kill`, not from a link (`exit(pid, Kill)`): cannot be trapped;
//!    the target ends with reason `Killed`, which is what its links see.
//! 3. From a link: ignored unless the receiver's link to the sender is in
//!    force (not being unlinked); the link is then gone. Reason `Normal` is
//!    ignored by a non-trapping receiver; `Kill` through a link *can* be
//!    trapped, and a non-trapping receiver ends with reason `Kill`.
//! 4. Any other reason ends a non-trapping receiver with that same reason;
//!    a trapping one receives `Exit { from, reason }` at the end of its
//!    mailbox.
//!
//! 12. An exit signal from outside the runtime (`Signal::ForeignExit`,
//!     [`Handle::send_foreign_exit`](crate::Handle::send_foreign_exit): another node's process, through the
//!     distribution, which keeps the cross-node links itself) follows
//!     rules 1-4 with the link taken as in force: a trapping receiver gets
//!     a [`ForeignExit`](crate::ForeignExit) naming the sender as the
//!     distribution does, `Normal` is ignored by one that does not trap,
//!     `Kill` not through a link ends it `Killed`, and any other reason
//!     ends it with that reason.
//!
//! # Links
//! 5. Bidirectional, at most one per pair; linking twice or to oneself does
//!    nothing. The linker records the link at once and sends `Link`; the
//!    target records it when it drains. Link to a process that is gone: the
//!    linker gets an exit signal `noproc` through the link (rule 3/4), or,
//!    if the target is already known dead at the call, a non-trapping caller
//!    gets an error `NoProc` and a trapping one an `Exit(pid, noproc)`.
//! 6. Unlinking is a handshake (Erlang's unlink id, OTP 23): `unlink`
//!    marks the link *unlinking* with a fresh id and sends `Unlink(id)`;
//!    from then on the caller acts on no exit signal from that link. The
//!    other side removes its link (if in force) and always answers
//!    `UnlinkAck(id)`; the caller removes its entry when the ack with its id
//!    arrives. A `Link` arriving while the entry is unlinking was sent
//!    before the other side saw the unlink, so it is ignored (the other side
//!    drops its link on the unlink). So when two processes link to each
//!    other at once and one unlinks, both end up unlinked: the sides never
//!    disagree. Linking again while unlinking puts the link back in force
//!    and sends `Link`.
//!    When a process ends, every link in force gets an exit signal with its
//!    reason.
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
//! 13. A link or monitor may be made *on behalf of* another process
//!     (`Handle::link_for`, `Handle::monitor_for`: the distribution's
//!     reader makes them for its writer, which then owns them, in order
//!     with what it delivers next). The caller signals the owner first
//!     (`LinkOf`, `MonitorOf`: the owner records the link, in force, or
//!     the monitor, when it drains), then the target (`Link`, `Monitor`,
//!     from the owner). The owner's record is in its inbox before anything
//!     the target can send back, so the target's exit signal or `Down`
//!     (`noproc` if it is gone) finds the link or monitor in place, as if
//!     the owner had made it itself; and the target gets the `Link` or
//!     `Monitor` in order with the caller's later messages and signals to
//!     it. If the owner is gone, the target keeps a link or monitor to a
//!     dead process: its end signals nobody.
//!
//! # Ending
//! 9. A process ends (`worker::finish`): its registered name is released
//!    and *then* its state becomes exited (so nobody sees it dead while its
//!    name still resolves); it stops taking signals (its inbox is closed,
//!    and signals found in it are answered per "Delivery"); its links in
//!    force get exit signals and its monitors `Down`; its timers are
//!    cancelled, its mailbox dropped, and its slot retired with a new
//!    generation.
//! 10. An abnormal end (not `Normal`, not `Shutdown`) of a process nobody
//!     links or monitors is reported (crash report, see `report`), when the
//!     end came from the process itself (a panic, its own `exit`); an end
//!     caused by another process's exit signal is not reported again.
//!
//! # Aliases (Erlang's process aliases, OTP 24)
//! 11. `alias(r)` makes the reference `r` (often a monitor's) an *active
//!     alias* of the calling process; `unalias(r)` deactivates it at once.
//!     `send_alias(pid, r, msg)` sends `msg` to `pid` through the alias `r`:
//!     it travels as a signal, in order with everything else the sender
//!     sends `pid`, and when `pid` drains it, it joins the mailbox as an
//!     ordinary message if `r` is then an active alias of `pid`, and is
//!     dropped unseen otherwise (also if `pid` is gone). So a request's
//!     reply addressed to an alias the requester deactivated after giving
//!     up (a call that timed out) never reaches its mailbox. Aliases end
//!     with their process.

use crate::base::envelope::{header_is, Envelope};
use crate::rules::info::info_of;
use crate::rules::signal::{Down, Exit, InfoTo, ReplyTo, Signal};
use crate::sched::cx::StepCx;
use crate::sched::process::{Extra, Private, ACTIVE};
use crate::sched::rules::Rules;
use crate::sched::shared::Shared;
use crate::sched::worker::WorkerCore;
use crate::{Pid, Reason, Ref, Status};

/// The rules as the scheduler calls them (`sched::rules`); set in every
/// runtime by `node::builder`.
pub(crate) const RULES: Rules = Rules {
    on_signal: on_signal_or_stale,
    on_node_dying,
    notify_end,
};

impl Shared {
    /// Send a control signal; if the target is gone, answer it (links get
    /// `noproc` exits, monitors `noproc` downs).
    pub(crate) fn signal(&self, to: Pid, sig: Signal) {
        // Messages this worker batched go first: signals never overtake
        // messages from the same sender.
        if let Some(w) = WorkerCore::current(self) {
            w.flush();
        }
        let e = Envelope::new(sig, to.generation(), true);
        if let Err(e) = self.deliver(to, e) {
            answer_dead(self, to, e);
        }
    }
}

/// Act on a node taken from the inbox of a running process that is not
/// ending (rule set above), other than a message of this process, which
/// the drain moved into the mailbox itself (`StepCx::drain`): a signal, or a
/// node addressed to an earlier process in the slot.
fn on_signal_or_stale(cx: &mut StepCx<'_>, e: Envelope) {
    let h = e.header();
    if h.gen() != cx.p.gen {
        // Addressed to an earlier process in this slot.
        let dead = Pid::new(cx.pid.index(), h.gen());
        answer_dead(cx.shared, dead, e);
        return;
    }
    // Messages of this generation took the inline path in `StepCx::drain`.
    let Ok(sig) = e.downcast::<Signal>() else {
        unreachable!("signal flag on a non-signal node")
    };
    match sig {
        Signal::Exit { from, reason, link } => on_exit(cx, from, reason, link),
        Signal::ForeignExit {
            origin,
            reason,
            link,
        } => on_foreign_exit(cx, origin, reason, link),
        Signal::Link { from } => {
            // Rule 6: a link that crossed our unlink is ignored.
            cx.p.extra().links.entry(from).or_insert(ACTIVE);
        }
        Signal::Unlink { from, id } => {
            if let Some(x) = cx.p.extra.as_mut() {
                if x.links.get(&from) == Some(&ACTIVE) {
                    x.links.remove(&from);
                }
            }
            cx.shared
                .signal(from, Signal::UnlinkAck { from: cx.pid, id });
        }
        Signal::UnlinkAck { from, id } => unlink_acked(cx.p, from, id),
        Signal::Monitor { from, mref } => {
            cx.p.extra().monitored_by.insert(mref, from);
        }
        Signal::Demonitor { mref } => {
            if let Some(x) = cx.p.extra.as_mut() {
                x.monitored_by.remove(&mref);
            }
        }
        // Rule 13: made on the receiver's behalf.
        Signal::MonitorOf { mref, target } => {
            cx.p.extra().monitors.insert(mref, target);
        }
        Signal::LinkOf { target } => {
            if target != cx.pid {
                cx.p.extra().links.insert(target, ACTIVE);
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
                Status::Waiting
            } else {
                Status::Running
            };
            let info = info_of(cx.shared, cx.pid, cx.p, status);
            reply_to.answer(cx.shared, cx.pid, tag, Some(info));
        }
        Signal::IsAlive { reply_to, tag } => reply_to.answer(cx.shared, tag, true),
        Signal::Visit(t) => cx.p.visit(t),
        Signal::Alias { alias, msg } => {
            // Rule 11: only through an active alias.
            if cx
                .p
                .extra
                .as_ref()
                .is_some_and(|x| x.aliases.contains_key(&alias))
            {
                cx.p.mailbox.push(msg);
            }
        }
    }
}

fn unlink_acked(p: &mut Private, from: Pid, id: u64) {
    if let Some(x) = p.extra.as_mut() {
        if x.links.get(&from) == Some(&id) {
            x.links.remove(&from);
        }
    }
}

fn on_exit(cx: &mut StepCx<'_>, from: Pid, reason: Reason, link: bool) {
    if link {
        // Rule 3: only a link in force counts, and it is gone now.
        let linked = cx.p.extra.as_mut().is_some_and(|x| {
            let on = x.is_linked(from);
            if on {
                x.links.remove(&from);
            }
            on
        });
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

/// Rule 12: an exit signal from outside the runtime.
fn on_foreign_exit(cx: &mut StepCx<'_>, origin: crate::Origin, reason: Reason, link: bool) {
    if !link && matches!(reason, Reason::Kill) {
        cx.exit(Reason::Killed);
        cx.p.exit_by_signal = true;
        return;
    }
    if cx.p.trap_exit {
        let msg = crate::ForeignExit {
            from: origin,
            reason,
        };
        cx.p.mailbox.push(Envelope::new(msg, cx.p.gen, false));
        return;
    }
    if !matches!(reason, Reason::Normal) {
        cx.exit(reason);
        cx.p.exit_by_signal = true;
    }
}

/// A node that reaches a process which is ending (rule 9, and "Delivery"):
/// unlinks, acks and demonitors still count; the rest is answered as to a
/// dead process.
pub(crate) fn on_node_dying(shared: &Shared, p: &mut Private, pid: Pid, e: Envelope) {
    let h = e.header();
    if h.gen() == p.gen && h.is_signal() {
        if let Some(sig) = Envelope::downcast_ref::<Signal>(&e) {
            match *sig {
                Signal::Unlink { from, .. } => {
                    if let Some(x) = p.extra.as_mut() {
                        x.links.remove(&from);
                    }
                    // Acknowledged below, as by a dead process.
                }
                Signal::UnlinkAck { from, id } => return unlink_acked(p, from, id),
                Signal::Demonitor { mref } => {
                    if let Some(x) = p.extra.as_mut() {
                        x.monitored_by.remove(&mref);
                    }
                    return;
                }
                _ => {}
            }
        }
    }
    answer_dead(shared, Pid::new(pid.index(), h.gen()), e);
}

/// Answer a node addressed to `dead`, a process that is gone or ending
/// ("Delivery"); messages and other signals are dropped.
pub(crate) fn answer_dead(shared: &Shared, dead: Pid, e: Envelope) {
    if !e.header().is_signal() || !header_is::<Signal>(e.header()) {
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
        Ok(Signal::Unlink { from, id }) => {
            shared.signal(from, Signal::UnlinkAck { from: dead, id })
        }
        Ok(Signal::Monitor { from, mref }) => shared.signal(
            from,
            Signal::Down {
                mref,
                pid: dead,
                reason: Reason::NoProc,
            },
        ),
        Ok(Signal::Info { reply_to, tag }) => reply_to.answer(shared, dead, tag, None),
        Ok(Signal::IsAlive { reply_to, tag }) => reply_to.answer(shared, tag, false),
        _ => {}
    }
}

/// Rule 9, the signals part: tell links and monitors that `pid` ended.
/// Called after the name was released.
pub(crate) fn notify_end(shared: &Shared, pid: Pid, reason: &Reason, extra: &mut Extra) {
    for (to, state) in extra.links.drain() {
        if state == ACTIVE {
            shared.signal(
                to,
                Signal::Exit {
                    from: pid,
                    reason: reason.clone(),
                    link: true,
                },
            );
        }
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

/// The operations, for every kind of process. Each is charged one
/// reduction (saturating: a process that must yield checks
/// [`StepCx::budget`] before calling; the native layer does).
impl StepCx<'_> {
    /// Link to `pid` (rule 5). `Err(Reason::NoProc)` if `pid` is known dead
    /// and this process does not trap exits; a trapping one gets
    /// `Exit { from: pid, reason: NoProc }` in its mailbox instead.
    pub fn link(&mut self, pid: Pid) -> Result<(), Reason> {
        self.charge_op();
        if pid == self.pid {
            return Ok(());
        }
        match self.p.extra.as_ref().and_then(|x| x.links.get(&pid)) {
            Some(&ACTIVE) => return Ok(()),
            Some(_) => {
                // Unlinking: back in force (rule 6).
                self.p.extra().links.insert(pid, ACTIVE);
                self.shared.signal(pid, Signal::Link { from: self.pid });
                return Ok(());
            }
            None => {}
        }
        if !self.shared.is_alive(pid) {
            if self.p.trap_exit {
                self.drain();
                let e = Exit {
                    from: pid,
                    reason: Reason::NoProc,
                };
                self.p.mailbox.push(Envelope::new(e, self.p.gen, false));
                return Ok(());
            }
            return Err(Reason::NoProc);
        }
        self.p.extra().links.insert(pid, ACTIVE);
        self.shared.signal(pid, Signal::Link { from: self.pid });
        Ok(())
    }

    /// Remove the link to `pid`, if any (rule 6). After this returns no
    /// exit signal from that link takes effect.
    pub fn unlink(&mut self, pid: Pid) {
        self.charge_op();
        let Some(x) = self.p.extra.as_mut() else {
            return;
        };
        if let Some(state) = x.links.get_mut(&pid) {
            if *state == ACTIVE {
                let id = Ref::new().to_bits();
                *state = id;
                self.shared
                    .signal(pid, Signal::Unlink { from: self.pid, id });
            }
        }
    }

    /// Monitor `pid` (rule 7): a [`Down`] message comes when it ends (at
    /// once, with `NoProc`, if it is already gone).
    pub fn monitor(&mut self, pid: Pid) -> Ref {
        self.charge_op();
        let mref = Ref::new();
        self.p.extra().monitors.insert(mref, pid);
        self.shared.signal(
            pid,
            Signal::Monitor {
                from: self.pid,
                mref,
            },
        );
        mref
    }

    /// Remove a monitor (rule 8); returns whether it was active. With
    /// `flush`, a `Down` for it already in the mailbox is removed too.
    pub fn demonitor(&mut self, mref: Ref, flush: bool) -> bool {
        self.charge_op();
        let was = match self.p.extra.as_mut().and_then(|x| x.monitors.remove(&mref)) {
            Some(target) => {
                self.shared.signal(target, Signal::Demonitor { mref });
                true
            }
            None => false,
        };
        if flush {
            self.drain();
            self.p.mailbox.remove_first(|h| {
                // SAFETY: `h` is a live node of the mailbox during the call,
                // and its type is checked before the value is read.
                header_is::<Down>(unsafe { &*h })
                    && unsafe { crate::base::envelope::value_ref::<Down>(h) }.mref == mref
            });
        }
        was
    }

    /// Send an exit signal to `pid` (Erlang's `exit/2`; rules 1-4). To
    /// oneself it takes effect at once: afterwards [`StepCx::exiting`] says
    /// whether it ended the process.
    pub fn send_exit(&mut self, pid: Pid, reason: Reason) {
        self.charge_op();
        let from = self.pid;
        self.shared.signal(
            pid,
            Signal::Exit {
                from,
                reason,
                link: false,
            },
        );
        if pid == from {
            self.drain();
        }
    }

    /// Make `r` an active alias of this process (rule 11). Any reference
    /// can be one, e.g. a monitor's, so one value tags a request, its
    /// monitor and the address of its reply.
    pub fn alias(&mut self, r: Ref) {
        self.charge_op();
        self.p.extra().aliases.insert(r, ());
    }

    /// Deactivate the alias `r` (rule 11); returns whether it was active.
    /// From now on a message sent to it is dropped when it arrives, even
    /// one already in the inbox (not yet in the mailbox).
    pub fn unalias(&mut self, r: Ref) -> bool {
        self.charge_op();
        self.p
            .extra
            .as_mut()
            .is_some_and(|x| x.aliases.remove(&r).is_some())
    }

    /// Send `msg` to `pid` through its alias `r` (rule 11): it reaches
    /// `pid`'s mailbox only if `r` is an active alias of `pid` when it
    /// arrives.
    pub fn send_alias<M: Send + 'static>(&mut self, pid: Pid, r: Ref, msg: M) {
        self.charge_op();
        let msg = Envelope::new(msg, pid.generation(), false);
        self.shared.signal(pid, Signal::Alias { alias: r, msg });
    }

    /// Ask `pid` for its [`ProcessInfo`](crate::ProcessInfo): the answer
    /// comes as an [`InfoReply`](crate::InfoReply) message with the tag
    /// returned here, after every signal this process sent `pid` before.
    pub fn request_info(&mut self, pid: Pid) -> Ref {
        self.charge_op();
        let tag = Ref::new();
        self.shared.signal(
            pid,
            Signal::Info {
                reply_to: InfoTo::Process(self.pid),
                tag,
            },
        );
        tag
    }

    /// Whether `pid` is alive, with Erlang's guarantee: every signal this
    /// process sent `pid` before has taken effect (so after
    /// `send_exit(pid, Kill)` it says `false`). `Ok` when known without
    /// asking (gone, or oneself); otherwise the question is sent and the
    /// answer comes as an [`AliveReply`](crate::AliveReply) message with the
    /// returned tag.
    pub fn request_alive(&mut self, pid: Pid) -> Result<bool, Ref> {
        self.charge_op();
        if pid == self.pid {
            return Ok(!self.exiting());
        }
        if !self.shared.is_alive(pid) {
            return Ok(false);
        }
        let tag = Ref::new();
        self.shared.signal(
            pid,
            Signal::IsAlive {
                reply_to: ReplyTo::Process(self.pid),
                tag,
            },
        );
        Err(tag)
    }
}
