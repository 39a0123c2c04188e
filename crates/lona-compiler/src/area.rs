//! Areas: compiled code and permanent values, in the units a code
//! collector frees together, and the barriers that tell it who holds one
//! (`docs/jit.md`, section 7; BEAM's purge and literal-area collector,
//! generalised to vars).
//!
//! This file is the collector's memory and its barriers, which the
//! compiler and vars use as they make code and values; the collector's
//! cycle, which visits processes, lives above the language, in
//! `lona-vm`'s `purge.rs`, and reaches the areas through the few
//! functions at the end of this file.
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
//!   walked when it is *visited* (step 3, [`Sweep`]);
//! * a message (a `Fragment`) in flight, in a mailbox or kept by Rust
//!   code: *pinned* (`lona_term::set_code_pins`): the area's `pins`
//!   count;
//! * a spawned process's start, not pinned (two shared atomic writes per
//!   spawn cost 5%): visited with its process, and touched by the
//!   spawner once the process can be visited ([`spawned`]);
//! * the compiling tier's thread: a prototype queued for it, pinned
//!   ([`hold`](crate::collect::hold)); what its job reads: waited for (step 3);
//! * another area: an edge.
//!
//! **A cycle** (`lona-vm`'s `purge.rs`):
//!
//! 1. Bump the cycle to `n` and take the list of areas ([`begin_cycle`]):
//!    only these can be freed in this cycle (newer ones are kept).
//! 2. Mark the areas of every var's value ([`var_areas`]).
//! 3. Visit every process: each reports the areas it holds by setting
//!    their `seen` to `n` ([`Sweep`]).
//! 4. Keep what was marked, seen in this cycle or pinned
//!    ([`AreaRef::kept`]), and what those reach through edges; free the
//!    rest of the list from step 1 ([`free`](crate::collect::free)).
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
//! A VM outside any process (one used directly from Rust) cannot be
//! visited: while one exists, or if one was made during the cycle, the
//! cycle frees nothing ([`Census`]).
//!
//! Every area of a program holds prototypes of one type (`Proto<X>` for
//! the `X` of the machine that runs them, `lona-vm`'s); an area records
//! that type, and [`free`](crate::collect::free) hands the prototypes of that type to the
//! collector's hook and drops each as what it is.

use std::any::TypeId;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{LazyLock, Mutex, OnceLock};

use lona_term::{Foreign, Heap};

/// Code and constants freed together (module documentation). Every area
/// owns a permanent heap (`lona_term::make_freeable`, its owner token the
/// area's address), freed with it.
pub struct Area {
    /// Fragments holding a closure of this area's code. Written by the
    /// pin hooks (any thread); read by the collector in step 4.
    pub(crate) pins: AtomicUsize,
    /// The last cycle in which a process reported the area, or something
    /// touched it. Written with `fetch_max` by any thread; read in step 4.
    pub(crate) seen: AtomicU64,
    /// The prototypes it owns (boxes leaked by the compiler), of the type
    /// `ty` names, dropped by `drop_proto`.
    pub(crate) protos: Box<[*const ()]>,
    pub(crate) ty: TypeId,
    pub(crate) drop_proto: unsafe fn(*const ()),
    /// The other areas its terms and prototypes point into.
    pub(crate) edges: Box<[*const Area]>,
    /// Bytes it holds, for statistics.
    pub(crate) bytes: usize,
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

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// VMs outside any process now, and ever made (see the module doc).
static UNMANAGED_LIVE: AtomicUsize = AtomicUsize::new(0);
static UNMANAGED_MADE: AtomicU64 = AtomicU64::new(0);

/// The value cell of every var ever made, for step 2 (vars are never
/// freed): a term word, 0 while unbound.
static VARS: Mutex<Vec<&'static AtomicU64>> = Mutex::new(Vec::new());

/// What [`request_cycle`] calls: the collector's poke ([`set_trigger`]).
static TRIGGER: OnceLock<fn()> = OnceLock::new();

/// A cycle is asked for once this many areas (`LONA_PURGE_AREAS` if set),
/// or this many bytes of them, were made since the last one.
const TRIGGER_AREAS: usize = 2_000;
const TRIGGER_BYTES: usize = 4 << 20;

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

/// Records a new var's value cell (step 2 reads them all).
pub(crate) fn new_var(value: &'static AtomicU64) {
    VARS.lock().unwrap_or_else(|e| e.into_inner()).push(value);
}

/// The area of the object a term word points to, if any.
pub(crate) fn area_of_bits(bits: u64) -> Option<&'static Area> {
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
/// `code` is the code id of a closure someone holds: the address of a
/// `Proto<X>`, for some `X`.
pub(crate) unsafe fn area_of_code(code: u64) -> Option<&'static Area> {
    // SAFETY: per the caller the prototype lives; its area outlives it.
    // `Proto` is `repr(C)` with the area its first field, whatever `X`.
    unsafe {
        let area = &*(code as usize as *const std::sync::atomic::AtomicPtr<Area>);
        area.load(Acquire).as_ref()
    }
}

