//! The compiling tier charges what the interpreter charges: the same
//! programs, stepped with the same small budgets, end their slices after
//! the same reductions and finish with the same value, whether their
//! functions run compiled (`jit-eager`) or interpreted; and a compiled
//! loop sees its var redefined by another thread. Random well-typed
//! programs (`gen`: functions calling each other, closures, built-ins as
//! values, patterns, cons cells, big integers, errors caught) print the
//! same and charge the same in both tiers: 2,000 in CI, as many as
//! `LONA_JIT_CASES` says by hand (`many_random_programs_agree_in_both_tiers`,
//! ignored). The tier is the OS process's: the tests take turns.

use std::sync::Arc;

use lona_vm::jit::{self, Tier};

/// The tier is the OS process's: one test at a time sets it.
static TIER: std::sync::Mutex<()> = std::sync::Mutex::new(());
use lona_vm::{Env, Evaluator, Progress, SharedBuf, Source};

/// The reductions at the end of every slice, the printed output, and
/// whether `f` was compiled.
fn slices(tier: Tier, ns: &str, body: &str, budget: i32) -> (Vec<u64>, String) {
    jit::set_tier(tier);
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    // A namespace of its own: fresh prototypes, compiled or not by this
    // tier alone.
    let src = format!("(ns {ns}) {body}");
    ev.push_source(&Source::new("t.lona", src.as_str()))
        .unwrap();
    let mut at = Vec::new();
    for _ in 0..1_000_000 {
        match ev.step(budget) {
            Progress::Yield => at.push(ev.reductions()),
            Progress::Done => {
                at.push(ev.reductions());
                return (at, buf.text());
            }
            other => panic!("{other:?}"),
        }
    }
    panic!("did not finish");
}

fn same(name: &str, body: &str) {
    // (A budget of 1 never passes a safepoint: the smallest that does is 2.)
    for budget in [2, 3, 7, 100, 2000] {
        let (i, out_i) = slices(Tier::Interp, &format!("{name}-i{budget}"), body, budget);
        let (j, out_j) = slices(Tier::JitEager, &format!("{name}-j{budget}"), body, budget);
        assert_eq!(out_i, out_j, "{name} budget {budget}: output");
        assert_eq!(
            i, j,
            "{name} budget {budget}: reductions at each slice's end"
        );
    }
}

/// A node under the default tier (hot functions compiled), for the tests
/// of when code is compiled and given up: its forms run in namespace
/// `ns`; what they printed; each function's tier state.
struct Tiered {
    env: Arc<Env>,
    buf: SharedBuf,
    ns: &'static str,
}

impl Tiered {
    fn new(ns: &'static str) -> Tiered {
        jit::set_tier(Tier::Jit);
        // On the calling thread: these tests count entries into code
        // compiled at a known call (the compiling thread's own tests are
        // `compiled_off_the_workers` and the `lona` crate's).
        jit::set_background(false);
        let buf = SharedBuf::default();
        let env = Env::new(Box::new(buf.clone()));
        Tiered { env, buf, ns }
    }

    fn run(&self, src: &str) {
        lona_vm::eval_str(&self.env, "t.lona", &format!("(ns {}) {src}", self.ns)).unwrap();
    }

    fn state(&self, f: &str) -> Result<&'static str, lona_vm::LookupError> {
        lona_vm::introspect::tier_state(&self.env, self.ns, f)
    }
}

#[test]
fn compiled_code_yields_where_the_interpreter_does() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    same(
        "fib",
        "(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))) (println (fib 15))",
    );
    same(
        "loop",
        "(defn sum-to [i n acc] (if (= i n) acc (sum-to (inc i) n (+ acc i)))) (println (sum-to 0 5000 0))",
    );
    same(
        "deep",
        "(defn down [n] (if (= n 0) 0 (+ 1 (down (- n 1))))) (println (down 3000))",
    );
    same(
        "mixed",
        "(defn f [n acc] (if (< n 1) acc (f (- n 1) (+ acc 1.5)))) (println (f 300 0))",
    );
    // And the functions really were compiled.
    jit::set_tier(Tier::JitEager);
    let buf = SharedBuf::default();
    let env: Arc<Env> = Env::new(Box::new(buf.clone()));
    lona_vm::eval_str(
        &env,
        "t.lona",
        "(ns probe) (defn g [n] (if (= n 0) :ok (g (- n 1)))) (println (g 10))",
    )
    .unwrap();
    assert!(jit::stats().compiled > 0);
}

