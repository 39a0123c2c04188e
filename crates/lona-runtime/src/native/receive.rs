//! The futures behind [`Ctx`](super::Ctx)'s calls: receive (by type, by
//! predicate, with a timeout), charge, yield, exit, and `Done`, what every
//! other call returns once its operation has taken effect (the result and
//! the call's await point).

use super::with_cx;
use crate::base::envelope::Envelope;
use crate::sched::cx::{Scan, StepCx};
use crate::sched::polled::with_polled_if;
use crate::sched::timer::TimerRef;
use crate::Pid;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// What is left of a runtime operation once it was called: the operation
/// took effect at the call (module doc of `native`, "Operations take
/// effect when called"); awaiting this only hands back its result, after
/// yielding once if the call spent the slice's last reduction. The common
/// path (budget left) completes without touching the runtime.
pub(crate) struct Done<R> {
    pub(crate) pid: Pid,
    pub(crate) value: Option<R>,
    /// The call left no budget: yield once before completing.
    pub(crate) yield_first: bool,
    /// The call ended this process (an exit signal to itself): never
    /// complete; the worker ends the process when the step returns.
    pub(crate) halt: bool,
}

// Nothing is pinned (the value is moved out to complete).
impl<R> Unpin for Done<R> {}

impl<R> Done<R> {
    /// Run `f` on `pid`'s [`StepCx`] now (which charges it) and keep its result.
    #[inline]
    pub(crate) fn call(pid: Pid, f: impl FnOnce(&mut StepCx<'_>) -> R) -> Done<R> {
        with_cx(pid, |cx| {
            let value = f(cx);
            Done {
                pid,
                value: Some(value),
                yield_first: cx.budget == 0,
                halt: false,
            }
        })
    }
}

impl<R> Future for Done<R> {
    type Output = R;
    #[inline]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<R> {
        if self.halt {
            return Poll::Pending;
        }
        if self.yield_first {
            self.yield_first = false;
            with_cx(self.pid, |cx| cx.yielded = true);
            return Poll::Pending;
        }
        Poll::Ready(self.value.take().expect("polled after completion"))
    }
}

/// Future of [`Ctx::charge`](super::Ctx::charge).
#[must_use = "futures do nothing unless awaited"]
pub struct Charge {
    pub(crate) pid: Pid,
    pub(crate) n: u32,
}

impl Future for Charge {
    type Output = ();
    #[inline]
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let n = self.n;
        with_cx(self.pid, |cx| {
            if cx.charge(n) {
                Poll::Ready(())
            } else {
                cx.yielded = true;
                Poll::Pending
            }
        })
    }
}

/// Future of [`Ctx::yield_now`](super::Ctx::yield_now).
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    pub(crate) pid: Pid,
    pub(crate) done: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.done {
            return Poll::Ready(());
        }
        self.done = true;
        with_cx(self.pid, |cx| {
            cx.charge_op();
            cx.yielded = true;
        });
        Poll::Pending
    }
}

/// Future of [`Ctx::exit`](super::Ctx::exit): never completes. The exit
/// was decided when `exit` was called; awaiting this stops the process's
/// code there, and the process ends when its step returns.
#[must_use = "the process goes on running until this is awaited"]
pub struct ExitNow {
    pub(crate) _pid: Pid,
}

impl Future for ExitNow {
    type Output = Infallible;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Infallible> {
        Poll::Pending
    }
}

/// The state of one receive: its id (for the mailbox cursor) and timer.
pub(crate) struct RecvCore {
    pid: Pid,
    timeout: Option<Duration>,
    /// The armed timeout: its token and timer.
    timer: Option<(u32, TimerRef)>,
    /// This receive's id (0 until first polled).
    id: u32,
}

impl RecvCore {
    pub(crate) fn new(pid: Pid, timeout: Option<Duration>) -> RecvCore {
        RecvCore {
            pid,
            id: 0,
            // Longer than `MAX_DELAY` never expires: the same as none.
            timeout: timeout.filter(|d| *d <= crate::MAX_DELAY),
            timer: None,
        }
    }

