//! Wakers: the process is its futures' waker. A poll hands out a
//! borrowed waker pointing at the worker's stack (no allocation for the
//! common case of a future that never clones it); cloning it makes an
//! owned, reference-counted one that holds the runtime weakly, so a waker
//! kept past shutdown wakes nothing.

use crate::sched::cx::StepCx;
use crate::sched::shared::Shared;
use crate::Pid;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Weak};
use std::task::{Context, RawWaker, RawWakerVTable, Waker};

struct WakeTarget {
    shared: Weak<Shared>,
    pid: Pid,
}

/// The borrowed waker handed to a poll: points at a `BorrowedWake` on the
/// worker's stack. Cloning it makes an owned, reference-counted waker.
struct BorrowedWake {
    shared: *const Shared,
    arc: *const (),
    pid: Pid,
}

static BORROWED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(borrowed_clone, borrowed_wake, borrowed_wake, borrowed_drop);
static OWNED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(owned_clone, owned_wake, owned_wake_by_ref, owned_drop);

unsafe fn borrowed_clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` is a live BorrowedWake during the poll.
    let b = unsafe { &*(data as *const BorrowedWake) };
    // SAFETY: `arc` came from Arc::as_ptr of the worker's Arc<Shared>, alive.
    let arc = unsafe {
        Arc::increment_strong_count(b.arc as *const Shared);
        Arc::from_raw(b.arc as *const Shared)
    };
    let target = Arc::new(WakeTarget {
        shared: Arc::downgrade(&arc),
        pid: b.pid,
    });
    RawWaker::new(Arc::into_raw(target) as *const (), &OWNED_VTABLE)
}
unsafe fn borrowed_wake(data: *const ()) {
    // SAFETY: as above.
    let b = unsafe { &*(data as *const BorrowedWake) };
    // SAFETY: the shared state outlives the poll.
    unsafe { (*b.shared).wake(b.pid) }
}
unsafe fn borrowed_drop(_: *const ()) {}

unsafe fn owned_clone(data: *const ()) -> RawWaker {
    // SAFETY: data is an Arc<WakeTarget> we hold a count of.
    unsafe { Arc::increment_strong_count(data as *const WakeTarget) };
    RawWaker::new(data, &OWNED_VTABLE)
}
unsafe fn owned_wake(data: *const ()) {
    // SAFETY: consumes our count.
    let t = unsafe { Arc::from_raw(data as *const WakeTarget) };
    if let Some(s) = t.shared.upgrade() {
        s.wake(t.pid);
    }
}
unsafe fn owned_wake_by_ref(data: *const ()) {
    // SAFETY: borrowed count.
    let t = unsafe { &*(data as *const WakeTarget) };
    if let Some(s) = t.shared.upgrade() {
        s.wake(t.pid);
    }
}
unsafe fn owned_drop(data: *const ()) {
    // SAFETY: releases our count.
    drop(unsafe { Arc::from_raw(data as *const WakeTarget) });
}

/// What a poll's waker needs, copied out of the process's `StepCx`.
pub(super) struct WakeData(BorrowedWake);

impl WakeData {
    pub(super) fn of(cx: &StepCx<'_>) -> WakeData {
        WakeData(BorrowedWake {
            shared: cx.shared,
            arc: Arc::as_ptr(&cx.worker.shared) as *const (),
            pid: cx.pid,
        })
    }

    /// Run `f` with a `Context` whose waker wakes the process.
    pub(super) fn with_waker<R>(&self, f: impl FnOnce(&mut Context<'_>) -> R) -> R {
        // SAFETY: the vtable's functions uphold the RawWaker contract for
        // the `BorrowedWake`, which outlives the waker (ManuallyDrop: never
        // dropped as owned).
        let waker = ManuallyDrop::new(unsafe {
            Waker::from_raw(RawWaker::new(
                &self.0 as *const BorrowedWake as *const (),
                &BORROWED_VTABLE,
            ))
        });
        f(&mut Context::from_waker(&waker))
    }
}
