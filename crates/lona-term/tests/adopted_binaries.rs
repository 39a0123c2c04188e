//! Binaries the ETF decoder adopts and the spliced encoder references
//! rather than copies: each holder keeps the bytes, the last frees them.
//! (A binary of their own: `shared_binaries.rs` counts the live shared
//! binaries of its process, which these tests would change under it.)

use lona_term::{Fragment, Heap};

/// A message of one large binary decoded from a buffer shares the
/// buffer (no copy); the buffer is freed with the binary's last holder,
/// in whatever heap or fragment; a binary that is not most of its
/// buffer, or small, is copied as before.
#[test]
fn adopted_binaries_share_their_buffer_until_the_last_holder() {
    use lona_term::etf::{self, tag::*, AtomBudget, Node};
    use lona_term::{Atom, Term, View};
    use std::sync::Arc;
    let node = Node {
        name: Atom::new("a@b"),
        creation: 1,
    };
    // Ten bytes of something else (a control message), then
    // `{blob, <<n bytes>>}`.
    let message = |n: usize| {
        let mut v = vec![0xaa; 10];
        v.extend([SMALL_TUPLE_EXT, 2, SMALL_ATOM_UTF8_EXT, 4]);
        v.extend(b"blob");
        v.push(BINARY_EXT);
        v.extend((n as u32).to_be_bytes());
        v.extend((0..n).map(|i| i as u8));
        v
    };
    let inside = |b: &[u8], buf: &[u8]| {
        let r = buf.as_ptr_range();
        r.contains(&b.as_ptr()) && b.len() <= buf.len()
    };
    let n = etf::ADOPT_MIN + 1000;
    let buf = Arc::new(message(n));
    let frag = {
        let heap = Heap::new();
        let mut budget = AtomBudget::new(10);
        let (t, used) = etf::decode_node_body_in(&heap, &buf, 10, &mut budget, &node).unwrap();
        assert_eq!(used, buf.len() - 10);
        let View::Vector(v) = t.view() else { panic!() };
        assert_eq!(v[0], Term::keyword("blob"));
        let View::Binary(b) = v[1].view() else {
            panic!()
        };
        assert!(b.iter().enumerate().all(|(i, &x)| x == i as u8) && b.len() == n);
        assert!(inside(b, &buf), "not copied");
        assert_eq!(Arc::strong_count(&buf), 2);
        // Another holder, then the heap goes: the buffer stays.
        Fragment::new(v[1])
    };
    assert_eq!(Arc::strong_count(&buf), 2);
    let View::Binary(b) = frag.root().view() else {
        panic!()
    };
    assert!(inside(b, &buf) && b.len() == n);
    drop(frag);
    assert_eq!(Arc::strong_count(&buf), 1, "freed with the last holder");
    // Small, or not most of the buffer: copied.
    for (n, extra) in [(1000, 0), (etf::ADOPT_MIN, 3 * etf::ADOPT_MIN)] {
        let mut v = message(n);
        v.extend(std::iter::repeat_n(0, extra));
        let buf = Arc::new(v);
        let heap = Heap::new();
        let mut budget = AtomBudget::new(10);
        let (t, _) = etf::decode_node_body_in(&heap, &buf, 10, &mut budget, &node).unwrap();
        let View::Vector(v) = t.view() else { panic!() };
        let View::Binary(b) = v[1].view() else {
            panic!()
        };
        assert!(!inside(b, &buf) && b.len() == n);
        assert_eq!(Arc::strong_count(&buf), 1);
    }
    // A start beyond the buffer is an error, not a panic.
    let heap = Heap::new();
    let mut budget = AtomBudget::new(10);
    assert!(etf::decode_node_body_in(&heap, &buf, buf.len() + 1, &mut budget, &node).is_err());
}

/// A spliced encoding is the copied one with its large binaries
/// referenced, not copied: put back at their offsets they give the
/// same bytes; each reference holds a count, so the bytes outlive the
/// heap the message was on; small binaries and those under `min` are
/// copied as before.
#[test]
fn spliced_encoding_equals_the_copy_and_outlives_the_heap() {
    use lona_term::etf::{self, Node};
    use lona_term::Atom;
    let node = Node {
        name: Atom::new("a@b"),
        creation: 1,
    };
    let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let text = "t".repeat(3000);
    let (copied, mut out, splices) = {
        let heap = Heap::new();
        let b = heap.binary(&big);
        let t = heap.vector(&[
            b,
            heap.binary(b"small"),
            heap.string(&text),
            heap.binary(&big[..200]),
            b,
        ]);
        let copied = etf::encode_node(t, &node).unwrap();
        let mut out = vec![etf::VERSION];
        let mut splices = Vec::new();
        etf::encode_node_spliced(&mut out, t, &node, 1000, &mut splices).unwrap();
        assert_eq!(b.shared_refcount(), Some(1 + 2), "two references held");
        (copied, out, splices)
    };
    // The heap is gone; the references still read their bytes.
    let lens: Vec<usize> = splices.iter().map(|(_, b)| b.len()).collect();
    assert_eq!(lens, [5000, 3000, 5000]);
    assert!(splices.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(out.len() < copied.len() - 12000);
    for (at, b) in splices.iter().rev() {
        out.splice(*at..*at, b.iter().copied());
    }
    assert_eq!(out, copied);
    let c = splices[0].1.clone();
    drop(splices);
    assert_eq!(&c[..], &big[..]);
}
