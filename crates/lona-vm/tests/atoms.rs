//! Atoms across processes (`lona-term`'s `cell.rs`, `atom.lona`): every
//! copy a process, a message or a heap held is given back, so an atom
//! that went through hundreds of processes ends with only its var
//! holding it. A native of the test reads the count of holders.
#![forbid(unsafe_code)]

mod common;

use lona_runtime::Runtime;
use lona_term::View;
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, Exception, SharedBuf, Source};

/// Runs `src` as the main process of a fresh node with the native
/// `(probe/holders a)`: how many objects hold atom `a`.
fn run(src: &str) -> (String, Ending) {
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .expect("runtime");
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    env.define_native("probe", "holders", 1, 1, |cx, a| match a[0].view() {
        View::Cell(c) => Ok(cx.heap().int(c.holders() as i64)),
        _ => Err(Exception::badarg()),
    });
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", src)).expect("reads");
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    (buf.text(), ending)
}

#[test]
fn churn_through_processes_and_messages_gives_every_copy_back() {
    let src = r#"
(def a (atom 0))
(def me (self))
(def n 300)
(dotimes [_ n]
  (spawn (fn [] (swap! a inc) (send me [:copy a (with-meta [a] {:a a})]))))
(dotimes [_ n] (receive [:copy b c] nil))
;; The children may still be ending when their last message is here:
;; wait (a bounded number of rounds) until their heaps are gone.
(defn settle [left]
  (gc)
  (let [h (probe/holders a)]
    (if (or (= h 1) (= left 0))
      h
      (do (receive :never nil :timeout 10 nil) (settle (dec left))))))
(println @a (settle 500))
"#;
    let (out, ending) = run(src);
    assert_eq!(ending, Ending::Normal, "{out}");
    // Every swap counted; only the var's value holds the atom now.
    assert_eq!(out, "300 1\n");
}

#[test]
fn a_failing_function_leaves_the_atom_and_the_node_as_they_were() {
    let src = r#"
(def a (atom {:n 1}))
(def me (self))
(def p (spawn (fn [] (swap! a (fn [m] (error :boom))))))
(def mref (monitor p))
(println (receive [:DOWN _ _ r] r))
;; A watch that fails: the change stands, its maker gets the error.
(add-watch a :bad (fn [k r old new] (throw :watch-failed)))
(println (try (swap! a update :n inc) (catch :throw e e)) @a)
(remove-watch a :bad)
;; The crashed child may still be going when its DOWN is here.
(defn settle [left]
  (let [h (probe/holders a)]
    (if (or (= h 1) (= left 0))
      h
      (do (receive :never nil :timeout 10 nil) (settle (dec left))))))
(println (swap! a update :n inc) (settle 500))
"#;
    let (out, ending) = run(src);
    assert_eq!(ending, Ending::Normal, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains(":boom"), "{out}");
    assert_eq!(lines[1], ":watch-failed {:n 2}", "{out}");
    assert_eq!(lines[2], "{:n 3} 1", "{out}");
}
