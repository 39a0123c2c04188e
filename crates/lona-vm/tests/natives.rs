//! Natives of the embedding program (`Env::define_native`): written in
//! safe Rust, they get and return typed terms, and raise exceptions Lonala
//! catches. This file forbids `unsafe`, as a crate embedding Lonala may.
#![forbid(unsafe_code)]

use std::sync::Arc;

use lona_term::{Heap, Term};
use lona_vm::{eval_str, Env, EvalError, Exception, NativeCall, SharedBuf};

fn env() -> Arc<Env> {
    Env::new(Box::new(SharedBuf::default()))
}

fn add<'h>(cx: &mut NativeCall<'h, '_>, a: &[Term<'h>]) -> Result<Term<'h>, Exception<'h>> {
    let mut sum = 0i64;
    for t in a {
        let n = t.as_i64().ok_or_else(Exception::badarg)?;
        sum = sum.checked_add(n).ok_or_else(Exception::badarith)?;
    }
    cx.charge(a.len());
    Ok(cx.heap().int(sum))
}

#[test]
fn a_native_is_called_like_any_function() {
    let env = env();
    env.define_native("calc", "add", 0, u16::MAX, add);
    env.define_native("calc", "pair", 2, 2, |cx, a| {
        Ok(cx.heap().vector(&[a[1], a[0]]))
    });
    let got = eval_str(
        &env,
        "t.lona",
        "[(calc/add) (calc/add 1 2 3) (calc/pair :a \"b\") (map calc/add [1 2] [10 20])]",
    )
    .unwrap();
    assert_eq!(got, "[0 6 [\"b\" :a] (11 22)]");
}

#[test]
fn a_native_raises_what_lonala_catches() {
    let env = env();
    env.define_native("calc", "add", 0, u16::MAX, add);
    env.define_native("calc", "boom", 1, 1, |_cx, a| Err(Exception::throw(a[0])));
    env.define_native("calc", "quit", 0, 0, |cx, _a| {
        Err(Exception::exit(cx.heap().string("bye")))
    });
    let got = eval_str(
        &env,
        "t.lona",
        r#"[(try (calc/add 1 :x) (catch :error e [:caught e]))
            (try (calc/boom [1 2]) (catch :throw v [:thrown v]))
            (try (calc/quit) (catch :exit r [:exited r]))
            (try (calc/add 1 2 3 4 5 6 7 8 9 (bit-shift-left 1 62)) (catch :error e e))]"#,
    )
    .unwrap();
    assert_eq!(
        got,
        r#"[[:caught :badarg] [:thrown [1 2]] [:exited "bye"] 4611686018427387949]"#
    );
    // Uncaught, it is an error of the program like any other.
    match eval_str(&env, "t.lona", "(calc/add 1 nil)") {
        Err(EvalError::Uncaught { class, reason, .. }) => {
            assert_eq!(class, lona_vm::Class::Error);
            assert_eq!(reason, ":badarg");
        }
        other => panic!("{other:?}"),
    }
    // Arity is checked before the call.
    let e = eval_str(&env, "t.lona", "(calc/quit 1)").unwrap_err();
    assert!(e.to_string().contains("badarity"), "{e}");
}

#[test]
fn a_term_of_another_heap_is_copied_not_trusted() {
    // A leaked heap's terms are `Term<'static>`: a native may return one,
    // and the VM copies it onto the process heap.
    let env = env();
    env.define_native("calc", "leaked", 0, 0, |_cx, _a| {
        let h: &'static Heap = Box::leak(Box::new(Heap::new()));
        Ok(h.vector(&[h.string("far"), h.int(i64::MAX)]))
    });
    let got = eval_str(
        &env,
        "t.lona",
        "(let [v (calc/leaked)] (gc :full) [v (calc/leaked) (count (str v))])",
    )
    .unwrap();
    assert_eq!(
        got,
        r#"[["far" 9223372036854775807] ["far" 9223372036854775807] 27]"#
    );
}

/// A native named as a function of the prelude (`second`) or of the
/// node's built-ins (`spawn`), defined before any code ran on the `Env`,
/// stays the program's once the node has started (the node's half of the
/// start runs at the first code, after the definitions), and one defined
/// afterwards replaces the prelude's too.
#[test]
fn a_native_defined_before_the_first_code_wins_over_the_prelude() {
    let env = env();
    env.define_native("lona.core", "second", 1, 1, |cx, _a| {
        Ok(cx.heap().string("mine"))
    });
    env.define_native("lona.core", "spawn", 1, 1, |cx, _a| {
        Ok(cx.heap().string("no-spawn"))
    });
    let got = eval_str(
        &env,
        "t.lona",
        "[(second [1 2]) (spawn (fn [] 1)) (ffirst [[7]])]",
    )
    .unwrap();
    assert_eq!(got, r#"["mine" "no-spawn" 7]"#);
    env.define_native("lona.core", "ffirst", 1, 1, |cx, _a| {
        Ok(cx.heap().string("later"))
    });
    let got = eval_str(&env, "t.lona", "[(second [1 2]) (ffirst [[7]])]").unwrap();
    assert_eq!(got, r#"["mine" "later"]"#);
}
