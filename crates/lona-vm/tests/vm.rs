//! The interpreter's guarantees, seen from Rust: preemption, stackless
//! deep recursion, memory that follows the data, hot code loading, and
//! errors that never panic.

use std::sync::Arc;

use lona_vm::{eval_str, Env, EvalError, Evaluator, Progress, SharedBuf, Source};

fn env() -> (Arc<Env>, SharedBuf) {
    let buf = SharedBuf::default();
    (Env::new(Box::new(buf.clone())), buf)
}

fn evaluator(env: &Arc<Env>, src: &str) -> Evaluator {
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", src)).expect("reads");
    ev
}

/// Steps until done, with a bound on the number of slices.
fn finish(ev: &mut Evaluator, max_slices: usize) -> (Result<(), EvalError>, usize) {
    for n in 1..=max_slices {
        match ev.step(2000) {
            Progress::Yield => continue,
            Progress::Done => return (Ok(()), n),
            Progress::Failed(e) => return (Err(e), n),
            Progress::Halt(_) => panic!("halt"),
            other => panic!("{other:?} outside a process"),
        }
    }
    panic!("did not finish in {max_slices} slices");
}

#[test]
fn an_endless_loop_that_calls_nothing_else_is_preempted() {
    let (env, _) = env();
    let mut ev = evaluator(&env, "(defn spin [n] (spin (inc n))) (spin 0)");
    for _ in 0..200 {
        assert!(matches!(ev.step(2000), Progress::Yield));
    }
    // and a loop/recur back-edge too
    let mut ev = evaluator(&env, "(loop [i 0] (recur (inc i)))");
    for _ in 0..200 {
        assert!(matches!(ev.step(2000), Progress::Yield));
    }
}

#[test]
fn a_slice_is_about_the_budget() {
    let (env, _) = env();
    let mut ev = evaluator(
        &env,
        "(defn spin [n] (if (= n 0) :done (spin (dec n)))) (spin 100000)",
    );
    let (r, slices) = finish(&mut ev, 1000);
    r.unwrap();
    // 100,000 calls at 2,000 reductions a slice
    assert!((45..=60).contains(&slices), "{slices} slices");
}

#[test]
fn deep_non_tail_recursion_runs_on_the_heap_and_the_stack_shrinks_after() {
    let (env, buf) = env();
    let mut ev = evaluator(
        &env,
        "(defn depth [n] (if (= n 0) 0 (inc (depth (dec n)))))
         (println (depth 1000000))
         (defn spin [n] (if (= n 0) :done (spin (dec n))))
         (spin 10000)",
    );
    let (r, _) = finish(&mut ev, 100_000);
    r.unwrap();
    assert_eq!(buf.text(), "1000000\n");
    assert!(
        ev.stack_words() < 10_000,
        "stack kept {} words",
        ev.stack_words()
    );
}

#[test]
fn a_tail_recursive_loop_runs_in_constant_space() {
    let (env, _) = env();
    let mut ev = evaluator(
        &env,
        "(defn spin [n acc] (if (= n 0) acc (spin (dec n) (+ acc 1)))) (spin 3000000 0)",
    );
    let (r, _) = finish(&mut ev, 1_000_000);
    r.unwrap();
    assert!(ev.stack_words() < 1000);
    assert_eq!(ev.last_value().as_i64(), Some(3_000_000));
}

#[test]
fn the_heap_grows_with_live_data_and_shrinks_when_it_is_dropped() {
    let (env, _) = env();
    let mut ev = evaluator(
        &env,
        "(def n (count (range 200000)))
         (defn keep [xs k] (if (= k 0) (count xs) (keep xs (dec k))))
         (keep (range 300000) 20000)",
    );
    let (r, _) = finish(&mut ev, 1_000_000);
    r.unwrap();
    let big = ev.heap_words();
    // now run something small for a while: the big list is garbage
    ev.push_source(&Source::new(
        "t2.lona",
        "(defn spin [n] (if (= n 0) :done (spin (dec n)))) (spin 50000)",
    ))
    .unwrap();
    let (r, _) = finish(&mut ev, 1_000_000);
    r.unwrap();
    ev.collect_major();
    let small = ev.heap_words();
    assert!(big > 600_000, "big {big}");
    assert!(small < big / 10, "small {small} big {big}");
}

#[test]
fn redefining_a_function_changes_what_a_running_loop_calls_next() {
    let (env, buf) = env();
    let mut ev = evaluator(
        &env,
        "(defn handler [] :old)
         (defn serve [n seen]
           (let [v (handler)]
             (if (= v :new) (println :switched-after (> n 0)) (serve (inc n) v))))
         (serve 0 nil)",
    );
    for _ in 0..20 {
        assert!(matches!(ev.step(2000), Progress::Yield));
    }
    // another evaluator (another process, later) redefines the handler
    eval_str(&env, "reload.lona", "(defn handler [] :new)").unwrap();
    let (r, _) = finish(&mut ev, 10);
    r.unwrap();
    assert_eq!(buf.text(), ":switched-after true\n");
}

