//! A worker thread: finds runnable processes and steps them.
//!
//! # Finding work (`docs/design.md`, D1, D20 and "Scheduler")
//! 0. Max, then high processes: the global urgent queues, looked at only
//!    when their count is non-zero (one relaxed load; see `priority`), so
//!    a runnable max or high process runs before any normal or low one, on
//!    whichever worker looks first. Normal and low processes use steps
//!    1-5 alone; nothing below knows about priorities except step 1 of a
//!    slice.
//! 1. Every 61st look, the global injection queue first, so work injected
//!    from outside is never starved by a busy local queue.
//! 2. The LIFO slot: the process this worker just woke (a message's
//!    receiver) or its running process just spawned, run next while its
//!    data is hot. The occupant a newer one displaces goes to the local
//!    queue without waking an idle worker at once: the wake-up is owed,
//!    paid when the running process goes on for `LIFO_SPILL_TICKS` in one
//!    slice, or when a slice ends with more than one process queued here
//!    and the backlog (step 5) is old (a process that wakes or spawns one
//!    and then waits has this worker run both, on the core that has their
//!    data). Starvation guards: LIFO
//!    runs in a row may spend one slice's reductions between them (each
//!    counted as at least `LIFO_MIN_CHARGE`), then the slot's occupant goes
//!    to the back of the local queue, so the processes queued behind wait
//!    at most one slice for a chain of woken receivers, as they would for
//!    one process; and no other worker can steal from the slot, so when the
//!    running process goes on for more than `LIFO_SPILL` reductions after
//!    filling it, the occupant moves to the local queue (stealable) and an
//!    idle worker is woken for it.
//! 3. The local queue, FIFO (crossbeam-deque's Chase–Lev deque in FIFO
//!    flavour): a process that spent its reductions was pushed to the back,
//!    behind every other runnable process. Fairness, not an optimisation.
//! 4. The injection queue, taking up to 16 more in one batch transfer.
//! 5. Stealing half of a random victim's local queue, at most `STEAL_MAX`,
//!    from a victim whose queue is *open*. A worker opens its queue (and
//!    wakes an idle worker) when paying a wake-up owed: its running process
//!    went on for `LIFO_SPILL_TICKS` in one slice while others waited, or
//!    yielded with others queued, or the queue has not been empty at the
//!    end of a slice for `BACKLOG_REDS` of its reductions; it closes it
//!    when a slice ends with the queue empty. A worker that keeps up with
//!    its queue in short slices (a caller, a supervisor and the children
//!    it starts) keeps its processes, whose data is in its cache: a thief
//!    spinning on it took each child as it was queued, and the cache lines
//!    of the queue, the child and its first heap crossed cores for every
//!    one (`supstart` on two workers took 1.5 us a child instead of 0.8
//!    while the host's cross-core round trip was ~430 ns). The flag is
//!    written only when it changes, so an idle worker's look at a closed
//!    queue reads a line its owner is not writing.
//! 6. Nothing: spin, then park (see `idle`).
//!
//! # Running one process (a slice)
//! 1. A low-priority process, while other work is queued on this worker,
//!    goes to the back of the local queue instead, up to 8 times in a row
//!    (`priority`, step 4: one low slice per eight of the others).
//! 2. *queued* → *running* (`State::start`), budget = 2,000 reductions.
//! 3. Drain the inbox (signals act now; an exit signal can end it here).
//! 4. `step`; a panic is caught and becomes the exit reason.
//! 5. `Wait` → `State::park`; if something arrived meanwhile, step again
//!    while budget remains. `Yield` → back of the local queue (max and
//!    high: back of their urgent queue). `Exit` → [`finish`].

use crate::base::envelope::Envelope;
use crate::base::priority::Priority;
use crate::base::state::Park;
use crate::sched::cx::StepCx;
use crate::sched::process::Slot;
use crate::sched::process::{Private, Step, SLICE_REDUCTIONS};
use crate::sched::report;
use crate::sched::shared::Shared;
use crate::{Pid, Reason};
use crossbeam_deque::{Steal, Stealer, Worker as Deque};
use crossbeam_utils::sync::Parker;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::*;
use std::sync::Arc;

