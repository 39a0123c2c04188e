//! A process's memory limit (`:max-heap-size`: heap, register stack, frames
//! and handlers together) and what happens when a process outgrows it or
//! the node's memory: that process ends, its links and monitors are told,
//! the node goes on (`lona_vm::process`, "Memory").

use lona_runtime::Runtime;
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, SharedBuf, Source};

/// Runs `src` as the main process of a two-worker node whose default
/// `:max-heap-size` is `default_max` (0: none); returns output and ending.
fn run(default_max: usize, src: &str) -> (String, Ending) {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    env.set_max_heap_size(default_max);
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", src)).expect("reads");
    let rt = Runtime::builder().workers(2).build().expect("runtime");
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    (buf.text(), ending)
}

/// A recursion that is not a tail call: its heap stays a few words, its
/// stack and frames grow without end (the issue's runaway).
const RUNAWAY: &str = r#"
    (defn f [n] (+ 1 (f n)))
    (defn down-of [m] (receive [:DOWN r _ reason] :when (= r m) reason))
    (defn depth [n] (if (= n 0) 0 (inc (depth (dec n)))))
"#;

#[test]
fn a_runaway_recursion_under_a_heap_limit_is_killed_by_its_stack() {
    // 100,000 words: the heap never gets near it, the stack does. Before
    // the limit counted the stack, this process grew to its 512 MiB
    // register-stack cap (and as much again in frames) and ended with
    // `[:error :system-limit]`.
    let src = format!(
        "{RUNAWAY}
        (let [[pid m] (spawn-opt (fn [] (f 1)) {{:monitor true :max-heap-size 100000}})]
          (println :spawn-opt (down-of m)))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":spawn-opt :killed\n");
}

