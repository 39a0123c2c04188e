//! What a running node looks like from outside: worker load, run queues,
//! counts ([`RuntimeInfo`]), and a walk over every process's
//! [`ProcessInfo`] that never stops the node ([`Snapshot`]).
//!
//! # Worker load
//! A worker counts the time it is *idle* (searching for work, spinning,
//! parked), never the time it runs processes: the busy path pays nothing,
//! the idle path reads the clock twice per idle period.
//! 1. When a worker finds no task it stores the time in `idle_since`.
//! 2. When it finds one again it adds the elapsed time to `idle_ns` and
//!    stores 0 in `idle_since`.
//! 3. A reader takes both; a worker idle right now counts as idle up to
//!    the moment of reading. Busy time is the rest of the worker's life.
//!
//! # The process walk
//! [`Handle::snapshot`](crate::Handle::snapshot) asks every live process
//! for its info, a batch at a time, from a thread outside the runtime:
//! 1. Take the pids alive now (a scan of the table: atomic loads, no lock).
//! 2. For each batch, send each process an info request whose answer goes
//!    to a [`Sink`] (a mutex-guarded vector and a condvar, not a message),
//!    then wait until the batch has answered or a deadline passed.
//! 3. A process answers when it next drains its signals: at once if it was
//!    waiting, at its next slice if it runs. One that did not answer in
//!    time (a native loop that never yields) is listed without info; one
//!    that ended meanwhile answers "gone" and is left out.
//!
//! The walk holds no lock across processes: the node runs on while it
//! walks, and a million processes take a second or two on two cores.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::{Pid, ProcessInfo};

/// One worker's idle-time accounting (module doc, "Worker load").
/// Written by that worker only; read by anyone.
#[derive(Default)]
pub(crate) struct WorkerLoad {
    /// Nanoseconds spent idle in finished idle periods. Relaxed: a
    /// statistic; nothing is published through it.
    idle_ns: AtomicU64,
    /// Nanoseconds since the node started at which the current idle period
    /// began, 0 while busy. Relaxed, as `idle_ns`.
    idle_since: AtomicU64,
}

impl WorkerLoad {
    /// Step 1: the worker found nothing to do.
    pub(crate) fn idle_start(&self, epoch: Instant) {
        let now = nanos_since(epoch).max(1);
        self.idle_since.store(now, Relaxed);
    }

    /// Step 2: the worker found work (or stops).
    pub(crate) fn idle_end(&self, epoch: Instant) {
        let since = self.idle_since.swap(0, Relaxed);
        if since != 0 {
            let d = nanos_since(epoch).saturating_sub(since);
            self.idle_ns.fetch_add(d, Relaxed);
        }
    }

    /// Step 3: idle nanoseconds up to now.
    fn idle_now(&self, now: u64) -> u64 {
        let since = self.idle_since.load(Relaxed);
        let done = self.idle_ns.load(Relaxed);
        if since == 0 {
            done
        } else {
            done + now.saturating_sub(since)
        }
    }
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// One worker thread, as [`RuntimeInfo`] sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerInfo {
    /// Time spent running processes (and the runtime's work between them)
    /// since the node started.
    pub busy: Duration,
    /// Time spent looking for work or parked since the node started.
    pub idle: Duration,
    /// Processes waiting in this worker's run queue right now.
    pub run_queue: usize,
}

/// The node at one moment (Erlang's `statistics/1`, `system_info/1` and
/// `memory/0` rolled into one), from [`Handle::runtime_info`](crate::Handle::runtime_info).
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeInfo {
    /// Since the node started.
    pub uptime: Duration,
    /// One entry per worker thread.
    pub workers: Vec<WorkerInfo>,
    /// Processes waiting in the global injection queue.
    pub injector_queue: usize,
    /// Live processes.
    pub process_count: usize,
    /// The process limit.
    pub process_limit: usize,
    /// Registered names.
    pub registered: usize,
    /// Pending timers (receive timeouts included).
    pub timers: usize,
    /// Bytes of the process table (slots are allocated in chunks and kept).
    pub table_bytes: usize,
}

