//! What a running node looks like from outside: worker load, run queues,
//! counts ([`RuntimeInfo`]), and a walk over every process's
//! [`ProcessInfo`] that never stops the node ([`Snapshot`]).
//!
//! # Worker load
//! Each worker counts its idle time (`sched::load`, [`WorkerLoad`]); busy
//! time is the rest of its life.
//!
//! # The process walk
//! [`Handle::snapshot`](crate::Handle::snapshot) asks every live process
//! for its info, a batch at a time, from a thread outside the runtime:
//! 1. Take the pids alive now (a scan of the table: atomic loads, no lock).
//! 2. For each batch, send each process an info request whose answer goes
//!    to a [`Sink`] (`rules::info`: a mutex-guarded vector and a condvar, not a message),
//!    then wait until the batch has answered or a deadline passed.
//! 3. A process answers when it next drains its signals: at once if it was
//!    waiting, at its next slice if it runs. One that did not answer in
//!    time (a native loop that never yields) is listed without info; one
//!    that ended meanwhile answers "gone" and is left out.
//!
//! The walk holds no lock across processes: the node runs on while it
//! walks, and a million processes take a second or two on two cores.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::rules::info::Sink;
use crate::sched::load::{nanos_since, WorkerLoad};
use crate::{Pid, ProcessInfo};

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
