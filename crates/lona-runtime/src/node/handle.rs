//! [`Handle`]: a cloneable handle on a runtime, usable from any thread:
//! spawning, sending, exit signals, names, timers, and seeing the node
//! from outside; and [`StepCx::handle`], a process's way to one.

use crate::base::error::{SendError, SpawnError};
use crate::base::pid::{Dest, RUNTIME_PID};
use crate::base::priority::Priority;
use crate::node::stats::{self, worker_infos, RuntimeInfo, Snapshot};
use crate::rules::signal::{InfoTo, OneShot, ReplyTo, Signal};
use crate::sched::cx::StepCx;
use crate::sched::registry::RegisterError;
use crate::sched::shared::Shared;
use crate::sched::timer::TimerRef;
use crate::sched::worker::WorkerCore;
use crate::{Pid, Process, Reason, Ref};
use std::sync::atomic::Ordering::Acquire;
use std::sync::Arc;
use std::time::Duration;

/// A cloneable handle to a runtime, usable from any thread. Signals sent
/// through a handle come from [`RUNTIME_PID`].
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

impl Handle {
    /// Spawn any [`Process`] implementation.
    pub fn spawn_process<P: Process>(&self, process: P) -> Result<Pid, SpawnError> {
        self.shared
            .spawn(Priority::Normal, None, |_| Box::new(process), |_, _| {})
    }

