//! The collector's side of prototypes: making the area of a compiled
//! form, holding one for a compiling thread, a visit's report of a
//! prototype, and freeing areas with their prototypes. The areas
//! themselves, and the barriers, are `area.rs`'s, which knows no
//! prototype (a closure names its area through the prototype's first
//! field: see [`Proto`]).

use std::any::TypeId;
use std::collections::HashSet;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::*;

use lona_term::Heap;

use crate::area::{self, Area, AreaRef, Sweep};
use crate::bytecode::Proto;

/// Keeps `p`'s area (and so `p`) from being freed until [`release`]:
/// a prototype queued for a compiling thread. The caller runs `p` in
/// this slice (so its area is alive now).
pub fn hold<X: 'static>(p: &Proto<X>) {
    area::pin(p as *const Proto<X> as usize as u64);
}

/// Ends a [`hold`].
///
/// # Safety
/// Each `release` ends one earlier `hold` of the same prototype: another
/// would unpin an area a message still holds.
pub unsafe fn release<X: 'static>(p: &Proto<X>) {
    area::unpin(p as *const Proto<X> as usize as u64);
}

/// The edges of a new area: what `heap` and the constants of `protos`
/// point into outside themselves.
fn edges_of<X: 'static>(heap: &Heap, protos: &[&'static Proto<X>]) -> HashSet<usize> {
    let mut edges: HashSet<usize> = HashSet::new();
    area::heap_edges(heap, &mut edges);
    for p in protos {
        for c in p.consts.iter() {
            if let Some(a) = area::area_of_bits(c.bits()) {
                edges.insert(a as *const Area as usize);
            }
        }
    }
    edges
}

/// Drops a prototype `make` was given.
///
/// # Safety
/// `p` was leaked from a `Box<Proto<X>>`, and nothing uses it.
unsafe fn drop_proto<X: 'static>(p: *const ()) {
    // SAFETY: per the caller.
    drop(unsafe { Box::from_raw(p as *mut Proto<X>) });
}

/// Makes an area of `protos` (prototypes compiled together, leaked by
/// the compiler, none of them published yet) and `heap` (their
/// constants), and registers it.
///
/// # Safety
/// Each prototype is a box given up by [`Proto::into_raw`] (this very
/// pointer), belongs to no area, and
/// from now on it is reached only as the module documentation says
/// (through vars, processes that report it, pinned messages): a cycle
/// frees the area when none of those holds it, whatever else does.
pub unsafe fn make<X: 'static>(protos: Vec<NonNull<Proto<X>>>, heap: Heap) {
    // SAFETY: per the caller, live prototypes, only read from here on.
    let refs: Vec<&'static Proto<X>> = protos.iter().map(|p| unsafe { p.as_ref() }).collect();
    let edges = edges_of(&heap, &refs);
    let proto_bytes = refs
        .iter()
        .map(|p| std::mem::size_of::<Proto<X>>() + p.code.len() * 8 + p.consts.len() * 8)
        .sum::<usize>();
    let area = area::register(
        heap,
        // The boxes' own pointers: what `drop_proto` frees them through.
        protos.iter().map(|p| p.as_ptr() as *const ()).collect(),
        (TypeId::of::<X>(), drop_proto::<X>),
        edges,
        proto_bytes,
    );
    for p in &refs {
        // Release: a thread that reads the area through a closure of `p`
        // (published later, itself with release) sees it made.
        p.area.store(area as *const Area as *mut Area, Release);
    }
}

/// The area `p` belongs to, once [`make`] made it (`None` before, and for
/// code that belongs to none).
pub fn area_of<X: 'static>(p: &Proto<X>) -> Option<AreaRef> {
    let a = p.area.load(Acquire);
    (!a.is_null()).then_some(AreaRef(a as usize))
}

impl Sweep {
    /// Reports a prototype in a frame or trace.
    pub fn proto<X: 'static>(&self, p: &Proto<X>) {
        // SAFETY: (Acquire) the area outlives its prototypes.
        if let Some(a) = unsafe { p.area.load(Acquire).as_ref() } {
            a.touch(self.cycle);
        }
    }
}

/// Frees areas: their heaps, then their prototypes of type `Proto<X>`
/// (`free_codes` is given those first, to free what the machine made for
/// them), taking each lock once.
///
/// # Safety
/// Nothing holds the areas or anything in them, and only the caller
/// frees.
pub unsafe fn free<X: 'static>(dead: Vec<AreaRef>, free_codes: impl FnOnce(&[&Proto<X>])) {
    // SAFETY: per the caller.
    unsafe { area::unregister(&dead) };
    let heaps: Vec<u64> = dead.iter().map(|a| a.0 as u64).collect();
    // SAFETY: per the caller.
    unsafe { lona_term::free_permanent(&heaps) };
    let protos: Vec<&Proto<X>> = dead
        .iter()
        // SAFETY: as above.
        .map(|a| unsafe { a.get() })
        .filter(|a| a.ty == TypeId::of::<X>())
        .flat_map(|a| {
            a.protos.iter().map(|p| {
                // SAFETY: the area's prototypes are `Proto<X>`s (`ty`),
                // alive until dropped below.
                unsafe { &*(*p as *const Proto<X>) }
            })
        })
        .collect();
    free_codes(&protos);
    drop(protos);
    for a in dead {
        // SAFETY: per the caller; the area was leaked from a box in `make`,
        // and each prototype was leaked from a box by the compiler, of the
        // type `drop_proto` drops.
        unsafe {
            let area = Box::from_raw(a.0 as *mut Area);
            for p in area.protos.iter() {
                (area.drop_proto)(*p);
            }
        }
    }
}
