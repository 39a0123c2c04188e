//! Maps at any size: the flat form up to 32 keys, the trie above, and the
//! same semantics (equality, order, hash, printing, copies, collections,
//! codec) across both.

use std::collections::BTreeMap;

use lona_term::{
    compare, decode, encode, equal, term_hash, Fragment, Heap, Term, View, MAP_SMALL_MAX,
};
use proptest::prelude::*;

fn key<'h>(heap: &'h Heap, k: i64) -> Term<'h> {
    match k % 4 {
        0 => heap.int(k),
        1 => Term::keyword(&format!("k{k}")),
        2 => heap.string(&format!("s{k}")),
        _ => heap.vector(&[heap.int(k), Term::NIL]),
    }
}

fn check_against(heap: &Heap, m: Term<'_>, model: &BTreeMap<i64, i64>) {
    let View::Map(mv) = m.view() else {
        panic!("not a map")
    };
    assert_eq!(mv.len(), model.len());
    assert_eq!(m.map_len(), Some(model.len()));
    for (k, v) in model {
        assert_eq!(
            mv.get(key(heap, *k)).and_then(|t| t.as_i64()),
            Some(*v),
            "key {k}"
        );
    }
    assert!(mv.get(key(heap, 1_000_000)).is_none());
    assert_eq!(mv.iter().count(), model.len());
    // key order agrees with the term order
    let sorted = mv.sorted_pairs();
    assert!(sorted.windows(2).all(|w| compare(w[0].0, w[1].0).is_lt()));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn assoc_dissoc_get_agree_with_a_model(ops in prop::collection::vec((any::<bool>(), 0i64..80, any::<i64>()), 0..300)) {
        let heap = Heap::new();
        let mut m = heap.map(&[]);
        let mut model = BTreeMap::new();
        for (add, k, v) in ops {
            if add {
                m = heap.map_assoc(m, key(&heap, k), heap.int(v)).unwrap();
                model.insert(k, v);
            } else {
                m = heap.map_dissoc(m, key(&heap, k)).unwrap();
                model.remove(&k);
            }
        }
        check_against(&heap, m, &model);
        // the same entries built at once are the same map
        let pairs: Vec<(Term<'_>, Term<'_>)> = model.iter().map(|(k, v)| (key(&heap, *k), heap.int(*v))).collect();
        let built = heap.map(&pairs);
        prop_assert!(equal(m, built));
        prop_assert_eq!(term_hash(m), term_hash(built));
        prop_assert_eq!(m.to_string().len(), built.to_string().len());
    }
}

#[test]
fn the_threshold_is_crossed_both_ways() {
    let heap = Heap::new();
    let mut m = heap.map(&[]);
    for i in 0..100 {
        m = heap.map_assoc(m, key(&heap, i), heap.int(-i)).unwrap();
    }
    let mut model: BTreeMap<i64, i64> = (0..100).map(|i| (i, -i)).collect();
    for i in (0..100).rev() {
        m = heap.map_dissoc(m, key(&heap, i)).unwrap();
        model.remove(&i);
        check_against(&heap, m, &model);
        let flat = m.view();
        let View::Map(mv) = flat else { panic!() };
        assert_eq!(
            mv.flat().is_some(),
            model.len() <= MAP_SMALL_MAX,
            "at {}",
            model.len()
        );
    }
    assert!(equal(m, heap.map(&[])));
}

#[test]
fn insertion_order_does_not_matter() {
    let heap = Heap::new();
    let (mut a, mut b) = (heap.map(&[]), heap.map(&[]));
    for i in 0..500 {
        a = heap.map_assoc(a, key(&heap, i), heap.int(i)).unwrap();
        b = heap
            .map_assoc(b, key(&heap, 499 - i), heap.int(499 - i))
            .unwrap();
    }
    assert!(equal(a, b));
    assert_eq!(term_hash(a), term_hash(b));
    let c = heap.map_assoc(b, key(&heap, 7), heap.int(0)).unwrap();
    assert!(!equal(a, c));
    // order: by size first, then keys, then values (Erlang)
    let smaller = heap.map_dissoc(a, key(&heap, 3)).unwrap();
    assert!(compare(smaller, a).is_lt());
    assert_eq!(compare(a, c), compare(heap.int(7), heap.int(0)));
}

#[test]
fn large_maps_survive_collections_copies_and_the_codec() {
    let mut heap = Heap::new();
    let mut m = heap.map(&[]);
    for i in 0..2000 {
        m = heap.map_assoc(m, key(&heap, i), heap.int(i * 2)).unwrap();
    }
    heap.set_reg(0, m);
    heap.collect(0).unwrap();
    heap.collect_major(0).unwrap();
    let m = heap.reg(0);
    let model: BTreeMap<i64, i64> = (0..2000).map(|i| (i, i * 2)).collect();
    check_against(&heap, m, &model);
    let other = Heap::new();
    let copy = other.copy_from(m);
    check_against(&other, copy, &model);
    let frag = Fragment::new(m);
    assert!(equal(frag.root(), m));
    let bytes = encode(m).unwrap();
    let back = decode(&other, &bytes).unwrap();
    assert!(equal(back, m));
    assert_eq!(term_hash(back), term_hash(m));
}

#[test]
fn twenty_thousand_keys_one_at_a_time() {
    let mut heap = Heap::new();
    let mut m = heap.map(&[]);
    heap.set_reg(0, m);
    for i in 0..20_000i64 {
        m = heap.reg(0);
        let n = heap.map_assoc(m, heap.int(i), heap.int(2 * i)).unwrap();
        heap.set_reg(0, n);
        if heap.needs_gc() {
            heap.collect(0).unwrap();
        }
    }
    let m = heap.reg(0);
    let View::Map(mv) = m.view() else { panic!() };
    let sum: i64 = (0..20_000)
        .map(|i| mv.get(heap.int(i)).unwrap().as_i64().unwrap())
        .sum();
    assert_eq!(sum, 2 * (19_999 * 20_000 / 2));
    // memory stays proportional to the map, not to the history of assocs
    heap.collect_major(0).unwrap();
    assert!(
        heap.heap_words() < 20_000 * 12,
        "{} words",
        heap.heap_words()
    );
}
