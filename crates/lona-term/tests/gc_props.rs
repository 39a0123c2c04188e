//! Random term graphs (with shared subterms, maps, large binaries, long
//! lists, fragments, stack and register roots) survive interleaved minor
//! and major collections unchanged, compared with a model taken before.

mod common;

use common::*;
use lona_term::{Fragment, GcKind, Heap, HeapConfig, Root};
use proptest::prelude::*;

struct Live {
    roots: Vec<(Root, M)>,
    stack: Vec<M>,
    regs: Vec<M>,
}

fn verify(heap: &Heap, live: &Live) {
    for (r, m) in &live.roots {
        assert_eq!(&model(heap.root(*r)), m);
    }
    assert_eq!(heap.stack_len(), live.stack.len());
    for (i, m) in live.stack.iter().rev().enumerate() {
        assert_eq!(&model(heap.stack_get(i).unwrap()), m);
    }
    for (i, m) in live.regs.iter().enumerate() {
        assert_eq!(&model(heap.reg(i)), m);
    }
}

fn run(ops: &[Op], cfg: HeapConfig) {
    let mut heap = Heap::with_config(cfg);
    let sender = Heap::new();
    let mut live = Live {
        roots: Vec::new(),
        stack: Vec::new(),
        regs: Vec::new(),
    };
    let mut built = 0usize;
    for op in ops {
        match op {
            Op::Garbage(n) => {
                for _ in 0..n / 2 {
                    heap.cons(lona_term::Term::NIL, lona_term::Term::NIL);
                }
            }
            Op::Forget(i) => {
                if !live.roots.is_empty() {
                    let i = i % live.roots.len();
                    let (r, _) = live.roots.remove(i);
                    heap.remove_root(r);
                }
            }
            Op::Minor => {
                let s = heap.collect(0).unwrap();
                assert_eq!(s.live_words, heap.young_used() + heap.old_used());
                verify(&heap, &live);
            }
            Op::Major => {
                let s = heap.collect_major(0).unwrap();
                assert_eq!(s.kind, GcKind::Major);
                assert_eq!(heap.old_words(), 0);
                assert_eq!(heap.fragment_words(), 0);
                verify(&heap, &live);
            }
            _ => {
                let nodes: Vec<_> = live.roots.iter().map(|(r, _)| heap.root(*r)).collect();
                let Some(mut t) = build(&heap, op, &nodes) else {
                    continue;
                };
                built += 1;
                if built.is_multiple_of(4) {
                    // travel through a fragment from another heap
                    let theirs = sender.copy_from(t);
                    let frag = Fragment::new(theirs);
                    assert_eq!(frag.root(), t);
                    t = heap.attach(frag);
                }
                let m = model(t);
                let r = heap.add_root(t);
                live.roots.push((r, m.clone()));
                if built.is_multiple_of(3) {
                    let i = built % 5;
                    heap.set_reg(i, t);
                    if live.regs.len() <= i {
                        live.regs.resize(i + 1, M::Nil);
                    }
                    live.regs[i] = m.clone();
                }
                if built.is_multiple_of(5) {
                    if heap.push(t).is_err() {
                        heap.collect(1).unwrap();
                        verify(&heap, &live);
                        heap.push(heap.root(r)).unwrap();
                    }
                    live.stack.push(m);
                }
                if built.is_multiple_of(7) && !live.stack.is_empty() {
                    let top = heap.pop().unwrap();
                    assert_eq!(model(top), live.stack.pop().unwrap());
                }
            }
        }
        if heap.needs_gc() {
            heap.collect(0).unwrap();
            verify(&heap, &live);
        }
    }
    verify(&heap, &live);
    heap.collect(0).unwrap();
    verify(&heap, &live);
    heap.collect_major(0).unwrap();
    verify(&heap, &live);
    heap.collect(0).unwrap();
    verify(&heap, &live);
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn gc_preserves_terms(ops in ops(60)) {
        run(&ops, HeapConfig::default());
    }

    #[test]
    fn gc_preserves_terms_frequent_fullsweep(ops in ops(60)) {
        run(&ops, HeapConfig { fullsweep_after: 2, ..HeapConfig::default() });
    }

    #[test]
    fn gc_preserves_terms_large_min_heap(ops in ops(40)) {
        run(&ops, HeapConfig { min_heap_size: 4181, ..HeapConfig::default() });
    }
}
