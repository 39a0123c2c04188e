//! The code collector (`purge`): old code and old var values are freed
//! once no process can use them, and never while one can. Each program
//! here keeps old code reachable in one way only a process knows of (its
//! heap, its frames, a message in its mailbox, a timer, a crash trace)
//! while a helper thread runs collection cycles, then uses it.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lona_runtime::Runtime;
use lona_vm::process::Ending;
use lona_vm::{node, purge, Env, Evaluator, SharedBuf, Source};

/// One program at a time. The collector and its counts are the OS
/// process's, and a cycle frees nothing while any VM outside a process
/// is alive: another test's node loading its prelude (seconds under
/// `LONA_TIER=jit-eager`) would make every cycle of this one give up,
/// and its `freed` would read 0.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `src` as the main process of a fresh runtime while a helper
/// thread runs code collection cycles back to back. Returns the output,
/// the ending, and the areas freed meanwhile.
fn run_collecting(src: &str) -> (String, Ending, u64) {
    run_collecting_with(src, |_| {})
}

/// Runs collection cycles until `done` holds after one that ran to the
/// end, or gives up after many tries (the caller's assertion then fails).
/// A cycle is given up while another test's evaluator lives, and the other
/// tests of a binary may run for many seconds on a busy machine (under
/// `jit-eager` in CI they did, past an earlier bound of 2 s): the bound is
/// generous, and it is no timing check.
fn collect_until(done: impl Fn() -> bool) {
    for _ in 0..3000 {
        if purge::collect() && done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`run_collecting`], with `with` given the runtime's handle first.
fn run_collecting_with(
    src: &str,
    with: impl FnOnce(&lona_runtime::Handle),
) -> (String, Ending, u64) {
    // A test that failed while holding it poisons it; the next is fine.
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .expect("runtime");
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", src)).expect("reads");
    with(&rt.handle());
    let freed0 = purge::stats().freed;
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let helper = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            purge::collect();
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    stop.store(true, Ordering::Relaxed);
    helper.join().expect("helper thread");
    (buf.text(), ending, purge::stats().freed - freed0)
}

/// Redefines `f` (and a var `data`) `n` times through `eval`, then
/// sleeps so that the helper's cycles run: defined in every program.
const REDEFINE: &str = r#"
(defn churn [n]
  (dotimes [i n]
    (eval '(defn f [x] (str "new:" x)))
    (eval '(def data [:new "a value of a later version"])))
  (receive :never nil :timeout 150 nil))
"#;

#[test]
fn old_code_held_by_processes_survives_collection_and_the_rest_is_freed() {
    let src = format!(
        r#"
(declare f data)
(def me (self))
(eval '(defn f [x] (str "old:" x)))
(eval '(defn lit [] "a string literal of the first version of lit"))
(eval '(def data [:old "a value of the first version"]))
(eval '(defn waiter [] (send me :in-waiter) (receive :go (str "waiter continues in old code " (f 7)))))
{REDEFINE}
;; 1. A closure in a process heap, passed at spawn.
(def keeper (spawn (fn [g s d] (receive :go (send me [:keeper (g 1) s d]))) f (lit) data))
;; 2. A closure in a message waiting in a mailbox.
(def sleeper (spawn (fn [] (receive :go (receive [:call g] (send me [:sleeper (g 2)]))))))
(send sleeper [:call f])
;; 3. A closure in a timer's message.
(send-after 400 me [:timer f])
;; 4. Old code in the frames of a process waiting in it.
(def w (spawn (fn [] (send me [:waiter (waiter)]))))
(receive :in-waiter nil)
(eval '(defn waiter [] :new-waiter))
(eval '(defn lit [] "a later literal"))
(churn 300)
(send keeper :go)
(send sleeper :go)
(send w :go)
(dotimes [_ 4]
  (receive
    [:keeper a b c] (println "keeper:" a b c)
    [:sleeper a] (println "sleeper:" a)
    [:waiter a] (println "waiter:" a)
    [:timer g] (println "timer:" (g 3))))
(println "now:" (f 4) data (waiter) (lit))
"#
    );
    let (out, ending, freed) = run_collecting(&src);
    assert_eq!(ending, Ending::Normal, "{out}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "keeper: old:1 a string literal of the first version of lit [:old a value of the first version]",
            "now: new:4 [:new a value of a later version] :new-waiter a later literal",
            "sleeper: old:2",
            "timer: old:3",
            "waiter: waiter continues in old code new:7",
        ],
        "{out}"
    );
    // The later versions nobody holds were freed (two areas per round).
    assert!(freed >= 300, "freed {freed}");
}

#[test]
fn an_error_in_old_code_is_traced_after_collection() {
    let src = format!(
        r#"
(declare f data)
(eval '(defn boom [x] (+ x :not-a-number)))
{REDEFINE}
(def me (self))
;; A process that will fail in old code, started before the redefinition.
(def p (spawn (fn [g] (receive :go (send me (try (g 1) (catch :error e [e (first (first (stacktrace)))]))))) boom))
(def m (monitor p))
(eval '(defn boom [x] x))
(churn 300)
(send p :go)
(println (receive [e top] [e top]))
(println (receive [:DOWN _ _ r] r))
(println (boom 2))
"#
    );
    let (out, ending, freed) = run_collecting(&src);
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(out, "[:badarith user/boom]\n:normal\n2\n", "{out}");
    assert!(freed >= 300, "freed {freed}");
}

#[test]
fn churn_spawning_and_sending_old_versions_while_cycles_run() {
    // The main process defines version after version of `f`; workers
    // spawn children and send messages carrying whichever version they
    // read, and drop it at once. The children and a slow relay call it
    // later: every call must give the version it was read as, while
    // cycles run back to back.
    let src = r#"
(declare f)
(eval (list 'defn 'f [] [:v 0 (str "version " 0)]))
(def me (self))
(defn nap [] (receive :never nil :timeout 1 nil))
(defn check [g want] (= (g) want))
(defn relay []
  (receive
    [:call g want from] (do (nap) (send from [:checked (check g want)]) (relay))
    :stop :ok))
(defn fire [r n]
  (when (> n 0)
    (let [g f
          want (g)
          parent (self)]
      (spawn (fn [] (nap) (send parent [:checked (check g want)])))
      (send r [:call g want parent]))
    (fire r (dec n))))
(defn tally [n bad]
  (if (= n 0) bad (tally (dec n) (+ bad (receive [:checked ok] (if ok 0 1))))))
(defn worker [r n]
  (fire r n)
  (send me [:done (tally (* 2 n) 0)]))
(def r (spawn relay))
(dotimes [_ 4] (spawn (fn [] (worker r 300))))
(defn redefine [i]
  (eval (list 'defn 'f [] [:v i (str "version " i)]))
  (receive [:done bad] bad :timeout 0 (redefine (inc i))))
(def first-bad (redefine 1))
(def bads (cons first-bad (doall (for [_ (range 3)] (receive [:done bad] bad)))))
(send r :stop)
(println "bad:" (reduce + bads))
"#;
    let (out, ending, freed) = run_collecting(src);
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(out, "bad: 0\n");
    assert!(freed >= 100, "freed {freed}");
}

#[test]
fn a_closure_kept_in_a_rust_heap_stays_callable() {
    // A Rust process takes a closure out of a message into a heap of its
    // own (attached: the message is gone), keeps it while the function is
    // redefined and cycles run, then sends a copy back to be called. Its
    // heap is nobody's to visit: it pins what it holds.
    let src = format!(
        r#"
(declare f data)
(eval '(defn f [x] (str "old:" x)))
{REDEFINE}
(send :keeper [(self) f])
(churn 300)
(send :keeper :back)
(println (receive [:kept g] (g 5)))
"#
    );
    let (out, ending, freed) = run_collecting_with(&src, |h| {
        let p = h
            .spawn(|ctx| async move {
                let heap = lona_term::Heap::new();
                let m: lona_term::Fragment = ctx.receive().await;
                let t = heap.attach(m);
                let lona_term::View::Vector(items) = t.view() else {
                    panic!("not [pid f]")
                };
                let (to, g) = (items[0], items[1]);
                let lona_term::View::Pid(to) = to.view() else {
                    panic!("not a pid")
                };
                let to = lona_runtime::Pid::from_bits(to.0);
                let g = heap.add_root(g);
                let _: lona_term::Fragment = ctx.receive().await;
                let reply = heap.vector(&[lona_term::Term::keyword("kept"), heap.root(g)]);
                ctx.send(to, lona_term::Fragment::new(reply)).await;
            })
            .unwrap();
        h.register("keeper", p).unwrap();
    });
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(out, "old:5\n");
    assert!(freed >= 300, "freed {freed}");
}

#[test]
fn a_closure_kept_in_an_atom_stays_callable() {
    // An atom's value lives off every heap (`lona-term`'s `cell.rs`): no
    // process's visit reports it, so the value's fragment must pin the
    // code its closures name while the function is redefined and cycles
    // run; a process that reads it later calls the old version.
    let src = format!(
        r#"
(declare f data)
(eval '(defn f [x] (str "old:" x)))
{REDEFINE}
(def me (self))
;; Made by a process that then ends, and moved from atom to atom by
;; another: only the atoms hold the old `f` (this process holds the
;; atom, never the closure, until it derefs it).
(spawn (fn [] (send me [:atom (atom {{:g f}})])))
(def a (receive [:atom a] a))
(def b (atom nil))
(spawn (fn [] (reset! b (:g @a)) (reset! a nil) (send me :moved)))
(receive :moved nil)
(churn 300)
(println ((deref b) 5) (f 6))
"#
    );
    let (out, ending, freed) = run_collecting(&src);
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(out, "old:5 new:6\n");
    assert!(freed >= 300, "freed {freed}");
}

/// Quick machine code replaced by optimised code (`jit/optimise.rs`) is
/// freed by a collection cycle once every process has ended a slice
/// since, while processes go on running the function (its optimised
/// code) on both workers, right.
#[test]
fn quick_code_replaced_while_processes_run_it_is_freed_by_a_cycle() {
    let compiles = !matches!(std::env::var("LONA_TIER").as_deref(), Ok("interp"))
        && std::env::var("LONA_JIT_QUICK").as_deref() != Ok("0");
    let before = lona_vm::jit::stats().retired_freed;
    let src = r#"
(defn spin [n acc] (if (= n 0) acc (spin (dec n) (+ acc 3))))
(defn work [rounds] (loop [i 0 t 0] (if (= i rounds) t (recur (inc i) (+ t (spin 2000 0))))))
(def me (self))
(dotimes [k 4] (spawn (fn [] (send me [:done (work 400)]))))
(println (work 100))
(dotimes [_ 4] (println (receive [:done t] t)))
;; Cycles run meanwhile; then the function again, on its final code.
(receive :never nil :timeout 100 nil)
(println (work 10))
"#;
    let (out, ending, _) = run_collecting(src);
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(
        out, "600000\n2400000\n2400000\n2400000\n2400000\n60000\n",
        "{out}"
    );
    if compiles {
        // The optimise may have been left to the compiling thread while
        // the workers were busy (`jit/queue.rs`): once it is done, a
        // cycle frees the quick code.
        lona_vm::jit::settle();
        collect_until(|| lona_vm::jit::stats().retired_freed > before);
        let stats = lona_vm::jit::stats();
        assert!(stats.optimised > 0, "{stats}");
        assert!(stats.retired_freed > before, "{stats}");
    }
}

/// Each version of a function becomes hot (its compile queued for the
/// compiling thread, `jit/queue.rs`) and is redefined at once, while
/// cycles run back to back: a version waiting in the queue is unreachable
/// by every process, and must not be freed under the thread compiling it
/// (the queue pins it); what was compiled runs right.
#[test]
fn versions_found_hot_and_redefined_at_once_while_cycles_run() {
    let src = r#"
(declare g)
(defn spin [k total]
  (if (= k 0)
    total
    (do (eval (list 'defn 'g '[n acc] (list 'if '(= n 0) (list '+ 'acc k) '(g (- n 1) (+ acc 1)))))
        (spin (dec k) (+ total (g 1500 0))))))
(println (spin 150 0))
(println (g 2000 0))
"#;
    let freed0 = purge::stats().freed;
    let (out, ending, _) = run_collecting(src);
    assert_eq!(ending, Ending::Normal, "{out}");
    // Each round: 1,500 plus the version's own k (150 down to 1).
    let want = 150 * 1500 + 150 * 151 / 2;
    assert_eq!(out, format!("{want}\n2001\n"), "{out}");
    // The versions still queued (a debug build compiles slowly) are
    // freed once compiled.
    lona_vm::jit::settle();
    collect_until(|| purge::stats().freed - freed0 >= 140);
    let freed = purge::stats().freed - freed0;
    assert!(freed >= 140, "freed {freed}");
}
