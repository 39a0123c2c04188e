//! `lona bench gc` (`bench/README.md`; Erlang: `bench/erlang/anchors.erl`, `gc_bench`).
//!
//! Line 1: one process heap holds a 10,000,000-element list of small
//! integers, built while collecting whenever the heap asks (as the
//! interpreter and Erlang do); one full collection settles it, then one
//! full (major) collection is timed. `heap_mb` is the heap (young + old block) after the
//! list is live, as Erlang's `heap_size * 8 / 2^20`.
//!
//! Line 2: a minor collection of a young heap holding 1 MiB of cons cells of
//! which 10 % are live (every tenth cell, interleaved with garbage); the
//! median of 11 runs, each on a fresh heap.

use std::time::Instant;

use lona_term::{GcKind, Heap, HeapConfig, Term};

const N: usize = 10_000_000;

/// Runs the workload and prints its two lines.
pub fn run() {
    let (heap_mb, full_gc_ms) = full();
    println!("gc live_elements={N} heap_mb={heap_mb:.1} full_gc_ms={full_gc_ms:.1}");
    let mut runs: Vec<f64> = (0..11).map(|_| minor()).collect();
    runs.sort_by(f64::total_cmp);
    println!(
        "gc-minor young_kb=1024 survivors_pct=10 minor_gc_us={:.1}",
        runs[runs.len() / 2]
    );
}

fn full() -> (f64, f64) {
    // Build the list as a Lonala process would (and as Erlang's
    // lists:seq does): collecting whenever the heap asks for it, so the
    // heap grows through the size sequence by minor and major collections.
    let mut heap = Heap::new();
    let root = heap.add_root(Term::EMPTY_LIST);
    for i in (1..=N).rev() {
        let t = heap.cons(heap.int(i as i64), heap.root(root));
        heap.set_root(root, t);
        if heap.needs_gc() {
            heap.collect(0).expect("no heap limit set");
        }
    }
    heap.collect_major(0).expect("no heap limit set");
    let heap_mb = heap.heap_words() as f64 * 8.0 / 1_048_576.0;
    let t0 = Instant::now();
    let stats = heap.collect_major(0).expect("no heap limit set");
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    assert_eq!(stats.live_words, 2 * N);
    assert_eq!(heap.root(root).list_iter().count(), N);
    (heap_mb, ms)
}

fn minor() -> f64 {
    const YOUNG_WORDS: usize = 1024 * 1024 / 8;
    let cells = YOUNG_WORDS / 2;
    let mut heap = Heap::with_config(HeapConfig {
        min_heap_size: YOUNG_WORDS + 1,
        ..HeapConfig::default()
    });
    let root = {
        let mut live = Term::EMPTY_LIST;
        for i in 0..cells {
            if i % 10 == 0 {
                live = heap.cons(heap.int(i as i64), live);
            } else {
                heap.cons(heap.int(i as i64), Term::EMPTY_LIST);
            }
        }
        heap.add_root(live)
    };
    assert!(heap.young_used() == YOUNG_WORDS && !heap.needs_gc());
    let t0 = Instant::now();
    let stats = heap.collect(0).expect("no heap limit set");
    let us = t0.elapsed().as_secs_f64() * 1e6;
    assert_eq!(stats.kind, GcKind::Minor);
    assert_eq!(heap.root(root).list_iter().count(), cells.div_ceil(10));
    us
}
