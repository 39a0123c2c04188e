//! [`Ctx::timeout`](super::Ctx::timeout): any future, bounded in time by
//! one of the runtime's timers; and [`Ctx::sleep`](super::Ctx::sleep), a
//! wait on the same kind of timer with no future inside.
//!
//! 1. The first poll polls the future; if it is not done, it starts a
//!    timer that *wakes* the process at the deadline (no message: the
//!    timer's target is `Target::Wake`), and notes the deadline.
//! 2. Each later poll polls the future first (a result that is there wins
//!    over a deadline that passed at the same time), then compares the
//!    clock with the deadline: past it, the timer is gone (it fired) and
//!    the answer is [`Elapsed`].
//! 3. Done or dropped before the deadline, the timer is cancelled; a
//!    process that ends has its timers cancelled by the runtime.
//!
//! A wake timer delivers no message, so neither future touches the
//! mailbox: a message arriving meanwhile wakes the process, the deadline
//! is compared with the clock, and the wait goes on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::with_cx;
use crate::sched::polled::with_polled_if;
use crate::sched::timer::{TimerRef, MAX_DELAY};
use crate::Pid;

/// The error of a future that [`Ctx::timeout`](super::Ctx::timeout) gave
/// up on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed;

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("deadline elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(_: Elapsed) -> std::io::Error {
        std::io::ErrorKind::TimedOut.into()
    }
}

/// Future of [`Ctx::timeout`](super::Ctx::timeout): `fut` with a deadline.
#[must_use = "futures do nothing unless awaited"]
pub struct Deadline<F> {
    /// Pinned structurally (`poll`): never moved out of a pinned
    /// `Deadline`, which is `Unpin` only when `F` is. Inline rather than
    /// boxed: a socket read bounded by a timeout costs no allocation.
    fut: F,
    pid: Pid,
    after: Duration,
    /// Set at the first poll that had to wait; `None` inside for a delay
    /// too long to ever end (as a timer beyond `MAX_DELAY`).
    deadline: Option<Option<Instant>>,
    timer: Option<TimerRef>,
}

impl<F> Deadline<F> {
    pub(crate) fn new(pid: Pid, after: Duration, fut: F) -> Deadline<F> {
        Deadline {
            fut,
            pid,
            after,
            deadline: None,
            timer: None,
        }
    }

    fn cancel(&mut self) {
        if let Some(t) = self.timer.take() {
            with_polled_if(self.pid, |cx| drop(cx.shared.timers.cancel(t)));
        }
    }
}

impl<F: Future> Future for Deadline<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `fut` is pinned structurally: it is only ever reached
        // pinned (here), never moved out (no method takes it, and `Drop`
        // only cancels the timer), and `Deadline` is `Unpin` only when `F`
        // is (no manual `Unpin` impl). The other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above; `this` is not moved for as long as it is pinned.
        let fut = unsafe { Pin::new_unchecked(&mut this.fut) };
        if let Poll::Ready(v) = fut.poll(cx) {
            this.cancel();
            return Poll::Ready(Ok(v));
        }
        match this.deadline {
            None => {
                let (pid, after) = (this.pid, this.after);
                let deadline = (after <= MAX_DELAY)
                    .then(|| Instant::now().checked_add(after))
                    .flatten();
                this.deadline = Some(deadline);
                if deadline.is_some() {
                    this.timer = Some(with_cx(pid, |cx| cx.shared.wake_after(after, pid)));
                }
                Poll::Pending
            }
            Some(Some(d)) if Instant::now() >= d => {
                this.timer = None; // fired
                Poll::Ready(Err(Elapsed))
            }
            Some(_) => Poll::Pending,
        }
    }
}

impl<F> Drop for Deadline<F> {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Future of [`Ctx::sleep`](super::Ctx::sleep): done once its delay has
/// passed (never earlier), woken by one of the runtime's timers.
///
/// It holds one timer while it waits (none for `Duration::ZERO`, none for
/// a delay beyond [`MAX_DELAY`], which never ends); dropping it cancels
/// the timer, and so does the process ending.
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    pid: Pid,
    after: Duration,
    /// As in [`Deadline`]: set at the first poll; `None` inside for a
    /// delay that never ends.
    deadline: Option<Option<Instant>>,
    timer: Option<TimerRef>,
}

impl Sleep {
    pub(crate) fn new(pid: Pid, after: Duration) -> Sleep {
        Sleep {
            pid,
            after,
            deadline: None,
            timer: None,
        }
    }

    fn cancel(&mut self) {
        if let Some(t) = self.timer.take() {
            with_polled_if(self.pid, |cx| drop(cx.shared.timers.cancel(t)));
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        match self.deadline {
            None => {
                let (pid, after) = (self.pid, self.after);
                let armed = with_cx(pid, |cx| {
                    // One reduction, as any call; a slice already spent
                    // yields first (the next poll starts over).
                    if cx.budget == 0 {
                        cx.yielded = true;
                        return None;
                    }
                    cx.charge_op();
                    if after.is_zero() {
                        return Some(None);
                    }
                    let deadline = (after <= MAX_DELAY)
                        .then(|| Instant::now().checked_add(after))
                        .flatten();
                    let timer = deadline.map(|_| cx.shared.wake_after(after, pid));
                    Some(Some((deadline, timer)))
                });
                match armed {
                    None => Poll::Pending,
                    Some(None) => Poll::Ready(()),
                    Some(Some((deadline, timer))) => {
                        self.deadline = Some(deadline);
                        self.timer = timer;
                        Poll::Pending
                    }
                }
            }
            Some(Some(d)) if Instant::now() >= d => {
                self.timer = None; // fired
                Poll::Ready(())
            }
            Some(_) => Poll::Pending,
        }
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.cancel();
    }
}