    /// `Ready(Some)` with a match, `Ready(None)` on timeout.
    fn poll<T: Send + 'static>(&mut self, mut pred: impl FnMut(&T) -> bool) -> Poll<Option<T>> {
        with_cx(self.pid, |cx| {
            if cx.budget == 0 {
                cx.yielded = true;
                return Poll::Pending;
            }
            cx.charge_op();
            if self.id == 0 {
                self.id = cx.new_receive() as u32;
            }
            cx.drain();
            if cx.exiting() {
                return Poll::Pending;
            }
            let any = std::any::TypeId::of::<T>() == std::any::TypeId::of::<Envelope>();
            let scan = cx.take_message(self.id as u64, |e| {
                if any {
                    // SAFETY: T is Envelope (checked above).
                    pred(unsafe { &*(e as *const Envelope as *const T) })
                } else {
                    e.downcast_ref::<T>().is_some_and(&mut pred)
                }
            });
            match scan {
                Scan::Found(e) => {
                    if let Some((_, t)) = self.timer.take() {
                        cx.cancel_receive_timer(t);
                    }
                    let value = if any {
                        // SAFETY: T is Envelope; move it across the identical type.
                        let e = ManuallyDrop::new(e);
                        // SAFETY: `any` means T is Envelope: the same type, read once
                        // from a value that is not dropped.
                        unsafe { std::ptr::read(&*e as *const Envelope as *const T) }
                    } else {
                        match e.downcast::<T>() {
                            Ok(v) => v,
                            Err(_) => unreachable!("type checked by the predicate"),
                        }
                    };
                    return Poll::Ready(Some(value));
                }
                Scan::OutOfBudget => {
                    cx.yielded = true;
                    return Poll::Pending;
                }
                Scan::NotFound => {}
            }
            match (self.timeout, self.timer) {
                (None, _) => Poll::Pending,
                (Some(d), None) if d.is_zero() => Poll::Ready(None),
                (Some(d), None) => {
                    self.timer = cx
                        .start_receive_timer(d)
                        .map(|(token, t)| (token as u32, t));
                    Poll::Pending
                }
                (Some(_), Some((token, _))) => {
                    if cx.timed_out(token as u64) {
                        self.timer = None;
                        Poll::Ready(None)
                    } else {
                        Poll::Pending
                    }
                }
            }
        })
    }
}

impl Drop for RecvCore {
    fn drop(&mut self) {
        let Some((_, t)) = self.timer.take() else {
            return;
        };
        // Cancel if we are still inside our process; otherwise the process
        // is ending and its exit path cancels every timer aimed at it.
        with_polled_if(self.pid, |cx| cx.cancel_receive_timer(t));
    }
}

/// Future of [`Ctx::receive`](super::Ctx::receive) and
/// [`Ctx::receive_where`](super::Ctx::receive_where).
#[must_use = "futures do nothing unless awaited"]
pub struct Receive<T, F> {
    pub(crate) core: RecvCore,
    pub(crate) pred: F,
    pub(crate) _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static, F: FnMut(&T) -> bool + Unpin> Future for Receive<T, F> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        match this.core.poll(&mut this.pred) {
            Poll::Ready(Some(v)) => Poll::Ready(v),
            _ => Poll::Pending,
        }
    }
}

/// Future of the receives with a timeout: `None` when it expired.
#[must_use = "futures do nothing unless awaited"]
pub struct ReceiveTimeout<T, F> {
    pub(crate) core: RecvCore,
    pub(crate) pred: F,
    pub(crate) _t: PhantomData<fn() -> T>,
}

impl<T: Send + 'static, F: FnMut(&T) -> bool + Unpin> Future for ReceiveTimeout<T, F> {
    type Output = Option<T>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        this.core.poll(&mut this.pred)
    }
}
