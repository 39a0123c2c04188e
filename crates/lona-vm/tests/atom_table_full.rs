//! Issue 17, defect 4: a full atom table is an error a program can catch,
//! never a panic, and every path the runtime takes on its own (errors,
//! DOWN, EXIT, process-info, replies) keeps working with the table at its
//! real limit, 1,048,576 atoms.
//!
//! The table is node-wide and never shrinks, so this test binary holds
//! this one test.

use std::time::{Duration, Instant};

use lona_runtime::Runtime;
use lona_term::{
    decode, decode_with, Atom, AtomBudget, DecodeError, Fragment, Heap, Term, MAX_ATOMS,
};
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, SharedBuf, Source};

/// One top-level form, so every name it uses is interned when it is
/// compiled, before it fills the table. `PREFIX` is replaced per run.
const PROGRAM: &str = r#"
(let [fresh (fn [i] (try (keyword (str "PREFIX" i)) (catch :error e [:caught e])))
      fill (fn fill [i] (let [r (fresh i)]
                          (if (keyword? r) (if (< i 100) (fill (inc i)) [:no-limit i]) [r i])))
      caught (fn [f] (try (f) (catch :error e [:error e]) (catch :exit e [:exit e])))]
  (println :fill (fill 0))
  (println :keyword (caught (fn [] (keyword "PREFIX-again"))))
  (println :symbol (caught (fn [] (symbol "PREFIX-sym"))))
  (println :long (caught (fn [] (keyword (apply str (repeat 256 "k"))))))
  (println :existing (keyword "normal") (symbol "println"))
  (println :badarith (caught (fn [] (+ 1 :a))))
  (println :badarg (caught (fn [] (nth [1] :x))))
  (println :case (caught (fn [] (match 5 [a] a))))
  (let [[p m] (spawn-monitor (fn [] (receive :go :done)))]
    (send p :go)
    (println :down (receive [:DOWN r _ reason] :when (= r m) reason)))
  (let [[p m] (spawn-monitor (fn [] (+ 1 :a)))]
    (println :crash (receive [:DOWN r _ reason] :when (= r m) reason)))
  (process-flag :trap-exit true)
  (let [c (spawn-link (fn [] (exit :bye)))]
    (println :exit (receive [:EXIT from reason] :when (= from c) reason)))
  (let [c (spawn-link (fn [] :fine))]
    (println :exit-normal (receive [:EXIT from reason] :when (= from c) reason)))
  (println :info (:status (process-info (self))) (:trap-exit (process-info (self))))
  (println :alive (alive? (self)))
  ;; a process that Rust registers under a name no keyword has
  (let [w (spawn (fn [] (receive :stop :ok)))]
    (register :main (self))
    (register :sink w)
    (receive :renamed :ok)
    (let [n (:registered-name (process-info w))] (println :registered-name (string? n) n))
    (send w :stop))
  (println :still-running :ok))
"#;

fn run(prefix: &str) -> (String, Ending) {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("full.lona", PROGRAM.replace("PREFIX", prefix)))
        .expect("reads");
    let rt = Runtime::builder().workers(2).build().expect("runtime");
    let h = rt.handle();
    let name = format!("rust-{prefix}name");
    // Renames the program's :sink to a name made in Rust, then tells it.
    let helper = std::thread::spawn(move || {
        let t = Instant::now();
        let (sink, main) = loop {
            if let (Some(s), Some(m)) = (h.whereis("sink"), h.whereis("main")) {
                break (s, m);
            }
            assert!(t.elapsed() < Duration::from_secs(30), "never registered");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(h.unregister("sink"));
        h.register(&name, sink).expect("registers");
        h.send(main, Fragment::new(Term::keyword("renamed")));
    });
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    helper.join().expect("helper");
    (buf.text(), ending)
}

const AFTER: &str = "\
:keyword [:error :system-limit]
:symbol [:error :system-limit]
:long [:error :system-limit]
:existing :normal println
:badarith [:error :badarith]
:badarg [:error :badarg]
:case [:error [:case-clause 5]]
:down :normal
:crash [:error :badarith]
:exit :bye
:exit-normal :normal
:info :running true
:alive true
:registered-name true rust-PREFIX-name
:still-running :ok
";

#[derive(serde::Serialize)]
enum Fresh {
    NeverSeenVariantName,
}

#[test]
fn a_full_atom_table_raises_system_limit_and_everything_else_works() {
    // A keyword or symbol over 255 characters in source is a compile
    // error, one of 255 is fine.
    let env = Env::new(Box::new(SharedBuf::default()));
    let long = format!(":{}", "k".repeat(256));
    let e = lona_vm::eval_str(&env, "long.lona", &long).unwrap_err();
    assert!(e.to_string().contains("longer than 255"), "{e}");
    let e = lona_vm::eval_str(&env, "long.lona", &format!("'{}", "s".repeat(256))).unwrap_err();
    assert!(e.to_string().contains("longer than 255"), "{e}");
    let ok = format!(":{}", "k".repeat(255));
    assert_eq!(lona_vm::eval_str(&env, "ok.lona", &ok).unwrap(), ok);

    // A first run interns the program's names; the table has room.
    let (out, ending) = run("warm-");
    assert_eq!(ending, Ending::Normal, "{out}");
    let (first, rest) = out.split_once('\n').expect("lines");
    assert_eq!(first, ":fill [:no-limit 100]");
    assert!(
        rest.starts_with(
            ":keyword :warm--again\n:symbol warm--sym\n:long [:error :system-limit]\n"
        ),
        "{rest}"
    );

    assert!(
        rest.contains("\n:registered-name false :rust-warm-name\n"),
        "{rest}"
    );

    // Fill the table from Rust to three atoms below its limit.
    let mut i = 0u64;
    while Atom::count() < MAX_ATOMS - 3 {
        Atom::try_new(&format!("filler-{i}")).expect("room");
        i += 1;
    }

    // The program makes three keywords, then gets :system-limit; every
    // error, signal and reply still works, and the process ends normally.
    let (out, ending) = run("full-");
    assert_eq!(ending, Ending::Normal, "{out}");
    let after = |p: &str| AFTER.replace("PREFIX", p);
    assert_eq!(
        out,
        format!(":fill [[:caught :system-limit] 3]\n{}", after("full"))
    );
    assert_eq!(Atom::count(), MAX_ATOMS);

    // Names from data fail as errors, not panics.
    assert!(Term::try_keyword("rust-new-name").is_err());
    let heap = Heap::new();
    let kw = b"L\x01\x07\x0drust-new-name";
    assert_eq!(decode(&heap, kw), Err(DecodeError::UnknownAtom));
    assert_eq!(
        decode_with(&heap, kw, &mut AtomBudget::unlimited()),
        Err(DecodeError::AtomTableFull)
    );
    assert!(lona_vm::bridge::to_term(&heap, &Fresh::NeverSeenVariantName).is_err());
    // A name the code spells out still resolves, from the start list or
    // from the reserve above the limit.
    assert!(Atom::new("system-limit").is_runtime());
    assert_eq!(
        Atom::new("runtime-name-missing-from-the-list").name(),
        "runtime-name-missing-from-the-list"
    );

    // The node lives on: a third program runs from scratch.
    let (out, ending) = run("again-");
    assert_eq!(ending, Ending::Normal, "{out}");
    assert_eq!(
        out,
        format!(":fill [[:caught :system-limit] 0]\n{}", after("again"))
    );
}
