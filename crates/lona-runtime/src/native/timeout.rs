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
//! 4. Except a long one's: a timeout of [`SPARE_MIN`] or more may be served
//!    up to a sixteenth late, so its timer is armed that much past the
//!    deadline (half of it) and, when the future is done first, kept in
//!    the process as its *spare* instead of cancelled. The next timeout
//!    whose deadline falls within its slack before the spare's firing
//!    time takes it over: no timer is set or cancelled. A connection
//!    waiting for its next request with a 60 s idle timeout thus takes the
//!    timer wheel's lock once every couple of seconds, not twice a
//!    request. A spare that is not taken over fires once, a spurious
//!    wake-up (which every process tolerates), or is cancelled when the
//!    process ends; [`Handle::pending_timers`](crate::Handle::pending_timers)
//!    counts it. The spare cannot have fired when it is taken over: it is
//!    taken only while its firing time is ahead of the new deadline, and
//!    timers never fire early.
//!
//! A wake timer delivers no message, so neither future touches the
//! mailbox: a message arriving meanwhile wakes the process, the deadline
//! is compared with the clock, and the wait goes on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::with_cx;
use crate::sched::cx::StepCx;
use crate::sched::polled::with_polled_if;
use crate::sched::timer::{TimerRef, MAX_DELAY};
use crate::Pid;

/// The shortest timeout whose timer may be a spare (module doc, step 4):
/// shorter ones are cancelled when done and fire on time.
pub(crate) const SPARE_MIN: Duration = Duration::from_secs(1);

/// How late a timeout of `after` (at least [`SPARE_MIN`]) may end.
fn slack(after: Duration) -> Duration {
    after / 16
}

/// The wake-up timer for a timeout of `after` ending at `deadline`, and
/// when that timer fires if it may become the spare: the process's spare
/// if it fits (step 4), else a new one.
fn arm(cx: &mut StepCx<'_>, deadline: Instant, after: Duration) -> (TimerRef, Option<Instant>) {
    let pid = cx.pid;
    let spare = cx.p.extra.as_mut().and_then(|x| x.spare_wake.take());
    let eligible = after >= SPARE_MIN && after + slack(after) <= MAX_DELAY;
    if let Some((t, fires)) = spare {
        if eligible && fires >= deadline && fires <= deadline + slack(after) {
            return (t, Some(fires));
        }
        drop(cx.shared.timers.cancel(t));
    }
    if !eligible {
        return (cx.shared.wake_after(after, pid), None);
    }
    let late = after + slack(after) / 2;
    (
        cx.shared.wake_after(late, pid),
        Some(deadline + slack(after) / 2),
    )
}

/// A finished timeout's timer, firing at `fires`: kept as the spare
/// (replacing an older one, which is cancelled).
fn keep_spare(cx: &mut StepCx<'_>, t: TimerRef, fires: Instant) {
    if let Some((old, _)) = cx.p.extra().spare_wake.replace((t, fires)) {
        drop(cx.shared.timers.cancel(old));
    }
}

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
    /// When `timer` fires, if it may become the process's spare (step 4).
    fires: Option<Instant>,
}

impl<F> Deadline<F> {
    pub(crate) fn new(pid: Pid, after: Duration, fut: F) -> Deadline<F> {
        Deadline {
            fut,
            pid,
            after,
            deadline: None,
            timer: None,
            fires: None,
        }
    }

    /// Done or dropped before the deadline (step 3): the timer is
    /// cancelled or kept as the spare (step 4).
    fn cancel(&mut self) {
        if let Some(t) = self.timer.take() {
            let fires = self.fires;
            with_polled_if(self.pid, |cx| match fires {
                Some(at) => keep_spare(cx, t, at),
                None => drop(cx.shared.timers.cancel(t)),
            });
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
                if let Some(d) = deadline {
                    let (t, fires) = with_cx(pid, |cx| arm(cx, d, after));
                    this.timer = Some(t);
                    this.fires = fires;
                }
                Poll::Pending
            }
            Some(Some(d)) if Instant::now() >= d => {
                if this.fires.is_some() {
                    // Armed past the deadline (step 4): it may not have
                    // fired yet, and is kept or cancelled.
                    this.cancel();
                } else {
                    this.timer = None; // fired
                }
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

#[cfg(all(test, not(loom), not(miri)))]
mod tests {
    use super::*;
    use crate::Builder;

    /// The process's spare (step 4), read from inside it.
    fn spare(pid: Pid) -> Option<TimerRef> {
        with_cx(pid, |cx| {
            cx.p.extra
                .as_ref()
                .and_then(|x| x.spare_wake.map(|(t, _)| t))
        })
    }

    /// A long timeout done first leaves its timer as the spare; the next
    /// one within its slack takes the same timer over (no new one), one
    /// beyond it gets a new timer and the old is cancelled.
    #[test]
    fn the_next_long_timeout_takes_the_same_timer_over() {
        let rt = Builder::default().workers(1).build().unwrap();
        let r = rt.block_on(|ctx| async move {
            let pid = ctx.pid();
            let once = || {
                let mut polled = false;
                std::future::poll_fn(move |cx| {
                    if polled {
                        return Poll::Ready(());
                    }
                    polled = true;
                    cx.waker().wake_by_ref();
                    Poll::Pending
                })
            };
            ctx.timeout(Duration::from_secs(60), once()).await.unwrap();
            let first = spare(pid).expect("kept");
            for _ in 0..10 {
                ctx.timeout(Duration::from_secs(60), once()).await.unwrap();
                assert_eq!(spare(pid), Some(first), "taken over, not set anew");
            }
            assert_eq!(ctx.handle().pending_timers(), 1);
            // 100 s ends past the 60 s timer's slack: a new timer.
            ctx.timeout(Duration::from_secs(100), once()).await.unwrap();
            let second = spare(pid).expect("kept");
            assert_ne!(second, first);
            assert_eq!(ctx.handle().pending_timers(), 1, "the first cancelled");
            true
        });
        assert_eq!(r, Ok(true));
    }
}
