//! The code collector: frees compiled code, its constants and old var
//! values once no process can use them (`docs/jit.md`, section 7; BEAM's
//! purge and literal-area collector, generalised to vars). The areas and
//! their barriers are the language's (`lona_compiler::area`); this file
//! is the cycle, which visits the processes, and its thread.
//!
//! What an area is, who may hold one, and why nothing in use is freed:
//! `lona_compiler::area`'s documentation. Here, what holds an area in
//! this machine: a process's frames, exception trace, heap and register
//! stack (`Vm::report_code`, step 3), a spawned process's start
//! (`area::spawned`), and a prototype queued for the compiling thread
//! (`jit/queue.rs`, `collect::hold`).
//!
//! **A cycle** (on the `lona-purge` thread, after enough new areas):
//!
//! 1. Bump the cycle to `n` and take the list of areas: only these can
//!    be freed in this cycle (newer ones are kept).
//! 2. Mark the areas of every var's value.
//! 3. Visit every process of every runtime (`lona_runtime::visit_all`):
//!    each reports the areas it holds by setting their `seen` to `n`.
//!    And wait for the compiling thread's jobs started before this step
//!    to finish (`jit/queue.rs`): a job holds its prototype pinned, and
//!    what else it reads, a later job reads only as a visited process
//!    would.
//! 4. Keep what was marked, seen in this cycle or pinned, and what those
//!    reach through edges; free the rest of the list from step 1. Free
//!    too the quick machine code the compiling tier retired before step
//!    1 (`jit/optimise.rs`): every process has ended a slice since.
//!
//! A VM outside any process (an `Evaluator` used directly from Rust,
//! `Vm::new`) cannot be visited: while one exists, or if one was made
//! during the cycle, the cycle frees nothing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use lona_compiler::area::{self, AreaRef};
use lona_compiler::collect;

use crate::bytecode::{Proto, ProtoExt};

/// How long step 3 waits for every process before giving the cycle up.
const VISIT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the collector has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Cycles that ran to the end.
    pub cycles: u64,
    /// Cycles given up (a VM outside a process, a visit that timed out).
    pub abandoned: u64,
    /// Areas freed.
    pub freed: u64,
    /// Areas alive now.
    pub areas: usize,
    /// Bytes those hold (prototypes and constants).
    pub bytes: usize,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "code collector: {} cycles ({} given up), {} areas freed, {} alive ({} bytes)",
            self.cycles, self.abandoned, self.freed, self.areas, self.bytes
        )
    }
}

static CYCLES: AtomicU64 = AtomicU64::new(0);
static ABANDONED: AtomicU64 = AtomicU64::new(0);
static FREED: AtomicU64 = AtomicU64::new(0);

/// The collector's counts.
pub fn stats() -> Stats {
    let (areas, bytes) = area::alive();
    Stats {
        // Relaxed: statistics.
        cycles: CYCLES.load(Relaxed),
        abandoned: ABANDONED.load(Relaxed),
        freed: FREED.load(Relaxed),
        areas,
        bytes,
    }
}

/// Installs the pin hooks and the collector's trigger (once, when the
/// first environment is made).
pub(crate) fn install() {
    area::install();
    area::set_trigger(poke);
}

/// Whether the area at `addr` is registered (not freed): the tests.
#[cfg(all(any(test, feature = "whitebox"), feature = "jit"))]
pub fn registered(addr: usize) -> bool {
    area::registered(addr)
}

/// Runs one cycle now, on this thread (steps 1-4); false if it was given
/// up. Never call it from inside a process: step 3 would wait for the
/// caller's own visit until it times out.
pub fn collect() -> bool {
    let _one = collector()
        .running
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    cycle().is_some()
}

