//! Starting native processes from outside: [`Handle::spawn`] and
//! [`Runtime::block_on`], which runs a main process and waits for it.

use super::{pending_step, poll_process, Ctx, Native};
use crate::base::error::SpawnError;
use crate::sched::cx::StepCx;
use crate::sched::process::{Process, Step};
use crate::Priority;
use crate::{Handle, Pid, Reason, Runtime};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::Poll;

impl Handle {
    /// Spawn a native process: `f` gets the process's [`Ctx`] and returns
    /// its future. The process ends `Normal` when the future completes. A
    /// panic in `f` itself propagates to the caller (the process never
    /// existed; its slot is freed).
    pub fn spawn<F, Fut>(&self, f: F) -> Result<Pid, SpawnError>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.shared.spawn(
            Priority::Normal,
            None,
            |pid| Box::new(Native::new(f(Ctx::new(pid)))),
            |_, _| {},
        )
    }
}

/// A native process, as [`StepCx::spawn`] takes one: how a process of
/// another kind (the Lonala interpreter) starts an `async` Rust process,
/// e.g. linked to itself with [`crate::SpawnOpts`].
pub fn native_process<F, Fut>(f: F) -> impl FnOnce(Pid) -> Box<dyn Process>
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    move |pid| Box::new(Native::new(f(Ctx::new(pid))))
}

impl Runtime {
    /// Run `f` as a main process and wait for it: `Ok` with what its future
    /// returned, or `Err` with the reason it ended otherwise (a panic, a
    /// kill, an exit signal).
    ///
    /// # Panics
    /// When called from inside a process (it would wait for a process that
    /// needs the very worker it blocks), as tokio's `block_on` does.
    pub fn block_on<F, Fut, T>(&self, f: F) -> Result<T, Reason>
    where
        F: FnOnce(Ctx) -> Fut,
        Fut: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        if crate::sched::report::in_process() {
            panic!(
                "Runtime::block_on called from inside a Lona process; \
                 spawn the work and receive its result instead"
            );
        }
        let (main, result) = Main::new();
        let spawned = self.handle.shared.spawn(
            Priority::Normal,
            None,
            |pid| Box::new(main.with(f(Ctx::new(pid)))),
            |_, _| {},
        );
        if let Err(e) = spawned {
            return Err(Reason::custom(e));
        }
        result.wait()
    }
}

/// Where a main process leaves its result for [`Runtime::block_on`].
struct MainResult<T> {
    slot: Mutex<Option<Result<T, Reason>>>,
    cv: Condvar,
}

impl<T> MainResult<T> {
    fn set(&self, r: Result<T, Reason>) {
        let mut g = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(r);
            self.cv.notify_all();
        }
    }

    fn wait(&self) -> Result<T, Reason> {
        let mut g = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = g.take() {
                return r;
            }
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The main process of [`Runtime::block_on`](crate::Runtime::block_on).
struct Main<T, F = ()> {
    result: Arc<MainResult<T>>,
    fut: F,
    waker: super::waker::WakerCache,
}

impl<T> Main<T> {
    fn new() -> (Main<T>, Arc<MainResult<T>>) {
        let result = Arc::new(MainResult {
            slot: Mutex::new(None),
            cv: Condvar::new(),
        });
        (
            Main {
                result: result.clone(),
                fut: (),
                waker: Default::default(),
            },
            result,
        )
    }

    fn with<F>(self, fut: F) -> Main<T, F> {
        Main {
            result: self.result,
            fut,
            waker: self.waker,
        }
    }
}

impl<T: Send + 'static, F: Future<Output = T> + Send + 'static> Process for Main<T, F> {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        // SAFETY: pinned in its Box, as for `Native`.
        let fut = unsafe { Pin::new_unchecked(&mut self.fut) };
        match poll_process(cx, fut, &self.waker) {
            Poll::Ready(v) => {
                self.result.set(Ok(v));
                Step::Exit(Reason::Normal)
            }
            Poll::Pending => pending_step(cx),
        }
    }

    fn close(&mut self, reason: &Reason) {
        self.result.set(Err(reason.clone()));
    }
}
