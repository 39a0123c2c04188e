//! Sorted maps and sets (`Kind::SortedMap`/`SortedSet`, `tree.rs`): a
//! comparator and a tree of vector nodes `[key value left right size]`,
//! read as maps and sets; across collections, copies, fragments and the
//! codec; and trees made wrong by hand, which read as wrong but safe.

use lona_term::{decode, encode, equal, term_hash, Fragment, Heap, Term, View};

/// A balanced tree of `keys` (sorted), each mapped to `value(k)`.
fn tree<'h>(h: &'h Heap, keys: &[i64], value: &dyn Fn(i64) -> i64) -> Term<'h> {
    if keys.is_empty() {
        return Term::NIL;
    }
    let mid = keys.len() / 2;
    let l = tree(h, &keys[..mid], value);
    let r = tree(h, &keys[mid + 1..], value);
    h.vector(&[
        h.int(keys[mid]),
        h.int(value(keys[mid])),
        l,
        r,
        h.int(keys.len() as i64),
    ])
}

fn entries(t: Term<'_>) -> Vec<(i64, i64)> {
    let (View::Map(m) | View::Set(m)) = t.view() else {
        panic!("not a map or set: {t}")
    };
    m.iter()
        .map(|(k, v)| (k.as_i64().unwrap(), v.as_i64().unwrap()))
        .collect()
}

#[test]
fn smoke() {
    let h = Heap::new();
    let keys: Vec<i64> = (0..100).collect();
    let m = h.sorted(false, Term::NIL, tree(&h, &keys, &|k| k * 10));
    let View::Map(mv) = m.view() else { panic!() };
    assert_eq!(mv.len(), 100);
    assert!(mv.sorted().is_some());
    assert_eq!(
        entries(m),
        keys.iter().map(|k| (*k, k * 10)).collect::<Vec<_>>()
    );
    let rev: Vec<i64> = mv.iter_rev().map(|(k, _)| k.as_i64().unwrap()).collect();
    assert_eq!(rev, (0..100).rev().collect::<Vec<_>>());
    for k in [0, 37, 99] {
        assert_eq!(mv.get(h.int(k)).and_then(|v| v.as_i64()), Some(k * 10));
    }
    assert!(mv.get(h.int(100)).is_none());
    assert!(mv.get(h.int(-1)).is_none());
    assert_eq!(m.sorted_parts().map(|p| p.0), Some(false));
    assert_eq!(
        format!("{}", h.sorted(false, Term::NIL, tree(&h, &[1, 2], &|k| -k))),
        "{1 -1, 2 -2}"
    );
    // A hash map is not sorted, and is never changed by the tree's rules.
    assert!(h.map(&[]).sorted_parts().is_none());
    assert!(
        h.map_assoc(m, h.int(5), h.int(5)).is_none(),
        "trees change in Lonala"
    );
    assert!(h.map_dissoc(m, h.int(5)).is_none());
}

#[test]
fn equal_and_hash_as_the_hash_map_or_set() {
    let h = Heap::new();
    let keys: Vec<i64> = (0..50).collect();
    let sm = h.sorted(false, Term::NIL, tree(&h, &keys, &|k| k + 1));
    let pairs: Vec<_> = keys.iter().map(|k| (h.int(*k), h.int(k + 1))).collect();
    let hm = h.map(&pairs);
    assert!(equal(sm, hm) && equal(hm, sm));
    assert_eq!(term_hash(sm), term_hash(hm));
    let ss = h.sorted(true, Term::NIL, tree(&h, &keys, &|k| k));
    let hs = h.set(&keys.iter().map(|k| h.int(*k)).collect::<Vec<_>>());
    assert!(equal(ss, hs));
    assert_eq!(term_hash(ss), term_hash(hs));
    assert!(!equal(ss, sm), "a set is not a map");
    // A comparator of its own (any non-nil term here): its order is the
    // tree's, and `get` finds the key equal to the one given.
    let by = h.sorted(true, Term::bool(true), tree(&h, &[3, 2, 1], &|k| k));
    assert_eq!(entries(by), vec![(3, 3), (2, 2), (1, 1)]);
    let View::Set(bv) = by.view() else { panic!() };
    assert_eq!(bv.get(h.int(2)).and_then(|v| v.as_i64()), Some(2));
    assert!(equal(by, h.set(&[h.int(1), h.int(2), h.int(3)])));
    assert_eq!(format!("{by}"), "#{3 2 1}");
}

#[test]
fn survive_collections_copies_fragments_and_the_codec() {
    let mut h = Heap::new();
    let keys: Vec<i64> = (0..2000).collect();
    let m = h.sorted(false, Term::NIL, tree(&h, &keys, &|k| k * 2));
    h.set_reg(0, m);
    h.collect(0).unwrap();
    h.collect_major(0).unwrap();
    let m = h.reg(0);
    let want: Vec<(i64, i64)> = keys.iter().map(|k| (*k, k * 2)).collect();
    assert_eq!(entries(m), want);
    assert!(m.sorted_parts().is_some(), "still sorted after moving");
    let other = Heap::new();
    let copy = other.copy_from(m);
    assert_eq!(entries(copy), want);
    assert!(copy.sorted_parts().is_some());
    let frag = Fragment::new(m);
    assert!(equal(frag.root(), m));
    assert!(frag.root().sorted_parts().is_some());
    // The codec writes it as the map it equals.
    let back = decode(&other, &encode(m).unwrap()).unwrap();
    assert!(equal(back, m));
}

#[test]
fn trees_made_wrong_read_as_wrong_never_unsafe() {
    let h = Heap::new();
    for root in [
        h.int(7),
        h.vector(&[h.int(1), h.int(2)]),
        h.string("no"),
        h.vector(&[h.int(1), h.int(1), Term::NIL, Term::NIL, h.string("x")]),
        h.vector(&[h.int(1), h.int(1), Term::NIL, Term::NIL, h.int(-9)]),
    ] {
        let m = h.sorted(false, Term::NIL, root);
        let View::Map(mv) = m.view() else { panic!() };
        let _ = mv.len();
        let _ = mv.iter().count();
        let _ = mv.get(h.int(1));
        let _ = format!("{m}");
        let _ = term_hash(m);
    }
    // A size that lies is only a count.
    let liar = h.vector(&[h.int(1), h.int(1), Term::NIL, Term::NIL, h.int(1000)]);
    let View::Map(mv) = h.sorted(false, Term::NIL, liar).view() else {
        panic!()
    };
    assert_eq!(mv.len(), 1000);
    assert_eq!(mv.iter().count(), 1);
    // One that claims 2^59 entries allocates for what it has.
    let huge = h.vector(&[h.int(1), h.int(1), Term::NIL, Term::NIL, h.int(1 << 59)]);
    let View::Map(mv) = h.sorted(false, Term::NIL, huge).view() else {
        panic!()
    };
    assert_eq!(mv.iter().count(), 1);
    assert_eq!(mv.iter_rev().count(), 1);
    // A chain 100,000 nodes deep: walked with a stack of its own.
    let mut chain = Term::NIL;
    for k in 0..100_000 {
        chain = h.vector(&[h.int(k), h.int(k), chain, Term::NIL, h.int(k + 1)]);
    }
    let m = h.sorted(true, Term::NIL, chain);
    let View::Set(mv) = m.view() else { panic!() };
    assert_eq!(mv.iter().count(), 100_000);
    assert_eq!(mv.iter().next().and_then(|(k, _)| k.as_i64()), Some(0));
    assert_eq!(mv.get(h.int(0)).and_then(|v| v.as_i64()), Some(0));
}