/// Reductions LIFO runs in a row may spend before the local queue gets its
/// turn (module doc, step 2): one slice's worth. Counting reductions, not
/// runs, lets a ping-pong pair (a few reductions a run) exchange many
/// messages while its data is hot, and still bounds what the queue waits.
const LIFO_STREAK_REDS: u32 = SLICE_REDUCTIONS;
/// A LIFO run counts as at least this many reductions (a run that spends
/// none still costs a switch), so a streak holds at most 250 runs.
const LIFO_MIN_CHARGE: u32 = 8;
/// Reduction ticks (of 64, see `StepCx::tick`) the running process may spend
/// after filling the LIFO slot before its occupant is made stealable
/// (module doc): 3 to 4 ticks, about 200 reductions.
const LIFO_SPILL_TICKS: u32 = 3;
/// The most processes one steal takes (step 5): half the victim's queue,
/// but no more than this. A fork-join tree run breadth-first from the
/// local queue (`skynet`) has hundreds of thousands queued, and a steal of
/// half of them copied that many entries across cores at once, then left
/// both workers a long cold queue (`skynet` on two workers: 215 -> 178 ms
/// native, 681 -> 541 ms Lonala, with a cap of 32 to 64). Enough to split
/// `mesh`'s 100 senders evenly in one steal (a cap of 32 left them 32/68
/// and cost `mesh` 10-15%).
const STEAL_MAX: usize = 64;
/// Reductions this worker spends, slice after slice, with processes
/// waiting in its local queue before the queue is opened to thieves (step
/// 5): eight slices' worth. Lonala `supstart` goes 8,000-16,000
/// reductions between two empty queues (a caller, its `call`'s monitor
/// and alias, the supervisor, the children queued meanwhile): at four
/// slices its queue opened once per ~85 children and the other worker
/// took ~7% of them; at eight, never. `skynet`, `mesh`, `pairs` and
/// `fanin` share their work as fast either way. A worker that empties its
/// queue sooner is keeping up; a process that yields with others queued,
/// or goes on for `LIFO_SPILL_TICKS` in one slice while others wait,
/// opens it at once (queued work does not wait behind one long step).
const BACKLOG_REDS: u32 = 8 * SLICE_REDUCTIONS;
const INJECTOR_EVERY: u32 = 61;
const INJECTOR_BATCH: usize = 16;

thread_local! {
    static CURRENT: Cell<*const WorkerCore> = const { Cell::new(std::ptr::null()) };
}

/// The per-thread part of a worker; reachable from the thread (via
/// [`WorkerCore::current`]) while its loop runs.
pub(crate) struct WorkerCore {
    pub(crate) index: usize,
    pub(crate) shared: Arc<Shared>,
    local: Deque<u32>,
    lifo: Cell<Option<u32>>,
    /// Reductions spent by the LIFO runs in a row so far (step 2).
    lifo_streak: Cell<u32>,
    /// The slice that just ran came from the LIFO slot.
    lifo_run: Cell<bool>,
    /// Budget left when the last slice ended (set by `run_slice`).
    budget_left: Cell<u32>,
    /// Reduction ticks since the LIFO slot was filled.
    lifo_age: Cell<u32>,
    /// A process was pushed to the local queue without waking an idle
    /// worker for it (step 2's displaced occupant): `tick` wakes one if
    /// the running process goes on for `LIFO_SPILL_TICKS`.
    wake_owed: Cell<bool>,
    /// Reductions spent since the local queue was last seen empty at the
    /// end of a slice (step 5).
    backlog: Cell<u32>,
    /// Reduction ticks of the slice under way.
    slice_ticks: Cell<u32>,
    /// This worker's `Shared::open` entry, mirrored (only this worker
    /// writes it).
    opened: Cell<bool>,
    tick: Cell<u32>,
    rng: Cell<u64>,
    /// Free table slots cached by this worker.
    pub(crate) free: RefCell<Vec<u32>>,
    /// Messages the running process sent to one receiver, not yet pushed.
    outbox: RefCell<Outbox>,
    /// [`crate::Builder::on_idle`]: run when this worker found no work for
    /// its delay, once per idle period (`idle_ran` set until a slice runs).
    pub(crate) on_idle: Option<IdleHook>,
    idle_ran: Cell<bool>,
}

/// What a worker does when the node has left it idle a while, and after
/// how long.
#[derive(Clone)]
pub(crate) struct IdleHook {
    pub(crate) after: std::time::Duration,
    pub(crate) run: Arc<dyn Fn() + Send + Sync>,
}

