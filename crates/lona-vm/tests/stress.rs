//! Long runs, ignored by default (run with `--release -- --ignored`):
//! a self-recursive loop of 10^9 iterations in constant memory, and ten
//! million deep calls.

use lona_vm::{Env, Evaluator, Progress, SharedBuf, Source};

fn run(src: &str) -> Evaluator {
    let env = Env::new(Box::new(SharedBuf::default()));
    let mut ev = Evaluator::new(env);
    ev.push_source(&Source::new("stress.lona", src)).unwrap();
    let mut max_stack = 0;
    let mut max_heap = 0;
    loop {
        match ev.step(2000) {
            Progress::Yield => {
                max_stack = max_stack.max(ev.vm.stack_words());
                max_heap = max_heap.max(ev.vm.heap.heap_words());
            }
            Progress::Done => break,
            other => panic!("{other:?}"),
        }
    }
    println!("max stack {max_stack} words, max heap {max_heap} words");
    ev
}

#[test]
#[ignore]
fn a_billion_tail_calls_in_constant_memory() {
    let t = std::time::Instant::now();
    let ev = run(
        "(defn spin [i n acc] (if (= i n) acc (spin (inc i) n (+ acc 1)))) (spin 0 1000000000 0)",
    );
    assert_eq!(ev.last_value().as_i64(), Some(1_000_000_000));
    assert!(ev.vm.stack_words() < 1000);
    println!("10^9 iterations in {:?}", t.elapsed());
}

#[test]
#[ignore]
fn ten_million_deep_calls() {
    let t = std::time::Instant::now();
    let ev = run("(defn depth [n] (if (= n 0) 0 (inc (depth (dec n))))) (depth 10000000)");
    assert_eq!(ev.last_value().as_i64(), Some(10_000_000));
    println!("10^7-deep recursion in {:?}", t.elapsed());
}
