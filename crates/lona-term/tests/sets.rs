//! Sets (a boxed word around a map whose values are its keys) and regex
//! values: small and large sets alike for conj/disj, equality, order,
//! hash, printing, collections, copies into fragments and the codec.

use lona_term::{compare, decode, encode, equal, term_hash, Fragment, Heap, Term, View};

fn elems(t: Term<'_>) -> Vec<i64> {
    let View::Set(m) = t.view() else {
        panic!("not a set: {t}")
    };
    m.sorted_pairs()
        .iter()
        .map(|(k, v)| {
            assert!(equal(*k, *v), "a set's value is its key");
            k.as_i64().unwrap()
        })
        .collect()
}

#[test]
fn conj_disj_at_any_size() {
    let h = Heap::new();
    let mut s = h.set(&[]);
    for i in 0..100 {
        s = h.set_conj(s, h.int(i)).unwrap();
        s = h.set_conj(s, h.int(i)).unwrap();
    }
    assert_eq!(elems(s), (0..100).collect::<Vec<_>>());
    let built = h.set(&(0..100).rev().map(|i| h.int(i)).collect::<Vec<_>>());
    assert!(equal(s, built));
    assert_eq!(term_hash(s), term_hash(built));
    for i in (0..100).step_by(2) {
        s = h.set_disj(s, h.int(i)).unwrap();
    }
    s = h.set_disj(s, h.int(1000)).unwrap();
    assert_eq!(
        elems(s),
        (0..100).filter(|i| i % 2 == 1).collect::<Vec<_>>()
    );
    assert!(h.set_conj(h.int(1), h.int(1)).is_none());
    assert!(h.set_disj(h.map(&[]), h.int(1)).is_none());
}

#[test]
fn sets_are_not_maps_and_order_by_size_then_elements() {
    let h = Heap::new();
    let s = h.set(&[h.int(1), h.int(2)]);
    let m = h.map(&[(h.int(1), h.int(1)), (h.int(2), h.int(2))]);
    assert!(!equal(s, m));
    assert!(compare(m, s).is_lt());
    assert!(compare(h.set(&[h.int(9)]), s).is_lt());
    assert!(compare(s, h.set(&[h.int(1), h.int(3)])).is_lt());
    assert!(compare(s, Term::NIL).is_lt());
    assert_eq!(s.to_string(), "#{1 2}");
    assert_eq!(h.set(&[]).to_string(), "#{}");
}

#[test]
fn survive_collections_and_copies() {
    let mut h = Heap::new();
    let (root, expected, bytes) = {
        let items: Vec<Term<'_>> = (0..40).map(|i| h.string(&format!("s{i}"))).collect();
        let s = h.set(&items);
        let r = h.regex("a\"b+");
        assert_eq!(r.to_string(), "#\"a\\\"b+\"");
        let View::Regex(src) = r.view() else { panic!() };
        assert_eq!(src, "a\"b+");
        let v = h.vector(&[s, r]);
        (h.add_root(v), v.to_string(), encode(v).unwrap())
    };
    h.collect(0).unwrap();
    h.collect_major(0).unwrap();
    let after = h.root(root);
    assert_eq!(after.to_string(), expected);
    let f = Fragment::new(after);
    let h2 = Heap::new();
    let copied = h2.copy_from(f.root());
    assert!(equal(copied, after));
    let d = decode(&h2, &bytes).unwrap();
    assert!(equal(d, after));
}
