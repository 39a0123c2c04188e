//! Receive timeouts: a timer whose node is a signal (`Signal::Timeout`),
//! so it arrives in order with everything else in the inbox; when the
//! process drains it (`links`), the token it carries becomes the fired one
//! and the receive waiting on it gives up. The timer is one of the wheel's
//! entries aimed at the process, cancelled when it ends however many are
//! armed (`sched::timer`).

use crate::base::envelope::Envelope;
use crate::rules::signal::Signal;
use crate::sched::cx::StepCx;
use crate::sched::timer::{Target, TimerRef};
use std::time::Duration;

impl StepCx<'_> {
    /// Arm a receive timeout of `after`; returns its token and timer, or
    /// `None` when `after` is longer than [`MAX_DELAY`](crate::MAX_DELAY)
    /// (an infinite wait: no timer). When it fires, [`StepCx::timed_out`] with
    /// that token becomes true (and the process is woken). The timer is
    /// cancelled when the process ends, however many are armed.
    pub fn start_receive_timer(&mut self, after: Duration) -> Option<(u64, TimerRef)> {
        if after > crate::MAX_DELAY {
            return None;
        }
        let token = self.new_receive();
        // The signal (`Signal::Timeout`) is made when it fires
        // (`Shared::deliver_timer`): one cancelled before costs no node.
        let target = Target::Timeout {
            pid: self.pid,
            token: token as u32,
            signal: timeout_signal,
        };
        let tref = self.shared.timers.insert_bare(after, target);
        Some((token, tref))
    }

    /// Whether the receive timeout `token` has fired.
    pub fn timed_out(&self, token: u64) -> bool {
        self.p.fired_timeout as u64 == token
    }

    /// Cancel a receive timer (no effect if it already fired).
    pub fn cancel_receive_timer(&mut self, tref: TimerRef) {
        drop(self.shared.timers.cancel(tref));
    }
}

/// The node a receive timeout delivers when it fires.
fn timeout_signal(token: u32, gen: u32) -> Envelope {
    Envelope::new(Signal::Timeout { token }, gen, true)
}