/// Typed loops (`jit/translate/facts.rs`): a function whose tail calls of itself
/// pass arguments of a known kind loops in a second translation that
/// skips the checks those arguments passed. Each case leaves that copy
/// where what it assumed stops holding, and must print and yield as the
/// interpreter does.
#[test]
fn typed_loops_leave_where_their_facts_end() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    let before = jit::stats().typed_loops;
    // The accumulator outgrows the small integers mid-loop.
    same(
        "outgrow",
        "(defn s [i n acc] (if (= i n) acc (s (inc i) n (+ acc 288230376151711743)))) (println (s 0 40 0))",
    );
    // The counter runs into the largest small integer.
    same(
        "edge",
        "(defn up [i n] (if (= i n) i (up (inc i) n))) (println (up 1152921504606846970 1152921504606846980))",
    );
    // And down past the smallest.
    same(
        "edge-down",
        "(defn dn [i n] (if (= i n) i (dn (dec i) n))) (println (dn -1152921504606846970 -1152921504606846980))",
    );
    // One tail call passes an integer, the other a keyword: the loop
    // assumes only what both pass.
    same(
        "two-calls",
        "(defn g [i x] (if (< i 300) (if (even? i) (g (inc i) (if (keyword? x) 0 (+ x 1))) (g (inc i) :k)) x))
         (println (g 0 0) (g 1 5))",
    );
    // A float where the loop met integers.
    same(
        "float",
        "(defn h [i n acc] (if (< i n) (h (+ i 1) n (+ acc i)) acc)) (println (h 0 100 0) (h 0.5 100 0))",
    );
    // An inner loop (`recur` to a `loop`: its header starts knowing
    // nothing) whose value turns into a float.
    same(
        "inner",
        "(defn k [n] (loop [i 0 x 0] (if (< i n) (recur (inc i) (if (= i 5) 1.5 (+ x 1))) x)))
         (defn outer [j acc] (if (= j 0) acc (outer (dec j) (+ acc (k 9)))))
         (println (outer 30 0))",
    );
    // The loop's own process redefines it through a call: seen at once.
    same(
        "redefine",
        "(defn r [i] (if (= i 50) :old (do (when (= i 20) (eval '(defn r [i] [:new i]))) (r (inc i)))))
         (println (r 0))",
    );
    assert!(
        jit::stats().typed_loops > before,
        "no typed loop was compiled"
    );
}

