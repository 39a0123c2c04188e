//! A code area's life through the collector's interface, with a
//! machine part whose drop is counted: made, listed by a cycle, held by
//! a pin, reported by a sweep, freed with its prototypes dropped as what
//! they are. (One test: areas are process-wide, and a second test
//! in this binary would make and list areas of its own meanwhile.)

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use lona_compiler::area::{self, AreaRef};
use lona_compiler::bytecode::Proto;
use lona_compiler::collect;
use lona_term::{Heap, HeapConfig, Term};

static DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A machine part that counts its drops.
#[derive(Default)]
struct Counted(u8);

impl Drop for Counted {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, SeqCst);
    }
}

fn heap() -> Heap {
    Heap::with_config(HeapConfig {
        min_heap_size: 1,
        ..Default::default()
    })
}

/// An area of `n` bare prototypes; the first one.
fn make(n: usize) -> &'static Proto<Counted> {
    let protos: Vec<_> = (0..n)
        .map(|i| Proto::bare(&format!("p{i}"), Vec::new(), None, Counted(i as u8)).into_raw())
        .collect();
    // SAFETY: given up just now; the area frees it, after the test's last
    // use of this reference.
    let first = unsafe { protos[0].as_ref() };
    // SAFETY: boxes given up just now, in no area, reached by nothing
    // else.
    unsafe { collect::make(protos, heap()) };
    first
}

fn listed(list: &[AreaRef], a: AreaRef) -> bool {
    list.contains(&a)
}

#[test]
fn an_area_is_kept_while_held_or_reached_and_freed_with_its_prototypes() {
    let p = make(3);
    let a = collect::area_of(p).expect("made");
    assert!(area::alive().0 >= 1);

    // A cycle lists it; nothing holds it but a pin.
    collect::hold(p);
    let (n, list) = area::begin_cycle();
    assert!(listed(&list, a));
    // SAFETY: listed by this cycle; only this test frees.
    assert!(unsafe { a.kept(n) }, "a pinned area is kept");
    // SAFETY: the hold above.
    unsafe { collect::release(p) };

    // The next cycle: not pinned, not seen since it began.
    let (n, list) = area::begin_cycle();
    assert!(listed(&list, a));
    // SAFETY: as above.
    assert!(!unsafe { a.kept(n) }, "nothing holds it");
    // A sweep's report keeps it for this cycle.
    area::sweep(n).proto(p);
    // SAFETY: as above.
    assert!(unsafe { a.kept(n) }, "a process reported it");

    // Its heap and constants point nowhere else: no edge.
    let q = make(1);
    let b = collect::area_of(q).unwrap();
    // SAFETY: both alive, only this test frees.
    assert_eq!(unsafe { a.edges() }.count(), 0);
    assert_ne!(a, b);

    // Freed: its three prototypes handed to the machine's hook, then
    // dropped as `Proto<Counted>`s, and the area no longer registered.
    let before = DROPPED.load(SeqCst);
    let mut seen = Vec::new();
    // SAFETY: nothing holds `a` or its prototypes any more (`p` is not
    // used after this).
    unsafe {
        collect::free::<Counted>(vec![a], |ps| {
            seen = ps.iter().map(|p| (p.name.to_string(), p.ext.0)).collect()
        })
    };
    assert_eq!(
        seen,
        vec![("p0".into(), 0), ("p1".into(), 1), ("p2".into(), 2)],
        "the hook sees each prototype before it is dropped"
    );
    assert_eq!(DROPPED.load(SeqCst) - before, 3, "each dropped once");

    // A hook of another machine's type sees none of them, and they are
    // still dropped as what they are.
    let before = DROPPED.load(SeqCst);
    let mut others = usize::MAX;
    // SAFETY: as above, for `q`.
    unsafe { collect::free::<u8>(vec![b], |ps| others = ps.len()) };
    assert_eq!(others, 0);
    assert_eq!(DROPPED.load(SeqCst) - before, 1);

    // A var's value copied into permanent memory is an area too.
    let values = lona_compiler::Namespaces::default();
    let v = values.get_or_create("t").intern("v");
    let h = heap();
    v.set_copy(h.vector(&[Term::NIL, Term::TRUE]));
    assert!(!area::var_areas().is_empty(), "step 2 marks its area");
}