/// Consecutive messages from the running process to one receiver, batched
/// into one chain: one CAS on the receiver's inbox and one wake-up per
/// batch instead of per message, which is what lets many senders on several
/// cores feed one receiver (fan-in) without bouncing its cache lines on
/// every message.
///
/// Rules that keep Erlang's ordering: only messages are batched (never
/// signals); the batch is pushed when the target changes, when it holds
/// `OUTBOX_MAX` messages, before this worker sends any signal, and at the
/// end of every step (so before a process waits, yields or ends). Between a
/// sender and a receiver everything therefore still arrives in the order
/// sent; only the moment of delivery moves, never past the end of the
/// sender's slice.
struct Outbox {
    to: Pid,
    /// Newest node; linked to older ones by `next`.
    newest: *mut crate::base::envelope::Header,
    oldest: *mut crate::base::envelope::Header,
    len: u32,
}

const OUTBOX_MAX: u32 = 64;

/// Workers-poll mode: a busy worker looks at the reactor every this many
/// slices (tokio's `event_interval` is 61 ticks).
const POLL_EVERY: u32 = 61;

// SAFETY: the chain's nodes are owned by the outbox and hold `Send` values;
// the outbox lives in a `WorkerCore`, which moves to its thread once.
unsafe impl Send for Outbox {}

