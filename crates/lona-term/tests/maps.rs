//! Maps at any size: the flat form up to 32 keys, the trie above, and the
//! same semantics (equality, order, hash, printing, copies, collections,
//! codec) across both.

use std::collections::BTreeMap;

use lona_term::{
    compare, decode, encode, equal, term_hash, Fragment, Heap, HeapConfig, Term, View,
    MAP_SMALL_MAX,
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

/// The map `frequencies` makes, by assoc-ing one item at a time: the
/// model `Heap::frequencies` and `Heap::frequencies_into` must agree with.
fn counted_one_at_a_time<'h>(heap: &'h Heap, from: Term<'h>, items: &[Term<'_>]) -> Term<'h> {
    let mut m = from;
    for x in items {
        let n = m.map_get(*x).and_then(|c| c.as_i64()).unwrap_or(0);
        m = heap.map_assoc(m, *x, heap.int(n + 1)).unwrap();
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Counted at once, or in chunks into an existing map, the counts are
    /// those of one `assoc` per item: the same keys and counts, below and
    /// above the flat form's 32 keys.
    #[test]
    fn frequencies_agree_with_one_assoc_per_item(
        ks in prop::collection::vec(0i64..120, 0..400),
        cut in 0usize..400,
    ) {
        let heap = Heap::new();
        let items: Vec<Term<'_>> = ks.iter().map(|k| key(&heap, *k)).collect();
        let model = counted_one_at_a_time(&heap, heap.map(&[]), &items);
        let at_once = heap.frequencies(&items);
        prop_assert!(equal(at_once, model));
        prop_assert_eq!(term_hash(at_once), term_hash(model));
        let cut = cut.min(items.len());
        let first = heap.frequencies(&items[..cut]);
        let chunked = heap.frequencies_into(first, &items[cut..]).unwrap();
        prop_assert!(equal(chunked, model));
        let View::Map(mv) = chunked.view() else { panic!("not a map") };
        prop_assert_eq!(mv.flat().is_some(), mv.len() <= MAP_SMALL_MAX);
    }
}

#[test]
fn frequencies_keep_the_first_of_equal_keys_and_refuse_non_counts() {
    let heap = Heap::new();
    let v = heap.vector(&[]);
    let m = heap.frequencies(&[v, Term::EMPTY_LIST, v]);
    let View::Map(mv) = m.view() else { panic!() };
    let (k, n) = mv.iter().next().unwrap();
    assert!(matches!(k.view(), View::Vector(_)), "the first key stays");
    assert_eq!(n.as_i64(), Some(3));
    let m = heap.frequencies_into(m, &[Term::EMPTY_LIST]).unwrap();
    let View::Map(mv) = m.view() else { panic!() };
    assert!(matches!(
        mv.iter().next().unwrap().0.view(),
        View::Vector(_)
    ));
    assert_eq!(m.map_get(v).and_then(|n| n.as_i64()), Some(4));
    let not_counts = heap.map(&[(heap.int(1), Term::keyword("x"))]);
    assert!(heap.frequencies_into(not_counts, &[heap.int(1)]).is_none());
    assert!(heap.frequencies_into(heap.int(1), &[]).is_none());
}

/// `Heap::frequencies` writes the map once: the words it allocates are the
/// map's (a few per key), not a copied path of the trie per item (about
/// a hundred per item at this size), which a built-in could not collect.
#[test]
fn frequencies_allocate_only_the_map() {
    let n = 100_000usize;
    let heap = Heap::with_config(HeapConfig {
        min_heap_size: 4_000_000,
        ..HeapConfig::default()
    });
    let items: Vec<Term<'_>> = (0..2 * n as i64)
        .map(|i| heap.binary(&(i % n as i64).to_le_bytes()))
        .collect();
    let before = heap.young_used();
    let m = heap.frequencies(&items);
    let words = heap.young_used() - before;
    assert_eq!(heap.fragment_words(), 0, "all in the young block");
    assert_eq!(m.map_len(), Some(n));
    assert_eq!(
        m.map_get(heap.binary(&7i64.to_le_bytes()))
            .and_then(|c| c.as_i64()),
        Some(2)
    );
    assert!(words < 4 * n, "{words} words for {n} keys");
    // the model, one assoc per item, for scale
    let before = heap.young_used();
    let model = counted_one_at_a_time(&heap, heap.map(&[]), &items[..n]);
    let model_words = heap.young_used() + heap.fragment_words() - before;
    assert!(model_words > 20 * n, "{model_words}");
    assert_eq!(model.map_len(), Some(n));
}
