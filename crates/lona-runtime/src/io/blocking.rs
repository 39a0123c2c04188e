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
    P.get_or_init(Pool::new)
}

impl Pool {
    fn new() -> Pool {
        Pool {
            state: Mutex::new(PoolState {
                jobs: VecDeque::new(),
                threads: 0,
                idle: 0,
            }),
            ready: Condvar::new(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the pool; nobody waits for it (it reports by itself, e.g.
/// by sending a message). An error, with `f` dropped unrun, only when no
/// pool thread exists and the system refuses to start one (out of memory
/// or threads, e.g. under an address-space limit): the caller answers
/// the error instead of waiting for a job that would never run.
pub fn run_detached(f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    pool().submit(Box::new(f), |n| {
        std::thread::Builder::new()
            .name(format!("lona-blocking-{n}"))
            .spawn(|| work(pool()))
            .map(drop)
    })
}

impl Pool {
    /// [`run_detached`] on this pool, starting a thread with `spawn` (given
    /// the thread's number) when none is idle.
    fn submit(
        &self,
        job: Job,
        spawn: impl FnOnce(usize) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut st = lock(&self.state);
        if st.idle == 0 && st.threads < MAX_THREADS {
            st.threads += 1;
            let n = st.threads;
            drop(st);
            let spawned = spawn(n);
            st = lock(&self.state);
            if let Err(e) = spawned {
                st.threads -= 1;
                if st.threads == 0 {
                    return Err(e);
                }
                // The job waits for a thread that exists (or the next spawn).
            }
        }
        st.jobs.push_back(job);
        drop(st);
        self.ready.notify_one();
        Ok(())
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
    /// The job never started: no pool thread could be.
    refused: Option<std::io::Error>,
}

struct Slot<T> {
    value: Option<std::thread::Result<T>>,
    waker: Option<Waker>,
}

/// Runs `f` on the pool; the future gives its result (an error of kind
/// `Other` if it panicked, or the system's error if no pool thread could
/// be started: see [`run_detached`]). The process awaiting it waits as in
/// `receive`.
pub fn spawn_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Blocking<T> {
    let slot = Arc::new(Mutex::new(Slot {
        value: None,
        waker: None,
    }));
    let s = slot.clone();
    let started = run_detached(move || {
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
    let refused = started.err();
    Blocking { slot, refused }
}

impl<T> Future for Blocking<T> {
    type Output = std::io::Result<T>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(e) = self.refused.take() {
            return Poll::Ready(Err(e));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

    /// The system refuses the first thread: the job is handed back as an
    /// error (dropped, never run), not queued for a thread that never
    /// comes; with a thread running, a refused extra one only delays.
    #[test]
    fn a_refused_first_thread_is_an_error_not_a_hang() {
        let p = Pool::new();
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let refuse = |_| Err(std::io::Error::from(std::io::ErrorKind::OutOfMemory));
        let e = p.submit(Box::new(move || r.store(true, SeqCst)), refuse);
        assert_eq!(
            e.map_err(|e| e.kind()),
            Err(std::io::ErrorKind::OutOfMemory)
        );
        let st = lock(&p.state);
        assert_eq!((st.threads, st.jobs.len()), (0, 0));
        drop(st);
        assert!(!ran.load(SeqCst));
        // One thread exists (pretend: started, busy): a refused second one
        // leaves the job queued for it.
        lock(&p.state).threads = 1;
        p.submit(Box::new(|| {}), refuse).unwrap();
        let st = lock(&p.state);
        assert_eq!((st.threads, st.jobs.len()), (1, 1));
    }

    /// `spawn_blocking`'s future reports the refusal at once.
    #[test]
    fn a_refused_job_future_is_ready_with_the_error() {
        let mut b = Blocking::<u8> {
            slot: Arc::new(Mutex::new(Slot {
                value: None,
                waker: None,
            })),
            refused: Some(std::io::Error::from(std::io::ErrorKind::OutOfMemory)),
        };
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut b).poll(&mut cx) {
            Poll::Ready(Err(e)) => assert_eq!(e.kind(), std::io::ErrorKind::OutOfMemory),
            _ => panic!("not ready with the error"),
        }
    }
}
