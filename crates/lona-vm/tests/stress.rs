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
                max_stack = max_stack.max(ev.stack_words());
                max_heap = max_heap.max(ev.heap_words());
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
    assert!(ev.stack_words() < 1000);
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

/// Runs `src` as the main process of a node with a process limit of
/// `limit`; returns its output. Panics unless it ends normally.
fn node(src: &str, limit: usize) -> String {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("stress.lona", src)).unwrap();
    let rt = lona_runtime::Runtime::builder()
        .process_limit(limit)
        .build()
        .unwrap();
    let h = rt.handle();
    let ending = lona_vm::node::run_main_on(rt, &env, ev).unwrap();
    assert_eq!(ending, lona_vm::process::Ending::Normal, "{}", buf.text());
    // Everything ended: only the (gone) main process was left to count.
    assert_eq!(h.process_count(), 0, "processes left behind");
    buf.text()
}

/// 100,000 processes linked in a chain; the last one crashes and the
/// crash takes every other one down. A trapping watcher at the head sees
/// the reason; nothing is left behind.
#[test]
#[ignore]
fn crash_storm_of_linked_processes() {
    let t = std::time::Instant::now();
    let out = node(
        r#"
        (defn wait-forever [] (receive :never nil))
        (defn chain [n parent]
          (if (= n 0)
            (do (send parent :ready) (receive :crash (error :storm)))
            (do (spawn-link (fn [] (chain (dec n) parent))) (wait-forever))))
        (process-flag :trap-exit true)
        (def me (self))
        (def head (spawn-link (fn [] (chain 100000 me))))
        (def last (receive :ready nil))
        (println :built (> (count (processes)) 100000))
        (def tail (first (filter (fn [p] (not (or (= p me) (= p head)))) (processes))))
        (map (fn [p] (send p :crash)) (processes))
        (println (receive [:EXIT p reason] :when (= p head) reason))
        (defn settle [n] (if (or (= n 0) (= (count (processes)) 1)) (count (processes)) (do (sleep 10) (settle (dec n)))))
        (println :left (settle 3000))
        "#,
        1 << 20,
    );
    println!("{out}crash storm in {:?}", t.elapsed());
    assert!(out.contains("[:error :storm]"), "{out}");
    assert!(out.ends_with(":left 1\n"), "{out}");
}

/// A million processes, each waiting in `receive`; then all stopped.
#[test]
#[ignore]
fn a_million_waiting_processes() {
    let t = std::time::Instant::now();
    let out = node(
        r#"
        (defn waiter [] (receive :stop :ok))
        (defn spawn-n [n acc] (if (= n 0) acc (spawn-n (dec n) (cons (spawn waiter) acc))))
        (defn stop-all [ps] (when (seq ps) (send (first ps) :stop) (stop-all (rest ps))))
        (def m0 (memory))
        (def ps (spawn-n 1000000 ()))
        (println :spawned (count (processes)) :bytes-per-process (quot (- (memory) m0) 1000000))
        (stop-all ps)
        (defn settle [n] (if (or (= n 0) (= (count (processes)) 1)) (count (processes)) (do (sleep 10) (settle (dec n)))))
        (println :left (settle 6000))
        "#,
        2 << 20,
    );
    println!("{out}in {:?}", t.elapsed());
    assert!(out.starts_with(":spawned 1000001"), "{out}");
    assert!(out.ends_with(":left 1\n"), "{out}");
}

/// A 100 MB message: one copy, arrives whole.
#[test]
#[ignore]
fn a_hundred_megabyte_message() {
    let t = std::time::Instant::now();
    let out = node(
        r#"
        (def big (vec (range 12500000)))
        (def echo (spawn (fn [] (receive [from v] (send from [:back (count v) (nth v 12499999)])))))
        (send echo [(self) big])
        (println (receive [:back n last] [n last]))
        "#,
        1000,
    );
    println!("{out}in {:?}", t.elapsed());
    assert_eq!(out, "[12500000 12499999]\n");
}
