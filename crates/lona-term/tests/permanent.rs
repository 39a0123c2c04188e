//! Permanent terms (literals) are shared by heaps and never moved or
//! overwritten by their collections.

use lona_term::{equal, make_permanent, permanent_term, Heap, Term, View};

#[test]
fn heaps_point_at_permanent_terms_across_collections() {
    let lit = Heap::new();
    let s = lit.string("a literal string");
    let v = lit.vector(&[Term::keyword("ok"), s, lit.list(&[lit.int(1), lit.int(2)])]);
    let raw = v.raw();
    make_permanent(lit);
    // SAFETY: raw is a term of the heap just made permanent.
    let v = unsafe { permanent_term(raw) };
    let printed = v.to_string();

    let mut h = Heap::new();
    for round in 0..50 {
        // a safe store of a permanent term is accepted
        let cell = h.cons(v, h.int(round));
        h.set_reg(0, h.cons(cell, h.reg(0)));
        let _garbage = h.list(&[h.int(1); 40]);
        if round % 7 == 0 {
            h.collect_major(0).unwrap();
        } else {
            h.collect(0).unwrap();
        }
    }
    // every car still is the very same permanent word, intact
    let mut n = 0;
    for cell in h.reg(0).list_iter() {
        let View::Cons(car, _) = cell.view() else {
            panic!("not a cons")
        };
        assert!(car.same(v));
        n += 1;
    }
    assert_eq!(n, 50);
    assert_eq!(v.to_string(), printed);
    let copy = h.copy_from(v);
    assert!(equal(copy, v));
    assert!(!copy.same(v));
}

#[test]
#[should_panic(expected = "another heap")]
fn a_term_of_another_live_heap_is_still_refused() {
    let a = Heap::new();
    let b = Heap::new();
    let s = a.string("x");
    let _ = b.cons(s, Term::EMPTY_LIST);
}
