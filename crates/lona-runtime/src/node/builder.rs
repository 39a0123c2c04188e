//! [`Builder`]: configuring and starting a [`Runtime`]: its worker
//! threads (default: one per core) and its timer thread; also
//! [`Runtime::new`] and [`Runtime::builder`], which start from a `Builder`.

use crate::base::priority::Urgent;
use crate::base::reclaim::Reclaimer;
use crate::node::handle::Handle;
use crate::node::runtime::Runtime;
use crate::sched::idle::Idle;
use crate::sched::load::WorkerLoad;
use crate::sched::process::Table;
use crate::sched::registry::Registry;
use crate::sched::shared::Shared;
use crate::sched::timer::Timers;
use crate::sched::worker::{IdleHook, WorkerCore};
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
#[derive(Clone)]
pub struct Builder {
    workers: usize,
    process_limit: usize,
    shutdown_timeout: Duration,
    stack_size: usize,
    pin_workers: bool,
    on_idle: Option<IdleHook>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("workers", &self.workers)
            .field("process_limit", &self.process_limit)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("stack_size", &self.stack_size)
            .field("pin_workers", &self.pin_workers)
            .field("on_idle", &self.on_idle.as_ref().map(|h| h.after))
            .finish()
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            process_limit: DEFAULT_PROCESS_LIMIT,
            shutdown_timeout: Duration::from_secs(5),
            stack_size: DEFAULT_STACK_SIZE,
            pin_workers: false,
            on_idle: None,
        }
    }
}

impl Runtime {
    /// A runtime with default settings.
    pub fn new() -> std::io::Result<Runtime> {
        Builder::default().build()
    }

    /// Configure one.
    pub fn builder() -> Builder {
        Builder::default()
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

    /// Pin each worker thread to one core (default: off): worker `i` to
    /// the `i mod n`-th of the `n` cores this program may run on (its CPU
    /// affinity when the runtime is built), at the thread's start. A
    /// worker then keeps its caches and is never moved by the operating
    /// system, which may help when the workers are no more than the cores
    /// and nothing else competes for them, and hurts when something does.
    /// Where pinning is not possible (no affinity API on the platform, or
    /// the system refuses), the workers run unpinned, as by default; that
    /// is logged at debug level, never an error.
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.pin_workers = pin;
        self
    }

    /// Runs `f` on a worker thread that has found no work for `after`,
    /// once per such idle period (it runs again only after the worker ran
    /// a process and went idle anew): the place to give memory back to the
    /// system where it costs nothing, e.g. an allocator's collection of
    /// the pages its thread freed, which an idle thread never makes. A
    /// worker is back to work as soon as `f` returns; a panic in `f` is
    /// logged and the worker goes on. Each worker runs it for itself, so
    /// it must be safe to run on several threads at once.
    pub fn on_idle(mut self, after: Duration, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_idle = Some(IdleHook {
            after,
            run: Arc::new(f),
        });
        self
    }

    /// Start the runtime's threads.
    pub fn build(self) -> std::io::Result<Runtime> {
        // The cores the workers are pinned to (none: not pinned).
        let cores: Vec<core_affinity::CoreId> = if self.pin_workers {
            let ids = core_affinity::get_core_ids().unwrap_or_default();
            if ids.is_empty() {
                log::debug!("lona: cannot list the cores; the workers are not pinned");
            }
            ids
        } else {
            Vec::new()
        };
        let deques: Vec<Deque<u32>> = (0..self.workers).map(|_| Deque::new_fifo()).collect();
        let (idle, parkers) = Idle::new(self.workers);
        let shared = Arc::new(Shared {
            table: Table::new(self.process_limit, self.workers),
            injector: Injector::new(),
            urgent: Urgent::new(),
            stealers: deques.iter().map(|d| d.stealer()).collect(),
            open: (0..self.workers).map(|_| Default::default()).collect(),
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
            rules: crate::rules::links::RULES,
        });
        crate::node::visit::register(&shared);
        crate::sched::report::install_hook();
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
            let mut core = WorkerCore::new(i, shared.clone(), deque);
            core.on_idle = self.on_idle.clone();
            let running = rt.running_workers.clone();
            let core_id = (!cores.is_empty()).then(|| cores[i % cores.len()]);
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
                    if let Some(id) = core_id {
                        if !core_affinity::set_for_current(id) {
                            log::debug!("lona: worker {i} could not be pinned to core {}", id.id);
                        }
                    }
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