    /// Send `msg` to a pid; silently dropped if it is gone (as in Erlang).
    /// From inside a process, it keeps its order with that process's other
    /// sends.
    pub fn send<M: Send + 'static>(&self, to: Pid, msg: M) {
        self.shared.send_pid(to, msg);
    }

    /// Send `msg` to the process registered as `name`; an error if nobody
    /// holds it.
    pub fn send_name<M: Send + 'static>(&self, name: &str, msg: M) -> Result<(), SendError> {
        let pid = self
            .shared
            .registry
            .whereis(name)
            .ok_or_else(|| SendError::NoName(name.to_string()))?;
        self.shared.send_pid(pid, msg);
        Ok(())
    }

    /// Send an exit signal to `pid` from outside any process (from
    /// [`RUNTIME_PID`]; Erlang's `exit/2`).
    pub fn send_exit(&self, pid: Pid, reason: Reason) {
        self.shared.signal(
            pid,
            Signal::Exit {
                from: RUNTIME_PID,
                reason,
                link: false,
            },
        );
    }

    /// Send `pid` an exit signal from outside the runtime (links rule 12):
    /// what a process of another node sends, as the distribution delivers
    /// it. `link`: the signal of a link (its sender ended) rather than
    /// `exit/2`'s. A trapping `pid` receives a [`ForeignExit`](crate::ForeignExit)
    /// naming `origin`; otherwise it ends with `reason`, except that
    /// `Normal` is ignored (and `Kill` not through a link ends it
    /// `Killed`), as for an exit signal from a local process.
    pub fn send_foreign_exit(&self, pid: Pid, origin: crate::Origin, reason: Reason, link: bool) {
        self.shared.signal(
            pid,
            Signal::ForeignExit {
                origin,
                reason,
                link,
            },
        );
    }

    /// Monitor `target` on behalf of process `watcher` (links rule 13):
    /// `watcher` gets the `Down` for `mref` (a fresh [`Ref::new`]) as if it
    /// had called `monitor` itself, and may `demonitor` it. From inside a
    /// process, the `Monitor` reaches `target` in order with that process's
    /// other sends to it; and `watcher` has the monitor before anything
    /// else that process sends it afterwards.
    pub fn monitor_for(&self, watcher: Pid, target: Pid, mref: Ref) {
        self.shared
            .signal(watcher, Signal::MonitorOf { mref, target });
        self.shared.signal(
            target,
            Signal::Monitor {
                from: watcher,
                mref,
            },
        );
    }

    /// Link process `owner` to `target` on its behalf (links rule 13): the
    /// link is `owner`'s as if it had called `link` (`target`'s end, or
    /// `noproc` if it is gone, reaches `owner` as an exit signal from the
    /// link). From inside a process, the `Link` reaches `target` in order
    /// with that process's other sends to it.
    pub fn link_for(&self, owner: Pid, target: Pid) {
        if owner == target {
            return;
        }
        self.shared.signal(owner, Signal::LinkOf { target });
        self.shared.signal(target, Signal::Link { from: owner });
    }

    /// Register `name` for `pid`.
    pub fn register(&self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        self.shared.register(name, pid)
    }

    /// Remove a name; returns whether it was registered.
    pub fn unregister(&self, name: &str) -> bool {
        self.shared.registry.remove(name).is_some()
    }

    /// The pid registered as `name`.
    pub fn whereis(&self, name: &str) -> Option<Pid> {
        self.shared.registry.whereis(name)
    }

    /// Whether `pid` is alive right now, by its state word alone: never
    /// waits, so any thread or process may ask, but with no ordering
    /// against signals sent to it (a process killed a moment ago may still
    /// be alive here; [`Handle::is_alive`] waits for that).
    pub fn is_alive_now(&self, pid: Pid) -> bool {
        self.shared.is_alive(pid)
    }

    /// Whether `pid` is alive, with Erlang's guarantee: every signal sent
    /// through a handle before (an exit signal, say) has taken effect, so
    /// after `send_exit(pid, Reason::Kill)` it returns `false`. It asks the
    /// process and waits for the answer, which comes when the process next
    /// drains its signals (at once for a waiting process).
    ///
    /// # Panics
    /// When called from inside a process of this runtime: it would block a
    /// worker on an answer that worker may be the one to give. Processes
    /// ask with `Ctx::is_alive` (the same guarantee for the signals the
    /// process sent), or [`StepCx::is_alive_now`](crate::StepCx::is_alive_now) for
    /// the state alone. The same rule as [`Handle::snapshot`] and
    /// `Runtime::block_on`: a `Handle` method that waits for processes
    /// means the same wherever it is called, or refuses.
    pub fn is_alive(&self, pid: Pid) -> bool {
        let shared = &*self.shared;
        refuse_inside(shared, "Handle::is_alive", "use Ctx::is_alive");
        if !shared.is_alive(pid) {
            return false;
        }
        let answer = Arc::new(OneShot::default());
        shared.signal(
            pid,
            Signal::IsAlive {
                reply_to: ReplyTo::Thread(answer.clone()),
                tag: Ref::new(),
            },
        );
        loop {
            if let Some(alive) = answer.wait(Duration::from_millis(100)) {
                return alive;
            }
            // Acquire: pairs with shutdown's store; after it no worker
            // answers, so fall back to the state word.
            if shared.stop.load(Acquire) || !shared.is_alive(pid) {
                return shared.is_alive(pid);
            }
        }
    }

    /// Live processes right now.
    pub fn process_count(&self) -> usize {
        self.shared.table.live()
    }

    /// Pids of all live processes (a snapshot).
    pub fn processes(&self) -> Vec<Pid> {
        self.shared.pids()
    }

    /// The node right now: worker load and run queues, counts
    /// ([`RuntimeInfo`]). Cheap (atomic loads, no lock): call it as often
    /// as a live view refreshes.
    pub fn runtime_info(&self) -> RuntimeInfo {
        let s = &*self.shared;
        RuntimeInfo {
            uptime: s.epoch.elapsed(),
            workers: worker_infos(s.epoch, &s.loads, |i| {
                s.stealers.get(i).map_or(0, |st| st.len())
            }),
            injector_queue: s.injector.len(),
            process_count: s.table.live(),
            process_limit: s.table.limit(),
            registered: s.registry.len(),
            timers: s.timers.pending(),
            table_bytes: s.table.bytes(),
        }
    }

    /// Every live process with its [`ProcessInfo`](crate::ProcessInfo), walked a batch at a
    /// time without stopping the node (see `stats`, "The process walk").
    /// A process that does not answer within `patience` of its batch being
    /// asked (a native loop that never yields) is listed without info.
    ///
    /// # Panics
    /// When called from inside a process of this runtime, which cannot
    /// wait for the answers (see [`Handle::is_alive`]): a process walks the
    /// node on a thread of its own and receives the result as a message,
    /// as Lonala's `(i)` does.
    pub fn snapshot(&self, patience: Duration) -> Snapshot {
        let shared = &*self.shared;
        refuse_inside(
            shared,
            "Handle::snapshot",
            "walk on a thread of your own and send the result back",
        );
        let pids = shared.pids();
        stats::walk(pids, patience, |pid, sink| {
            shared.signal(
                pid,
                Signal::Info {
                    reply_to: InfoTo::Walk(sink.clone()),
                    tag: Ref::new(),
                },
            );
        })
    }

    /// Registered names right now.
    pub fn registered_count(&self) -> usize {
        self.shared.registry.len()
    }

    /// Timers pending right now (receive timeouts included).
    pub fn pending_timers(&self) -> usize {
        self.shared.timers.pending()
    }

    /// Deliver `msg` to `to` after `after` (Erlang's `send_after/3`). A
    /// timer aimed at a pid is cancelled if that process ends first; one
    /// aimed at a name looks it up when it fires. Delays longer than
    /// [`MAX_DELAY`](crate::MAX_DELAY) never fire.
    pub fn send_after<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.shared.send_after(after, to.into(), msg)
    }

    /// Deliver [`Timeout { tref, msg }`](crate::Timeout) to `to` after
    /// `after` (Erlang's `start_timer/3`).
    pub fn start_timer<M: Send + 'static>(
        &self,
        after: Duration,
        to: impl Into<Dest>,
        msg: M,
    ) -> TimerRef {
        self.shared.start_timer(after, to.into(), msg)
    }

    /// Cancel a timer: how long it had left, on the clock
    /// (`Duration::MAX` for one that would never fire), or `None` if it had
    /// already fired (or was cancelled).
    pub fn cancel_timer(&self, t: TimerRef) -> Option<Duration> {
        self.shared.timers.cancel_remaining(t)
    }

    /// Workers this runtime runs.
    pub fn workers(&self) -> usize {
        self.shared.workers
    }
}

impl StepCx<'_> {
    /// A handle to the runtime.
    pub fn handle(&self) -> Handle {
        Handle {
            shared: self.worker.shared.clone(),
        }
    }
}

/// A `Handle` method that waits for processes, called from inside one of
/// them: refused (see [`Handle::is_alive`], "Panics").
fn refuse_inside(shared: &Shared, what: &str, instead: &str) {
    if WorkerCore::current(shared).is_some() {
        panic!("{what} called from inside a Lona process, where it cannot wait for other processes; {instead}");
    }
}
