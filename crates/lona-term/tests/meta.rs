//! Metadata (`meta.rs`): a wrapper that equality, order, hashing,
//! printing and the encoders look through, that copies and collections
//! keep, and that nothing else mistakes for the value it wraps.

use lona_term::{compare, decode, encode, equal, etf, term_hash, Fragment, Heap, Term, View};

fn kw(s: &str) -> Term<'static> {
    Term::keyword(s)
}

#[test]
fn smoke() {
    let h = Heap::new();
    let v = h.vector(&[h.int(1), h.int(2)]);
    let m = h.map(&[(kw("a"), h.int(1))]);
    let w = h.with_meta(v, m).expect("a vector takes metadata");
    assert!(equal(w.meta(), m));
    assert_eq!(w.unmeta().bits(), v.bits());
    assert!(matches!(w.view(), View::Meta { .. }));
    assert!(v.meta().same(Term::NIL));
    // Rule 1: the value is the same value.
    assert!(equal(w, v));
    assert_eq!(term_hash(w), term_hash(v));
    assert_eq!(compare(w, v), std::cmp::Ordering::Equal);
    assert_eq!(format!("{w}"), "[1 2]");
    // As a key: the same key.
    let table = h.map(&[(w, kw("found"))]);
    let View::Map(tm) = table.view() else {
        panic!()
    };
    assert!(tm.get(v).is_some_and(|x| equal(x, kw("found"))));
}

#[test]
fn one_wrapper_and_nil_is_bare() {
    let h = Heap::new();
    let v = h.vector(&[h.int(1)]);
    let m1 = h.map(&[(kw("a"), h.int(1))]);
    let m2 = h.map(&[(kw("b"), h.int(2))]);
    let w1 = h.with_meta(v, m1).unwrap();
    let w2 = h.with_meta(w1, m2).unwrap();
    assert!(equal(w2.meta(), m2));
    assert_eq!(w2.unmeta().bits(), v.bits());
    let bare = h.with_meta(w2, Term::NIL).unwrap();
    assert_eq!(bare.bits(), v.bits());
}

#[test]
fn only_collections_and_maps_as_metadata() {
    let h = Heap::new();
    let m = h.map(&[]);
    for t in [
        h.int(1),
        Term::NIL,
        Term::EMPTY_LIST,
        kw("k"),
        h.string("s"),
        h.cell([h.int(0), Term::NIL]),
    ] {
        assert!(h.with_meta(t, m).is_none(), "{t}");
    }
    let v = h.vector(&[]);
    assert!(h.with_meta(v, h.int(1)).is_none());
    assert!(h.with_meta(v, h.vector(&[])).is_none());
    for t in [h.list(&[h.int(1)]), h.set(&[h.int(1)]), m, h.vector(&[])] {
        assert!(h.with_meta(t, m).is_some(), "{t}");
    }
}

#[test]
fn a_list_with_a_wrapped_tail_is_the_list() {
    let h = Heap::new();
    let m = h.map(&[(kw("t"), Term::TRUE)]);
    let tail = h.with_meta(h.list(&[h.int(2), h.int(3)]), m).unwrap();
    let l = h.cons(h.int(1), tail);
    let plain = h.list(&[h.int(1), h.int(2), h.int(3)]);
    assert_eq!(format!("{l}"), "(1 2 3)");
    assert!(equal(l, plain));
    assert_eq!(term_hash(l), term_hash(plain));
    assert_eq!(l.list_iter().count(), 3);
    let h3 = Heap::new();
    assert_eq!(
        format!("{}", decode(&h3, &encode(l).unwrap()).unwrap()),
        "(1 2 3)"
    );
}

#[test]
fn copies_and_collections_keep_it_and_the_encoders_drop_it() {
    let mut h = Heap::new();
    let m = h.map(&[(kw("doc"), h.string("a value that documents itself"))]);
    let w = h.with_meta(h.vector(&[h.int(7)]), m).unwrap();
    let outer = h.vector(&[w, w]);
    let f = Fragment::new(outer);
    let h2 = Heap::new();
    let got = h2.attach(f);
    let View::Vector(items) = got.view() else {
        panic!()
    };
    assert!(equal(items[0].meta(), m));
    // Through a collection.
    let r = h.add_root(outer);
    h.collect_major(0).expect("collects");
    let outer = h.root(r);
    let View::Vector(items) = outer.view() else {
        panic!()
    };
    assert_eq!(
        format!("{}", items[1].meta()),
        "{:doc \"a value that documents itself\"}"
    );
    // The encoders write the value alone.
    let plain = h.vector(&[h.vector(&[h.int(7)]), h.vector(&[h.int(7)])]);
    assert_eq!(encode(outer).unwrap(), encode(plain).unwrap());
    assert_eq!(etf::encode(outer).unwrap(), etf::encode(plain).unwrap());
}