#[test]
fn compiled_code_reads_vars_as_they_are_now() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // A global constant in a loop; a var redefined mid-loop (by the loop
    // itself, through `eval`): the next read sees the new value; a var
    // declared and never bound raises where the interpreter raises.
    same(
        "loadvar",
        "(def k 3)
         (declare missing)
         (defn f [n acc] (if (= n 0) acc (f (dec n) (+ acc k))))
         (defn g [n acc] (if (= n 0) acc (do (when (= n 50) (eval '(def k 10))) (g (dec n) (+ acc k)))))
         (defn h [n] (if (= n 0) (try missing (catch :error e [:caught (first e)])) (h (dec n))))
         (println (f 100 0) (g 100 0) (f 10 0) (h 10))",
    );
}

#[test]
fn compiled_code_makes_vectors() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // `[...]` of registers in a loop (a message, say): bumped from the
    // young block, past its end many times (the heap's slow path), the
    // elements in their order, and matched again; a vector of one, of
    // none and of many (more than fit a fast-path guess).
    same(
        "vectors",
        "(defn build [n acc] (if (= n 0) acc (build (dec n) (cons [n (* n n) :k] acc))))
         (defn tot [xs s] (match xs ([a b _] & more) (tot more (+ s a (- b a))) _ s))
         (defn wrap [x] [x])
         (defn none [x] (if x [] [x]))
         (defn wide [a b c] [a b c a b c a b c a b c a b c a b c a b c :end])
         (println (tot (build 30000 ()) 0) (take 2 (build 5 ())) (wrap (wrap 1)) (none true)
                  (count (wide 1 2 3)) (nth (wide 1 2 3) 16) (= (wide 1 2 3) (wide 1 2 3)))",
    );
}

#[test]
fn count_in_compiled_code_is_the_built_ins() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // `count` (the prelude's, over `has-lazy?` and `count*`, whose common
    // cases compiled code answers itself) of everything it counts: short
    // strings of one-byte and longer characters, a string of 64 bytes and
    // more (shared), vectors, nil, (), lists, maps, sets, a lazy sequence;
    // and what it refuses.
    same(
        "count",
        "(defn total [xs acc] (match xs (x & more) (total more (+ acc (count x))) _ acc))
         (defn all [xs] (map count xs))
         (def things [\"\" \"abc\" \"héé\" \"日本語\" (apply str (repeat 70 \"x\"))
                      [] [1 2 3] nil () '(1 2) {:a 1} #{1 2} (map inc (range 3)) (range 4)])
         (println (all things) (total things 0) (total (repeat 300 \"abcd\") 0)
                  (map has-lazy? things)
                  (try (count 5) (catch :error e e)) (try (count :k) (catch :error e e)))",
    );
}

#[test]
fn nth_and_int_in_compiled_code_are_the_built_ins() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // The prelude's `nth` (over `int?`, `has-lazy?` and `nth*`, whose
    // common cases compiled code answers itself): vectors in and out of
    // range, negative and big indices, lists, lazy sequences, a default;
    // and `int?` of every kind of term.
    same(
        "nth",
        "(defn pick [v is acc] (match is (i & more) (pick v more (conj acc (try (nth v i) (catch :error e e)))) _ acc))
         (defn pick3 [v is acc] (match is (i & more) (pick3 v more (conj acc (try (nth v i :none) (catch :error e e)))) _ acc))
         (defn ints [xs acc] (match xs (x & more) (ints more (conj acc (int? x))) _ acc))
         (def idx '(0 1 2 3 -1 1152921504606846976 1.5 :k nil))
         (println (pick [:a :b nil] idx []) (pick3 [:a :b nil] idx [])
                  (pick '(:a :b :c) idx []) (pick3 (map inc (range 3)) idx [])
                  (pick [] '(0) []) (pick \"abc\" '(0) [])
                  (ints (list 0 -1 1152921504606846976 1.5 :k nil true () [1] '(1) \"s\" {:a 1} #{1}) []))",
    );
}

#[test]
fn every_arity_of_a_function_is_compiled() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // Each arity its own code: loops and calls of itself in each, one
    // arity calling another (natively: of another arity it is another
    // function's call), a fused one-argument call of itself from the
    // two-argument arity, and a variadic arity, which stays interpreted.
    same(
        "arities",
        "(defn sum ([n] (sum n 0)) ([n acc] (if (= n 0) acc (sum (dec n) (+ acc n)))))
         (defn fib ([n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
                   ([a n] (if (= n 0) a (+ (fib (dec n)) (fib a (dec n))))))
         (defn hop ([x] (* 2 x)) ([x y] (if (> x 100) (hop (+ x 1)) (hop (+ x y) y))))
         (defn va ([x] x) ([x & more] (reduce + x more)))
         (defn use [n acc] (if (= n 0) acc (use (dec n) (+ acc (sum n) (hop n 3) (va n) (va n 1 2)))))
         (println (sum 1000) (fib 15) (fib 3 12) (use 300 0))",
    );
    // Under the default tier: a loop calling a function of two arities
    // stays compiled, calling it natively (a function of several arities
    // was never compiled, and every compiled caller left at each call of
    // one: `nth` in `mesh`).
    let t = Tiered::new("arities");
    let n = jit::threshold() as usize;
    t.run(
        "(defn pick ([v i] (pick v i :none)) ([v i d] (if (< i (count v)) (nth* v i) d)))
         (defn walk [v n acc] (if (= n 0) acc (walk v (dec n) (+ acc (pick v (rem n 4))))))
         (defn walk3 [v n acc] (if (= n 0) acc (walk3 v (dec n) (+ acc (pick v (rem n 3) 0)))))",
    );
    for _ in 0..3 {
        t.run(&format!(
            "(println (walk [1 2 3 4] {} 0) (walk3 [5 6] {} 0))",
            3 * n,
            3 * n
        ));
    }
    for f in ["walk", "walk3"] {
        assert_eq!(t.state(f), Ok("compiled"), "{f}");
    }
    assert_ne!(t.state("pick"), Ok("never"));
    let (a, b) = (
        (1..=3 * n).map(|k| [1, 2, 3, 4][k % 4]).sum::<usize>(),
        (1..=3 * n).map(|k| [5, 6, 0][k % 3]).sum::<usize>(),
    );
    assert_eq!(t.buf.text(), format!("{a} {b}\n").repeat(3));
}

#[test]
fn each_arity_is_compiled_when_it_is_called() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // Only the arity that made the function hot is compiled then; the
    // others are compiled at their first call after that (from the
    // interpreter or from compiled code), and one never called is never
    // compiled.
    let t = Tiered::new("per-arity");
    let n = jit::threshold() as usize;
    t.run(
        "(defn f ([] 0) ([n] (f n 0)) ([n acc] (if (= n 0) acc (f (dec n) (+ acc n)))) ([a b c] (+ a b c)))
         (defn walk [n acc] (if (= n 0) acc (walk (dec n) (+ acc (f 1 2 3)))))",
    );
    let arities = |f: &str| lona_vm::introspect::compiled_arities(&t.env, "per-arity", f);
    assert_eq!(arities("f"), Ok(vec![]));
    t.run(&format!("(println (f {} 0))", 2 * n));
    assert_eq!(t.state("f"), Ok("compiled"));
    assert_eq!(arities("f"), Ok(vec![2]), "only the hot arity");
    // A first call of another arity from the interpreter (in a
    // function: top-level forms are evaluated apart).
    t.run("(defn g [] (inc (f 10))) (println (g))");
    assert_eq!(arities("f"), Ok(vec![1, 2]));
    // From compiled code: `walk`'s calls of `(f 1 2 3)` leave while it
    // has no code, and the interpreter's call compiles it.
    t.run(&format!("(println (walk {} 0))", 3 * n));
    assert_eq!(arities("f"), Ok(vec![1, 2, 3]));
    assert_eq!(t.state("walk"), Ok("compiled"));
    let total = |k: usize| k * (k + 1) / 2;
    assert_eq!(
        t.buf.text(),
        format!("{}\n{}\n{}\n", total(2 * n), total(10) + 1, 6 * 3 * n)
    );
}

#[test]
fn tail_calls_of_other_functions_run_in_the_callers_place() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // Mutual tail recursion: each transition a native call in the
    // caller's frame; slices end anywhere in the chain (the leaver named,
    // its closure in its callee slot: were it the entered function's,
    // the interpreter would take `od?`'s tail call of `ev?` for a call of
    // itself and answer wrongly).
    same(
        "mutual",
        "(declare od?)
         (defn ev? [n] (if (= n 0) true (od? (dec n))))
         (defn od? [n] (if (= n 0) false (ev? (dec n))))
         (println (map ev? [0 1 2 7 300 301]))",
    );
    // Called by a compiled caller (not in tail position), whose own
    // callee slot must then stay the tail callee's; and by a function
    // calling itself, whose inner activation tail-calls out.
    same(
        "under-a-call",
        "(declare od?)
         (defn ev? [n] (if (= n 0) true (od? (dec n))))
         (defn od? [n] (if (= n 0) false (ev? (dec n))))
         (defn c [n] [(ev? n) (od? n)])
         (defn walk [n] (if (= n 0) [] (conj (walk (dec n)) (if (even? n) (ev? (* 3 n)) (od? n)))))
         (println (map c [5 40 41]) (walk 12))",
    );
    // Closures through registers, of another arity, with captures (read
    // through the callee slot), and an error raised in a tail callee.
    same(
        "closures",
        "(defn add [k] (fn [x] (+ x k)))
         (defn app [g x] (g x))
         (defn chain [g n acc] (if (= n 0) acc (chain g (dec n) (app g acc))))
         (defn bad [x] (+ x :k))
         (defn via [x] (bad x))
         (println (chain (add 7) 40 0) (try (via 1) (catch :error e [:caught e])))",
    );
}

#[test]
fn a_long_chain_of_tail_calls_runs_in_constant_space() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // One slice of a billion reductions: the chain of native calls grows
    // until a callee's entry finds the native stack deep (`NATIVE_STACK`),
    // leaves, and the interpreter goes on; both tiers end alike.
    let body = "(declare od?)
         (defn ev? [n] (if (= n 0) true (od? (dec n))))
         (defn od? [n] (if (= n 0) false (ev? (dec n))))
         (println (ev? 1000000) (od? 777777))";
    let (i, out_i) = slices(Tier::Interp, "chain-i", body, 1_000_000_000);
    let (j, out_j) = slices(Tier::JitEager, "chain-j", body, 1_000_000_000);
    assert_eq!(out_i, "true true\n");
    assert_eq!(out_j, out_i);
    assert_eq!(i, j);
}

/// A function is first translated on the guess that it returns only
/// small integers, so that its calls of itself know their results
/// (`jit/translate/mod.rs`, `compile`); where a return does not bear the
/// guess out, it is translated again without it. Either way it must
/// print and yield as the interpreter does.
#[test]
fn returns_guessed_small_are_checked() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // The guess holds: a constant and sums of results.
    same(
        "holds",
        "(defn t [n] (if (< n 2) 1 (+ (t (- n 1)) (t (- n 2))))) (println (t 20))",
    );
    // It holds in the code, but the sum outgrows the small integers: the
    // overflow leaves, and no compiled caller sees the big result.
    same(
        "outgrows",
        "(defn big [n] (if (= n 0) 1152921504606846975 (+ (big (dec n)) (big (dec n))))) (println (big 6))",
    );
    // A keyword returned: translated again, the results checked.
    same(
        "fails",
        "(defn w [n] (if (= n 0) :done (let [r (w (dec n))] (if (keyword? r) 0 (+ r 1)))))
         (defn w2 [n] (if (= n 0) 0 (+ 1 (w (inc n)) (w2 (dec n)))))
         (println (w 5) (w2 12))",
    );
    // Base cases taken without a call (`base_case_inline`): a keyword
    // constant, and a float argument that never meets the inline test.
    same(
        "base-keyword",
        "(defn bk [n] (if (< n 1) :z (let [a (bk (- n 1)) b (bk (- n 2))] (if (= a b) a :no)))) (println (bk 12))",
    );
    same(
        "base-float",
        "(defn bf [n] (if (< n 2) n (+ (bf (- n 1)) (bf (- n 2))))) (println (bf 12) (bf 10.5))",
    );
    // The other shapes of a base case: `<=` and `=` against a constant,
    // returning the argument or a constant (a product that outgrows the
    // small integers among them).
    same(
        "base-shapes",
        "(defn fa [n] (if (= n 0) 1 (* n (fa (dec n)))))
         (defn le [n] (if (<= n 1) n (+ (le (- n 1)) (le (- n 2)))))
         (defn ek [n] (if (= n 0) :zero (do (ek (dec n)) (ek (dec n)))))
         (defn ez [n] (if (= n 5) 100 (+ n (ez (inc n)))))
         (println (fa 25) (le 15) (ek 6) (ez 0))",
    );
    // A return through a tail call of another function (compiled: its
    // value comes back natively, not through a return of this one): a
    // big integer, a keyword, from a function of one arity and from one
    // of several (`reduce`). The guess made for the call of itself must
    // not take them for small integers (a garbage word did, and crashed
    // the node: found by the random programs).
    same(
        "tail-out",
        "(defn big [x] 1152921504606846976)
         (defn kw [x] (if (= x 0) :zero :other))
         (defn g [n] (if (<= n 0) (big n) (- 1 (g (- n 1)))))
         (defn h [n] (if (<= n 0) (kw n) (- 1 (h (- n 1)))))
         (defn f0 [n] (if (<= n 0) (reduce - -1152921504606846976 (range 5)) (- -1 (f0 (- n 1)))))
         (println (big 0) (kw 1) (reduce - 0 (range 3)))
         (println (g 12) (try (h 9) (catch :error e e)) (f0 32))",
    );
    // A float from one return, small integers from the others.
    same(
        "float",
        "(defn fl [n] (cond (= n 0) 0.5 (= n 1) 1 :else (+ (fl (- n 1)) (fl (- n 2))))) (println (fl 15))",
    );
}

#[test]
fn a_compiled_loop_sees_its_var_redefined_within_one_slice() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // One slice of a billion reductions: the loop never yields, so only
    // its own check of the var at each self tail call can notice that
    // another thread redefined it. Both tiers end with the new code.
    for tier in [Tier::Interp, Tier::JitEager] {
        jit::set_tier(tier);
        let buf = SharedBuf::default();
        let env = Env::new(Box::new(buf.clone()));
        let ns = format!("spin{}", tier as u8);
        lona_vm::eval_str(
            &env,
            "t.lona",
            &format!("(ns {ns}) (defn spin [i] (if (= i 2000000000) :old (spin (inc i))))"),
        )
        .unwrap();
        let mut ev = Evaluator::new(env.clone());
        let src = format!("(ns {ns}) (println (spin 0))");
        ev.push_source(&Source::new("t.lona", src.as_str()))
            .unwrap();
        let runner = std::thread::spawn(move || {
            let p = ev.step(1_000_000_000);
            (matches!(p, Progress::Done), ev.reductions())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        lona_vm::eval_str(&env, "t.lona", &format!("(ns {ns}) (defn spin [i] :new)")).unwrap();
        let (done, reds) = runner.join().unwrap();
        assert!(done, "{tier:?}: finished in one slice");
        assert_eq!(buf.text(), ":new\n", "{tier:?} after {reds} reductions");
    }
}

#[test]
fn code_given_up_for_now_is_tried_again() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // `walk` becomes hot summing big integers: every entry leaves at its
    // first `+` (a big integer is the interpreter's), so its code is
    // given up, for now. Then it sums small integers, interpreted during the rest (ten
    // times the threshold of entries); after it the code is tried again
    // and stays compiled. (Code given up for good stayed interpreted:
    // `map` over `count` did, before `count` was compiled.)
    let t = Tiered::new("rest");
    let n = jit::threshold() as usize;
    t.run("(defn walk [xs acc] (match xs (x & more) (walk more (+ acc x)) _ acc))");
    t.run(&format!(
        "(println (walk (repeat {} 1152921504606846976) 0))",
        3 * n
    ));
    assert_eq!(
        t.state("walk"),
        Ok("resting"),
        "given up while it met big integers"
    );
    // The rest.
    t.run(&format!("(println (walk (range {}) 0))", 12 * n));
    assert_eq!(t.state("walk"), Ok("compiled"), "tried again");
    t.run(&format!("(println (walk (range {}) 0))", 3 * n));
    assert_eq!(t.state("walk"), Ok("compiled"), "not given up again");
    let sum = |k: usize| k * (k - 1) / 2;
    assert_eq!(
        t.buf.text(),
        format!(
            "{}\n{}\n{}\n",
            3 * n as u128 * (1 << 60),
            sum(12 * n),
            sum(3 * n)
        )
    );
}

#[test]
fn a_leaf_arity_that_leaves_is_its_callers_doing() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // `p`'s one-argument arity is a leaf (the interpreter never enters
    // it) that leaves at the map it makes for odd numbers; its other
    // arity loops. `c`, a compiled loop, calls the leaf: the early leaves
    // are `c`'s doing, as a one-arity leaf's would be, so `c` is given up
    // and `p` is not (it was: no arity of `p` was ever entered by the
    // interpreter, yet both rested, found by review).
    let t = Tiered::new("mixed");
    let n = jit::threshold() as usize;
    t.run(
        "(defn p ([x] (if (odd? x) {:x x} x)) ([x n] (if (= n 0) x (p (inc x) (dec n)))))
         (defn c [n acc] (if (= n 0) acc (c (dec n) (+ acc (let [r (p n)] (if (map? r) 1 0))))))",
    );
    t.run(&format!("(println (p 0 {}))", 3 * n));
    t.run(&format!("(println (c {} 0))", 3 * n));
    assert_ne!(
        t.state("p"),
        Ok("resting"),
        "p given up for its leaf's leaves"
    );
    assert_eq!(t.state("c"), Ok("resting"));
    assert_eq!(t.buf.text(), format!("{}\n{}\n", 3 * n, 3 * n / 2));
}

/// Floats in a compiled function's arithmetic and comparisons
/// (`jit/translate/float.rs`): loops over floats found hot stay compiled
/// (they left at every float before, and were given up), and what they
/// compute is the interpreter's: a float with a small integer either way
/// round, `-0.0`, NaN unordered, an infinite result (`:badarith`), a big
/// integer (left to the interpreter), not a number.
#[test]
fn float_arithmetic_stays_in_compiled_code() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    let n = jit::threshold() as usize;
    let src = "(defn esc [i zr zi cr ci]
                 (cond (> (+ (* zr zr) (* zi zi)) 4.0) i
                       (<= i 0) 0
                       :else (esc (dec i) (+ (- (* zr zr) (* zi zi)) cr) (+ (* 2.0 zr zi) ci) cr ci)))
               (defn pts [k acc] (if (= k 0) acc (pts (dec k) (+ acc (esc 30 0.0 0.0 (- (* k 0.001) 1.5) 0.25)))))
               (defn ops [x y] [(+ x y) (- x y) (* x y) (< x y) (<= x y) (> x y) (>= x y) (== x y)])
               (defn cmps [x y] [(< x y) (<= x y) (> x y) (>= x y) (== x y)])
               (defn each [f ps acc] (match ps ([x y] & more) (each f more (conj acc (f x y))) _ acc))
               (defn grow [x f k] (if (= k 0) x (grow (* x f) f (dec k))))";
    let runs = [
        format!("(println (pts {} 0))", 3 * n),
        format!("(println (count (each ops (repeat {} [1.5 2]) [])))", 3 * n),
        format!(
            "(println (count (each cmps (repeat {} [2.5 1]) [])))",
            3 * n
        ),
        format!("(println (grow 1.5 1.0001 {}))", 3 * n),
        "(println (each ops (list [1.5 2] [2 1.5] [0.5 0.25] [-0.0 0.0] [3 3.0] [1 2]
                                   [1152921504606846976 0.5] [0.1 0.2]) [])
                  (each cmps (list [##NaN 1.0] [1 ##NaN] [##-Inf 0] [0.1 0.1] [2 2.0] [1 1.5]) [])
                  (try (each ops (list [1e300 1e300]) []) (catch :error e e))
                  (try (each ops (list [1.0 ##Inf]) []) (catch :error e e))
                  (try (each ops (list [:a 1.0]) []) (catch :error e e))
                  (try (grow 1.0 1e10 100) (catch :error e e)))"
            .to_string(),
    ];
    let t = Tiered::new("floats");
    t.run(src);
    for r in &runs {
        t.run(r);
    }
    for f in ["esc", "each", "grow"] {
        assert_eq!(t.state(f), Ok("compiled"), "{f}");
    }
    // The interpreter's answers, from a node of its own.
    let i = Tiered::new("floats-i");
    jit::set_tier(Tier::Interp);
    i.run(src);
    for r in &runs {
        i.run(r);
    }
    jit::set_tier(Tier::Jit);
    assert_eq!(t.buf.text(), i.buf.text());
    assert_eq!(
        t.buf.text().matches(":badarith").count(),
        4,
        "{}",
        t.buf.text()
    );
}

/// A `loop` whose slice runs out at its `recur`, or whose code leaves
/// for the interpreter inside it, goes on in compiled code from the
/// loop's head (`jit/translate/resume.rs`): nearly every reduction of
/// a long loop runs compiled, not only those before its first yield;
/// and what it computes, and where it yields, is the interpreter's.
#[test]
fn a_loop_goes_on_in_compiled_code_after_a_yield() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    let src = "(defn sum [n] (loop [i 0 t 0] (if (< i n) (recur (inc i) (+ t (if (= i 500) (try (* 2 i) (catch :error e 0)) i))) t)))";
    let t = Tiered::new("resume");
    t.run(src);
    let n = jit::threshold() as usize;
    t.run(&format!("(println (sum {}))", 3 * n));
    assert_eq!(t.state("sum"), Ok("compiled"));
    jit::count_reductions(true);
    let before = jit::stats();
    // A hundred thousand iterations: fifty slices, and a `try` at 500
    // (a side exit: the interpreter's).
    t.run("(println (sum 100000))");
    let after = jit::stats();
    jit::count_reductions(false);
    let (all, compiled) = (
        after.reductions - before.reductions,
        after.compiled_reductions - before.compiled_reductions,
    );
    assert!(all > 100_000, "{all}");
    assert!(compiled * 10 > all * 9, "{compiled} of {all} compiled");
    let k = 100_000u128;
    let want = k * (k - 1) / 2 + 500;
    assert!(
        t.buf.text().ends_with(&format!("\n{want}\n")),
        "{}",
        t.buf.text()
    );
    same(
        "resume",
        "(defn sum [n] (loop [i 0 t 0] (if (< i n) (recur (inc i) (+ t (if (= i 50) 1152921504606846975 i))) t)))
         (defn two [n] (loop [i 0 v []] (if (< i n) (recur (inc i) (conj v (loop [j i a 0] (if (> j 0) (recur (dec j) (+ a j)) a)))) v)))
         (println (sum 3000) (two 40))",
    );
}

#[test]
fn a_function_compiled_code_calls_is_compiled_soon() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // `walk` is compiled (hot, mapping a built-in); then it maps `g`,
    // which nobody has called. Each call of `g` leaves `walk`'s code
    // (no code to call) and counts for `g` as many interpreter calls
    // (`JitSlot::called_from_compiled`): well before the threshold of
    // calls `g` is compiled, and `walk` is never given up. (Counted one
    // by one, `g` stayed cold for a thousand calls and `walk`, leaving
    // at each, was given up first.)
    let t = Tiered::new("soon");
    let n = jit::threshold() as usize;
    t.run(
        "(defn walk [f xs acc] (match xs (x & more) (walk f more (+ acc (f x))) _ acc))
         (defn g [x] (* 2 x))",
    );
    t.run(&format!("(println (walk inc (range {}) 0))", 2 * n));
    assert_eq!(t.state("walk"), Ok("compiled"));
    t.run("(println (walk g (range 100) 0))");
    let g = t.state("g");
    assert!(g == Ok("leaf") || g == Ok("compiled"), "{g:?}");
    t.run(&format!("(println (walk g (range {}) 0))", 3 * n));
    assert_eq!(t.state("walk"), Ok("compiled"), "never given up");
    let sum = |k: usize| k * (k - 1) / 2;
    assert_eq!(
        t.buf.text(),
        format!(
            "{}\n{}\n{}\n",
            sum(2 * n) + 2 * n,
            2 * sum(100),
            2 * sum(3 * n)
        )
    );
}

#[test]
fn code_that_keeps_leaving_is_given_up_for_good() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    // Every entry leaves where it makes a closure (not compiled): given
    // up, tried again after each rest, and after the last given up for
    // good.
    let t = Tiered::new("restless");
    t.run(
        "(defn poll [n acc]
           (if (= n 0) acc
             (poll (- n 1) (+ acc ((fn [] n))))))",
    );
    let mut states = Vec::new();
    for _ in 0..40 {
        t.run("(poll 100000 0)");
        let s = t.state("poll").unwrap();
        if states.last() != Some(&s) {
            states.push(s);
        }
        if s == "never" {
            break;
        }
    }
    assert_eq!(states.first(), Some(&"resting"), "{states:?}");
    assert_eq!(states.last(), Some(&"never"), "{states:?}");
    assert!(
        states.contains(&"compiled") || states.len() == 2,
        "{states:?}"
    );
}

/// Random well-typed Lonala programs (`jit/gen.rs`).
#[path = "jit/gen.rs"]
mod gen;

/// A node per tier for the random programs, made once under its tier
/// (the caller holds `TIER`): a fresh node loads its prelude again and,
/// under `jit-eager`, compiles it again, most of a case's time in a debug
/// build. Each program runs in a namespace of its own, so its functions
/// are fresh prototypes, compiled or not by this tier alone.
struct Node {
    env: Arc<Env>,
    out: SharedBuf,
    /// Prototypes compiled when a program of the random programs'
    /// top-level forms runs with none of its functions called (none: a
    /// form starting with a `def` or a `try` is not compiled).
    empty: u64,
}

fn node(tier: Tier) -> &'static Node {
    static NODES: [std::sync::OnceLock<Node>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    jit::set_tier(tier);
    NODES[(tier != Tier::Interp) as usize].get_or_init(|| {
        let out = SharedBuf::default();
        let env = Env::new(Box::new(out.clone()));
        let mut node = Node { env, out, empty: 0 };
        // The prelude functions the programs call, called once: under
        // `jit-eager` they are compiled now, so that what a program
        // compiles is its own.
        run(
            &node,
            "warm",
            "(println (map inc [1 2]) (map (fn [x] x) '(1)) (mapv inc [1]) (filter even? (range 4))
                      (filter odd? '(1 2)) (reduce + 0 [1 2]) (reduce + '(1 2)) (reduce * 1 '(2))
                      (count '(1 2)) (count [1]) (vec '(1 2)) (reverse '(1 2)) (range 1 3)
                      (nth [1 2] 5 0) (conj [1] 2) (rest '(1 2)) (first (cons 1 ())) (empty? ())
                      (try (nth [1] 9) (catch :error e e)) (try (error 1) (catch :error e e)))",
            2000,
            u64::MAX,
        );
        let before = jit::stats().compiled;
        run(
            &node,
            "empty",
            "(do (declare a b) (defn z [k x] x)) (identity (try 1 (catch :error e [:error e])))",
            2000,
            u64::MAX,
        );
        node.empty = jit::stats().compiled - before;
        node
    })
}

/// Runs `body` in namespace `ns` of `node`, `budget` reductions a slice,
/// for at most about `cap` reductions and [`MAX_HEAP`] words: the
/// reductions at the end of every slice and what it printed (then how it
/// failed, if it did), or `None` past either limit.
fn run(node: &Node, ns: &str, body: &str, budget: i32, cap: u64) -> Option<(Vec<u64>, String)> {
    let take = || std::mem::take(&mut *node.out.0.lock().unwrap_or_else(|e| e.into_inner()));
    take();
    let mut ev = Evaluator::new(node.env.clone());
    ev.set_max_heap_size(MAX_HEAP);
    let src = format!("(ns {ns}) {body}");
    ev.push_source(&Source::new("t.lona", src.as_str()))
        .unwrap();
    let mut at = Vec::new();
    let end = loop {
        let p = ev.step(budget);
        at.push(ev.reductions());
        match p {
            Progress::Yield if ev.reductions() > cap => return None,
            Progress::HeapLimit(_) => return None,
            Progress::Yield => {}
            Progress::Done => break String::new(),
            other => break format!("{other:?}"),
        }
    };
    let out = String::from_utf8_lossy(&take()).into_owned() + &end;
    // The namespace's name is in printed functions and in traces.
    Some((at, out.replace(&format!("{ns}/"), "NS/")))
}

/// The most heap a random program may take, in words (512 MB): a
/// program that runs away with memory is reported, not the test binary
/// killed by the system (once, in CI, at 24 GB).
const MAX_HEAP: usize = 64 << 20;

/// The most reductions a random program may take (in the interpreter;
/// the generator keeps nearly all far below).
const CAP: u64 = 400_000;

/// What the random programs did, for the by-hand runs.
#[derive(Default, Debug)]
struct Tally {
    programs: u64,
    /// Rejected: past `CAP` in the interpreter.
    too_long: u64,
    /// The programs' own prototypes compiled (`show` among them) and
    /// those found hot but left to the interpreter (top-level forms among
    /// them).
    compiled: u64,
    refused: u64,
    /// Of the compiled, those with a typed loop (`jit/translate/facts.rs`).
    typed: u64,
    /// In the interpreter, in all.
    reductions: u64,
    /// Printed results that are errors.
    errors: u64,
    /// Time in each tier and compiling, in all, in microseconds.
    interp_us: u64,
    jit_us: u64,
    compile_us: u64,
    /// The longest case (both tiers), in microseconds.
    max_us: u64,
}

static TALLY: std::sync::Mutex<Tally> = std::sync::Mutex::new(Tally {
    programs: 0,
    too_long: 0,
    compiled: 0,
    refused: 0,
    typed: 0,
    reductions: 0,
    errors: 0,
    interp_us: 0,
    jit_us: 0,
    compile_us: 0,
    max_us: 0,
});

/// Runs the program of `tape` in both tiers with `budget` reductions a
/// slice: the same output, the same reductions at the end of every slice,
/// and something compiled.
fn agree(tape: Vec<u32>, budget: i32) -> Result<(), proptest::test_runner::TestCaseError> {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = gen::Gen::new(tape).program();
    let t0 = std::time::Instant::now();
    let Some((i, out_i)) = run(node(Tier::Interp), &format!("rnd{k}i"), &src, budget, CAP) else {
        // Past the reductions or the heap.
        TALLY.lock().unwrap().too_long += 1;
        return Err(proptest::test_runner::TestCaseError::reject("too long"));
    };
    let t1 = std::time::Instant::now();
    let jit_node = node(Tier::JitEager);
    let before = jit::stats();
    let j = run(jit_node, &format!("rnd{k}j"), &src, budget, 2 * CAP);
    let after = jit::stats();
    let t2 = std::time::Instant::now();
    proptest::prop_assert!(j.is_some(), "the compiled tier ran past a limit: {}", src);
    let (j, out_j) = j.unwrap();
    proptest::prop_assert_eq!(&out_i, &out_j, "{}", src);
    proptest::prop_assert_eq!(&i, &j, "reductions: {}", src);
    // Every program runs some code of its own compiled (its functions
    // are not all in the compiled subset: those with side exits and
    // nothing to gain before them are not).
    proptest::prop_assert!(
        after.compiled - before.compiled > jit_node.empty,
        "not compiled: {}",
        src
    );
    let mut t = TALLY.lock().unwrap();
    t.programs += 1;
    t.compiled += after.compiled - before.compiled - jit_node.empty;
    t.refused += after.refused - before.refused;
    t.typed += after.typed_loops - before.typed_loops;
    t.reductions += i.last().copied().unwrap_or(0);
    t.errors += out_i.matches("[:error").count() as u64;
    t.interp_us += (t1 - t0).as_micros() as u64;
    t.jit_us += (t2 - t1).as_micros() as u64;
    t.compile_us += after.compile_us - before.compile_us;
    t.max_us = t.max_us.max((t2 - t0).as_micros() as u64);
    Ok(())
}

/// Cases of the random programs: `LONA_JIT_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("LONA_JIT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn tape() -> impl proptest::strategy::Strategy<Value = Vec<u32>> {
    proptest::collection::vec(proptest::prelude::any::<u32>(), 0..600)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: cases(2000),
        max_global_rejects: 100,
        ..Default::default()
    })]

    /// Random programs print the same in both tiers, with the same
    /// reductions at the end of every slice.
    #[test]
    fn random_programs_agree_in_both_tiers(tape in tape(), budget in 2i32..300) {
        agree(tape, budget)?;
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: cases(5_000),
        max_global_rejects: 2000,
        ..Default::default()
    })]

    /// The same, many more (by hand: `cargo test -p lona-vm --test jit
    /// -- --ignored --nocapture`, about four minutes; `LONA_JIT_CASES`
    /// sets how many). Each run draws new programs; run it again for more
    /// rather than asking one run for more than about 7,000: the code of
    /// these programs is never freed (their namespaces stay), and the
    /// code heap's reserve (1 GiB) and the node's memory grow with every
    /// program.
    #[test]
    #[ignore = "many thousands of random programs: by hand"]
    fn many_random_programs_agree_in_both_tiers(tape in tape(), budget in 2i32..300) {
        agree(tape, budget)?;
        let t = TALLY.lock().unwrap();
        if t.programs.is_multiple_of(250) {
            eprintln!("{t:?}");
        }
    }
}

