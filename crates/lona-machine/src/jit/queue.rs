//! Compiling off the workers: a thread of its own compiles what the
//! workers find hot, while they go on interpreting.
//!
//! A compile takes a few hundred microseconds to a millisecond and a
//! half (`--jit-stats`). Done on the worker that found the function hot,
//! it was that long a pause for the process that called it and for every
//! process queued behind it on that worker: `gcpause`'s ping-pong pair
//! paid 0.5 ms for `measure` and `pong` becoming hot, its maximum round
//! trip (`docs/benchmarks-history.md`, "What stalls gcpause's pair").
//! HotSpot, V8 and LuaJIT's successors compile on background threads for
//! the same reason. The protocol:
//!
//! 1. A worker finds an arity hot (`JitSlot::hot`) or compiled quick
//!    code ready to be optimised (`JitSlot::judge`). It claims the job in
//!    the slot (a first compile moves the state `COLD` -> `QUEUED` by
//!    compare-exchange; another arity or the optimise sets its bit in
//!    `JitSlot::queued`), so each job is queued once, pins the
//!    prototype's area (`collect::hold`: the code collector cannot free
//!    the prototype while it waits), queues it here and goes on
//!    interpreting the function.
//! 2. The `lona-jit` thread takes jobs in order, counting each as
//!    started ([`started`]) before it reads anything and as finished
//!    after. A collection cycle takes the count of jobs started once it
//!    has marked the vars' values (`purge.rs`, step 2) and, before it
//!    frees anything, waits until that many have finished
//!    ([`wait_finished`]), as it waits for each process's visit. A job
//!    that started later can only read a var's value the cycle marked or
//!    one stored since (which `Var::set` touched), as a process visited
//!    later can. So the translator may read what the prototype refers to
//!    (a var's current value, a callee's prototype) as it did on a
//!    worker mid-slice, where no cycle could free anything under it.
//! 3. It compiles (`compile`, `JitSlot::optimise`) and publishes the code
//!    as a worker did (the address with Release, `JitSlot::entry` reads
//!    it with Acquire), clears its claim, and releases the pin. The next
//!    call of the function, on any worker, enters the code.
//!
//! The thread runs below the workers' priority (`nice` 10, Linux): where
//! every core is busy it takes about a tenth of one, so a compile is
//! done within a few milliseconds and the workers keep the rest; where a
//! core is idle it takes that. Measured (release build, 2 cores, 8
//! alternating runs each, 2026-11-28): `gcpause`'s maximum round trip
//! 150-220 us at either priority below, against 550-800 us compiling on
//! the worker; `mesh` (100 processes keeping both workers busy) median
//! ~510 ms at nice 0 or 10, but ~880 ms with the thread at `SCHED_IDLE`,
//! which starved it: functions stayed interpreted for most of the run.

//! `jit-eager` compiles on the calling worker, at the first call (its
//! point is to run every function compiled, for the tests), and so does
//! any tier with [`set_background`]`(false)` (`LONA_JIT_SYNC=1`),
//! or when the thread cannot be started.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::*};
use std::sync::{Condvar, Mutex, OnceLock};

use crate::bytecode::Proto;

/// What the thread is asked to do with a prototype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    /// Compile arity `.0` (one found hot; any of a prototype found hot
    /// through a variadic arity: `compile`).
    Compile(usize),
    /// Compile its quick arities again, optimised (`optimise.rs`).
    Optimise,
}

/// The bit in `JitSlot::queued` that claims an optimise (the arities'
/// bits are `1 << argc`, `argc <= MAX_ARGS` = 6).
pub(super) const OPTIMISE_BIT: u8 = 1 << 7;

struct Queue {
    /// Jobs not yet taken, and how many are taken and not finished.
    /// Written by workers (push) and the thread (pop, finish); read by
    /// [`settle`].
    state: Mutex<(VecDeque<(&'static Proto, Job)>, usize)>,
    /// Signalled when a job is queued (the thread waits on it) and when
    /// the queue becomes empty ([`settle`] waits on it).
    changed: Condvar,
}

fn queue() -> &'static Queue {
    static Q: OnceLock<Queue> = OnceLock::new();
    Q.get_or_init(|| Queue {
        state: Mutex::new((VecDeque::new(), 0)),
        changed: Condvar::new(),
    })
}

/// 0 off, 1 on, other: not set (then on unless `LONA_JIT_SYNC=1`).
static BACKGROUND: AtomicU8 = AtomicU8::new(u8::MAX);

/// Jobs the `lona-jit` thread started, and finished, so far (step 2;
/// `jit::stats`). Written by the thread, read by the code collector.
static STARTED: AtomicU64 = AtomicU64::new(0);
static FINISHED: AtomicU64 = AtomicU64::new(0);

/// Whether functions found hot are compiled off the workers (the
/// default), or on the worker that found them hot.
pub fn set_background(on: bool) {
    BACKGROUND.store(on as u8, Relaxed);
}

/// Whether a job found now goes to the thread (module documentation:
/// never under `jit-eager`).
pub(super) fn background() -> bool {
    if super::tier() != super::Tier::Jit {
        return false;
    }
    match BACKGROUND.load(Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let on = std::env::var("LONA_JIT_SYNC").map_or(true, |v| v != "1");
            BACKGROUND.store(on as u8, Relaxed);
            on
        }
    }
}