#[test]
fn errors_are_values_with_positions_and_never_panics() {
    let (env, _) = env();
    let cases: &[(&str, &str)] = &[
        ("(foo 1)", "t.lona:1:2: unable to resolve symbol: foo"),
        (
            "(let [x] x)",
            "t.lona:1:6: let needs an even number of forms in its binding vector",
        ),
        (
            "(fn [x] (recur))",
            "t.lona:1:9: recur with 0 arguments, the loop has 1",
        ),
        (
            "(fn [x] (+ 1 (recur x)))",
            "t.lona:1:14: recur must be in tail position",
        ),
        ("(recur 1)", "t.lona:1:1: recur outside a loop or function"),
        (
            "(if)",
            "t.lona:1:1: if takes a test, a then form and an optional else form",
        ),
        (
            "(match 1 [a & b c] a)",
            "t.lona:1:10: bad pattern: & must be followed by exactly one pattern",
        ),
        (
            "(match 1 {x 1} x)",
            "t.lona:1:11: bad pattern: map pattern keys must be literals",
        ),
        ("(quote 1 2)", "t.lona:1:1: quote takes one form"),
        (
            "(nosuch/f 1)",
            "t.lona:1:2: no namespace nosuch (require it first)",
        ),
        (
            "(def 1 2)",
            "t.lona:1:6: def needs an unqualified symbol as its name",
        ),
    ];
    for (src, want) in cases {
        match eval_str(&env, "t.lona", src) {
            Err(EvalError::Compile(e)) => assert_eq!(e.to_string(), *want, "{src}"),
            other => panic!("{src}: {other:?}"),
        }
    }
}

#[test]
fn uncaught_errors_carry_the_exit_reason_and_a_trace_with_lines() {
    let (env, _) = env();
    let src = "(defn f [x]\n  (+ x 1))\n(defn g [x] (let [y (f x)] y))\n(g :a)";
    match eval_str(&env, "t.lona", src) {
        Err(EvalError::Uncaught {
            reason,
            exit_reason,
            trace,
            ..
        }) => {
            assert_eq!(reason, ":badarith");
            assert_eq!(exit_reason, "[:error :badarith]");
            assert!(trace.contains("at user/f (t.lona:2)"), "{trace}");
            assert!(trace.contains("at user/g (t.lona:3)"), "{trace}");
        }
        other => panic!("{other:?}"),
    }
    // a built-in that raises heads the trace (`subs`: `nth` is a Lonala
    // function over the built-in `nth*` since lazy sequences)
    match eval_str(&env, "t.lona", "(defn h [v]\n  (subs v 5))\n(h \"a\")") {
        Err(EvalError::Uncaught { reason, trace, .. }) => {
            assert_eq!(reason, ":badarg");
            assert!(
                trace.starts_with("  at lona.core/subs (built-in)\n  at user/h (t.lona:2)"),
                "{trace}"
            );
        }
        other => panic!("{other:?}"),
    }
    match eval_str(&env, "t.lona", "(throw [:oops 1])") {
        Err(EvalError::Uncaught { exit_reason, .. }) => {
            assert_eq!(exit_reason, "[:error [:nocatch [:oops 1]]]")
        }
        other => panic!("{other:?}"),
    }
    match eval_str(&env, "t.lona", "(exit :bye)") {
        Err(EvalError::Uncaught { exit_reason, .. }) => assert_eq!(exit_reason, ":bye"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_arity_and_bad_calls_raise() {
    let (env, _) = env();
    let r = eval_str(
        &env,
        "t.lona",
        "(defn two [a b] a) (try (two 1) (catch :error e e))",
    )
    .unwrap();
    assert_eq!(r, "[:badarity #fn<user/two> 1]");
    let r = eval_str(&env, "t.lona", "(try (inc 1 2) (catch :error e e))").unwrap();
    assert_eq!(r, "[:badarity #fn<lona.core/inc> 2]");
    let r = eval_str(&env, "t.lona", "(try (\"s\" 1) (catch :error e e))").unwrap();
    assert_eq!(r, "[:badfun \"s\"]");
}

#[test]
fn a_huge_recursion_ends_with_system_limit_not_a_crash() {
    let (env, _) = env();
    let mut ev = evaluator(
        &env,
        "(defn down [n] (inc (down n))) (try (down 0) (catch :error e e))",
    );
    ev.set_stack_limit(1 << 20);
    let (r, _) = finish(&mut ev, 10_000_000);
    r.unwrap();
    assert_eq!(ev.last_value().to_string(), ":system-limit");
}

#[test]
fn deeply_nested_code_is_an_error_not_a_stack_overflow() {
    let (env, _) = env();
    let src = format!("{}1{}", "(inc ".repeat(3000), ")".repeat(3000));
    match eval_str(&env, "t.lona", &src) {
        Err(EvalError::Compile(e)) => assert!(e.message.contains("nested more than"), "{e}"),
        other => panic!("{other:?}"),
    }
    // a deep literal is data, not code
    let src = format!("(count (quote {}1{}))", "(".repeat(2000), ")".repeat(2000));
    assert_eq!(eval_str(&env, "t.lona", &src).unwrap(), "1");
}
