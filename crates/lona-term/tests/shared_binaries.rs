//! Large binaries are shared by reference count, and every count is given
//! back when the last holder (heap, fragment) lets go. One test per file:
//! the live-binary counter is process-wide.

use lona_term::{live_shared_binaries, Fragment, Heap, Term, View, SHARED_THRESHOLD};

#[test]
fn refcounts_return_to_zero() {
    let base = live_shared_binaries();
    let big = vec![7u8; 1000];
    let text = "x".repeat(SHARED_THRESHOLD);
    {
        let mut a = Heap::new();
        let bin = a.binary(&big);
        let small = a.binary(&big[..SHARED_THRESHOLD - 1]);
        assert_eq!(small.shared_refcount(), None);
        let s = a.string(&text);
        assert_eq!(live_shared_binaries(), base + 2);
        assert_eq!(bin.shared_refcount(), Some(1));
        let msg = a.vector(&[bin, bin, s]);
        let keep = a.add_root(msg);

        // copying shares: one count per copied object
        let b = Heap::new();
        let copy = b.copy_from(msg);
        let View::Vector(items) = copy.view() else {
            panic!()
        };
        assert_eq!(items[0].shared_refcount(), Some(3));
        assert_eq!(live_shared_binaries(), base + 2);

        // through a fragment to another thread's heap
        let frag = Fragment::new(a.root(keep));
        let handle = std::thread::spawn(move || {
            let mut c = Heap::new();
            let t = c.attach(frag);
            let r = c.add_root(t);
            c.collect(0).unwrap();
            c.collect_major(0).unwrap();
            let View::Vector(items) = c.root(r).view() else {
                panic!()
            };
            assert_eq!(items[0].as_str(), None);
            assert_eq!(items[2].as_str().unwrap().len(), SHARED_THRESHOLD);
            // c is dropped here, with its counts
        });
        handle.join().unwrap();
        drop(b);

        // the vector in `a` is live: one collection copies a single shared
        // object (bin appears twice but is one object) and keeps its count
        a.collect(0).unwrap();
        a.collect_major(0).unwrap();
        let View::Vector(items) = a.root(keep).view() else {
            panic!()
        };
        assert_eq!(items[0].shared_refcount(), Some(1));
        assert!(items[0].same(items[1]));
        assert_eq!(items[2].shared_refcount(), Some(1));

        // dead binaries are released by the collection that finds them dead
        a.remove_root(keep);
        a.collect(0).unwrap();
        a.collect(0).unwrap();
        assert_eq!(live_shared_binaries(), base);

        // a binary dropped with its heap
        let r = a.add_root(a.binary(&big));
        let _ = a.root(r);
        assert_eq!(live_shared_binaries(), base + 1);
        // and an unattached fragment dropped on its own
        let f = Fragment::new(a.root(r));
        assert_eq!(a.root(r).shared_refcount(), Some(2));
        drop(f);
        assert_eq!(a.root(r).shared_refcount(), Some(1));
        let _ = Term::NIL;
    }
    assert_eq!(live_shared_binaries(), base);
}