/// Steps 1-4; the processes visited, or `None` if the cycle was given up.
fn cycle() -> Option<usize> {
    let (live, made) = area::unmanaged();
    if live > 0 {
        ABANDONED.fetch_add(1, Relaxed);
        return None;
    }
    // Step 1. (And the quick code the compiling tier has retired so
    // far: once every process is visited, none of it can run.)
    let (n, list) = area::begin_cycle();
    let retired = crate::jit::retired();
    // Step 2.
    let mut keep: Vec<AreaRef> = area::var_areas();
    // The compiling thread's jobs started so far: waited for with the
    // visits (`jit/queue.rs`, step 2).
    let compiles = crate::jit::compiles_started();
    // Step 3.
    let visit = lona_runtime::visit_all(Arc::new(area::sweep(n)));
    if !visit.wait(VISIT_TIMEOUT)
        || !crate::jit::wait_compiles(compiles, VISIT_TIMEOUT)
        || area::unmanaged() != (0, made)
    {
        ABANDONED.fetch_add(1, Relaxed);
        return None;
    }
    // SAFETY: retired before this cycle's visits, each of which ended
    // the process's slice (`jit/optimise.rs`, step 4).
    unsafe { crate::jit::free_retired(retired) };
    // Step 4.
    for &a in &list {
        // SAFETY: areas in the registry are alive; only this thread frees.
        if unsafe { a.kept(n) } {
            keep.push(a);
        }
    }
    let mut kept: HashSet<AreaRef> = HashSet::new();
    while let Some(a) = keep.pop() {
        if kept.insert(a) {
            // SAFETY: as above; edges point at areas that are alive, for
            // the area pointing at them is.
            keep.extend(unsafe { a.edges() });
        }
    }
    let dead: Vec<AreaRef> = list.into_iter().filter(|a| !kept.contains(a)).collect();
    let freed = dead.len() as u64;
    // SAFETY: nothing holds these areas (module documentation); their
    // prototypes' machine code is freed with them.
    unsafe {
        collect::free::<ProtoExt>(dead, |protos| {
            let protos: Vec<*const Proto> = protos.iter().map(|p| *p as *const Proto).collect();
            crate::jit::free_codes(&protos)
        })
    };
    FREED.fetch_add(freed, Relaxed);
    CYCLES.fetch_add(1, Relaxed);
    Some(visit.processes)
}

/// The `lona-purge` thread: runs a cycle when poked.
struct Collector {
    poked: Mutex<bool>,
    wake: Condvar,
    /// Held while a cycle runs: one at a time.
    running: Mutex<()>,
}

fn collector() -> &'static Collector {
    static C: OnceLock<Collector> = OnceLock::new();
    static THREAD: OnceLock<()> = OnceLock::new();
    let c = C.get_or_init(|| Collector {
        poked: Mutex::new(false),
        wake: Condvar::new(),
        running: Mutex::new(()),
    });
    THREAD.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("lona-purge".into())
            .spawn(|| loop {
                let c = collector();
                {
                    let mut p = c.poked.lock().unwrap_or_else(|e| e.into_inner());
                    while !*p {
                        p = c.wake.wait(p).unwrap_or_else(|e| e.into_inner());
                    }
                    *p = false;
                }
                let visited = {
                    let _one = c.running.lock().unwrap_or_else(|e| e.into_inner());
                    let t0 = std::time::Instant::now();
                    let visited = cycle();
                    if std::env::var_os("LONA_PURGE_LOG").is_some() {
                        eprintln!(
                            "purge: {:?}, {visited:?} processes visited: {}",
                            t0.elapsed(),
                            stats()
                        );
                    }
                    visited.unwrap_or(1_000)
                };
                // A visit costs a process about a microsecond of a
                // worker (waking it, a walk of a small heap): pausing ten
                // per process visited keeps visits to about a tenth of the
                // node however fast code is made. (Freeing costs what
                // making cost: not limited.)
                let pause = Duration::from_micros(10).saturating_mul(visited as u32);
                std::thread::sleep(pause.min(Duration::from_secs(10)));
            });
    });
    c
}

/// Asks for a cycle soon: what `make` calls when enough was made, and the
/// compiling tier when the quick code it retired adds up
/// (`jit/optimise.rs`), both through `area::request_cycle`.
fn poke() {
    collector().poke();
}

impl Collector {
    fn poke(&self) {
        *self.poked.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_one();
    }
}
