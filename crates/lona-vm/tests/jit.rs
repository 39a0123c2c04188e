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
    assert!(jit::compiled_count() > 0);
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
