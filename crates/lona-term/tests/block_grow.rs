//! A heap that keeps growing takes its next, larger blocks from the
//! smaller ones the cache holds, grown (`pages::grow`), instead of fresh
//! memory; and everything it holds survives the moves. One test per
//! file: the cache is process-wide.

use lona_term::{block_cache_grown, trim_block_cache, Heap, Term, CACHE_MIN_WORDS};

#[test]
#[cfg_attr(miri, ignore)]
fn a_growing_heap_reuses_smaller_cached_blocks() {
    if !cfg!(target_os = "linux") {
        return;
    }
    trim_block_cache();
    let before = block_cache_grown();
    let mut h = Heap::new();
    let r = h.add_root(Term::EMPTY_LIST);
    // A list that outgrows block after block; a major collection after
    // each step frees the old blocks to the cache and asks for larger.
    let step = CACHE_MIN_WORDS as i64;
    let mut n = 0i64;
    for _ in 0..8 {
        let mut t = h.root(r);
        for _ in 0..step {
            t = h.cons(h.int(n), t);
            n += 1;
        }
        h.set_root(r, t);
        h.collect_major(0).unwrap();
    }
    assert!(
        block_cache_grown() > before,
        "no cached block was grown ({} words young)",
        h.young_words()
    );
    // Every element is still there, newest first.
    let mut want = n;
    for x in h.root(r).list_iter() {
        want -= 1;
        assert_eq!(x.as_i64(), Some(want));
    }
    assert_eq!(want, 0);
    drop(h);
    trim_block_cache();
}
