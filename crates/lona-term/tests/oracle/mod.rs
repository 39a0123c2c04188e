//! The oracle for decoded terms, shared by the default test suite
//! (`tests/decode_oracle.rs`) and the fuzzer (`fuzz/fuzz_targets/decode.rs`
//! includes this file): whatever [`decode`] accepts from arbitrary bytes
//! must be usable in every way a process uses a message, without a crash,
//! a panic or an inconsistency.
//!
//! Functions never decode (the codec's module documentation), so there is
//! nothing to call: the oracle checks that no decoded term holds one (a
//! term that re-encodes holds none, since [`encode`] refuses functions).
#![allow(dead_code)]

use std::cmp::Ordering;

use lona_term::{compare, decode, encode, equal, term_hash, DecodeError, Fragment, Heap};

/// Decodes `data` and, if it decodes, uses the term every way: print it,
/// compare and hash it with itself and with copies, deep-copy it to
/// another heap and to a fragment that a third heap attaches (a send and
/// a receive), re-encode it, and collect it (minor and major). Returns the
/// decoder's answer.
pub fn check(data: &[u8]) -> Result<(), DecodeError> {
    let mut heap = Heap::new();
    let (bytes, printed, hash, root) = {
        let t = decode(&heap, data)?;
        // no function: it re-encodes, and canonically
        let bytes = encode(t).expect("a decoded term holds no function");
        let again = decode(&heap, &bytes).expect("its encoding decodes");
        assert!(equal(again, t));
        assert_eq!(encode(again).expect("encodes"), bytes);

        // print, compare, hash
        let printed = t.to_string();
        assert_eq!(compare(t, t), Ordering::Equal);
        assert_eq!(compare(t, again), Ordering::Equal);
        let hash = term_hash(t);
        assert_eq!(term_hash(again), hash);

        // a copy to another heap (spawn arguments, a reply)
        let other = Heap::new();
        let c = other.copy_from(t);
        assert!(equal(c, t) && equal(t, c));
        assert_eq!(term_hash(c), hash);
        assert_eq!(c.to_string(), printed);

        // a send: into a fragment, received by a third heap
        let msg = Fragment::new(t);
        assert!(equal(msg.root(), t));
        assert_eq!(msg.root().to_string(), printed);
        let receiver = Heap::new();
        let got = receiver.attach(msg);
        assert!(equal(got, t));
        assert_eq!(term_hash(got), hash);
        assert_eq!(encode(got).expect("encodes"), bytes);

        // as a map key and in a vector beside its copy
        let m = heap.map(&[(t, heap.int(1))]);
        assert!(equal(m, other.map(&[(c, other.int(1))])));
        let v = heap.vector(&[t, again]);
        assert_eq!(v.to_string(), format!("[{printed} {printed}]"));

        (bytes, printed, hash, heap.add_root(t))
    };
    // the collector moves it intact
    heap.collect(0).expect("no heap limit");
    heap.collect_major(0).expect("no heap limit");
    let t = heap.root(root);
    assert_eq!(encode(t).expect("encodes"), bytes);
    assert_eq!(t.to_string(), printed);
    assert_eq!(term_hash(t), hash);
    Ok(())
}
