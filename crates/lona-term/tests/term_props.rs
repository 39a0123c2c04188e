//! Properties of copy, codec, equality, order and hashing over random term
//! graphs (shared subterms, maps, large binaries, long lists).

mod common;

use std::cmp::Ordering;

use common::*;
use lona_term::{compare, decode, encode, term_hash, Fragment, Heap};
use proptest::prelude::*;

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn deep_copy_equals_original(ops in ops(40)) {
        let h1 = Heap::new();
        let nodes = build_all(&h1, &ops);
        let h2 = Heap::new();
        let h3 = Heap::new();
        for t in &nodes {
            let c = h2.copy_from(*t);
            prop_assert_eq!(c, *t);
            prop_assert_eq!(model(c), model(*t));
            let f = Fragment::new(*t);
            prop_assert_eq!(f.root(), *t);
            let a = h3.attach(f);
            prop_assert_eq!(model(a), model(*t));
        }
    }

    /// `Fragment::vector(items)` is `Fragment::new(heap.vector(items))`,
    /// built without the heap's copy (a spawn's `[f & args]`).
    #[test]
    fn fragment_vector_equals_copied_vector(ops in ops(40)) {
        let h1 = Heap::new();
        let nodes = build_all(&h1, &ops);
        for items in nodes.chunks(3).chain([&nodes[..0], &nodes[..]]) {
            let f = Fragment::vector(items);
            let v = h1.vector(items);
            prop_assert_eq!(f.root(), v);
            prop_assert_eq!(model(f.root()), model(v));
            prop_assert_eq!(f.words(), Fragment::new(v).words());
            let h2 = Heap::new();
            let a = h2.attach(f);
            prop_assert_eq!(model(a), model(v));
        }
    }

    #[test]
    fn codec_roundtrip(ops in ops(40)) {
        let h1 = Heap::new();
        let nodes = build_all(&h1, &ops);
        let h2 = Heap::new();
        for t in &nodes {
            // a term holding a function does not encode; any other does
            let Ok(bytes) = encode(*t) else {
                prop_assert!(has_closure(&model(*t)));
                continue;
            };
            prop_assert!(!has_closure(&model(*t)));
            let back = decode(&h2, &bytes).unwrap();
            prop_assert_eq!(back, *t);
            prop_assert_eq!(model(back), model(*t));
            prop_assert_eq!(encode(back).unwrap(), bytes);
        }
    }

    #[test]
    fn decoder_never_crashes_on_random_bytes(mut bytes in prop::collection::vec(any::<u8>(), 0..300), magic in any::<bool>()) {
        if magic {
            bytes.splice(0..0, [b'L', 1]);
        }
        let h = Heap::new();
        if let Ok(t) = decode(&h, &bytes) {
            // whatever decodes must re-encode to a decodable term equal to it
            let again = decode(&h, &encode(t).unwrap()).unwrap();
            prop_assert_eq!(again, t);
        }
    }

    #[test]
    fn decoder_survives_mutated_encodings(ops in ops(20), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let h1 = Heap::new();
        let nodes = build_all(&h1, &ops);
        let h2 = Heap::new();
        for t in &nodes {
            let Ok(mut bytes) = encode(*t) else { continue };
            for (i, b) in &flips {
                let n = bytes.len();
                bytes[i % n] = *b;
            }
            let _ = decode(&h2, &bytes);
            let n = bytes.len();
            let _ = decode(&h2, &bytes[..cut % (n + 1)]);
        }
    }

    #[test]
    fn hash_consistent_with_equality(ops in ops(30)) {
        let h1 = Heap::new();
        let h2 = Heap::new();
        let a = build_all(&h1, &ops);
        let b = build_all(&h2, &ops);
        for (x, y) in a.iter().zip(b.iter()) {
            prop_assert_eq!(*x, *y);
            prop_assert_eq!(term_hash(*x), term_hash(*y));
        }
        for x in &a {
            for y in &b {
                if x == y {
                    prop_assert_eq!(term_hash(*x), term_hash(*y));
                }
            }
        }
    }

    #[test]
    fn order_is_total_and_consistent(ops in ops(30)) {
        let h1 = Heap::new();
        let h2 = Heap::new();
        let a = build_all(&h1, &ops);
        let b = build_all(&h2, &ops);
        for (i, x) in a.iter().enumerate() {
            for (j, y) in a.iter().enumerate() {
                let o = compare(*x, *y);
                prop_assert_eq!(o, compare(*y, *x).reverse());
                // the same comparison across heaps gives the same answer
                prop_assert_eq!(o, compare(a[i], b[j]));
                prop_assert_eq!(o == Ordering::Equal, eq_model(model(*x)) == eq_model(model(*y)));
                prop_assert_eq!(o == Ordering::Equal, lona_term::equal(*x, *y));
                if o == Ordering::Equal {
                    prop_assert_eq!(term_hash(*x), term_hash(*y));
                }
            }
        }
        let mut sorted = a.clone();
        sorted.sort();
        for i in 0..sorted.len() {
            for j in i + 1..sorted.len() {
                prop_assert!(compare(sorted[i], sorted[j]) != Ordering::Greater);
            }
        }
    }
}

/// Whether the model holds a function anywhere.
fn has_closure(m: &M) -> bool {
    match m {
        M::Closure(..) => true,
        M::List(items, tail) => items.iter().any(has_closure) || has_closure(tail),
        M::Vector(items) => items.iter().any(has_closure),
        M::Map(pairs) => pairs.iter().any(|(k, v)| has_closure(k) || has_closure(v)),
        _ => false,
    }
}