/// A tape from a failure, by hand: `LONA_JIT_TAPE=FILE` (comma-separated
/// words) or `LONA_JIT_SRC=FILE` (a program), and `LONA_JIT_BUDGET`.
#[test]
#[ignore = "by hand"]
fn replay_a_tape() {
    let budget = std::env::var("LONA_JIT_BUDGET").map_or(64, |s| s.parse().unwrap());
    let src = match std::env::var("LONA_JIT_SRC") {
        Ok(f) => std::fs::read_to_string(f).unwrap(),
        Err(_) => {
            let tape: Vec<u32> = std::fs::read_to_string(std::env::var("LONA_JIT_TAPE").unwrap())
                .unwrap()
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().parse().unwrap())
                .collect();
            gen::Gen::new(tape).program()
        }
    };
    eprintln!("{src}");
    let i = run(node(Tier::Interp), "replay-i", &src, budget, CAP);
    let j = run(node(Tier::JitEager), "replay-j", &src, budget, 2 * CAP);
    assert_eq!(i, j);
}

/// The default: a function found hot is queued for the compiling thread
/// (`jit/queue.rs`) and the caller goes on interpreting it; the thread
/// compiles it, and its next calls run the code, with the same results.
#[test]
fn hot_functions_are_compiled_off_the_calling_thread() {
    let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
    jit::set_tier(Tier::Jit);
    jit::set_background(true);
    let buf = SharedBuf::default();
    let env: Arc<Env> = Env::new(Box::new(buf.clone()));
    // (Earlier tests' compiles done: what is counted from here is this
    // test's.)
    jit::settle();
    let before = jit::stats().background;
    let optimised = jit::stats().optimised;
    let run = |src: &str| lona_vm::eval_str(&env, "t.lona", &format!("(ns offthread) {src}"));
    run("(defn walk [n acc] (if (= n 0) acc (walk (- n 1) (+ acc 3))))").unwrap();
    // Hot at the 1,000th self tail call; the rest of the loop runs on
    // (interpreted until the code is in place): the result is the same.
    assert_eq!(run("(walk 5000 1)").unwrap(), "15001");
    jit::settle();
    let state = lona_vm::introspect::tier_state(&env, "offthread", "walk");
    assert_eq!(state, Ok("compiled"));
    assert!(jit::stats().background > before, "{}", jit::stats());
    assert_eq!(run("(walk 100000 2)").unwrap(), "300002");
    // Its quick code is optimised there too, once entered a few times
    // (perhaps already: every slice of the long walk above was an entry).
    for _ in 0..10 {
        assert_eq!(run("(walk 10 0)").unwrap(), "30");
    }
    jit::settle();
    if std::env::var("LONA_JIT_QUICK").map_or(true, |v| v != "0") {
        assert!(jit::stats().optimised > optimised, "{}", jit::stats());
    }
    assert_eq!(run("(walk 7 0)").unwrap(), "21");
    jit::set_background(false);
}
