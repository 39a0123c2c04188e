//! The code collector: frees compiled code, its constants and old var
//! values once no process can use them (`docs/jit.md`, section 7; BEAM's
//! purge and literal-area collector, generalised to vars).
//!
//! **Areas.** What is freed together is an `Area`: one compiled
//! top-level form (its prototypes, the heap of their constants, their
//! machine code), or one value a `def` copied into permanent memory. An
//! area records, once when it is made, the other areas its terms point
//! into or name by a closure's code id (its *edges*). Built-ins and other
//! code made at start belong to no area and are never freed.
//!
//! **Who may hold an area**, and how each is found:
//! * a var's current value: marked (step 2);
//! * a process: its frames, exception trace, heap and register stack are
//!   walked when it is *visited* (step 3, `Vm::report_code`);
//! * a message (a `Fragment`) in flight, in a mailbox or kept by Rust
//!   code: *pinned* (`lona_term::set_code_pins`): the area's `pins`
//!   count;
//! * a spawned process's start, not pinned (two shared atomic writes per
//!   spawn cost 5%): visited with its process, and touched by the
//!   spawner once the process can be visited (`spawned`);
//! * the compiling thread (`jit/queue.rs`): a prototype queued for it,
//!   pinned; what its job reads: waited for (step 3);
//! * another area: an edge.
//!
//! **A cycle** (on the `lona-purge` thread, after enough new areas):
//!
//! 1. Bump `CYCLE` to `n` and take the list of areas: only these can be
//!    freed in this cycle (newer ones are kept).
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
//! **Why nothing in use is freed.** A process visited in step 3 cannot
//! obtain an area it did not report: from a var it gets a marked value or
//! one set since step 1, and `Var::set` *touches* (sets `seen` to the
//! current cycle) what it stores; from its heap, it reported what is there;
//! from a message, the fragment pinned the closures in it and touches
//! their areas when it pins and unpins. A process spawned after step 3's
//! snapshot starts from such a message. The orders that make this hold
//! are `SeqCst` (a store, then a load of `CYCLE`), as a Dekker pair with
//! step 1's bump followed by the collector's loads.
//!
//! A VM outside any process (an `Evaluator` used directly from Rust,
//! `Vm::new`) cannot be visited: while one exists, or if one was made
//! during the cycle, the cycle frees nothing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Condvar, LazyLock, Mutex, OnceLock};
use std::time::Duration;

use lona_term::{Foreign, Heap};

use crate::bytecode::Proto;

/// Code and constants freed together (module documentation).
pub(crate) struct Area {
    /// Fragments holding a closure of this area's code. Written by the
    /// pin hooks (any thread); read by the collector in step 4.
    pins: AtomicUsize,
    /// The last cycle in which a process reported the area, or something
    /// touched it. Written with `fetch_max` by any thread; read in step 4.
    seen: AtomicU64,
    /// The prototypes it owns (boxes leaked by the compiler).
    protos: Box<[*const Proto]>,
    /// Whether it owns a permanent heap (`lona_term::make_freeable`, its
    /// owner token the area's address).
    heap: bool,
    /// The other areas its terms and prototypes point into.
    edges: Box<[*const Area]>,
    /// Bytes it holds, for statistics.
    bytes: usize,
}

// SAFETY: after it is made an area is only read (its atomics aside); the
// prototypes it points to are shared immutable data, `Sync` themselves.
unsafe impl Send for Area {}
// SAFETY: as above.
unsafe impl Sync for Area {}

/// The current cycle (step 1). Starts at 1 so that `seen == 0` is never
/// "seen in this cycle".
static CYCLE: AtomicU64 = AtomicU64::new(1);

/// Every area not yet freed, and what was made since the last cycle.
struct Registry {
    areas: HashSet<usize>,
    new_areas: usize,
    new_bytes: usize,
    bytes: usize,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| {
    Mutex::new(Registry {
        areas: HashSet::new(),
        new_areas: 0,
        new_bytes: 0,
        bytes: 0,
    })
});

/// VMs outside any process now, and ever made (see the module doc).
static UNMANAGED_LIVE: AtomicUsize = AtomicUsize::new(0);
static UNMANAGED_MADE: AtomicU64 = AtomicU64::new(0);

/// Every var ever made, for step 2 (vars are never freed).
static VARS: Mutex<Vec<&'static crate::var::Var>> = Mutex::new(Vec::new());

/// A cycle starts once this many areas (`LONA_PURGE_AREAS` if set), or
/// this many bytes of them, were made since the last one.
const TRIGGER_AREAS: usize = 2_000;

