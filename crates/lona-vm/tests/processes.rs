//! Lonala processes seen from Rust: limits, values a Lonala process cannot
//! read, big messages, crash reports. (The rules themselves are golden
//! tests: `tests/lona/proc_*.lona`.)

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use lona_runtime::{Handle, Runtime};
use lona_vm::process::Ending;
use lona_vm::{node, Env, Evaluator, SharedBuf, Source};

/// Runs `src` as the main process of `rt`; `with` gets the runtime's
/// handle while the program runs. Returns the output and the ending.
fn run_on(rt: Runtime, src: &str, with: impl FnOnce(Handle) + Send + 'static) -> (String, Ending) {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new("t.lona", src)).expect("reads");
    let h = rt.handle();
    let helper = std::thread::spawn(move || with(h));
    let ending = node::run_main_on(rt, &env, ev).expect("node runs");
    helper.join().expect("helper thread");
    (buf.text(), ending)
}

fn rt(limit: usize) -> Runtime {
    Runtime::builder()
        .workers(common::workers(2))
        .process_limit(limit)
        .build()
        .expect("runtime")
}

/// Waits until `name` is registered (the program registers it).
fn whereis(h: &Handle, name: &str) -> lona_runtime::Pid {
    let t = Instant::now();
    loop {
        if let Some(p) = h.whereis(name) {
            return p;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{name} never registered"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn spawning_past_the_process_limit_raises_system_limit_and_the_node_lives() {
    let src = r#"
        (defn waiter [] (receive :stop :ok))
        (defn spawn-until [acc]
          (let [r (try (spawn waiter) (catch :error e e))]
            (if (pid? r) (spawn-until (cons r acc)) [r acc])))
        (let [[err ps] (spawn-until ())]
          (println err (> (count ps) 10))
          (let [ms (map monitor ps)]
            (map (fn [p] (send p :stop)) ps)
            (map (fn [m] (receive [:DOWN r _ _] :when (= r m) :ok)) ms))
          (let [[err2 ps2] (spawn-until ())]
            (println :again err2 (= (count ps) (count ps2)))))
    "#;
    let (out, ending) = run_on(rt(64), src, |_| {});
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":system-limit true\n:again :system-limit true\n");
}

#[test]
fn a_rust_value_that_is_not_a_term_arrives_as_foreign_and_harms_nothing() {
    let src = r#"
        (register :sink (self))
        (println (receive m m))
        (println (receive [:ok n] (+ n 1)))
    "#;
    let (out, ending) = run_on(rt(1000), src, |h| {
        let p = whereis(&h, "sink");
        h.send(p, String::from("not a term"));
        let heap = lona_term::Heap::new();
        let ok = heap.vector(&[lona_term::Term::keyword("ok"), heap.int(41)]);
        h.send(p, lona_term::Fragment::new(ok));
    });
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, "[:foreign alloc::string::String]\n42\n");
}

#[test]
fn a_ten_megabyte_message_arrives_whole() {
    let src = r#"
        (def big (vec (range 1250000)))
        (def echo (spawn (fn [] (receive [from v] (send from [:back v])))))
        (send echo [(self) big])
        (println (receive [:back v] [(count v) (= v big) (nth v 1249999)]))
    "#;
    let (out, ending) = run_on(rt(1000), src, |_| {});
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, "[1250000 true 1249999]\n");
}

#[test]
fn a_crash_in_the_main_process_ends_the_program_with_its_reason() {
    let src = r#"
        (spawn-link (fn [] (receive :never nil)))
        (defn f [x] (+ x :a))
        (f 1)
    "#;
    let (_, ending) = run_on(rt(1000), src, |_| {});
    let Ending::Failed(lona_vm::EvalError::Uncaught {
        exit_reason, trace, ..
    }) = ending
    else {
        panic!("{ending:?}")
    };
    assert_eq!(exit_reason, "[:error :badarith]");
    assert!(trace.contains("user/f (t.lona:3)"), "{trace}");
}

#[test]
fn a_linked_process_dies_with_the_main_process() {
    // The child reports itself to a Rust thread through a name; when the
    // main process fails, the link takes the child down with it.
    let src = r#"
        (def child (spawn-link (fn [] (register :child (self)) (receive :never nil))))
        (receive :timeout 50 nil)
        (error :main-fails)
    "#;
    let watched = Arc::new(std::sync::Mutex::new(None));
    let w = watched.clone();
    let (_, ending) = run_on(rt(1000), src, move |h| {
        let p = whereis(&h, "child");
        let t = Instant::now();
        while h.is_alive(p) {
            assert!(t.elapsed() < Duration::from_secs(30), "the child lives on");
            std::thread::sleep(Duration::from_millis(1));
        }
        *w.lock().unwrap() = Some(true);
    });
    assert!(matches!(ending, Ending::Failed(_)));
    assert_eq!(*watched.lock().unwrap(), Some(true));
}