impl WorkerCore {
    pub(crate) fn new(index: usize, shared: Arc<Shared>, local: Deque<u32>) -> WorkerCore {
        WorkerCore {
            index,
            shared,
            local,
            lifo: Cell::new(None),
            lifo_streak: Cell::new(0),
            lifo_run: Cell::new(false),
            budget_left: Cell::new(SLICE_REDUCTIONS),
            lifo_age: Cell::new(0),
            wake_owed: Cell::new(false),
            backlog: Cell::new(0),
            slice_ticks: Cell::new(0),
            opened: Cell::new(false),
            tick: Cell::new(0),
            rng: Cell::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407),
            ),
            free: RefCell::new(Vec::new()),
            outbox: RefCell::new(Outbox {
                to: Pid::new(0, 0),
                newest: std::ptr::null_mut(),
                oldest: std::ptr::null_mut(),
                len: 0,
            }),
            on_idle: None,
            idle_ran: Cell::new(false),
        }
    }

    /// Queue a message from the running process (see [`Outbox`]).
    pub(crate) fn send_batched(&self, to: Pid, e: Envelope) {
        let full = {
            let mut ob = self.outbox.borrow_mut();
            if ob.len > 0 && ob.to != to {
                drop(ob);
                self.flush();
                ob = self.outbox.borrow_mut();
            }
            let n = e.into_raw();
            // SAFETY: we own `n`; the chain is ours until flushed.
            unsafe { (*n).next = ob.newest };
            if ob.len == 0 {
                ob.oldest = n;
                ob.to = to;
            }
            ob.newest = n;
            ob.len += 1;
            ob.len >= OUTBOX_MAX
        };
        if full {
            self.flush();
        }
    }

    /// Push the batched messages, if any.
    #[inline]
    pub(crate) fn flush(&self) {
        let (to, newest, oldest) = {
            let mut ob = self.outbox.borrow_mut();
            if ob.len == 0 {
                return;
            }
            ob.len = 0;
            (
                ob.to,
                std::mem::replace(&mut ob.newest, std::ptr::null_mut()),
                ob.oldest,
            )
        };
        // SAFETY: the chain was built by `send_batched` and is ours.
        unsafe { self.shared.deliver_chain(to, newest, oldest) };
    }

    /// The worker running on this thread, if it belongs to `shared`.
    #[inline]
    pub(crate) fn current(shared: &Shared) -> Option<&WorkerCore> {
        let p = CURRENT.with(|c| c.get());
        if p.is_null() {
            return None;
        }
        // SAFETY: set by `run` for the duration of the loop, on this thread.
        let w = unsafe { &*p };
        std::ptr::eq(&*w.shared, shared).then_some(w)
    }

    /// A process this worker's running process just woke or spawned: the
    /// LIFO slot (a parent that spawns and then waits, a supervisor or
    /// fork-join, runs its child here, on the core that wrote its first
    /// heap).
    ///
    /// The occupant it displaces goes to the local queue *without* waking
    /// an idle worker: the usual case is a process that wakes or spawns
    /// one and then waits (a server answering, a supervisor restarting a
    /// child and telling someone), and this worker runs both next, where
    /// their data is; waking another worker would have it steal one of
    /// them, moving a conversation across cores at the cost of a futex
    /// wake and cold caches per message. If the running process goes on
    /// instead, `tick` owes the wake-up after `LIFO_SPILL_TICKS`, so
    /// queued work waits for an idle worker at most that long.
    pub(crate) fn schedule_woken(&self, index: u32) {
        self.lifo_age.set(0);
        if let Some(prev) = self.lifo.replace(Some(index)) {
            self.local.push(prev);
            self.wake_owed.set(true);
        }
    }

    /// The end of a slice (step 5's backlog): an empty local queue closes
    /// it to thieves and starts the backlog again; otherwise the backlog
    /// grows by the slice (ticks counted the rest), and a wake-up owed is
    /// paid once it is old enough and more is queued here than the one
    /// process this worker takes next.
    #[inline]
    fn settle(&self) {
        let queued = self.local.len();
        if queued == 0 {
            self.backlog.set(0);
            self.wake_owed.set(false);
            self.close_queue();
            return;
        }
        self.backlog
            .set(self.backlog.get().saturating_add(LIFO_MIN_CHARGE));
        if queued >= 2 {
            self.pay_owed_wake(false);
        }
    }

    /// A wake-up owed (or a closed queue with processes in it) is paid:
    /// the queue opened to thieves and an idle worker woken, if the backlog
    /// is `BACKLOG_REDS` old, or `now`: the running process has gone on
    /// for `LIFO_SPILL_TICKS` in this slice. The caller saw the local
    /// queue non-empty.
    #[inline]
    fn pay_owed_wake(&self, now: bool) {
        let due = self.wake_owed.get() || !self.opened.get();
        if due && (now || self.backlog.get() >= BACKLOG_REDS) {
            self.open_and_wake();
        }
    }

    /// The local queue is opened to thieves and an idle worker woken for
    /// it (which pays any wake-up owed).
    fn open_and_wake(&self) {
        self.wake_owed.set(false);
        self.open_queue();
        self.shared.idle.notify_one();
    }

    /// A batch taken from the injector or another worker left processes
    /// in the local queue: none of them has data in this core's cache, so
    /// they are open to thieves at once (a third worker shares the batch).
    fn offer_batch(&self) {
        if !self.local.is_empty() && !self.opened.get() {
            self.open_and_wake();
        }
    }

    /// Thieves may take from the local queue from now on. Relaxed: the
    /// caller then calls `Idle::notify_one`, whose SeqCst fence orders
    /// this store before its read of the sleepers' count, against a
    /// sleeper's fence between registering and its last look (`idle`).
    fn open_queue(&self) {
        if !self.opened.replace(true) {
            self.shared.open[self.index].store(true, Relaxed);
        }
    }

    /// The local queue is empty: thieves leave it alone until its next
    /// backlog is old. Relaxed: a thief that reads `true` late finds an
    /// empty queue or steals what is there, which is allowed.
    fn close_queue(&self) {
        if self.opened.replace(false) {
            self.shared.open[self.index].store(false, Relaxed);
        }
    }

    /// The running process spent another tick of reductions (64): the
    /// backlog, if any, is that much older; a LIFO occupant that has waited
    /// `LIFO_SPILL_TICKS` of them goes to the local queue, to be stolen
    /// once the backlog is old.
    #[inline(never)]
    pub(crate) fn tick(&self) {
        let long = self.slice_ticks.get() + 1;
        self.slice_ticks.set(long);
        if !self.local.is_empty() {
            self.backlog
                .set(self.backlog.get().saturating_add(crate::sched::cx::TICK));
            self.pay_owed_wake(long > LIFO_SPILL_TICKS);
        }
        if self.lifo.get().is_none() {
            return;
        }
        let age = self.lifo_age.get() + 1;
        self.lifo_age.set(age);
        if age > LIFO_SPILL_TICKS {
            if let Some(i) = self.lifo.take() {
                self.local.push(i);
                self.open_and_wake();
            }
        }
    }

    /// A process that yielded: the back of the local queue. An idle worker
    /// is woken only if something else is runnable here; otherwise this
    /// worker runs it again at once, and waking another would only make it
    /// steal the process (a migration, and a futex wake, per slice).
    fn requeue_back(&self, index: u32, prio: Priority) {
        let alone = self.local.is_empty() && self.lifo.get().is_none();
        if prio.is_urgent() {
            self.requeue_urgent(index, prio, alone);
            return;
        }
        self.local.push(index);
        if !alone {
            self.open_and_wake();
        }
    }

    /// A max or high process that yielded: the back of its urgent queue
    /// (same rule for waking a helper as `requeue_back`).
    #[cold]
    fn requeue_urgent(&self, index: u32, prio: Priority, alone: bool) {
        let alone = alone && !self.shared.urgent.any();
        self.shared.urgent.push(index, prio);
        if !alone {
            self.shared.idle.notify_one();
        }
    }

    /// Step 1 of a slice: whether the low-priority process in `slot` is
    /// passed over this time (then it is back in the local queue).
    #[cold]
    fn bump_low(&self, index: u32, slot: &Slot) -> bool {
        let others = !self.local.is_empty() || self.lifo.get().is_some();
        if slot.state.bump_low(others) {
            self.local.push(index);
            return true;
        }
        false
    }

    fn next_random(&self) -> u64 {
        // xorshift64*: victim choice only needs to be cheap and spread out.
        let mut x = self.rng.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.set(x);
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn next_task(&self) -> Option<u32> {
        if self.lifo_run.replace(false) {
            let used = SLICE_REDUCTIONS.saturating_sub(self.budget_left.get());
            let streak = self.lifo_streak.get() + used.max(LIFO_MIN_CHARGE);
            self.lifo_streak.set(streak);
        }
        if self.shared.urgent.any() {
            if let Some(i) = self.shared.urgent.pop() {
                return Some(i);
            }
        }
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick.is_multiple_of(INJECTOR_EVERY) {
            if let Some(i) = self.steal_injector() {
                return Some(i);
            }
        }
        if let Some(i) = self.lifo.take() {
            if self.lifo_streak.get() < LIFO_STREAK_REDS {
                self.lifo_run.set(true);
                return Some(i);
            }
            self.local.push(i);
        }
        self.lifo_streak.set(0);
        self.local
            .pop()
            .or_else(|| self.steal_injector())
            .or_else(|| self.steal_others())
    }

    fn steal_injector(&self) -> Option<u32> {
        loop {
            match self
                .shared
                .injector
                .steal_batch_with_limit_and_pop(&self.local, INJECTOR_BATCH)
            {
                Steal::Success(i) => {
                    self.offer_batch();
                    return Some(i);
                }
                Steal::Empty => return None,
                Steal::Retry => continue,
            }
        }
    }

    fn steal_others(&self) -> Option<u32> {
        let stealers = &self.shared.stealers;
        let n = stealers.len();
        if n <= 1 {
            return None;
        }
        let start = (self.next_random() % n as u64) as usize;
        for k in 0..n {
            let v = (start + k) % n;
            // Relaxed: a hint; the look after registering as a sleeper is
            // ordered by `idle`'s fences (see `open_queue`).
            if v == self.index || !self.shared.open[v].load(Relaxed) {
                continue;
            }
            if let Some(i) = steal_from(&stealers[v], &self.local) {
                self.offer_batch();
                return Some(i);
            }
        }
        None
    }

    /// The worker loop; returns when the runtime stops.
    pub(crate) fn run(&self, parker: &Parker) {
        CURRENT.with(|c| c.set(self));
        let shared = &*self.shared;
        // Acquire: pairs with shutdown's SeqCst store of `stop`, issued
        // after every process ended; nothing else is published through it.
        let polled = crate::sched::reactor::polled;
        let mut until_poll = POLL_EVERY;
        'outer: while !shared.stop.load(Acquire) {
            if let Some(i) = self.next_task() {
                self.run_slice(i);
                until_poll -= 1;
                if until_poll == 0 {
                    until_poll = POLL_EVERY;
                    if let Some(r) = polled() {
                        r.try_turn_now();
                    }
                }
                continue;
            }
            // Idle from here until a task is found (`load`, steps 1-2).
            let load = &shared.loads[self.index];
            load.idle_start(shared.epoch);
            for round in 0..16u32 {
                if round < 4 {
                    for _ in 0..(1u32 << round) {
                        std::hint::spin_loop();
                    }
                } else {
                    std::thread::yield_now();
                }
                if let Some(i) = self.next_task() {
                    load.idle_end(shared.epoch);
                    self.run_slice(i);
                    continue 'outer;
                }
            }
            shared.idle.register(self.index);
            if let Some(i) = self.next_task() {
                shared.idle.unregister(self.index);
                load.idle_end(shared.epoch);
                self.run_slice(i);
                continue;
            }
            if shared.stop.load(Acquire) {
                shared.idle.unregister(self.index);
                load.idle_end(shared.epoch);
                break;
            }
            let found = self.park(parker);
            shared.idle.unregister(self.index);
            load.idle_end(shared.epoch);
            if let Some(i) = found {
                self.run_slice(i);
            }
        }
        shared.table.return_cache(&mut self.free.borrow_mut());
        shared.table.return_credits(self.index);
        CURRENT.with(|c| c.set(std::ptr::null()));
    }

    /// Waits for work (`wait`). With an idle hook not yet run in this idle
    /// period, waits at most its delay, and runs it if no work came in
    /// that time; the next wait is then unbounded.
    fn park(&self, parker: &Parker) -> Option<u32> {
        let hook = self.on_idle.as_ref().filter(|_| !self.idle_ran.get());
        let Some(hook) = hook else {
            return self.wait(parker, None);
        };
        let start = std::time::Instant::now();
        let found = self.wait(parker, Some(hook.after));
        if found.is_none() && start.elapsed() >= hook.after && self.next_task_is_none() {
            self.idle_ran.set(true);
            // A hook that panics is reported and leaves the worker running.
            if catch_unwind(AssertUnwindSafe(|| (hook.run)())).is_err() {
                log::error!(target: "lona", "the runtime's idle hook panicked");
            }
        }
        found
    }

    /// Whether the queues this worker looks at are empty (a hint).
    fn next_task_is_none(&self) -> bool {
        self.local.is_empty() && self.lifo.get().is_none() && self.shared.injector.is_empty()
    }

    /// Waits for work, at most `timeout`: in epoll if workers poll the
    /// reactor and no other worker does, else on the parker (as a waiter
    /// for the poll, in workers mode). Returns a task found on the way.
    fn wait(&self, parker: &Parker, timeout: Option<std::time::Duration>) -> Option<u32> {
        let Some(r) = crate::sched::reactor::polled() else {
            match timeout {
                Some(d) => parker.park_timeout(d),
                None => parker.park(),
            }
            return None;
        };
        for _ in 0..2 {
            if let Some(mut g) = r.try_take() {
                let idle = &self.shared.idle;
                // Set while holding the poll (one holder, so one poller);
                // then take a token left by an unpark that did not see it
                // (`idle::Idle::unpark`): the work it announced is then
                // visible to the look below.
                idle.set_poller(self.index);
                parker.park_timeout(std::time::Duration::ZERO);
                let found = self.next_task();
                if found.is_none() {
                    g.turn(timeout);
                }
                idle.clear_poller();
                return found;
            }
            if !r.wait_as_waiter(parker, timeout) {
                return None;
            }
        }
        None
    }

    /// Run one slice of the process in slot `index` (module doc).
    fn run_slice(&self, index: u32) {
        self.slice_ticks.set(0);
        self.idle_ran.set(false);
        self.run_slice_inner(index);
        self.settle();
    }

    fn run_slice_inner(&self, index: u32) {
        let shared = &*self.shared;
        let slot = shared.table.get(index).expect("queued slot exists");
        if slot.priority() == Priority::Low && self.bump_low(index, slot) {
            self.budget_left.set(SLICE_REDUCTIONS);
            return;
        }
        slot.state.start();
        // SAFETY: *running* gives this worker exclusive use of the private
        // part until it parks, requeues or retires the process.
        let p = unsafe { &mut *slot.private.get() };
        let pid = Pid::new(index, p.gen);
        let mut budget = SLICE_REDUCTIONS;
        loop {
            let mut cx = StepCx {
                shared,
                worker: self,
                slot,
                p: &mut *p,
                pid,
                budget,
                yielded: false,
            };
            let step = step_once(&mut cx);
            budget = cx.budget;
            self.budget_left.set(budget);
            // End of a step: what it sent goes out before it waits, yields
            // or ends (and so before its exit signals).
            self.flush();
            match step {
                Step::Wait => {
                    // Set before parking: once `park` succeeds another
                    // worker may run the process (and read this) at once.
                    // Miri caught the write placed after it.
                    p.waiting = true;
                    match slot.state.park() {
                        Park::Parked => return,
                        Park::Notified => p.waiting = false,
                    }
                    if budget > 0 {
                        continue;
                    }
                    slot.state.requeue();
                    self.requeue_back(index, slot.priority());
                    return;
                }
                Step::Yield => {
                    slot.state.requeue();
                    self.requeue_back(index, slot.priority());
                    return;
                }
                Step::Exit(reason) => {
                    finish(shared, Some(self), slot, p, pid, reason);
                    return;
                }
            }
        }
    }
}

