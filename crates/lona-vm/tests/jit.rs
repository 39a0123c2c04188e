//! The compiling tier charges what the interpreter charges: the same
//! programs, stepped with the same small budgets, end their slices after
//! the same reductions and finish with the same value, whether their
//! functions run compiled (`jit-eager`) or interpreted; and a compiled
//! loop sees its var redefined by another thread. The tier is the OS
//! process's: the tests take turns.

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

/// Random functions of the compiled subset (small-integer arithmetic and
/// products
/// near the edges of the small range, comparisons, `if`, `let`, calls
/// and tail calls of themselves), as source text.
mod gen {
    use proptest::prelude::*;

    /// Integers at and around the edges where small integers overflow
    /// into big ones, and ordinary ones.
    fn int() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => (-5i64..6).prop_map(|i| i.to_string()),
            4 => prop::sample::select(vec![
                "1152921504606846975",  // 2^60 - 1: the largest small integer
                "-1152921504606846976", // -2^60: the smallest
                "1152921504606846976",  // 2^60: a big one
                "576460752303423488",
                "-576460752303423489",
            ])
            .prop_map(str::to_string),
            1 => Just("1.5".to_string()),
        ]
    }

    /// A number-valued expression over the parameters `a` and `b`
    /// (well-typed: numbers where numbers go, comparisons as conditions).
    pub fn expr() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            3 => Just("a".to_string()),
            3 => Just("b".to_string()),
            3 => int(),
        ];
        leaf.prop_recursive(4, 24, 3, |e| {
            let op = prop::sample::select(vec!["+", "-"]);
            let cmp = prop::sample::select(vec!["<", "<=", ">", ">=", "=", "=="]);
            prop_oneof![
                3 => (op, e.clone(), e.clone()).prop_map(|(o, x, y)| format!("({o} {x} {y})")),
                2 => (cmp, e.clone(), e.clone(), e.clone(), e.clone())
                    .prop_map(|(c, x, y, t, f)| format!("(if ({c} {x} {y}) {t} {f})")),
                1 => (e.clone(), e.clone()).prop_map(|(x, y)| format!("(let [c {x}] (+ c {y}))")),
                // A product by a small factor: big integers grow, but
                // only so far in 40 steps.
                1 => (e.clone(), -3i64..4).prop_map(|(x, k)| format!("(* {x} {k})")),
                1 => e.clone().prop_map(|x| format!("(inc {x})")),
                1 => e.prop_map(|x| format!("(dec {x})")),
            ]
        })
    }

    /// A function `f [n a b]` recursing on `n` (to 0), in tail position or
    /// not, and a call of it.
    pub fn program() -> impl Strategy<Value = String> {
        (
            expr(),
            expr(),
            expr(),
            expr(),
            any::<bool>(),
            0i64..40,
            int(),
            int(),
        )
            .prop_map(|(stop, e1, e2, e3, tail, n, a, b)| {
                let step = if tail {
                    format!("(f (- n 1) {e2} {e3})")
                } else {
                    format!("(+ {e1} (f (- n 1) {e2} {e3}))")
                };
                format!(
                    "(defn f [n a b] (if (<= n 0) {stop} {step}))\n\
                     (println (try (f {n} {a} {b}) (catch :error e [:error e])))"
                )
            })
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 300,
        ..Default::default()
    })]

    /// Random programs print the same in both tiers, with the same
    /// reductions at the end of every slice.
    #[test]
    fn random_programs_agree_in_both_tiers(src in gen::program(), budget in 2i32..300) {
        let _one = TIER.lock().unwrap_or_else(|e| e.into_inner());
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (i, out_i) = slices(Tier::Interp, &format!("r{k}i"), &src, budget);
        let before = jit::stats().compiled;
        let (j, out_j) = slices(Tier::JitEager, &format!("r{k}j"), &src, budget);
        // `f` (every one of these is in the compiled subset) was compiled.
        proptest::prop_assert!(jit::stats().compiled > before, "not compiled: {}", src);
        proptest::prop_assert_eq!(&out_i, &out_j, "{}", src);
        proptest::prop_assert_eq!(i, j, "reductions: {}", src);
    }
}
