//! A process that receives large binaries and drops them collects before
//! they pile up, however little its heap words grow (BEAM's virtual
//! binary heap: `heap.rs`, "Large binaries count too"). One test per
//! file: the shared-binary byte counter is process-wide.

use lona_term::{shared_binary_bytes, Fragment, Heap, Term, View, VHEAP_MIN_BYTES};

fn int(i: i64) -> Term<'static> {
    Term::small_int(i).unwrap()
}

/// The elements of a vector.
fn items<'h>(t: Term<'h>) -> Vec<Term<'h>> {
    match t.view() {
        View::Vector(v) => v.to_vec(),
        _ => panic!("not a vector"),
    }
}

fn bytes_of(t: Term<'_>) -> &[u8] {
    match t.view() {
        View::Binary(b) => b,
        _ => panic!("not a binary"),
    }
}

/// A message `[i <<1 MiB>>]` made on a sender's heap that is gone when
/// it arrives.
fn message(i: i64) -> Fragment {
    let sender = Heap::new();
    let bytes = vec![(i % 251) as u8; 1 << 20];
    let m = sender.vector(&[int(i), sender.binary(&bytes)]);
    Fragment::new(m)
}

/// Collects as the interpreter does at a safe point.
fn safe_point(h: &mut Heap) {
    if h.needs_gc() {
        h.collect(0).unwrap();
    }
}

#[test]
fn received_binaries_are_freed_at_a_bounded_distance() {
    let base = shared_binary_bytes();
    let mut h = Heap::new();
    // A heap of many words, so that its words alone would not ask for a
    // collection in hundreds of messages.
    let big: Vec<Term<'_>> = (0..20_000).map(int).collect();
    let v = h.vector(&big);
    let keep = h.add_root(v);
    h.collect(0).unwrap();

    // 1. Messages dropped as they come: at most what the limit lets in
    //    before a collection, plus the message in hand.
    let mut peak = 0;
    for i in 0..300 {
        let t = h.attach(message(i));
        assert_eq!(items(t)[0], int(i));
        peak = peak.max(shared_binary_bytes() - base);
        safe_point(&mut h);
    }
    let bound = VHEAP_MIN_BYTES + 2 * (1 << 20);
    assert!(peak <= bound, "{peak} bytes held (bound {bound})");

    // 2. Binaries kept: none is freed while held, and the limit follows
    //    what is held, so collections do not come at every message.
    let mut kept = Vec::new();
    for i in 0..64 {
        let t = h.attach(message(i));
        kept.push(h.add_root(t));
        safe_point(&mut h);
    }
    assert!(shared_binary_bytes() - base >= 64 << 20);
    for (i, r) in kept.iter().enumerate() {
        let v = h.root(*r);
        let it = items(v);
        assert_eq!(it[0], int(i as i64));
        assert_eq!(bytes_of(it[1])[77], (i % 251) as u8);
    }
    let before = h.gc_counts();
    for i in 0..16 {
        let _ = h.attach(message(i));
        safe_point(&mut h);
    }
    let minors = h.gc_counts().minor - before.minor;
    assert!(
        minors <= 2,
        "{minors} collections for 16 MiB beside 64 held"
    );

    // 3. Let them go: they are freed (by a major collection once the
    //    survivors outgrow what the last major one left), without any
    //    explicit full sweep.
    for r in kept {
        h.remove_root(r);
    }
    for i in 0..200 {
        let _ = h.attach(message(i));
        safe_point(&mut h);
    }
    let held = shared_binary_bytes() - base;
    assert!(
        held <= bound,
        "{held} bytes still held after the roots went"
    );
    assert_eq!(items(h.root(keep)).len(), 20_000);
}