/// Step 5 against one victim: half its queue, at most `STEAL_MAX`, into
/// `local`; the first of them is returned to run now.
fn steal_from(victim: &Stealer<u32>, local: &Deque<u32>) -> Option<u32> {
    loop {
        let half = victim.len().div_ceil(2).clamp(1, STEAL_MAX);
        match victim.steal_batch_with_limit_and_pop(local, half) {
            Steal::Success(i) => return Some(i),
            Steal::Empty => return None,
            Steal::Retry => continue,
        }
    }
}

/// Steps 2-3 of a slice: drain, then step (unless a signal ended it).
fn step_once(cx: &mut StepCx<'_>) -> Step {
    cx.drain();
    if let Some(r) = cx.p.pending_exit.take() {
        return Step::Exit(*r);
    }
    let mut proc = cx.p.process.take().expect("a running process has its body");
    let result = catch_unwind(AssertUnwindSafe(|| {
        report::enter_process();
        if !cx.p.started {
            cx.p.started = true;
            proc.init(cx);
        }
        let s = proc.step(cx);
        report::leave_process();
        cx.p.waiting = false;
        s
    }));
    cx.p.process = Some(proc);
    if cx.p.extra.as_ref().is_some_and(|x| !x.visits.is_empty()) {
        cx.p.visits_after_step();
    }
    match result {
        Ok(Step::Exit(r)) => Step::Exit(cx.p.pending_exit.take().map_or(r, |b| *b)),
        Ok(s) => match cx.p.pending_exit.take() {
            Some(r) => Step::Exit(*r),
            None => s,
        },
        Err(payload) => {
            report::leave_process();
            Step::Exit(report::panic_reason(payload))
        }
    }
}

