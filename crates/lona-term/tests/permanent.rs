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

/// The owner of a freeable block is found again and again (each thread
/// keeps the last range it found: `ranges.rs`), and once the block is
/// freed no thread finds it: not this one, which asked just before, nor
/// another that asked before and asks again after.
#[test]
fn a_freed_range_is_not_permanent_even_to_a_thread_that_just_asked() {
    use lona_term::{free_permanent, is_permanent, make_freeable, permanent_owner_of};
    let lit = Heap::new();
    let bits = lit.string("a freeable literal").bits();
    let other = lit.vector(&[Term::keyword("k")]).bits();
    make_freeable(lit, 77);
    for _ in 0..3 {
        assert_eq!(permanent_owner_of(bits), Some(77));
        assert_eq!(permanent_owner_of(other), Some(77));
    }
    let (asked, go) = (
        std::sync::Arc::new(std::sync::Barrier::new(2)),
        std::sync::Arc::new(std::sync::Barrier::new(2)),
    );
    let (a2, g2) = (asked.clone(), go.clone());
    let peer = std::thread::spawn(move || {
        let before = permanent_owner_of(bits);
        a2.wait();
        g2.wait();
        (before, permanent_owner_of(bits), is_permanent(other))
    });
    asked.wait();
    // SAFETY: nothing holds a term of that heap: only its words' bits
    // are kept, as numbers, and never read as terms again.
    unsafe { free_permanent(&[77]) };
    go.wait();
    assert_eq!(permanent_owner_of(bits), None);
    assert!(!is_permanent(other));
    assert_eq!(peer.join().unwrap(), (Some(77), None, false));
}