/// Compiles done off the workers so far.
pub(super) fn done() -> u64 {
    FINISHED.load(Relaxed)
}

/// Jobs started so far (step 2: the code collector's count, taken after
/// it marked the vars' values).
pub(crate) fn started() -> u64 {
    // SeqCst: with the thread's increment before its reads, either the
    // cycle counts the job (and waits for it) or the job's reads come
    // after the marking.
    STARTED.load(SeqCst)
}

/// Waits until `n` jobs have finished (a count [`started`] gave), for at
/// most `timeout`; whether they did.
pub(crate) fn wait_finished(n: u64, timeout: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + timeout;
    // Acquire: what the jobs read happened before (nothing in them is
    // used after this returns; the order is for the argument above).
    while FINISHED.load(Acquire) < n {
        if std::time::Instant::now() >= until {
            return false;
        }
        // A compile takes from a few hundred microseconds (a release
        // build) to tens of milliseconds (a debug one): polled, not
        // signalled (the code collector is a background thread).
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    true
}

/// Queues `job` of `p`, claimed by the caller in `p`'s slot (step 1).
/// False if the thread cannot be started: the caller does the job itself
/// (and its claim stays, as a compile done now would leave it).
pub(super) fn push(p: &'static Proto, job: Job) -> bool {
    if !running() {
        return false;
    }
    // The caller runs `p` in this slice: its area cannot have been freed,
    // and from now on the pin keeps it until the job is done.
    lona_compiler::collect::hold(p);
    let q = queue();
    q.state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .0
        .push_back((p, job));
    q.changed.notify_all();
    true
}

/// Waits until every job queued so far (and any queued meanwhile) is
/// done: for tests and benchmarks that want the code in place. Returns
/// at once without the thread.
pub fn settle() {
    let q = queue();
    let mut s = q.state.lock().unwrap_or_else(|e| e.into_inner());
    while !s.0.is_empty() || s.1 > 0 {
        s = q.changed.wait(s).unwrap_or_else(|e| e.into_inner());
    }
}

/// Starts the thread at the first job; whether it runs.
fn running() -> bool {
    static RUNS: OnceLock<bool> = OnceLock::new();
    *RUNS.get_or_init(|| {
        std::thread::Builder::new()
            .name("lona-jit".into())
            .spawn(run)
            .is_ok()
    })
}

/// The thread: takes jobs in order, for good (steps 2 and 3).
fn run() {
    lower_priority();
    let q = queue();
    loop {
        let (p, job) = {
            let mut s = q.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = s.0.pop_front() {
                    s.1 += 1;
                    break j;
                }
                s = q.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        };
        // The tests hold jobs back here (`jit/tests.rs`).
        #[cfg(any(test, feature = "whitebox"))]
        let _gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
        {
            STARTED.fetch_add(1, SeqCst);
            let slot = &p.ext.jit;
            match job {
                Job::Compile(argc) => {
                    // `compile` catches a code generator's panic; this
                    // thread must not end on anything else either.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        super::compile(p, argc)
                    }));
                    if argc <= super::MAX_ARGS {
                        slot.queued.fetch_and(!(1u8 << argc), Relaxed);
                    }
                }
                Job::Optimise => {
                    let _ =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slot.optimise(p)));
                    slot.queued.fetch_and(!OPTIMISE_BIT, Relaxed);
                }
            }
            // Release: pairs with `wait_finished`'s Acquire.
            FINISHED.fetch_add(1, Release);
        }
        // SAFETY: the hold `queue_job` took for this job.
        unsafe { lona_compiler::collect::release(p) };
        let mut s = q.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 -= 1;
        if s.0.is_empty() && s.1 == 0 {
            q.changed.notify_all();
        }
    }
}

/// Held by a test to keep the thread from starting its next job.
#[cfg(any(test, feature = "whitebox"))]
pub static GATE: Mutex<()> = Mutex::new(());

/// How far below the workers' priority the thread runs (`nice` 10: a
/// tenth of the weight of a worker under Linux's fair scheduler).
const NICE: i32 = 10;

/// Lowers this thread's priority below the workers' (module
/// documentation).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a plain system call; on Linux a priority is a thread's,
        // and 0 names the calling thread.
        let set = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, NICE) };
        if set != 0 && std::env::var_os("LONA_JIT_LOG").is_some() {
            eprintln!(
                "jit: the compiling thread keeps the workers' priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}
