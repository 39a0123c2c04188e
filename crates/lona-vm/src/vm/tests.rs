//! The interpreter's unsafe paths under Miri (`.ci/run`'s miri-vm step).

use crate::env::{Env, SharedBuf};
use crate::eval::{Evaluator, Progress};
use lona_reader::Source;

/// The interpreter's unsafe paths (register windows, calls and tail
/// calls, native calls on raw words, closures, exceptions unwinding
/// frames, a collection at a safepoint with the register stack as
/// roots) in one small program: small enough for Miri.
#[test]
fn miri_smoke() {
    // The built-ins without the prelude: compiling the core library is
    // most of a node's start-up, minutes under Miri, and the program
    // below needs none of it (it defines what it uses).
    let env = std::sync::Arc::new(Env::empty(Box::new(SharedBuf::default())));
    crate::builtins::install(&env);
    // Scaled down under Miri, still past the young block (a collection).
    let n: i64 = if cfg!(miri) { 600 } else { 2500 };
    let src = format!(
        "
        (defn build [n acc] (if (= n 0) acc (build (dec n) (cons [n (str n)] acc))))
        (defn depth [n] (if (= n 0) 0 (inc (depth (dec n)))))
        (defn safe [f] (try (f) (catch :error e [:caught e])))
        (defn len [xs k] (if (empty? xs) k (len (rest xs) (inc k))))
        (defn sum-firsts [xs acc]
          (if (empty? xs) acc (sum-firsts (rest xs) (+ acc (first (first xs))))))
        (let [xs (build {n} ())
              adder (fn [k] (fn [x] (+ x k)))]
          [(len xs 0) (depth 50) ((adder 2) 40)
           (safe (fn [] (depth :x)))
           (sum-firsts xs 0)])"
    );
    let mut ev = Evaluator::new(env);
    ev.push_source(&Source::new("miri.lona", src.as_str()))
        .unwrap();
    while let Progress::Yield = ev.step(200) {}
    let want = format!("[{n} 50 42 [:caught :badarith] {}]", n * (n + 1) / 2);
    assert_eq!(ev.last_value().to_string(), want);
    let gcs = ev.vm.heap.gc_counts();
    assert!(gcs.minor + gcs.major > 0, "no collection ran");
}
