//! Native processes: plain `async` Rust, driven by the scheduler, as one
//! implementation of [`Process`](crate::Process).
//!
//! A native process is a future; [`Native`] polls it as its step. Inside, a
//! [`Ctx`] (given to the spawn closure) is the process's handle on the
//! runtime: a thin `async` layer over [`StepCx`], where every operation and
//! its rules live.
//!
//! # Floor
//! Above `node`: uses `base`, `sched` (`StepCx`, `Process`, the polled `StepCx`),
//! `rules` (the reply messages) and `node` (`Handle::spawn`,
//! `Runtime::block_on`); nothing uses it but the crate's public API.
//!
//! # Files
//! - `ctx.rs`: [`Ctx`], the API;
//! - `receive.rs`: the futures behind `receive` and friends;
//! - `waker.rs`: the wakers a poll hands out (the process is the waker);
//! - `spawn.rs`: `Handle::spawn` and `Runtime::block_on`;
//! - `timeout.rs`: `Ctx::timeout`, a future bounded by a runtime timer,
//!   and `Ctx::sleep`.
//!
//! # Reductions (`docs/design.md`, D6)
//! Every `Ctx` call is an `await` point and is charged reductions; when the
//! slice's 2,000 are spent, the call's `await` yields to the scheduler, the way
//! tokio's cooperative budget works, and the process continues in a later
//! slice, behind every other runnable process. A native loop that never
//! calls the runtime can be neither preempted nor killed: Rust has no safe
//! way to interrupt it. Give such a loop `ctx.charge(1).await` now and then.
//!
//! # Operations take effect when called
//! Every operation of `Ctx` (send, link, unlink, monitor, demonitor,
//! exit, send_exit, register, spawn, timers, trap_exit, aliases, the
//! requests of `is_alive` and `process_info`) acts at the call, and the
//! future it returns only hands back the result: `let _ = ctx.link(p);`
//! links. Awaiting it is the operation's `await` point: when the call
//! spent the slice's last reduction, the future yields once first, so a
//! loop of operations is still preempted (one reduction late at most).
//! Only the calls that wait are lazy, as their names say: `receive` and
//! friends, `charge`, `yield_now`, `sleep`, and the reply half of
//! `is_alive` and `process_info`.
//!
//! # How calls reach the runtime
//! While a worker polls a native process, a thread-local points at the
//! process's [`StepCx`] (`sched::polled`). `Ctx` methods use it, so none can run inside a
//! receive predicate (the receive holds the `StepCx`: such a call panics with
//! a clear message) or outside the process's own poll. A `Ctx` is not `Clone`:
//! a child cannot capture its parent's (it gets its own), and a `Ctx` moved
//! into another process anyway panics with a clear message when used there.
//! The future must be polled by Lona only: awaiting futures of other
//! executors (tokio I/O) is not supported, but futures that just need a
//! waker (channels, oneshots) work, with the process as their waker.

mod ctx;
mod receive;
mod spawn;
mod timeout;
mod waker;

pub use ctx::Ctx;
pub use receive::{Charge, ExitNow, Receive, ReceiveTimeout, YieldNow};
pub use spawn::native_process;
pub use timeout::{Deadline, Elapsed, Sleep};

use crate::sched::cx::StepCx;
use crate::sched::polled;
use crate::sched::process::{Process, Step};
use crate::{Pid, Reason};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Run `f` with the current process's `StepCx`, checking it is `pid`'s.
#[inline]
pub(crate) fn with_cx<R>(pid: Pid, f: impl FnOnce(&mut StepCx<'_>) -> R) -> R {
    let r = polled::with_polled(|cx| {
        assert_eq!(cx.pid, pid, "a Ctx was used outside its own process");
        f(cx)
    });
    match r {
        Some(r) => r,
        None => panic!("a Lona runtime call was made outside its process"),
    }
}

/// Poll `fut` as the body of the process running in `cx`, whose owned
/// waker is kept in `cache` (beside `fut`, in the process's body).
fn poll_process<F: Future>(
    cx: &mut StepCx<'_>,
    fut: Pin<&mut F>,
    cache: &waker::WakerCache,
) -> Poll<F::Output> {
    // The waker's data is taken from `cx` first: from the moment the raw
    // pointer is published below, the future reaches the `StepCx` only through
    // it, so no reference to `cx` may be alive across the poll (Miri, Tree
    // Borrows, caught one passed to the waker's function).
    let wake = waker::WakeData::of(cx, cache);
    let _published = polled::publish(cx);
    wake.with_waker(|context| fut.poll(context))
}

fn pending_step(cx: &StepCx<'_>) -> Step {
    if cx.yielded {
        Step::Yield
    } else {
        Step::Wait
    }
}

/// A native process: a future ending `Normal` when it completes.
pub(crate) struct Native<F> {
    fut: F,
    waker: waker::WakerCache,
}

impl<F> Native<F> {
    pub(crate) fn new(fut: F) -> Native<F> {
        Native {
            fut,
            waker: waker::WakerCache::new(),
        }
    }
}

impl<F: Future<Output = ()> + Send + 'static> Process for Native<F> {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        // SAFETY: a process lives in a Box that is never moved out of
        // (only the Box pointer moves), so `fut` is pinned in place.
        let fut = unsafe { Pin::new_unchecked(&mut self.fut) };
        match poll_process(cx, fut, &self.waker) {
            Poll::Ready(()) => Step::Exit(Reason::Normal),
            Poll::Pending => pending_step(cx),
        }
    }
}