fn trigger_areas() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("LONA_PURGE_AREAS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .unwrap_or(TRIGGER_AREAS)
    })
}
const TRIGGER_BYTES: usize = 4 << 20;

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
    let r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    Stats {
        // Relaxed: statistics.
        cycles: CYCLES.load(Relaxed),
        abandoned: ABANDONED.load(Relaxed),
        freed: FREED.load(Relaxed),
        areas: r.areas.len(),
        bytes: r.bytes,
    }
}

/// Records a new var (step 2 reads them all).
pub(crate) fn new_var(v: &'static crate::var::Var) {
    VARS.lock().unwrap_or_else(|e| e.into_inner()).push(v);
}

/// The area of the object a term word points to, if any.
fn area_of_bits(bits: u64) -> Option<&'static Area> {
    token_area(lona_term::permanent_owner_of(bits))
}

/// The area a permanent pointer points into, if any.
fn area_of_addr(a: usize) -> Option<&'static Area> {
    token_area(lona_term::permanent_owner(a))
}

fn token_area(owner: Option<u64>) -> Option<&'static Area> {
    match owner {
        // SAFETY: a nonzero owner token is the address of a live area
        // (`make`): the range is removed before the area is freed.
        Some(t) if t != 0 => Some(unsafe { &*(t as usize as *const Area) }),
        _ => None,
    }
}

/// The area of a closure's code id, if any.
///
/// # Safety
/// `code` is the code id of a closure someone holds.
unsafe fn area_of_code(code: u64) -> Option<&'static Area> {
    // SAFETY: per the caller the prototype lives; its area outlives it.
    unsafe {
        let p = &*(code as usize as *const Proto);
        p.area.load(Acquire).as_ref()
    }
}

impl Area {
    /// Step 3's report, and the barriers' touch. Most touches find the
    /// area seen in this cycle already and write nothing (areas are
    /// shared by every worker that spawns or sends their closures).
    fn touch(&self, cycle: u64) {
        if self.seen.load(SeqCst) < cycle {
            self.seen.fetch_max(cycle, SeqCst);
        }
    }
}

/// Touches the area `bits` points into: a `Var::set` storing it (after
/// the store, `SeqCst`).
pub(crate) fn on_set(bits: u64) {
    if let Some(a) = area_of_bits(bits) {
        a.touch(CYCLE.load(SeqCst));
    }
}

fn pin(code: u64) {
    // SAFETY: the fragment being made holds the closure, copied from a
    // holder that keeps it alive (or `hold`'s caller runs the prototype).
    if let Some(a) = unsafe { area_of_code(code) } {
        a.pins.fetch_add(1, SeqCst);
        a.touch(CYCLE.load(SeqCst));
    }
}

fn unpin(code: u64) {
    // SAFETY: the fragment (or the `hold`) still pins the area.
    if let Some(a) = unsafe { area_of_code(code) } {
        a.touch(CYCLE.load(SeqCst));
        a.pins.fetch_sub(1, SeqCst);
    }
}

/// Keeps `p`'s area (and so `p`) from being freed until [`release`]:
/// a prototype queued for the compiling thread (`jit/queue.rs`). The
/// caller runs `p` in this slice (so its area is alive now).
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) fn hold(p: &Proto) {
    pin(p as *const Proto as usize as u64);
}

/// Ends a [`hold`].
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) fn release(p: &Proto) {
    unpin(p as *const Proto as usize as u64);
}

/// A spawn started a process whose start fragment holds closures of
/// `codes`, unpinned (`Fragment::vector_unpinned`). Called once the new
/// process is in its runtime's table: either a cycle under way lists it
/// for its visit, which reports the fragment, or the cycle began after
/// the fence and the touch tells it.
pub(crate) fn spawned(codes: &Codes) {
    if codes.n == 0 {
        return;
    }
    std::sync::atomic::fence(SeqCst);
    let cycle = CYCLE.load(SeqCst);
    for c in codes.inline[..codes.n.min(4)].iter().chain(&codes.more) {
        // SAFETY: the spawner still holds the closures it copied.
        if let Some(a) = unsafe { area_of_code(*c) } {
            a.touch(cycle);
        }
    }
}

/// The code ids of a spawn's start fragment, the first few inline (a
/// spawn is a function and a few arguments: no allocation).
pub(crate) struct Codes {
    inline: [u64; 4],
    n: usize,
    more: Vec<u64>,
}

impl Codes {
    #[inline]
    pub(crate) fn of(f: &lona_term::Fragment) -> Codes {
        let mut c = Codes {
            inline: [0; 4],
            n: 0,
            more: Vec::new(),
        };
        f.visit_codes(|code| {
            match c.inline.get_mut(c.n) {
                Some(slot) => *slot = code,
                None => c.more.push(code),
            }
            c.n += 1;
        });
        c
    }
}

