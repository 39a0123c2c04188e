//! Allocation that cannot go on unwinds with a `HeapError` payload instead
//! of aborting the node (`heap.rs`, "Allocation failure and the size
//! limit"): the allocator cannot back a block, or the heap's owner goes
//! far past its `max_heap_size` between two collections.

use std::panic::{catch_unwind, AssertUnwindSafe};

use lona_term::{Heap, HeapConfig, HeapError, Term, OVERFLOW_LIMIT_FACTOR};

/// 10^15 words (8 PB): more than any address space can back.
const IMPOSSIBLE: usize = 1_000_000_000_000_000;

/// Runs `f`, expecting it to unwind with a `HeapError`.
fn unwinds_with(f: impl FnOnce()) -> HeapError {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("expected an unwind with a HeapError"),
        Err(p) => *p.downcast::<HeapError>().expect("a HeapError payload"),
    }
}

fn limited(max: usize) -> Heap {
    Heap::with_config(HeapConfig {
        max_heap_size: max,
        ..HeapConfig::default()
    })
}

#[test]
fn a_heap_the_allocator_cannot_back_is_an_error_not_an_abort() {
    let config = HeapConfig {
        min_heap_size: IMPOSSIBLE,
        ..HeapConfig::default()
    };
    match Heap::try_with_config(config) {
        Err(HeapError::OutOfMemory { bytes }) => assert!(bytes >= IMPOSSIBLE * 8),
        other => panic!("expected OutOfMemory, got {:?}", other.map(|_| ())),
    }
    let e = unwinds_with(|| drop(Heap::with_config(config)));
    assert!(matches!(e, HeapError::OutOfMemory { .. }), "{e:?}");
    assert!(e.to_string().starts_with("out of memory"), "{e}");
}

#[test]
fn one_object_larger_than_the_limit_unwinds_before_it_is_allocated() {
    let h = limited(1000);
    let items = vec![Term::NIL; 2000];
    let e = unwinds_with(|| {
        h.vector(&items);
    });
    match e {
        HeapError::MaxHeapSize { words, max } => {
            assert_eq!(max, 1000);
            assert!(words > 2000, "{words}");
        }
        other => panic!("{other:?}"),
    }
    // The heap is still usable: the object was never allocated.
    let v = h.vector(&[Term::TRUE]);
    assert_eq!(v.to_string(), "[true]");
}

#[test]
fn allocating_many_times_the_limit_between_collections_unwinds() {
    // Garbage up to several times the limit between two collections is
    // what a slice of an ordinary process makes: allowed.
    let mut h = limited(1000);
    for _ in 0..1000 {
        h.cons(Term::NIL, Term::NIL);
    }
    assert!(h.collect(0).is_ok());
    // Far past it (a built-in building a value many times the limit):
    // unwinds while building, long before all of it is allocated.
    let e = unwinds_with(|| {
        for _ in 0..1_000_000 {
            h.cons(Term::NIL, Term::NIL);
        }
    });
    match e {
        HeapError::MaxHeapSize { words, max } => {
            assert_eq!(max, 1000);
            assert!(words > 1000 * OVERFLOW_LIMIT_FACTOR, "{words}");
            assert!(words < 1000 * OVERFLOW_LIMIT_FACTOR * 3, "{words}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_limit_a_large_value_is_built() {
    let h = Heap::new();
    let mut t = Term::EMPTY_LIST;
    for i in 0..100_000 {
        t = h.cons(h.int(i), t);
    }
    assert_eq!(t.list_iter().count(), 100_000);
}

#[test]
fn set_max_heap_size_applies_from_the_next_collection() {
    let mut h = Heap::new();
    let items: Vec<Term<'_>> = (0..500).map(|i| h.int(i)).collect();
    let r = h.add_root(h.list(&items));
    assert!(h.collect(0).is_ok());
    h.set_max_heap_size(100);
    assert_eq!(h.config().max_heap_size, 100);
    assert!(matches!(
        h.collect(0),
        Err(HeapError::MaxHeapSize { max: 100, .. })
    ));
    assert_eq!(h.root(r).list_iter().count(), 500);
    h.set_max_heap_size(0);
    assert!(h.collect(0).is_ok());
}
