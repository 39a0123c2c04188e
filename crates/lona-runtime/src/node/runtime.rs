//! [`Runtime`]: a running node (its worker and timer threads), its
//! lifecycle, and shutting it down. Building one is `builder`, the state
//! its threads share `shared`, the handle every thread may hold `handle`.
//!
//! # Lifecycle
//! 1. [`Builder::build`](crate::Builder::build) starts N workers (default: available cores) and
//!    one timer thread.
//! 2. Processes are spawned from outside ([`Handle::spawn_process`], and
//!    the native layer's `Handle::spawn`, into the global injection queue)
//!    or from inside ([`StepCx::spawn`](crate::StepCx::spawn), into the spawner's
//!    local queue); the native layer's `Runtime::block_on` runs a main
//!    process to completion and returns its result.
//! 3. [`Runtime::shutdown`] (also on drop) sends every process an exit
//!    signal `Shutdown` from [`RUNTIME_PID`](crate::RUNTIME_PID), the
//!    runtime's own pid `<0.0.0>` (Erlang's `init`; processes that trap
//!    exits get an [`Exit`](crate::Exit) message from it and may clean
//!    up), waits up to the shutdown timeout, then kills what is left
//!    (`Kill`, untrappable). Then the workers, the timer thread and the
//!    reclaimer (after freeing the large mailboxes handed to it, see
//!    `reclaim`) stop and are joined, and the process table is freed with
//!    every message still in it. A native process looping without ever calling
//!    the runtime cannot be preempted or killed; shutdown then gives up on
//!    its worker after a grace period and reports it.

use crate::node::handle::Handle;
use crate::Reason;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What [`Runtime::shutdown`] had to do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Processes still running after the timeout, killed.
    pub killed: usize,
    /// Processes that could not be stopped at all (never-yielding native
    /// loops); their workers were abandoned.
    pub stuck: usize,
}

/// A running Lona node.
pub struct Runtime {
    pub(crate) handle: Handle,
    pub(crate) workers: Vec<JoinHandle<()>>,
    pub(crate) timer: Option<JoinHandle<()>>,
    /// The thread that frees large mailboxes (`reclaim`).
    pub(crate) reclaimer: Option<JoinHandle<()>>,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) running_workers: Arc<AtomicUsize>,
    pub(crate) hook_installed: bool,
}

impl std::ops::Deref for Runtime {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.handle
    }
}

impl Runtime {
    /// A handle for other threads.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Stop every process (see the module doc) and the threads.
    pub fn shutdown(mut self) -> ShutdownReport {
        self.shutdown_inner()
    }

    fn shutdown_inner(&mut self) -> ShutdownReport {
        let mut report = ShutdownReport::default();
        if self.hook_installed {
            self.hook_installed = false;
            // Restored however the rest goes (the last runtime puts the
            // previous panic hook back).
            struct Uninstall;
            impl Drop for Uninstall {
                fn drop(&mut self) {
                    crate::sched::report::uninstall_hook();
                }
            }
            let _uninstall = Uninstall;
            report = self.stop_everything();
        }
        report
    }

    fn stop_everything(&mut self) -> ShutdownReport {
        let mut report = ShutdownReport::default();
        let shared = self.handle.shared.clone();
        // SeqCst: spawns and exits read it (see `Shared::spawn`, `finish`).
        shared.shutting_down.store(true, SeqCst);
        for pid in shared.pids() {
            self.handle.send_exit(pid, Reason::Shutdown);
        }
        if !shared.wait_empty(Instant::now() + self.shutdown_timeout) {
            let left = shared.pids();
            report.killed = left.len();
            for pid in left {
                self.handle.send_exit(pid, Reason::Kill);
            }
            if !shared.wait_empty(Instant::now() + Duration::from_secs(1)) {
                report.stuck = shared.table.live();
            }
        }
        // SeqCst: read by workers with acquire; every process has ended (or
        // been given up on) before this.
        shared.stop.store(true, SeqCst);
        shared.idle.notify_all();
        let grace = Instant::now() + Duration::from_secs(1);
        for h in self.workers.drain(..) {
            while !h.is_finished() && Instant::now() < grace {
                shared.idle.notify_all();
                std::thread::sleep(Duration::from_millis(1));
            }
            if h.is_finished() {
                let _ = h.join();
            }
            // else: stuck in a never-yielding native loop; abandoned.
        }
        shared.timers.stop();
        if let Some(t) = self.timer.take() {
            let _ = t.join();
        }
        // After every process ended: it frees what it holds and returns
        // (a late hand-over frees its own chain, see `reclaim`).
        shared.reclaimer.stop();
        if let Some(t) = self.reclaimer.take() {
            let _ = t.join();
        }
        if report.stuck > 0 {
            log::error!(target: "lona::shutdown", "{} processes never yielded; their workers were abandoned", report.stuck);
        }
        report
    }

    /// Worker threads still running (0 after shutdown).
    pub fn running_workers(&self) -> usize {
        // SeqCst: a counter snapshot; nothing is published through it.
        self.running_workers.load(SeqCst)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown_inner();
    }
}