#[test]
fn process_flag_sets_the_limit_and_returns_the_old_one() {
    let src = format!(
        "{RUNAWAY}
        (let [[pid m] (spawn-monitor
                        (fn []
                          (println :old (process-flag :max-heap-size 100000))
                          (println :now (process-flag :max-heap-size 100000))
                          (f 1)))]
          (println :process-flag (down-of m)))
        (println :bad (try (process-flag :max-heap-size -1) (catch :error e e)))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(
        out,
        ":old 0\n:now 100000\n:process-flag :killed\n:bad :badarg\n"
    );
}

#[test]
fn a_limited_process_cannot_catch_its_end_and_its_links_are_told() {
    // Neither `try` around the recursion nor a `try` in every frame (the
    // handlers count too) keeps it alive; a linked process trapping exits
    // gets `[:EXIT pid :killed]`.
    let src = format!(
        "{RUNAWAY}
        (defn g [n] (try (+ 1 (g n)) (catch :error e e) (catch :exit e e)))
        (process-flag :trap-exit true)
        (let [p (spawn-opt (fn [] (try (f 1) (catch :error e e) (catch :exit e e)))
                           {{:link true :max-heap-size 50000}})]
          (println :link (receive [:EXIT from r] :when (= from p) r)))
        (let [[pid m] (spawn-opt (fn [] (g 1)) {{:monitor true :max-heap-size 50000}})]
          (println :handlers (down-of m)))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":link :killed\n:handlers :killed\n");
}

#[test]
fn the_node_default_limits_every_process_and_spawn_opt_overrides_it() {
    // 50,000 frames need far more than 100,000 words of stack and frames;
    // 2,000 do not.
    let src = format!(
        "{RUNAWAY}
        (let [[pid m] (spawn-monitor (fn [] (f 1)))]
          (println :default (down-of m)))
        (let [[pid m] (spawn-monitor (fn [] (depth 50000)))]
          (println :deep (down-of m)))
        (let [[pid m] (spawn-monitor (fn [] (println :shallow (depth 2000))))]
          (println :shallow-ends (down-of m)))
        (let [[pid m] (spawn-opt (fn [] (println :unlimited (depth 50000)))
                                 {{:monitor true :max-heap-size 0}})]
          (println :override (down-of m)))"
    );
    let (out, ending) = run(100_000, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(
        out,
        ":default :killed\n:deep :killed\n:shallow 2000\n:shallow-ends :normal\n\
         :unlimited 50000\n:override :normal\n"
    );
}

#[test]
fn the_main_process_is_limited_by_the_node_default() {
    let (out, ending) = run(100_000, &format!("{RUNAWAY} (println :before) (f 1)"));
    assert_eq!(out, ":before\n");
    let Ending::Killed(why) = ending else {
        panic!("{ending:?}")
    };
    assert!(why.starts_with("killed: "), "{why}");
    assert!(why.contains("exceed max_heap_size 100000"), "{why}");
}

#[test]
fn a_built_in_building_a_value_far_past_the_limit_is_killed_while_building_it() {
    // `range` builds 2 million words in one call (a range of at most 2^20
    // integers is a list made at once; longer ones are lazy), dead as
    // soon as `=` (an instruction, not a call: no safepoint) has looked at
    // it. The old check, at collections only, let it build all of it
    // (16 MB, 200 times the limit) and end `:normal` before any
    // collection; Erlang's collections during the build would have killed
    // it, and so does the overflow check now.
    let src = format!(
        "{RUNAWAY}
        (let [[pid m] (spawn-opt (fn [] (= (range 1000000) nil))
                                 {{:monitor true :max-heap-size 10000}})]
          (println :range (down-of m)))
        (let [[pid m] (spawn-opt (fn [] (println :fits (count (range 1000))))
                                 {{:monitor true :max-heap-size 10000}})]
          (println :small (down-of m)))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":range :killed\n:fits 1000\n:small :normal\n");
}

#[test]
fn a_heap_the_machine_cannot_back_fails_the_spawn_not_the_node() {
    // 10^15 words (8 PB): no allocator can back it. It used to abort the
    // node (`handle_alloc_error`); now the spawn raises `:system-limit`,
    // as a full process table does, and the spawner goes on.
    let src = format!(
        "{RUNAWAY}
        (println :huge (try (spawn-opt (fn [] :never) {{:min-heap-size 1000000000000000}})
                            (catch :error e e)))
        (println :contradiction (try (spawn-opt (fn [] :never)
                                                {{:min-heap-size 2000 :max-heap-size 1000}})
                                     (catch :error e e)))
        (println :alive (depth 10))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(
        out,
        ":huge :system-limit\n:contradiction :badarg\n:alive 10\n"
    );
}

#[test]
fn process_info_counts_the_stack_of_a_deep_recursion() {
    // 20,000 frames deep, waiting: a few hundred words of heap, some
    // 100,000 words of stack and frames. `:heap-size` (and `:memory`)
    // showed only the heap, so a runaway recursion looked small in
    // `process-info`, `(i)` and `lona run --top`.
    let src = format!(
        "{RUNAWAY}
        (defn deep [n] (if (= n 0) (receive :go 0) (inc (deep (dec n)))))
        ;; A process handling a signal (a code collector's visit, from
        ;; another test of this binary) is out of the table for that
        ;; moment, and its info has no `:heap-size`: asked again.
        (defn info-of [pid k]
          (let [i (process-info pid)]
            (if (or (> k 100) (:heap-size i)) i (do (sleep 5) (info-of pid (inc k))))))
        (let [[pid m] (spawn-monitor (fn [] (deep 20000)))]
          (sleep 50)
          (let [i (info-of pid 0)]
            (println :waiting (:status i) (> (:heap-size i) 60000) (> (:memory i) 480000)))
          (send pid :go)
          (println :ends (down-of m)))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":waiting :waiting true true\n:ends :normal\n");
}

/// An evaluator used from Rust (no process) limited by
/// `Evaluator::set_max_heap_size`: a program that keeps what it builds
/// stops with `Progress::HeapLimit` (not an abort, not a panic); one that
/// stays under the limit finishes, and 0 takes the limit away.
#[test]
fn an_evaluator_outside_a_process_stops_at_its_heap_limit() {
    use lona_vm::Progress;
    let grow = "(defn grow [acc n] (grow (cons (str \"x\" n) acc) (inc n))) (grow () 0)";
    let small = "(println (count (range 10000)))";
    let step_all = |max: usize, src: &str| {
        let buf = SharedBuf::default();
        let env = Env::new(Box::new(buf.clone()));
        let mut ev = Evaluator::new(env);
        ev.set_max_heap_size(max);
        ev.push_source(&Source::new("t.lona", src)).expect("reads");
        for _ in 0..100_000 {
            match ev.step(2000) {
                Progress::Yield => {}
                other => return (format!("{other:?}"), buf.text()),
            }
        }
        ("ran on".to_string(), buf.text())
    };
    let (end, _) = step_all(200_000, grow);
    assert!(end.starts_with("HeapLimit"), "{end}");
    let (end, out) = step_all(200_000, small);
    assert_eq!((end.as_str(), out.as_str()), ("Done", "10000\n"));
    // No limit: the same growth runs on past 200,000 words.
    let (end, _) = step_all(0, "(defn grow [acc n] (if (= n 0) (count acc) (grow (cons (str \"x\" n) acc) (dec n)))) (println (grow () 50000))");
    assert_eq!(end, "Done");
}

#[test]
fn frequencies_needs_memory_for_its_counts_not_for_its_input_or_garbage() {
    // A lazy sequence of 200,000 items with 100 distinct values, under a
    // 100,000-word limit: `frequencies` used to realise it whole (`doall`,
    // some 400,000 words of cells) before counting; now it counts 4,096
    // items at a time and needs a few thousand words.
    //
    // A vector of 400,000 distinct integers under 4 million words: the
    // counts map (a million words) fits, but the built-in `assoc`-ed one
    // item at a time and could not collect while it ran, so it copied a
    // path of the trie per item: 55 million words of garbage, past the
    // overflow check (8 times the limit); now the map is written once.
    // (k-nucleotide, `docs/benchmarks-history.md`, session 29.)
    let src = format!(
        "{RUNAWAY}
        (defn in-limit [limit f]
          (let [[pid m] (spawn-opt (fn [] (exit [:done (f)]))
                                   {{:monitor true :max-heap-size limit}})]
            (down-of m)))
        (defn upto [i n] (lazy-seq (when (< i n) (cons i (upto (inc i) n)))))
        (println :lazy
          (in-limit 100000
            (fn [] (let [c (frequencies (map (fn [i] (rem i 100)) (upto 0 200000)))]
                     [(count c) (get c 7) (reduce + (vals c))]))))
        (println :vector
          (in-limit 4000000
            (fn [] (let [c (frequencies (vec (range 400000)))]
                     [(count c) (get c 7) (get c 400000)]))))"
    );
    let (out, ending) = run(0, &src);
    assert_eq!(ending, Ending::Normal);
    assert_eq!(
        out,
        ":lazy [:done [100 2000 200000]]\n:vector [:done [400000 1 nil]]\n"
    );
}