impl Area {
    /// Step 3's report, and the barriers' touch. Most touches find the
    /// area seen in this cycle already and write nothing (areas are
    /// shared by every worker that spawns or sends their closures).
    pub(crate) fn touch(&self, cycle: u64) {
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

pub(crate) fn pin(code: u64) {
    // SAFETY: the fragment being made holds the closure, copied from a
    // holder that keeps it alive (or `hold`'s caller runs the prototype).
    if let Some(a) = unsafe { area_of_code(code) } {
        a.pins.fetch_add(1, SeqCst);
        a.touch(CYCLE.load(SeqCst));
    }
}

pub(crate) fn unpin(code: u64) {
    // SAFETY: the fragment (or the `hold`) still pins the area.
    if let Some(a) = unsafe { area_of_code(code) } {
        a.touch(CYCLE.load(SeqCst));
        a.pins.fetch_sub(1, SeqCst);
    }
}

/// A spawn started a process whose start fragment holds closures of
/// `codes`, unpinned (`Fragment::vector_unpinned`). Called once the new
/// process is in its runtime's table: either a cycle under way lists it
/// for its visit, which reports the fragment, or the cycle began after
/// the fence and the touch tells it.
pub fn spawned(codes: &Codes) {
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
pub struct Codes {
    inline: [u64; 4],
    n: usize,
    more: Vec<u64>,
}

impl Codes {
    /// The code ids in `f`.
    #[inline]
    pub fn of(f: &lona_term::Fragment) -> Codes {
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

/// Installs the pin hooks (once, when the first node is made).
pub fn install() {
    lona_term::set_code_pins(lona_term::CodePins {
        retain: pin,
        release: unpin,
    });
}

/// Sets what [`make`](crate::collect::make) calls when enough was made since the last cycle
/// (the collector's poke); the first call wins.
pub fn set_trigger(poke: fn()) {
    let _ = TRIGGER.set(poke);
}

/// The edges of a new area's heap: what it points into outside itself.
pub(crate) fn heap_edges(heap: &Heap, edges: &mut HashSet<usize>) {
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
}

/// Makes an area of `heap` and the prototypes `protos` (boxes of type
/// `ty`, dropped by `drop_proto`, of `proto_bytes` bytes), pointing into
/// `edges`, registers it, and asks for a cycle if enough was made since
/// the last one.
pub(crate) fn register(
    heap: Heap,
    protos: Box<[*const ()]>,
    (ty, drop_proto): (TypeId, unsafe fn(*const ())),
    edges: HashSet<usize>,
    proto_bytes: usize,
) -> &'static Area {
    let bytes = (heap.heap_words() + heap.fragment_words()) * 8 + proto_bytes;
    let area: &'static Area = Box::leak(Box::new(Area {
        pins: AtomicUsize::new(0),
        seen: AtomicU64::new(0),
        protos,
        ty,
        drop_proto,
        edges: edges.into_iter().map(|a| a as *const Area).collect(),
        bytes,
    }));
    let token = area as *const Area as usize as u64;
    lona_term::make_freeable(heap, token);
    let start = {
        let mut r = registry();
        r.areas.insert(token as usize);
        r.bytes += bytes;
        r.new_areas += 1;
        r.new_bytes += bytes;
        r.new_areas >= trigger_areas() || r.new_bytes >= TRIGGER_BYTES
    };
    if start {
        request_cycle();
    }
    area
}

/// Asks the collector for a cycle soon (what [`set_trigger`] set; nothing
/// before that).
pub fn request_cycle() {
    if let Some(poke) = TRIGGER.get() {
        poke();
    }
}

/// Takes `dead` out of the registry (the first part of freeing them).
///
/// # Safety
/// The areas are registered and alive, and the caller frees them.
pub(crate) unsafe fn unregister(dead: &[AreaRef]) {
    let mut r = registry();
    for a in dead {
        r.areas.remove(&a.0);
        // SAFETY: alive until the caller frees it.
        r.bytes -= unsafe { a.get() }.bytes;
    }
}

/// Makes an area of `heap` alone (a var's value copied into permanent
/// memory) and registers it.
pub(crate) fn make_value(heap: Heap) {
    let mut edges = HashSet::new();
    heap_edges(&heap, &mut edges);
    register(
        heap,
        Box::new([]),
        (TypeId::of::<()>(), drop_nothing),
        edges,
        0,
    );
}

/// The `drop_proto` of an area without prototypes: never called.
unsafe fn drop_nothing(_: *const ()) {}

/// What a visit asks of a process (step 3): report the areas you hold.
pub struct Sweep {
    pub(crate) cycle: u64,
}

impl Sweep {
    /// Reports the closures in a fragment the process
    /// holds outside its heap (its start, unpinned).
    pub fn fragment(&self, f: &lona_term::Fragment) {
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
    pub fn heap_word(&self, bits: u64) {
        if let Some(a) = area_of_bits(bits) {
            a.touch(self.cycle);
        }
    }

    /// Reports what a heap holds outside itself (plus `extra` words).
    pub fn heap(&self, heap: &Heap, extra: &[u64]) {
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
pub struct Census {
    unmanaged: bool,
}

impl Census {
    /// A VM outside any process.
    pub fn unmanaged() -> Census {
        UNMANAGED_MADE.fetch_add(1, SeqCst);
        UNMANAGED_LIVE.fetch_add(1, SeqCst);
        Census { unmanaged: true }
    }

    /// A VM inside a process (or inside a step of one).
    pub fn managed() -> Census {
        Census { unmanaged: false }
    }

    /// The VM is now a process's, visited from now on. A cycle under way
    /// may not have asked it: counting it as made makes that cycle free
    /// nothing.
    pub fn adopt(&mut self) {
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

// ---- The collector's side: what a cycle reads and frees. ----

/// An area in the registry, named by its address; valid until [`free`](crate::collect::free)
/// frees it, which only the collector does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AreaRef(pub(crate) usize);

impl AreaRef {
    /// The area.
    ///
    /// # Safety
    /// The area is not freed (it was listed by this cycle, or reached
    /// through an edge of one that was, and only the caller frees).
    pub(crate) unsafe fn get(self) -> &'static Area {
        // SAFETY: per the caller.
        unsafe { &*(self.0 as *const Area) }
    }

    /// Whether step 4 keeps it by itself: pinned, or seen in `cycle`.
    ///
    /// # Safety
    /// The area is not freed (it was listed by this cycle, or reached
    /// through an edge of one that was, and only the caller frees).
    pub unsafe fn kept(self, cycle: u64) -> bool {
        // SAFETY: per the caller.
        let a = unsafe { self.get() };
        a.pins.load(SeqCst) > 0 || a.seen.load(SeqCst) >= cycle
    }

    /// The areas it points into.
    ///
    /// # Safety
    /// The area is not freed (it was listed by this cycle, or reached
    /// through an edge of one that was, and only the caller frees).
    pub unsafe fn edges(self) -> impl Iterator<Item = AreaRef> {
        // SAFETY: per the caller; edges point at areas that are alive,
        // for the area pointing at them is.
        unsafe { self.get() }
            .edges
            .iter()
            .map(|a| AreaRef(*a as usize))
    }
}

/// Whether the area at `addr` is registered (not freed): tests.
#[doc(hidden)]
pub fn registered(addr: usize) -> bool {
    registry().areas.contains(&addr)
}

/// VMs outside any process alive now, and ever made (the module doc):
/// a cycle frees nothing unless the first is 0 and the second the same
/// at its start and its end.
pub fn unmanaged() -> (usize, u64) {
    (UNMANAGED_LIVE.load(SeqCst), UNMANAGED_MADE.load(SeqCst))
}

/// Step 1: bumps the cycle and lists the areas it may free. Returns the
/// new cycle's number.
pub fn begin_cycle() -> (u64, Vec<AreaRef>) {
    let n = CYCLE.fetch_add(1, SeqCst) + 1;
    let mut r = registry();
    r.new_areas = 0;
    r.new_bytes = 0;
    (n, r.areas.iter().map(|a| AreaRef(*a)).collect())
}

/// Step 2: the areas of every var's value.
pub fn var_areas() -> Vec<AreaRef> {
    VARS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|v| area_of_bits(v.load(Acquire)))
        .map(|a| AreaRef(a as *const Area as usize))
        .collect()
}

/// The sweep of cycle `n`, for step 3's visits.
pub fn sweep(cycle: u64) -> Sweep {
    Sweep { cycle }
}

/// Areas alive now, and the bytes they hold.
pub fn alive() -> (usize, usize) {
    let r = registry();
    (r.areas.len(), r.bytes)
}
