//! Wakers: the process is its futures' waker. A poll hands out a
//! borrowed waker pointing at the worker's stack (no allocation for the
//! common case of a future that never clones it); cloning it hands out the
//! process's owned, reference-counted waker, which holds the runtime
//! weakly, so a waker kept past shutdown wakes nothing. That owned waker
//! is made at the process's first clone and kept in the process
//! ([`WakerCache`]) for its life: a process waiting on a socket again and
//! again (each wait registers a clone with the reactor) counts, it does not
//! allocate.

use crate::sched::cx::StepCx;
use crate::sched::shared::Shared;
use crate::Pid;
use std::cell::OnceCell;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Weak};
use std::task::{Context, RawWaker, RawWakerVTable, Waker};

pub(super) struct WakeTarget {
    shared: Weak<Shared>,
    pid: Pid,
}

/// A process's owned waker, made at its first clone (module doc). Kept in
/// the process's body (`Native`, `Main`), which lives in a box that does
/// not move while it is polled.
pub(super) type WakerCache = OnceCell<Arc<WakeTarget>>;

/// The borrowed waker handed to a poll: points at a `BorrowedWake` on the
/// worker's stack. Cloning it hands out the process's owned waker.
struct BorrowedWake {
    shared: *const Shared,
    arc: *const (),
    pid: Pid,
    /// The polled process's cache; only read (through a shared
    /// reference) by `borrowed_clone`, during the poll.
    cache: *const WakerCache,
}

static BORROWED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(borrowed_clone, borrowed_wake, borrowed_wake, borrowed_drop);
static OWNED_VTABLE: RawWakerVTable =
    RawWakerVTable::new(owned_clone, owned_wake, owned_wake_by_ref, owned_drop);

unsafe fn borrowed_clone(data: *const ()) -> RawWaker {
    // SAFETY: `data` is a live BorrowedWake during the poll.
    let b = unsafe { &*(data as *const BorrowedWake) };
    // SAFETY: `cache` points into the polled process's body, which is
    // alive and not moved during the poll (`WakeData::of`); nothing else
    // reaches the cache meanwhile, and this only takes a shared reference.
    let cache = unsafe { &*b.cache };
    let target = cache.get_or_init(|| {
        // SAFETY: `arc` came from Arc::as_ptr of the worker's Arc<Shared>,
        // alive during the poll; the count taken here is the `Arc` below.
        let arc = unsafe {
            Arc::increment_strong_count(b.arc as *const Shared);
            Arc::from_raw(b.arc as *const Shared)
        };
        Arc::new(WakeTarget {
            shared: Arc::downgrade(&arc),
            pid: b.pid,
        })
    });
    RawWaker::new(
        Arc::into_raw(Arc::clone(target)) as *const (),
        &OWNED_VTABLE,
    )
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
    /// `cache` must be the polled process's own, in its body, alive and
    /// unmoved for as long as this `WakeData`'s wakers are polled with.
    pub(super) fn of(cx: &StepCx<'_>, cache: &WakerCache) -> WakeData {
        WakeData(BorrowedWake {
            shared: cx.shared,
            arc: Arc::as_ptr(&cx.worker.shared) as *const (),
            pid: cx.pid,
            cache,
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