/// Installs the pin hooks (once, when the first environment is made).
pub(crate) fn install() {
    lona_term::set_code_pins(lona_term::CodePins {
        retain: pin,
        release: unpin,
    });
}

/// The edges of a new area: what `heap` and the constants of `protos`
/// point into outside themselves.
fn edges_of(heap: &Heap, protos: &[&'static Proto]) -> Box<[*const Area]> {
    let mut edges: HashSet<usize> = HashSet::new();
    heap.visit_foreign(&[], &mut |f| {
        let a = match f {
            Foreign::Pointer(p) => area_of_addr(p),
            // SAFETY: a closure in a constant or value being made permanent
            // is held by the code making it (a running process).
            Foreign::Code(c) => unsafe { area_of_code(c) },
        };
        if let Some(a) = a {
            edges.insert(a as *const Area as usize);
        }
    });
    for p in protos {
        for c in p.consts.iter() {
            if let Some(a) = area_of_bits(c.bits()) {
                edges.insert(a as *const Area as usize);
            }
        }
    }
    edges.into_iter().map(|a| a as *const Area).collect()
}

/// Makes an area of `protos` (prototypes compiled together, leaked by
/// the compiler, none of them published yet) and `heap` (their constants,
/// or a var's value), and registers it.
pub(crate) fn make(protos: Vec<&'static Proto>, heap: Heap) {
    let edges = edges_of(&heap, &protos);
    let bytes = (heap.heap_words() + heap.fragment_words()) * 8
        + protos
            .iter()
            .map(|p| std::mem::size_of::<Proto>() + p.code.len() * 8 + p.consts.len() * 8)
            .sum::<usize>();
    let area: &'static Area = Box::leak(Box::new(Area {
        pins: AtomicUsize::new(0),
        seen: AtomicU64::new(0),
        protos: protos.iter().map(|p| *p as *const Proto).collect(),
        heap: true,
        edges,
        bytes,
    }));
    let token = area as *const Area as usize as u64;
    for p in &protos {
        // Release: a thread that reads the area through a closure of `p`
        // (published later, itself with release) sees it made.
        p.area.store(area as *const Area as *mut Area, Release);
    }
    lona_term::make_freeable(heap, token);
    let start = {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        r.areas.insert(token as usize);
        r.bytes += bytes;
        r.new_areas += 1;
        r.new_bytes += bytes;
        r.new_areas >= trigger_areas() || r.new_bytes >= TRIGGER_BYTES
    };
    if start {
        collector().poke();
    }
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
    let made = UNMANAGED_MADE.load(SeqCst);
    if UNMANAGED_LIVE.load(SeqCst) > 0 {
        ABANDONED.fetch_add(1, Relaxed);
        return None;
    }
    // Step 1. (And the quick code the compiling tier has retired so
    // far: once every process is visited, none of it can run.)
    let n = CYCLE.fetch_add(1, SeqCst) + 1;
    let retired = crate::jit::retired();
    let list: Vec<usize> = {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        r.new_areas = 0;
        r.new_bytes = 0;
        r.areas.iter().copied().collect()
    };
    // Step 2.
    let mut keep: Vec<*const Area> = Vec::new();
    for v in VARS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        if let Some(a) = v.get().and_then(|raw| area_of_bits(raw.bits())) {
            keep.push(a);
        }
    }
    // The compiling thread's jobs started so far: waited for with the
    // visits (`jit/queue.rs`, step 2).
    let compiles = crate::jit::compiles_started();
    // Step 3.
    let visit = lona_runtime::visit_all(Arc::new(Sweep { cycle: n }));
    if !visit.wait(VISIT_TIMEOUT)
        || !crate::jit::wait_compiles(compiles, VISIT_TIMEOUT)
        || UNMANAGED_LIVE.load(SeqCst) > 0
        || UNMANAGED_MADE.load(SeqCst) != made
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
        let area = unsafe { &*(a as *const Area) };
        if area.pins.load(SeqCst) > 0 || area.seen.load(SeqCst) >= n {
            keep.push(area);
        }
    }
    let mut kept: HashSet<usize> = HashSet::new();
    while let Some(a) = keep.pop() {
        if kept.insert(a as usize) {
            // SAFETY: as above; edges point at areas that are alive, for
            // the area pointing at them is.
            keep.extend(unsafe { &*a }.edges.iter().copied());
        }
    }
    let dead: Vec<*const Area> = list
        .into_iter()
        .filter(|a| !kept.contains(a))
        .map(|a| a as *const Area)
        .collect();
    let freed = dead.len() as u64;
    // SAFETY: nothing holds these areas (module documentation).
    unsafe { free(dead) };
    FREED.fetch_add(freed, Relaxed);
    CYCLES.fetch_add(1, Relaxed);
    Some(visit.processes)
}

