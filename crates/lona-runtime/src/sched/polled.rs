//! The [`StepCx`] of the process being polled on this thread: while a body
//! polls futures with its `StepCx` published here ([`publish`]: the native
//! layer's `poll_process` does), code that has no `StepCx` in hand reaches it
//! through [`with_polled`]: the native layer's `Ctx` calls, and the
//! sockets of `io`, which charge their process a reduction per operation.
//!
//! The pointer is taken out of the thread-local while a caller uses it,
//! so no two callers can alias it (a `Ctx` call inside a receive
//! predicate finds nothing and says so).

use crate::sched::cx::StepCx;
use crate::Pid;
use std::cell::Cell;

thread_local! {
    /// The `StepCx` being polled on this thread (erased lifetime; valid for
    /// the duration of the poll), or null.
    static POLLED: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
}

/// Puts the thread-local back as it was when dropped.
pub(crate) struct Restore(*mut ());

impl Drop for Restore {
    fn drop(&mut self) {
        POLLED.with(|c| c.set(self.0));
    }
}

/// Publishes `cx` as the `StepCx` being polled on this thread until the
/// returned guard drops. Only a raw pointer is kept: from here until the
/// guard drops, the `StepCx` must be reached only through this module (no
/// reference to it may be alive across the poll; Miri, Tree Borrows).
#[inline]
pub(crate) fn publish(cx: &mut StepCx<'_>) -> Restore {
    Restore(POLLED.with(|c| c.replace(cx as *mut StepCx<'_> as *mut ())))
}

/// Runs `f` with the `StepCx` of whichever process is being polled on this
/// thread, if any (`None`: none is, e.g. a future polled by another
/// executor, or a call from inside a caller that holds it).
#[inline]
pub(crate) fn with_polled<R>(f: impl FnOnce(&mut StepCx<'_>) -> R) -> Option<R> {
    let p = POLLED.with(|c| c.replace(std::ptr::null_mut()));
    if p.is_null() {
        return None;
    }
    let _restore = Restore(p);
    // SAFETY: published by `publish` as a live `StepCx` for the duration of
    // the poll on this thread, and taken out of the thread-local so no
    // other caller can alias it while `f` runs.
    Some(f(unsafe { &mut *(p as *mut StepCx<'static>) }))
}

/// [`with_polled`], only if the `StepCx` being polled is `pid`'s (for
/// destructors, which must not panic).
pub(crate) fn with_polled_if(pid: Pid, f: impl FnOnce(&mut StepCx<'_>)) {
    let p = POLLED.with(|c| c.get());
    if p.is_null() {
        return;
    }
    // SAFETY: as in `with_polled`; the pointer is taken out for the call.
    let cx = unsafe { &mut *(p as *mut StepCx<'static>) };
    if cx.pid == pid {
        POLLED.with(|c| c.set(std::ptr::null_mut()));
        let _restore = Restore(p);
        f(cx);
    }
}
