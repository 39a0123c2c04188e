//! Reductions for I/O: every socket operation a process polls costs one
//! reduction, so a process reading a socket that always has data is
//! preempted like any other (tokio's cooperative budget does the same).
//! The operations that wait for readiness and charge are here, on the
//! reactor's [`Registration`] (`sched::reactor` has the readiness
//! protocol, which knows nothing of processes); the process charged is
//! the one being polled on this thread (`sched::polled`).

use crate::sched::polled::with_polled;
use crate::sched::reactor::{Direction, Registration};
use std::io;
use std::task::{Context, Poll};

/// Charges the process being polled one reduction. True when its slice is
/// spent: the operation must return `Pending` and the process yields (it
/// is queued again at once; no waker is needed). Outside a Lona process
/// (another executor polling the future) nothing is charged.
pub(crate) fn spent(_cx: &Context<'_>) -> bool {
    with_polled(|cx| {
        if cx.charge(1) {
            false
        } else {
            cx.yielded = true;
            true
        }
    })
    .unwrap_or(false)
}

impl Registration {
    /// Runs the non-blocking `op` in direction `d` until it does not
    /// report `WouldBlock`, waiting for readiness between tries; charges
    /// the calling process (module doc) before each.
    pub(crate) fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        d: Direction,
        op: impl FnMut() -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io_until(cx, d, op, |_| false)
    }

    /// [`Registration::poll_io`] for a stream's read or write of `len`
    /// bytes: one that moves some but fewer than `len` has drained the
    /// kernel's receive buffer (or filled its send buffer), so the
    /// readiness it saw is cleared as after `WouldBlock`, and the next
    /// operation waits for the next edge instead of making a system call
    /// that would only say `WouldBlock` (tokio does the same). An event
    /// in between bumps the tick and keeps the readiness (step 4).
    pub(crate) fn poll_stream_io(
        &self,
        cx: &mut Context<'_>,
        d: Direction,
        len: usize,
        op: impl FnMut() -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io_until(cx, d, op, |&n| n > 0 && n < len)
    }

    /// [`Registration::poll_io`], also clearing the readiness it saw after
    /// a success `used_up` says drained the socket.
    fn poll_io_until<R>(
        &self,
        cx: &mut Context<'_>,
        d: Direction,
        mut op: impl FnMut() -> io::Result<R>,
        used_up: impl Fn(&R) -> bool,
    ) -> Poll<io::Result<R>> {
        if spent(cx) {
            return Poll::Pending;
        }
        loop {
            let seen = match self.poll_ready(cx, d) {
                Poll::Ready(w) => w,
                Poll::Pending => return Poll::Pending,
            };
            match op() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear(seen, d),
                r => {
                    if matches!(&r, Ok(v) if used_up(v)) {
                        self.clear(seen, d);
                    }
                    return Poll::Ready(r);
                }
            }
        }
    }
}