/// End a process (rules 9-10 in `links`). The caller holds it *running*.
/// Every drop of user data here (the body, messages, timer payloads, the
/// reason) is contained: bodies by `catch_unwind`, messages by `Envelope`,
/// custom reasons by `Reason`; so a hostile value costs nothing but itself.
pub(crate) fn finish(
    shared: &Shared,
    worker: Option<&WorkerCore>,
    slot: &Slot,
    p: &mut Private,
    pid: Pid,
    reason: Reason,
) {
    // Name first, then exited (rule 9): see `Shared::end`.
    shared.end(pid, &slot.state);
    if let Some(mut proc) = p.process.take() {
        // A panicking close or drop must not take the worker down.
        let _ = catch_unwind(AssertUnwindSafe(|| proc.close(&reason)));
        let _ = catch_unwind(AssertUnwindSafe(move || drop(proc)));
    }
    // Stop taking signals; answer the ones that came too late.
    let (mut node, _) = slot.inbox.close();
    while !node.is_null() {
        // SAFETY: the closed chain is ours.
        let next = unsafe { (*node).next };
        // SAFETY: the node is ours (the closed chain) and is handed on whole, once.
        let e = unsafe { Envelope::from_raw(node) };
        (shared.rules.on_node_dying)(shared, p, pid, e);
        node = next;
    }
    // Every timer aimed at it: send_after, start_timer, receive timeouts.
    shared.timers.cancel_target(pid);
    let mut watched = false;
    if let Some(mut extra) = p.extra.take() {
        watched = extra.active_links().next().is_some() || !extra.monitored_by.is_empty();
        (shared.rules.notify_end)(shared, pid, &reason, &mut extra);
    }
    if !watched && !p.exit_by_signal {
        report::unwatched_end(pid, &reason);
    }
    drop(reason);
    p.exit_by_signal = false;
    if p.mailbox.len() > crate::base::reclaim::INLINE_MAX {
        // A large mailbox is freed off this worker (`reclaim`).
        let chain = p.mailbox.take_all();
        // SAFETY: the chain was the mailbox's and is now ours alone.
        unsafe { shared.reclaimer.hand_over(chain) };
    } else {
        p.mailbox.clear();
    }
    p.started = false;
    p.waiting = false;
    p.trap_exit = false;
    p.pending_exit = None;
    p.reductions = 0;
    p.fired_timeout = 0;
    slot.state.retire();
    match worker {
        Some(w) => shared
            .table
            .release(pid.index(), Some((&mut w.free.borrow_mut(), w.index))),
        None => shared.table.release(pid.index(), None),
    }
    // Acquire: pairs with the SeqCst store in shutdown; a missed flag only
    // delays shutdown's wait by its 50 ms poll.
    if shared.shutting_down.load(Acquire) {
        shared.exited();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A steal takes half a short queue, in order, and at most `STEAL_MAX`
    /// of a long one (the rest stays with its owner).
    #[test]
    fn a_steal_takes_half_and_at_most_steal_max() {
        let (victim, local) = (Deque::new_fifo(), Deque::new_fifo());
        for i in 0..10 {
            victim.push(i);
        }
        assert_eq!(steal_from(&victim.stealer(), &local), Some(0));
        assert_eq!(1 + local.len(), 5, "half of 10");
        assert_eq!(local.pop(), Some(1), "in queue order");
        assert_eq!(victim.len(), 5);

        let (victim, local) = (Deque::new_fifo(), Deque::new_fifo());
        for i in 0..100_000 {
            victim.push(i);
        }
        assert_eq!(steal_from(&victim.stealer(), &local), Some(0));
        assert_eq!(1 + local.len(), STEAL_MAX);
        assert_eq!(victim.len(), 100_000 - STEAL_MAX);

        let (victim, local) = (Deque::new_fifo(), Deque::<u32>::new_fifo());
        assert_eq!(steal_from(&victim.stealer(), &local), None);
        victim.push(7);
        assert_eq!(
            steal_from(&victim.stealer(), &local),
            Some(7),
            "a queue of one is stolen"
        );
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use loom::sync::atomic::{fence, AtomicBool, AtomicUsize};
    use loom::sync::{Arc, Mutex};
    use std::sync::atomic::Ordering::*;

    /// Step 5's opening, against `idle`'s protocol (transcribed with loom's
    /// primitives, as `priority`'s model does): the owner pushes, stores
    /// `open` (Relaxed), then `notify_one` (SeqCst fence, read of the
    /// sleepers' count); an idle worker registers (under the lock, then a
    /// SeqCst fence), then reads `open` (Relaxed) and only then the queue.
    /// Either its look finds the process or the owner sees it asleep and
    /// wakes it: a queue opened is never missed by a worker going to sleep.
    #[test]
    fn loom_opening_a_queue_never_misses_a_sleeper() {
        loom::model(|| {
            let queued = Arc::new(AtomicUsize::new(0));
            let open = Arc::new(AtomicBool::new(false));
            let sleeping = Arc::new(AtomicUsize::new(0));
            let lock = Arc::new(Mutex::new(()));
            let woken = Arc::new(AtomicBool::new(false));
            let owner = {
                let (queued, open, sleeping, lock, woken) = (
                    queued.clone(),
                    open.clone(),
                    sleeping.clone(),
                    lock.clone(),
                    woken.clone(),
                );
                loom::thread::spawn(move || {
                    queued.store(1, Release); // the deque's push
                    open.store(true, Relaxed); // open_queue
                    fence(SeqCst); // notify_one
                    if sleeping.load(Relaxed) > 0 {
                        let _g = lock.lock().unwrap();
                        if sleeping.load(Relaxed) > 0 {
                            sleeping.fetch_sub(1, Relaxed);
                            woken.store(true, Relaxed);
                        }
                    }
                })
            };
            {
                let _g = lock.lock().unwrap();
                sleeping.fetch_add(1, Relaxed);
            }
            fence(SeqCst);
            let found = open.load(Relaxed) && queued.load(Acquire) == 1;
            owner.join().unwrap();
            assert!(found || woken.load(Relaxed), "an opened queue was missed");
        });
    }
}
