//! Feeds arbitrary bytes to the term decoder. Whatever decodes must
//! re-encode to an equal term, print, and survive a minor and a major
//! collection unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_term::{decode, encode, Heap};

fuzz_target!(|data: &[u8]| {
    let mut heap = Heap::new();
    let (bytes, root) = {
        let Ok(t) = decode(&heap, data) else { return };
        let bytes = encode(t);
        let again = decode(&heap, &bytes).expect("re-encoding decodes");
        assert!(again == t);
        let _ = t.to_string();
        (bytes, heap.add_root(t))
    };
    heap.collect(0).expect("no limit");
    heap.collect_major(0).expect("no limit");
    assert_eq!(encode(heap.root(root)), bytes);
});