/// Whether the area at `addr` is registered (not freed): the tests.
#[cfg(all(test, feature = "jit"))]
pub(crate) fn registered(addr: usize) -> bool {
    REGISTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .areas
        .contains(&addr)
}

/// Frees areas: their prototypes (and machine code) and heaps, taking
/// each lock once.
///
/// # Safety
/// Nothing holds the areas or anything in them.
unsafe fn free(dead: Vec<*const Area>) {
    {
        let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        for a in &dead {
            r.areas.remove(&(*a as usize));
            // SAFETY: alive until the boxes are dropped below.
            r.bytes -= unsafe { &**a }.bytes;
        }
    }
    let heaps: Vec<u64> = dead
        .iter()
        // SAFETY: as above.
        .filter(|a| unsafe { &***a }.heap)
        .map(|a| *a as usize as u64)
        .collect();
    // SAFETY: per the caller.
    unsafe { lona_term::free_permanent(&heaps) };
    let protos: Vec<*const Proto> = dead
        .iter()
        // SAFETY: as above.
        .flat_map(|a| unsafe { &**a }.protos.iter().copied())
        .collect();
    // SAFETY: per the caller, nothing runs or will enter their code.
    unsafe { crate::jit::free_codes(&protos) };
    for a in dead {
        // SAFETY: per the caller; the area was leaked from a box in `make`,
        // and each prototype was leaked from a box by the compiler.
        unsafe {
            let area = Box::from_raw(a as *mut Area);
            for p in area.protos.iter() {
                drop(Box::from_raw(*p as *mut Proto));
            }
        }
    }
}

/// What a visit asks of a process (step 3): report the areas you hold.
pub(crate) struct Sweep {
    cycle: u64,
}

impl Sweep {
    /// Reports a prototype in a frame or trace.
    pub(crate) fn proto(&self, p: &Proto) {
        // SAFETY: (Acquire) the area outlives its prototypes.
        if let Some(a) = unsafe { p.area.load(Acquire).as_ref() } {
            a.touch(self.cycle);
        }
    }

    /// Reports the closures in a fragment the process holds outside its
    /// heap (its start, unpinned).
    pub(crate) fn fragment(&self, f: &lona_term::Fragment) {
        f.visit_codes(|c| {
            // SAFETY: the fragment holds the closure, and nothing freed
            // its code (the spawner touched it, or this is the visit).
            if let Some(a) = unsafe { area_of_code(c) } {
                a.touch(self.cycle);
            }
        });
    }

    /// Reports the area a term word points into (a root kept outside the
    /// heap).
    pub(crate) fn heap_word(&self, bits: u64) {
        if let Some(a) = area_of_bits(bits) {
            a.touch(self.cycle);
        }
    }

    /// Reports what a heap holds outside itself (plus `extra` words).
    pub(crate) fn heap(&self, heap: &Heap, extra: &[u64]) {
        heap.visit_foreign(extra, &mut |f| {
            let a = match f {
                Foreign::Pointer(p) => area_of_addr(p),
                // SAFETY: the heap being visited holds the closure.
                Foreign::Code(c) => unsafe { area_of_code(c) },
            };
            if let Some(a) = a {
                a.touch(self.cycle);
            }
        });
    }
}

/// The answer to whether a VM is in a process (module documentation).
pub(crate) struct Census {
    unmanaged: bool,
}

impl Census {
    /// A VM outside any process.
    pub(crate) fn unmanaged() -> Census {
        UNMANAGED_MADE.fetch_add(1, SeqCst);
        UNMANAGED_LIVE.fetch_add(1, SeqCst);
        Census { unmanaged: true }
    }

    /// A VM inside a process (or inside a step of one).
    pub(crate) fn managed() -> Census {
        Census { unmanaged: false }
    }

    /// The VM is now a process's, visited from now on. A cycle under way
    /// may not have asked it: counting it as made makes that cycle free
    /// nothing.
    pub(crate) fn adopt(&mut self) {
        if std::mem::take(&mut self.unmanaged) {
            UNMANAGED_MADE.fetch_add(1, SeqCst);
            UNMANAGED_LIVE.fetch_sub(1, SeqCst);
        }
    }
}

impl Drop for Census {
    fn drop(&mut self) {
        if std::mem::take(&mut self.unmanaged) {
            UNMANAGED_LIVE.fetch_sub(1, SeqCst);
        }
    }
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

/// Asks for a cycle soon (the compiling tier, when the quick code it
/// retired adds up: `jit/optimise.rs`).
#[cfg_attr(not(feature = "jit"), allow(dead_code))]
pub(crate) fn poke() {
    collector().poke();
}

impl Collector {
    fn poke(&self) {
        *self.poked.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_one();
    }
}
