//! [`Builder`]: configuring and starting a [`Runtime`]: its worker
//! threads (default: one per core) and its timer thread.

use crate::handle::Handle;
use crate::idle::Idle;
use crate::priority::Urgent;
use crate::reclaim::Reclaimer;
use crate::registry::Registry;
use crate::runtime::Runtime;
use crate::shared::Shared;
use crate::stats::WorkerLoad;
use crate::table::Table;
use crate::timer::Timers;
use crate::worker::WorkerCore;
use crossbeam_deque::{Injector, Worker as Deque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The default process limit (`docs/design.md`, D4).
pub const DEFAULT_PROCESS_LIMIT: usize = 1 << 20;

/// The default stack size of worker threads: generous, because a native
/// process runs on its worker's stack and a stack overflow aborts the whole
/// program (Rust cannot recover from one). Lonala processes keep their
/// frames on their own heaps and need little.
pub const DEFAULT_STACK_SIZE: usize = 16 << 20;

/// Configures and starts a [`Runtime`].
#[derive(Clone, Debug)]
pub struct Builder {
    workers: usize,
    process_limit: usize,
    shutdown_timeout: Duration,
    stack_size: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            process_limit: DEFAULT_PROCESS_LIMIT,
            shutdown_timeout: Duration::from_secs(5),
            stack_size: DEFAULT_STACK_SIZE,
        }
    }
}

impl Builder {
    /// Number of worker threads (default: available cores; at least 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n.max(1);
        self
    }

    /// Most processes alive at once (default 1,048,576); spawning past it
    /// fails with [`SpawnError::SystemLimit`](crate::SpawnError::SystemLimit). At least 1, at most
    /// [`MAX_PROCESS_LIMIT`](crate::MAX_PROCESS_LIMIT) (larger values are
    /// lowered to it).
    pub fn process_limit(mut self, n: usize) -> Self {
        self.process_limit = n.clamp(1, crate::MAX_PROCESS_LIMIT);
        self
    }

    /// How long shutdown waits for processes to stop before killing them.
    pub fn shutdown_timeout(mut self, d: Duration) -> Self {
        self.shutdown_timeout = d;
        self
    }

    /// Stack size of each worker thread (default [`DEFAULT_STACK_SIZE`],
    /// 16 MiB; at least 64 KiB). Native processes run on it: a recursion
    /// deeper than it allows overflows the stack, which aborts the whole
    /// program (Rust cannot unwind from a stack overflow).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = bytes.max(64 << 10);
        self
    }

    /// Start the runtime's threads.
    pub fn build(self) -> std::io::Result<Runtime> {
        let deques: Vec<Deque<u32>> = (0..self.workers).map(|_| Deque::new_fifo()).collect();
        let (idle, parkers) = Idle::new(self.workers);
        let shared = Arc::new(Shared {
            table: Table::new(self.process_limit, self.workers),
            injector: Injector::new(),
            urgent: Urgent::new(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            idle,
            timers: Timers::new(),
            registry: Registry::default(),
            stop: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
            exit_lock: Mutex::new(()),
            exit_cv: Condvar::new(),
            workers: self.workers,
            epoch: Instant::now(),
            loads: (0..self.workers).map(|_| WorkerLoad::default()).collect(),
            reclaimer: Reclaimer::new(),
        });
        crate::report::install_hook();
        let mut rt = Runtime {
            handle: Handle {
                shared: shared.clone(),
            },
            workers: Vec::new(),
            timer: None,
            reclaimer: None,
            shutdown_timeout: self.shutdown_timeout,
            running_workers: Arc::new(AtomicUsize::new(0)),
            hook_installed: true,
        };
        for (i, (deque, parker)) in deques.into_iter().zip(parkers).enumerate() {
            let core = WorkerCore::new(i, shared.clone(), deque);
            let running = rt.running_workers.clone();
            // SeqCst: a plain counter read by `running_workers`; no data
            // is published through it.
            running.fetch_add(1, SeqCst);
            let h = std::thread::Builder::new()
                .name(format!("lona-worker-{i}"))
                .stack_size(self.stack_size)
                .spawn(move || {
                    // Counted down however the thread ends.
                    struct Running(Arc<AtomicUsize>);
                    impl Drop for Running {
                        fn drop(&mut self) {
                            // SeqCst: a counter (see `running_workers`).
                            self.0.fetch_sub(1, SeqCst);
                        }
                    }
                    let _running = Running(running);
                    core.run(&parker);
                });
            match h {
                Ok(h) => rt.workers.push(h),
                Err(e) => {
                    // SeqCst: a counter (see `running_workers`).
                    rt.running_workers.fetch_sub(1, SeqCst);
                    return Err(e);
                }
            }
        }
        let s = shared.clone();
        rt.reclaimer = Some(
            std::thread::Builder::new()
                .name("lona-reclaim".into())
                .spawn(move || s.reclaimer.run())?,
        );
        let s = shared.clone();
        rt.timer = Some(
            std::thread::Builder::new()
                .name("lona-timer".into())
                .spawn(move || s.timers.run(|to, node| s.deliver_timer(to, node)))?,
        );
        Ok(rt)
    }
}
