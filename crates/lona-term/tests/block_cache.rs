//! Large blocks go back through a bounded cache that a later collection
//! reuses, and `trim_block_cache` returns them all. One test per file: the
//! cache is process-wide.

use lona_term::{
    block_cache_bytes, trim_block_cache, Heap, Term, CACHE_MAX_BYTES, CACHE_MIN_WORDS,
};

#[test]
#[cfg_attr(miri, ignore)]
fn large_blocks_are_cached_bounded_and_trimmed() {
    trim_block_cache();
    assert_eq!(block_cache_bytes(), 0);
    let mut h = Heap::new();
    let mut t = Term::EMPTY_LIST;
    for i in 0..CACHE_MIN_WORDS as i64 {
        t = h.cons(h.int(i), t);
    }
    let r = h.add_root(t);
    h.collect_major(0).unwrap();
    let young = h.young_words();
    assert!(young >= CACHE_MIN_WORDS);
    // the overflow chunks freed by that collection went to the cache
    assert!(block_cache_bytes() > 0);
    assert!(block_cache_bytes() <= CACHE_MAX_BYTES);
    // a second major collection takes a block from the cache and gives the
    // old young block back: the total stays bounded
    h.collect_major(0).unwrap();
    assert_eq!(h.young_words(), young);
    assert!(block_cache_bytes() <= CACHE_MAX_BYTES);
    assert_eq!(h.root(r).list_iter().count(), CACHE_MIN_WORDS);
    drop(h);
    assert!(block_cache_bytes() >= young * 8);
    trim_block_cache();
    assert_eq!(block_cache_bytes(), 0);
}