/// A native Rust process and a Lonala process in one node, with serde
/// values both ways, and a Rust built-in called from Lonala.
#[test]
fn rust_and_lonala_processes_exchange_typed_messages() {
    use lona_term::Fragment;
    use lona_vm::bridge::{from_message, to_message, PidTerm};
    use lona_vm::process::LonaProcess;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Req {
        Scale {
            by: i64,
            items: Vec<i64>,
            reply_to: PidTerm,
        },
        Stop,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    enum Reply {
        Scaled(Vec<i64>),
        Error(String),
    }

    let env = Env::new(Box::new(SharedBuf::default()));
    env.define_native("calc", "twice", 1, 1, |cx, a| {
        let n: i64 = lona_vm::bridge::from_term(a[0]).map_err(|_| lona_vm::Exception::badarg())?;
        Ok(cx.heap().int(2 * n))
    });
    lona_vm::eval_str(
        &env,
        "calc.lona",
        r#"(ns calc)
           (defn serve []
             (receive
               [:scale {:by k :items xs :reply-to from}]
                 (do (send from (if (< k 0) [:error "negative"] [:scaled (map (fn [x] (twice (* k x))) xs)]))
                     (serve))
               :stop :stopped))"#,
    )
    .expect("compiles");
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let server = rt
        .handle()
        .spawn_process(
            LonaProcess::call(env.clone(), "calc/serve", &to_message(&()).unwrap()).unwrap(),
        )
        .unwrap();
    assert!(LonaProcess::call(env.clone(), "calc/nope", &to_message(&()).unwrap()).is_err());
    let got = rt
        .block_on(move |ctx| async move {
            let me = PidTerm(ctx.pid());
            let mut out = Vec::new();
            for by in [3, -1] {
                let req = Req::Scale {
                    by,
                    items: vec![1, 2, 3],
                    reply_to: me,
                };
                ctx.send(server, to_message(&req).unwrap()).await;
                let m: Fragment = ctx.receive().await;
                out.push(from_message::<Reply>(&m).unwrap());
            }
            let mref = ctx.monitor(server).await;
            ctx.send(server, to_message(&Req::Stop).unwrap()).await;
            let down: lona_runtime::Down = ctx.receive().await;
            assert_eq!(down.mref, mref);
            (out, down.reason)
        })
        .unwrap();
    assert_eq!(
        got.0,
        vec![
            Reply::Scaled(vec![6, 12, 18]),
            Reply::Error("negative".into())
        ]
    );
    assert_eq!(got.1, lona_runtime::Reason::Normal);
    rt.shutdown();
}

#[test]
fn i_lists_processes_with_name_function_and_mailbox_and_runtime_info_counts_them() {
    let src = r#"
        (defn waiter-loop [] (receive :stop :ok))
        (defn spin [n] (spin (inc n)))
        (let [w (spawn waiter-loop)
              s (spawn spin 0)]
          (register :the-waiter w)
          (send w :junk-1)
          (send w :junk-2)
          (sleep 20)
          (i)
          (let [info (process-info w)
                ri (runtime-info)]
            (println "fn" (:current-function info) "heap" (pos? (:heap-size info)))
            (println "count" (:process-count ri) "workers" (count (:workers ri))
                     "code" (pos? (:code (:memory ri)))))
          (exit s :kill)
          (send w :stop))
    "#;
    let (out, ending) = run_on(rt(1000), src, |_| {});
    assert_eq!(ending, Ending::Normal, "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("the-waiter"))
        .unwrap_or_else(|| panic!("no row for the registered waiter:\n{out}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // pid, name, function, reductions, mailbox, heap words, status
    assert_eq!(cells[1], "the-waiter", "{row}");
    assert_eq!(cells[2], "user/waiter-loop", "{row}");
    assert_eq!(cells[4], "2", "two messages waiting: {row}");
    assert_eq!(cells[6], "waiting", "{row}");
    let spinner = out
        .lines()
        .find(|l| l.contains("user/spin"))
        .unwrap_or_else(|| panic!("no row for the spinning process:\n{out}"));
    assert!(spinner.ends_with("running"), "{spinner}");
    assert!(
        out.contains("3 processes,"),
        "totals line counts main, waiter and spinner:\n{out}"
    );
    assert!(out.contains("fn user/waiter-loop heap true"), "{out}");
    let workers = common::workers(2);
    assert!(
        out.contains(&format!("count 3 workers {workers} code true")),
        "{out}"
    );
}

/// A process that lives by receiving never spends a slice's budget, so it
/// never reached the safepoint's collection: every message it took stayed
/// attached to its heap (a ring of 10,000 Lonala processes grew to 900 MB).
/// And each collection sized the young block for every attached word as
/// if alive, so the block grew at every collection. Both are bounded now.
#[test]
fn a_receive_loop_keeps_a_bounded_heap_over_many_messages() {
    let src = r#"
        (defn counter [n]
          (receive
            [:n _] (counter (inc n))
            [:report to] (send to [:counted n (:heap-size (process-info (self)))])))
        (defn burst [p i] (when (> i 0) (send p [:n i]) (burst p (dec i))))
        (defn bursts [p k] (when (> k 0) (burst p 10) (sleep 0) (bursts p (dec k))))
        (let [p (spawn counter 0)]
          (bursts p 20000)
          (send p [:report (self)])
          (receive [:counted n words] (println "counted" n "small-heap" (< words 10000) words)))
    "#;
    let (out, ending) = run_on(rt(1000), src, |_| {});
    assert_eq!(ending, Ending::Normal, "{out}");
    // Before: 600,037 words (every message still attached).
    assert!(out.contains("counted 200000 small-heap true"), "{out}");
}

/// `LonaProcess::call` with arguments of every kind (strings, vectors,
/// maps, binaries, big integers: terms of the caller's fragment, not
/// immediates), and a Lonala process sending a Rust process a value nested
/// 50,000 deep: a `BridgeError`, and the node lives on.
#[test]
fn call_takes_any_arguments_and_a_deep_value_is_an_error_not_an_abort() {
    use lona_term::Fragment;
    use lona_vm::bridge::{from_message, PidTerm};
    use lona_vm::process::LonaProcess;
    use serde::Deserialize;

    /// A recursive type: serde reads it on the Rust stack.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    enum Nested {
        Leaf(i64),
        Node(Vec<Nested>),
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Deep(Vec<Deep>);
    /// A binary, read with `deserialize_bytes`.
    #[derive(Debug)]
    struct Bin(Vec<u8>);
    impl<'de> Deserialize<'de> for Bin {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bin, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Bin;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, b: &[u8]) -> Result<Bin, E> {
                    Ok(Bin(b.to_vec()))
                }
            }
            d.deserialize_bytes(V)
        }
    }

    let env = Env::new(Box::new(SharedBuf::default()));
    lona_vm::eval_str(
        &env,
        "echo.lona",
        r#"(ns echo)
           (defn deep [n acc] (if (= n 0) acc (recur (dec n) [acc])))
           (defn run [to s v m b big]
             (send to [s v m b big (str s "!") (count v) (get m :k)])
             (send to (deep 50000 [])))"#,
    )
    .expect("compiles");
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let got = rt
        .block_on(move |ctx| async move {
            // Built by hand: a binary has no serde form without serde_bytes.
            let h = lona_term::Heap::new();
            let args = Fragment::new(h.vector(&[
                lona_vm::bridge::to_term(&h, &PidTerm(ctx.pid())).unwrap(),
                h.string("a string longer than sixty-four bytes, so that it lives off-heap ...."),
                h.vector(&[h.int(1), h.int(2), h.int(3)]),
                h.map(&[(lona_term::Term::keyword("k"), h.string("v"))]),
                h.binary(&[0, 1, 255]),
                lona_vm::bridge::to_term(&h, &u64::MAX).unwrap(),
            ]));
            drop(h);
            let p = LonaProcess::call(env.clone(), "echo/run", &args).expect("defined");
            ctx.handle().spawn_process(p).expect("spawns");
            let echo: Fragment = ctx.receive().await;
            let echo = from_message::<(
                String,
                Vec<i64>,
                std::collections::BTreeMap<String, String>,
                Bin,
                u64,
                String,
                usize,
                String,
            )>(&echo)
            .expect("reads back");
            let deep: Fragment = ctx.receive().await;
            let e1 = from_message::<Deep>(&deep).unwrap_err();
            let e2 = from_message::<Nested>(&deep).unwrap_err();
            (echo, e1.to_string(), e2.to_string())
        })
        .unwrap();
    let (echo, e1, e2) = got;
    assert!(echo.0.starts_with("a string longer"), "{echo:?}");
    assert_eq!(echo.1, vec![1, 2, 3]);
    assert_eq!(echo.2.get("k").map(String::as_str), Some("v"));
    assert_eq!(echo.3 .0, vec![0, 1, 255]);
    assert_eq!(echo.4, u64::MAX);
    assert!(echo.5.ends_with("....!"), "{echo:?}");
    assert_eq!((echo.6, echo.7.as_str()), (3, "v"));
    assert!(e1.contains("nested more than"), "{e1}");
    assert!(
        e2.contains("nested more than") || e2.contains("expected"),
        "{e2}"
    );
    rt.shutdown();
}

#[test]
fn yield_lets_a_runnable_process_go_first() {
    // One worker: the child is queued behind the parent. Without `yield`
    // the parent's poll runs in the same slice and finds nothing.
    let rt = Runtime::builder().workers(1).build().expect("runtime");
    let src = r#"
        (let [me (self)]
          (spawn (fn [] (send me :child-ran)))
          (yield)
          (println (receive :child-ran :yes :timeout 0 :no)))
        (let [me (self)]
          (spawn (fn [] (send me :child-ran)))
          (println (receive :child-ran :yes :timeout 0 :no)))
    "#;
    let (out, ending) = run_on(rt, src, |_| {});
    assert_eq!(ending, Ending::Normal);
    assert_eq!(out, ":yes\n:no\n");
}
