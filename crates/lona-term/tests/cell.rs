//! Cells (`cell.rs`): a value shared by every holder, read by copying,
//! replaced by compare-and-set of versions; freed with the last holder,
//! across copies, fragments and collections; refused by the encoders.

use std::sync::Arc;

use lona_term::{compare, encode, equal, etf, term_hash, CellRef, Fragment, Heap, Term, View};

fn cell(t: Term<'_>) -> CellRef<'_> {
    match t.view() {
        View::Cell(c) => c,
        _ => panic!("not a cell: {t}"),
    }
}

/// A string long enough to live off-heap, so its count shows who holds it.
const LONG: &str = "a value long enough to be a shared binary, counted by its holders";

#[test]
fn smoke() {
    let h = Heap::new();
    let a = h.cell([h.int(1), Term::NIL]);
    let c = cell(a);
    let (v, x) = c.read(0, &h);
    assert_eq!((v, x.as_i64()), (0, Some(1)));
    assert!(c.compare_and_set(0, 0, h.int(2)));
    // A stale version loses and changes nothing.
    assert!(!c.compare_and_set(0, 0, h.int(3)));
    let (v, x) = c.read(0, &h);
    assert_eq!((v, x.as_i64()), (1, Some(2)));
    // Slot 1 is separate.
    assert_eq!(c.version(1), 0);
    assert!(c.compare_and_set(1, 0, Term::keyword("meta")));
    assert!(equal(c.read(1, &h).1, Term::keyword("meta")));
    assert_eq!(c.read(0, &h).1.as_i64(), Some(2));
    assert_eq!(format!("{a}"), format!("#atom<{}>", c.serial()));
}

#[test]
fn a_read_is_a_copy_the_next_change_leaves_alone() {
    let h = Heap::new();
    let a = h.cell([h.vector(&[h.int(1), h.string(LONG)]), Term::NIL]);
    let (_, before) = cell(a).read(0, &h);
    assert!(cell(a).compare_and_set(0, 0, h.int(0)));
    assert_eq!(format!("{before}"), format!("[1 \"{LONG}\"]"));
}

#[test]
fn holders_in_other_heaps_share_the_cell() {
    let h1 = Heap::new();
    let a1 = h1.cell([h1.int(0), Term::NIL]);
    let msg = Fragment::new(h1.vector(&[a1]));
    let h2 = Heap::new();
    let got = h2.attach(msg);
    let View::Vector(items) = got.view() else {
        panic!()
    };
    let a2 = items[0];
    assert_eq!(cell(a1).holders(), 2);
    assert!(cell(a2).compare_and_set(0, 0, h2.string("from h2")));
    assert_eq!(cell(a1).read(0, &h1).1.as_str(), Some("from h2"));
    // One cell: equal, same hash, ordered as equal; another is not.
    assert!(equal(a1, a2));
    assert_eq!(term_hash(a1), term_hash(a2));
    assert_eq!(compare(a1, a2), std::cmp::Ordering::Equal);
    let b = h1.cell([h1.int(0), Term::NIL]);
    assert!(!equal(a1, b));
    assert_ne!(compare(a1, b), std::cmp::Ordering::Equal);
}

#[test]
fn the_last_holder_frees_the_cell_and_its_values() {
    let keep = Heap::new();
    let s = keep.string(LONG);
    assert_eq!(s.shared_refcount(), Some(1));
    {
        let h = Heap::new();
        let v = keep.vector(&[s]);
        let a = h.cell([v, v]);
        assert_eq!(s.shared_refcount(), Some(3));
        let f = Fragment::new(a);
        drop(h);
        // The fragment still holds the cell.
        assert_eq!(s.shared_refcount(), Some(3));
        let h2 = Heap::new();
        let a2 = h2.attach(f);
        assert!(cell(a2).compare_and_set(0, 0, Term::NIL));
        // The value replaced was dropped.
        assert_eq!(s.shared_refcount(), Some(2));
    }
    assert_eq!(s.shared_refcount(), Some(1));
}

#[test]
fn destructors_a_cell_in_a_cell_and_garbage_after_a_collection() {
    let keep = Heap::new();
    let s = keep.string(LONG);
    let mut h = Heap::new();
    let r = {
        let inner = h.cell([s, Term::NIL]);
        let outer = h.cell([h.vector(&[inner, h.copy_from(s)]), Term::NIL]);
        // `keep`, the inner cell, `h`'s copy and the outer cell's.
        assert_eq!(s.shared_refcount(), Some(4));
        h.add_root(outer)
    };
    // The root keeps both cells through a collection; `h`'s own copy of
    // the string was garbage (the outer cell holds a copy of the vector).
    h.collect_major(0).expect("collects");
    assert_eq!(s.shared_refcount(), Some(3));
    assert!(matches!(h.root(r).view(), View::Cell(_)));
    h.remove_root(r);
    h.collect_major(0).expect("collects");
    assert_eq!(s.shared_refcount(), Some(1));
}

#[test]
fn stampede_of_increments_from_threads_loses_none() {
    let threads = if cfg!(miri) { 2 } else { 4 };
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    let h = Heap::new();
    let a = h.cell([h.int(0), Term::NIL]);
    let shared = Arc::new(std::sync::Mutex::new(Some(Fragment::new(a))));
    let joins: Vec<_> = (0..threads)
        .map(|_| {
            // Each thread takes its own copy of the cell.
            let f = {
                let g = shared.lock().unwrap();
                Fragment::new(g.as_ref().unwrap().root())
            };
            std::thread::spawn(move || {
                let h = Heap::new();
                let a = h.attach(f);
                let c = cell(a);
                let mut retries = 0u64;
                for _ in 0..rounds {
                    loop {
                        let (v, x) = c.read(0, &h);
                        let next = h.int(x.as_i64().unwrap() + 1);
                        if c.compare_and_set(0, v, next) {
                            break;
                        }
                        retries += 1;
                    }
                }
                retries
            })
        })
        .collect();
    for j in joins {
        j.join().expect("thread");
    }
    let (v, x) = cell(a).read(0, &h);
    let n = (threads * rounds) as i64;
    assert_eq!(x.as_i64(), Some(n));
    assert_eq!(v, n as u64);
    drop(shared);
    assert_eq!(cell(a).holders(), 1);
}

#[test]
fn the_encoders_refuse_a_cell() {
    let h = Heap::new();
    let a = h.cell([h.int(0), Term::NIL]);
    let v = h.vector(&[h.int(1), a]);
    assert!(encode(v).is_err());
    assert!(etf::encode(v).is_err());
    assert!(a.shared_binary().is_none());
}