impl RuntimeInfo {
    /// Each worker's utilisation between `earlier` and `self`, from 0.0
    /// (idle throughout) to 1.0 (busy throughout); Erlang's
    /// `scheduler_wall_time` ratio.
    pub fn utilisation_since(&self, earlier: &RuntimeInfo) -> Vec<f64> {
        self.workers
            .iter()
            .zip(&earlier.workers)
            .map(|(now, then)| {
                let busy = now.busy.saturating_sub(then.busy).as_secs_f64();
                let idle = now.idle.saturating_sub(then.idle).as_secs_f64();
                if busy + idle > 0.0 {
                    busy / (busy + idle)
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Processes waiting to run, in every queue.
    pub fn runnable(&self) -> usize {
        self.injector_queue + self.workers.iter().map(|w| w.run_queue).sum::<usize>()
    }
}

/// Builds the per-worker part of [`RuntimeInfo`].
pub(crate) fn worker_infos(
    epoch: Instant,
    loads: &[WorkerLoad],
    queue_len: impl Fn(usize) -> usize,
) -> Vec<WorkerInfo> {
    let now = nanos_since(epoch);
    loads
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let idle = l.idle_now(now).min(now);
            WorkerInfo {
                busy: Duration::from_nanos(now - idle),
                idle: Duration::from_nanos(idle),
                run_queue: queue_len(i),
            }
        })
        .collect()
}

/// Where the answers of one batch of the walk go (module doc, step 2).
#[derive(Default)]
pub(crate) struct Sink {
    answers: Mutex<Vec<(Pid, Option<ProcessInfo>)>>,
    cv: Condvar,
}

impl Sink {
    pub(crate) fn put(&self, pid: Pid, info: Option<ProcessInfo>) {
        let mut g = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        g.push((pid, info));
        self.cv.notify_all();
    }

    /// Waits until `n` answers came or `deadline` passed; takes them.
    fn take(&self, n: usize, deadline: Instant) -> Vec<(Pid, Option<ProcessInfo>)> {
        let mut g = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        while g.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            g = self
                .cv
                .wait_timeout(g, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        std::mem::take(&mut *g)
    }
}

/// One process in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessEntry {
    /// The process.
    pub pid: Pid,
    /// What it said; `None` if it did not answer in time (busy in a loop
    /// that does not yield).
    pub info: Option<ProcessInfo>,
}

/// Every live process and its info, from one walk (module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The processes, in table order.
    pub processes: Vec<ProcessEntry>,
}

/// Processes asked at once in a walk.
pub(crate) const WALK_BATCH: usize = 4096;

/// The walk of module doc steps 1-3: `ask(pid, sink)` sends one request.
pub(crate) fn walk(
    pids: Vec<Pid>,
    patience: Duration,
    mut ask: impl FnMut(Pid, &Arc<Sink>),
) -> Snapshot {
    let mut out = Vec::with_capacity(pids.len());
    for batch in pids.chunks(WALK_BATCH) {
        let sink = Arc::new(Sink::default());
        for &pid in batch {
            ask(pid, &sink);
        }
        let mut got = sink.take(batch.len(), Instant::now() + patience);
        got.sort_unstable_by_key(|(p, _)| *p);
        for &pid in batch {
            match got.binary_search_by_key(&pid, |(p, _)| *p) {
                // Answered: alive with info, or gone (left out).
                Ok(i) => {
                    if let Some(info) = got[i].1.take() {
                        out.push(ProcessEntry {
                            pid,
                            info: Some(info),
                        });
                    }
                }
                Err(_) => out.push(ProcessEntry { pid, info: None }),
            }
        }
    }
    Snapshot { processes: out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_time_counts_the_current_idle_period() {
        let epoch = Instant::now() - Duration::from_secs(10);
        let l = WorkerLoad::default();
        l.idle_start(epoch);
        let w = worker_infos(epoch, std::slice::from_ref(&l), |_| 3);
        assert!(w[0].idle > Duration::ZERO, "idle right now counts");
        assert_eq!(w[0].run_queue, 3);
        l.idle_end(epoch);
        let done = l.idle_ns.load(Relaxed);
        assert!(done > 0);
        assert_eq!(l.idle_since.load(Relaxed), 0);
        // Ending twice adds nothing.
        l.idle_end(epoch);
        assert_eq!(l.idle_ns.load(Relaxed), done);
    }

    #[test]
    fn utilisation_is_busy_over_elapsed() {
        let w = |busy, idle| WorkerInfo {
            busy: Duration::from_millis(busy),
            idle: Duration::from_millis(idle),
            run_queue: 0,
        };
        let info = |ws| RuntimeInfo {
            uptime: Duration::ZERO,
            workers: ws,
            injector_queue: 1,
            process_count: 0,
            process_limit: 0,
            registered: 0,
            timers: 0,
            table_bytes: 0,
        };
        let a = info(vec![w(100, 100), w(0, 0)]);
        let b = info(vec![w(175, 125), w(0, 0)]);
        let u = b.utilisation_since(&a);
        assert!((u[0] - 0.75).abs() < 1e-9, "{u:?}");
        assert_eq!(u[1], 0.0, "no time passed: 0, not NaN");
        assert_eq!(b.runnable(), 1);
    }

    #[test]
    fn a_walk_lists_the_silent_and_drops_the_gone() {
        let pids: Vec<Pid> = (0..10_000u32).map(|i| Pid::new(i, 1)).collect();
        let snap = walk(pids, Duration::from_millis(10), |pid, sink| {
            match pid.index() % 3 {
                0 => sink.put(pid, Some(info_for_test())),
                1 => sink.put(pid, None), // gone
                _ => {}                   // silent
            }
        });
        let answered = snap.processes.iter().filter(|e| e.info.is_some()).count();
        let silent = snap.processes.iter().filter(|e| e.info.is_none()).count();
        assert_eq!(answered, 3334);
        assert_eq!(silent, 3333);
        assert!(snap.processes.windows(2).all(|w| w[0].pid < w[1].pid));
    }

    fn info_for_test() -> ProcessInfo {
        ProcessInfo {
            status: crate::Status::Waiting,
            message_queue_len: 0,
            reductions: 0,
            memory: 0,
            links: vec![],
            monitors: vec![],
            monitored_by: vec![],
            registered_name: None,
            trap_exit: false,
            current_function: None,
            heap_words: None,
            priority: crate::Priority::Normal,
            parent: None,
        }
    }
}
