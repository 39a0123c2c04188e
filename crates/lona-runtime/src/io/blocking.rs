//! The blocking pool: a few threads for work that blocks (files, standard
//! input), so no scheduler worker ever waits on a disk, as BEAM's dirty
//! I/O schedulers.
//!
//! 1. [`spawn_blocking`] (or [`run_detached`]) queues a job and, if no
//!    thread is idle and fewer than [`MAX_THREADS`] exist, starts one
//!    ("lona-blocking").
//! 2. A pool thread takes jobs in order; with none, it waits on the
//!    condition variable (no CPU).
//! 3. [`spawn_blocking`]'s future gets the job's result through a shared
//!    slot: the job stores it and wakes the waiting process, which is then
//!    queued as one a message reached. A job that panics gives an error.
//!
//! One pool per OS process, like the reactor: jobs belong to nobody, and a
//! job outliving its runtime just finishes. Written here because the
//! crates that offer this (tokio's `spawn_blocking`, `blocking`) come with
//! an executor of their own.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

/// The most pool threads.
pub const MAX_THREADS: usize = 16;

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    /// Queued jobs and idle threads; written by submitters and threads.
    state: Mutex<PoolState>,
    ready: Condvar,
}

struct PoolState {
    jobs: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

fn pool() -> &'static Pool {
    static P: OnceLock<Pool> = OnceLock::new();
    P.get_or_init(|| Pool {
        state: Mutex::new(PoolState {
            jobs: VecDeque::new(),
            threads: 0,
            idle: 0,
        }),
        ready: Condvar::new(),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the pool; nobody waits for it (it reports by itself, e.g.
/// by sending a message).
pub fn run_detached(f: impl FnOnce() + Send + 'static) {
    let p = pool();
    let mut st = lock(&p.state);
    st.jobs.push_back(Box::new(f));
    if st.idle == 0 && st.threads < MAX_THREADS {
        st.threads += 1;
        let n = st.threads;
        drop(st);
        let spawned = std::thread::Builder::new()
            .name(format!("lona-blocking-{n}"))
            .spawn(|| work(pool()));
        if spawned.is_err() {
            // The job waits for a thread that exists (or the next spawn).
            lock(&p.state).threads -= 1;
        }
    } else {
        drop(st);
        p.ready.notify_one();
    }
}

fn work(p: &'static Pool) {
    loop {
        let job = {
            let mut st = lock(&p.state);
            loop {
                if let Some(j) = st.jobs.pop_front() {
                    break j;
                }
                st.idle += 1;
                st = p.ready.wait(st).unwrap_or_else(|e| e.into_inner());
                st.idle -= 1;
            }
        };
        // A panicking job ends only itself (its slot reports the panic).
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

/// The future of [`spawn_blocking`].
#[must_use = "futures do nothing unless awaited"]
pub struct Blocking<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

struct Slot<T> {
    value: Option<std::thread::Result<T>>,
    waker: Option<Waker>,
}

/// Runs `f` on the pool; the future gives its result (an error of kind
/// `Other` if it panicked). The process awaiting it waits as in
/// `receive`.
pub fn spawn_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Blocking<T> {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
    }));
    let s = slot.clone();
    run_detached(move || {
        let v = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let w = {
            let mut g = lock(&s);
            g.value = Some(v);
            g.waker.take()
        };
        if let Some(w) = w {
            w.wake();
        }
    });
    Blocking { slot }
}

impl<T> Future for Blocking<T> {
    type Output = std::io::Result<T>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut g = lock(&self.slot);
        match g.value.take() {
            Some(Ok(v)) => Poll::Ready(Ok(v)),
            Some(Err(_)) => Poll::Ready(Err(std::io::Error::other("a blocking job panicked"))),
            None => {
                g.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
