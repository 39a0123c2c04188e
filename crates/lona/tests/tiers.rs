//! The compiling tier against the interpreter (`docs/jit.md`, section 9):
//! each program runs under `LONA_TIER=interp` and under `jit-eager`
//! (every function that can be compiled is, at its first call) and must
//! print the same, exit the same, and fail with the same report; and the
//! compiled functions must really have been compiled (`LONA_JIT_LOG`).

use std::process::{Command, Output};

/// `src` as `main.lona` in a directory of its own (removed when the
/// returned guard is dropped; `name` starts the directory's name).
fn program(name: &str, src: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("lona-tiers-{name}-"))
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("main.lona"), src).unwrap();
    dir
}

fn run(tier: &str, src: &str, name: &str) -> Output {
    run_in(tier, &program(name, src))
}

/// `lona run` of the program `program` made, in tier `tier`.
fn run_in(tier: &str, dir: &tempfile::TempDir) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(dir.path().join("main.lona"))
        .env("LONA_TIER", tier)
        .env("LONA_JIT_LOG", "1")
        .output()
        .unwrap()
}

/// Runs `src` in both tiers; asserts the same stdout, exit status and
/// stderr (less the compiler's log), and that each function of
/// `compiled` was compiled under `jit-eager`. Returns the stdout.
fn both(name: &str, src: &str, compiled: &[&str]) -> String {
    // One file for both: an error report names it.
    let dir = program(name, src);
    let i = run_in("interp", &dir);
    let j = run_in("jit-eager", &dir);
    let out = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let err = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| !l.starts_with("jit: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(out(&i), out(&j), "{name}: stdout differs");
    assert_eq!(i.status.code(), j.status.code(), "{name}: exit differs");
    assert_eq!(err(&i), err(&j), "{name}: stderr differs");
    let log = String::from_utf8_lossy(&j.stderr);
    for f in compiled {
        assert!(
            log.contains(&format!("jit: compiled user/{f} ")),
            "{name}: {f} was not compiled:\n{log}"
        );
    }
    assert!(
        !String::from_utf8_lossy(&i.stderr).contains("jit: compiled"),
        "{name}: the interpreter tier compiled something"
    );
    out(&i)
}

#[test]
fn recursion_and_loops_give_the_same_results() {
    let out = both(
        "basic",
        r#"
(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(defn sum-to [i n acc] (if (= i n) acc (sum-to (inc i) n (+ acc i))))
(defn count-down [n] (if (<= n 0) :done (count-down (- n 1))))
(defn lt [a b] (< a b))
(defn le [a b] (<= a b))
(defn gt [a b] (> a b))
(defn ge [a b] (>= a b))
(defn eq [a b] (= a b))
(defn neq [a b] (== a b))
(defn cmp [a b] [(lt a b) (le a b) (gt a b) (ge a b) (eq a b) (neq a b)])
(defn -main []
  (println (fib 20) (sum-to 0 100000 0) (count-down 10))
  (println (cmp 1 2) (cmp 2 2) (cmp 3 2))
  (println (cmp 1.5 2) (eq :a :a) (eq :a :b) (eq [1] [1]) (eq nil false)))
"#,
        &[
            "fib",
            "sum-to",
            "count-down",
            "lt",
            "le",
            "gt",
            "ge",
            "eq",
            "neq",
        ],
    );
    assert_eq!(
        out,
        "6765 4999950000 :done\n[true true false false false false] [false true false true true true] [false false true true false false]\n[true true false false false false] true false true false\n"
    );
}

#[test]
fn big_integers_floats_and_other_values_take_the_slow_path() {
    // Small integers overflow into big ones inside compiled code; floats,
    // ratios of types and nil reach the interpreter's slow paths.
    let out = both(
        "slow",
        r#"
(defn sum-to [i n acc] (if (= i n) acc (sum-to (inc i) n (+ acc i))))
(defn twice [x] (+ x x))
(defn grow [x k] (if (= k 0) x (grow (+ x x) (dec k))))
(defn -main []
  (println (sum-to 1152921504606846000 1152921504606846010 0))
  (println (twice 576460752303423487) (twice 1.5) (twice 1152921504606846976))
  (println (grow 1 70) (grow 1.0 3))
  (println (sum-to 0 3 0.5)))
"#,
        &["sum-to", "twice", "grow"],
    );
    assert_eq!(
        out,
        "11529215046068460045\n1152921504606846974 3.0 2305843009213693952\n1180591620717411303424 8.0\n3.5\n"
    );
}

#[test]
fn errors_raise_with_the_same_report_and_trace() {
    // A raise inside compiled code: the interpreter raises it, with the
    // same lines in the trace; a caught one, the same value.
    let out = both(
        "errors",
        r#"
(defn bad [n]
  (if (< n 1)
    (+ n :x)
    (bad (- n 1))))
(defn deep [n] (if (= n 0) (+ nil 1) (+ 1 (deep (- n 1)))))
(defn -main []
  (println (try (bad 5) (catch :error e e)))
  (println (try (deep 10) (catch :error e e)))
  (bad 3))
"#,
        &["bad", "deep"],
    );
    assert!(out.starts_with(":badarith\n:badarith\n"), "{out}");
}

#[test]
fn patterns_products_captures_and_self_calls_by_name() {
    // List and vector patterns, `*` into big integers, a closure's
    // captured value, a named `fn` calling itself, and pattern failures
    // raised by the interpreter.
    let out = both(
        "patterns",
        r#"
(defn sum [xs acc] (match xs () acc (x & r) (sum r (+ acc x))))
(defn pairs [v] (match v [a b] (* a b) [a b c] (+ a (* b c)) _ :other))
(defn walk [xs acc] (match xs () acc ([k v] & r) (walk r (+ acc (* k v)))))
(defn adder [k] (fn step [xs acc] (if (= xs 0) acc (step (- xs 1) (+ acc k)))))
(defn fact [n] (if (= n 0) 1 (* n (fact (- n 1)))))
(defn -main []
  (println (sum (range 100) 0) (pairs [3 4]) (pairs [1 2 3]) (pairs [1]) (pairs :x))
  (println (walk (list [1 2] [3 4] [5 6]) 0) ((adder 3) 10 0) (fact 25) (fact 20))
  (println (pairs [1152921504606846975 2]) (pairs [-1152921504606846976 -1]))
  (println (try (sum (list 1 :a) 0) (catch :error e e)) (try (walk (list 1) 0) (catch :error e e))))
"#,
        &["sum", "pairs", "walk", "step", "fact"],
    );
    assert_eq!(
        out,
        "4950 12 7 :other :other\n44 30 15511210043330985984000000 2432902008176640000\n\
         2305843009213693950 1152921504606846976\n:badarith [:case-clause (1)]\n"
    );
}

#[test]
fn built_ins_called_from_compiled_loops_behave_as_interpreted() {
    // Compiled loops calling built-ins: plain values, a raise with its
    // trace, a redirect (`first` of a lazy sequence continues in the
    // prelude), a yield and a collection request; a loop calling a
    // Lonala function (left to the interpreter); `map`, `filter` and
    // `reduce` of the prelude (compiled, with side exits).
    let out = both(
        "builtins",
        r#"
(defn total [xs acc] (if (empty? xs) acc (total (rest xs) (+ acc (first xs)))))
(defn firsts [xs n acc] (if (= n 0) acc (firsts xs (dec n) (+ acc (first xs)))))
(defn polite [n] (if (= n 0) :done (do (yield) (gc) (polite (dec n)))))
(defn helper [x] (* 2 x))
(defn mixed [n acc] (if (= n 0) acc (mixed (dec n) (+ acc (helper n) (get {:k n} :k)))))
(defn -main []
  (println (total [1 2 4] 0) (firsts (iterate inc 7) 5 0) (polite 50))
  (println (mixed 100 0) (reduce + 0 (filter even? (map inc (range 1000)))))
  (println (try (total 5 0) (catch :error e e)))
  (total 5 0))
"#,
        // (`mixed` calls a Lonala function on every round: it would leave
        // each time, so it stays interpreted.)
        &["total", "firsts", "polite"],
    );
    assert_eq!(out, "7 35 :done\n15150 250500\n:badarg\n");
}

#[test]
fn deep_native_recursion_hands_over_and_finishes() {
    // Far deeper than a worker's native stack could hold as compiled
    // frames: each slice's end (and, past 4,096, the depth limit) unwinds
    // the native calls, the interpreter keeps every frame; the result is
    // the same.
    let out = both(
        "deep",
        r#"
(defn down [n] (if (= n 0) 0 (+ 1 (down (- n 1)))))
(defn -main [] (println (down 4000000)))
"#,
        &["down"],
    );
    assert_eq!(out, "4000000\n");
}

#[test]
fn a_redefined_function_is_seen_by_its_compiled_callers() {
    // `step` is compiled and calls itself through its var; redefining the
    // var mid-run sends its next call to the new code (hot code loading).
    let out = both(
        "redef",
        r#"
(defn step [n] (if (= n 0) :old (step (- n 1))))
(defn -main []
  (println (step 100))
  (let [me (self)]
    (spawn (fn [] (eval '(defn step [n] :new)) (send me :done)))
    (receive :done nil))
  (println (step 100)))
"#,
        &["step"],
    );
    assert_eq!(out, ":old\n:new\n");
}

#[test]
fn compiled_loops_are_preempted_and_can_be_killed() {
    // Two processes spinning in compiled loops both progress (reductions
    // are charged and slices end in compiled code), and one is killed
    // from outside while it spins.
    let out = both(
        "preempt",
        r#"
(defn spin [i] (if (= i -1) :never (spin (inc i))))
(defn count-to [i n] (if (= i n) i (count-to (inc i) n)))
(defn -main []
  (let [me (self)
        s (spawn (fn [] (spin 0)))
        _ (spawn (fn [] (send me [:counted (count-to 0 3000000)])))]
    (println (receive [:counted n] n :timeout 20000 :stuck))
    (monitor s)
    (exit s :kill)
    (println (receive [:DOWN _ _ r] r :timeout 5000 :alive))))
"#,
        &["spin", "count-to"],
    );
    assert_eq!(out, "3000000\n:killed\n");
}

/// `C of A reductions in compiled code` in a `--jit-stats` line.
fn reductions(line: &str) -> (u64, u64) {
    let words: Vec<&str> = line.split(' ').collect();
    let at = words
        .windows(4)
        .position(|w| w[1] == "of" && w[3] == "reductions")
        .unwrap_or_else(|| panic!("no reductions in {line}"));
    (words[at].parse().unwrap(), words[at + 2].parse().unwrap())
}

#[test]
fn the_tier_flags_choose_dump_and_name_the_code() {
    let dir = program(
        "flags",
        // Long enough that the compiling thread (`jit/queue.rs`) has the
        // loop's code in place before the program ends, even in a debug
        // build.
        "(defn spin [i n] (if (= i n) i (spin (inc i) n)))\n(defn -main [] (println (spin 0 30000000)))",
    );
    let file = dir.path().join("main.lona");
    let lona = |flags: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_lona"))
            .arg("run")
            .args(flags)
            .arg(&file)
            .env("LONA_JIT_LOG", "1")
            .env_remove("LONA_TIER")
            .output()
            .unwrap()
    };
    // The default tier compiles the hot loop; `--tier interp` nothing.
    let j = lona(&[]);
    assert_eq!(String::from_utf8_lossy(&j.stdout), "30000000\n");
    assert!(String::from_utf8_lossy(&j.stderr).contains("jit: compiled user/spin "));
    let i = lona(&["--tier", "interp"]);
    assert_eq!(String::from_utf8_lossy(&i.stdout), "30000000\n");
    assert!(!String::from_utf8_lossy(&i.stderr).contains("jit: compiled"));
    // A tier that does not exist: a usage error naming the choices.
    let bad = lona(&["--tier", "fast"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("interp, jit or jit-eager"));
    // `--jit-dump`: bytecode and machine code of what was compiled.
    let d = lona(&["--jit-dump"]);
    let err = String::from_utf8_lossy(&d.stderr);
    assert!(
        err.contains("TailCallVar") && err.contains("block0:"),
        "{err}"
    );
    // `--jit-stats`: what was compiled and how long it took.
    let st = lona(&["--jit-stats"]);
    let err = String::from_utf8_lossy(&st.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("jit: 1 functions compiled"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("µs compiling in all"), "{line}");
    // ... and the share of the reductions run in compiled code: every
    // call of `spin` is one, and most of them ran compiled.
    let (compiled, all) = reductions(line);
    assert!(all >= 30_000_000, "{line}");
    assert!(compiled * 2 > all && compiled <= all, "{line}");
    // With the interpreter only, none did.
    let st = lona(&["--jit-stats", "--tier", "interp"]);
    let err = String::from_utf8_lossy(&st.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("jit: 0 functions compiled"))
        .unwrap_or_else(|| panic!("{err}"));
    let (compiled, all) = reductions(line);
    assert!(compiled == 0 && all >= 30_000_000, "{line}");
    // `--perf-map`: the compiled function in /tmp/perf-PID.map.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lona"))
        .args(["run", "--perf-map"])
        .arg(&file)
        .env_remove("LONA_TIER")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(child.wait().unwrap().success());
    let map = format!("/tmp/perf-{pid}.map");
    let text = std::fs::read_to_string(&map).unwrap();
    let _ = std::fs::remove_file(&map);
    let line = text
        .lines()
        .find(|l| l.ends_with(" lona:user/spin"))
        .expect("spin named");
    let mut parts = line.split(' ');
    let start = u64::from_str_radix(parts.next().unwrap(), 16).unwrap();
    let size = u64::from_str_radix(parts.next().unwrap(), 16).unwrap();
    assert!(start > 0 && size > 16 && size < 1 << 20, "{line}");
}

#[test]
fn a_deep_compiled_recursion_sees_a_redefinition_mid_flight() {
    // A worker recurses 3,000,000 deep (compiled self calls through the
    // var); the main process redefines `f` meanwhile: the calls still to
    // come run the new definition, so the sum is not the old one. Both
    // tiers.
    let prog = r#"
(defn f [n] (if (= n 0) 0 (+ 1 (f (- n 1)))))
(defn -main []
  (let [me (self)
        _ (println (f 10))
        w (spawn (fn [] (send me [:sum (f 3000000)])))]
    (receive :never nil :timeout 5 nil)
    (eval '(defn f [n] 1000000000))
    (let [s (receive [:sum s] s :timeout 20000 :none)]
      (println (if (> s 3000000) "new definition seen" s)))))
"#;
    for tier in ["interp", "jit-eager"] {
        let o = run(tier, prog, "midflight");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            out,
            "10\nnew definition seen\n",
            "{tier}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn a_built_in_over_the_heap_limit_in_a_compiled_loop_kills_only_its_process() {
    // `conj` in a compiled loop grows a vector past the process's
    // `:max-heap-size`: the built-in's unwinding is carried past the
    // compiled frames and ends that process alone, `:killed`, as in the
    // interpreter; the node goes on (and compiles `grow` again for main).
    let prog = r#"
(defn grow [v n] (if (= n 0) (count v) (grow (conj v n) (dec n))))
(defn -main []
  (let [[p r] (spawn-opt (fn [] (grow [] 10000000)) {:monitor true :max-heap-size 100000})]
    (println (receive [:DOWN _ _ why] why :timeout 20000 :none))
    (println (grow [] 10))))
"#;
    for tier in ["interp", "jit-eager"] {
        let o = run(tier, prog, "heaplimit");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            ":killed\n10\n",
            "{tier}"
        );
        assert_eq!(o.status.code(), Some(0), "{tier}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("exceed max_heap_size 100000"), "{tier}: {err}");
        if tier == "jit-eager" {
            assert!(err.contains("jit: compiled user/grow "), "{err}");
        }
    }
}

#[test]
fn compiled_functions_call_each_other_natively() {
    // Calls from compiled code of other compiled functions (natively), of
    // closures in registers, of things that are not functions of that
    // arity (left to the interpreter), and tail calls of built-ins; the
    // callee leaving (an overflow, a raise, a slice's end, native depth)
    // with its caller's frame written below its own.
    let out = both(
        "calls",
        r#"
(declare pong)
(defn sq [x] (* x x))
(defn big [x] (* x 1000000000000))
(defn sum-sq [n acc] (if (= n 0) acc (sum-sq (dec n) (+ acc (sq n)))))
(defn sum-big [n acc] (if (= n 0) acc (sum-big (dec n) (+ acc (big n)))))
(defn boom [x] (if (= x 3) (error [:boom x]) x))
(defn run-boom [n acc] (if (= n 0) acc (run-boom (dec n) (+ acc (boom n)))))
(defn head [xs] (first xs))
(defn heads [xs n acc] (if (= n 0) acc (heads (rest xs) (dec n) (+ acc (head xs)))))
(defn bad-head [x] (first x))
(defn bad-heads [n] (if (= n 0) :never (do (bad-head n) (bad-heads (dec n)))))
(defn nap [x] (yield))
(defn naps [n] (if (= n 0) :rested (do (nap n) (naps (dec n)))))
(defn collect [x] (gc))
(defn collects [n] (if (= n 0) :collected (do (collect n) (collects (dec n)))))
(defn two [a b] [a b])
(defn wrong [n] (if (= n 0) :ok (do (two n) (wrong (dec n)))))
(defn callf [f n acc] (if (= n 0) acc (callf f (dec n) (+ acc (f n)))))
(defn ping [n] (if (= n 0) 0 (+ 1 (pong (- n 1)))))
(defn pong [n] (if (= n 0) 0 (+ 1 (ping (- n 1)))))
(defn inner [x] :old)
(defn wait-new [n] (if (= (inner n) :new) :saw-new (wait-new (inc n))))
(defn -main []
  (println (sum-sq 100 0) (sum-big 100 0))
  (println (try (run-boom 10 0) (catch :error e e)))
  (println (heads (iterate inc 1) 10 0) (heads [1 2 3] 3 0))
  (println (naps 20) (collects 20))
  (println (callf sq 10 0) (callf (fn [x] (+ x 1)) 10 0)
           (callf (let [k 5] (fn [x] (* k x))) 10 0) (callf {1 10} 1 0))
  (println (try (wrong 3) (catch :error e (first e))))
  (println (ping 1000000))
  (spawn (fn [] (eval '(defn inner [x] :new))))
  (println (wait-new 0))
  (println (bad-heads 5)))
"#,
        &[
            "sq",
            "big",
            "sum-sq",
            "sum-big",
            "boom",
            "run-boom",
            "head",
            "heads",
            "bad-head",
            "bad-heads",
            "nap",
            "naps",
            "collect",
            "collects",
            "callf",
            "ping",
            "pong",
            "wait-new",
        ],
    );
    assert_eq!(
        out,
        "338350 5050000000000000\n[:boom 3]\n55 6\n:rested :collected\n\
         385 65 275 10\n:badarity\n1000000\n:saw-new\n"
    );
}

#[test]
fn intrinsics_and_inline_cons_cells_match_the_built_ins() {
    // Built-ins called through their intrinsic (`jit/intrinsic.rs`) from
    // compiled code, known when compiled (`parity`, `edge`) or found at
    // the call (`map inc`, `filter even?`, `reduce +`): small integers
    // there, and the general path at the edges of the small range, for
    // other numbers and for bad arguments. Cons cells made inline, past
    // the young block (the heap's slow path) and onto what is not a list.
    let out = both(
        "intrinsics",
        r#"
(def top 1152921504606846975)
(defn parity [x] (if (even? x) :even :odd))
(defn edge [x] (inc x))
(defn build [n acc] (if (= n 0) acc (build (dec n) (cons n acc))))
(defn onto [x v] (cons x v))
(defn -main []
  (println (map inc [1 -1 top 1.5]) (map dec [0 (- 0 top 1)]))
  (println (filter even? (range 10)) (filter odd? [1 2 3]) (map zero? [0 1 0.0]))
  (println (reduce + 0 [1 2 top]) (reduce - 0 [1 2 3]) (map pos? [1 -1 0]) (map neg? [1 -1]))
  (println (map < [1 2 3] [2 2 2]) (map >= [1 2 3] [2 2 2]) (map = [1 :a nil [1]] [1 :b false [1]]))
  (prn (map not [nil false 0]) (map nil? [nil false]) (map identity [1 :x "s"]))
  (println (map parity [1 2 top]) (edge 41) (edge top))
  (println (count (build 300000 ())) (take 3 (build 300000 ())) (onto 1 [2 3]) (onto 1 nil))
  (println (try (filter even? [1 :x]) (catch :error e e)))
  (println (try (map inc [1 nil]) (catch :error e e)))
  (println (try (reduce + 0 [1 "x"]) (catch :error e e))))
"#,
        &["parity", "edge", "build", "onto"],
    );
    assert_eq!(
        out,
        "(2 0 1152921504606846976 2.5) (-1 -1152921504606846977)\n\
         (0 2 4 6 8) (1 3) (true false true)\n\
         1152921504606846978 -6 (true false false) (false true)\n\
         (true false false) (false true true) (true false false true)\n\
         (true true false) (true false) (1 :x \"s\")\n\
         (:odd :even :odd) 42 1152921504606846976\n\
         300000 (1 2 3) (1 2 3) (1)\n\
         :badarg\n:badarith\n:badarith\n"
    );
}

#[test]
fn code_that_leaves_early_on_most_entries_is_given_up() {
    // `shape` is compiled (a call of itself makes it worth entering),
    // but every entry leaves it at the map it makes (left to the
    // interpreter): after 1,000 such entries the interpreter runs it
    // again. `tally`, a compiled loop calling it natively, then calls it
    // the general way. Results stay the same throughout.
    let src = r#"
(defn shape [n] (if (< n 0) (shape (- 0 n)) {:n n}))
(defn tally [n acc] (if (= n 0) acc (tally (dec n) (+ acc (:n (shape n))))))
(defn -main []
  (println (reduce + 0 (map (fn [i] (:n (shape i))) (range 3000))))
  (println (tally 3000 0)))
"#;
    let out = both("give-up", src, &["shape", "tally"]);
    assert_eq!(out, "4498500\n4501500\n");
    let log = String::from_utf8_lossy(&run("jit-eager", src, "give-up").stderr).into_owned();
    assert!(log.contains("jit: giving up user/shape"), "{log}");
}

#[test]
#[ignore = "compiles 40,000 functions: run by hand, with --release"]
fn forty_thousand_compiled_functions_fit() {
    // Each compiled function once took mappings of its own; Linux's limit
    // of 65,530 stopped compiling after 32,741 functions and then made
    // every allocation fail. The code space is one reserved range now.
    let mut src = String::new();
    for k in 0..40_000 {
        src.push_str(&format!(
            "(defn f{k} [n] (if (= n 0) {k} (f{k} (dec n)))) (f{k} 1)\n"
        ));
    }
    src.push_str("(defn -main [] (println (f39999 3)))\n");
    let dir = program("forty-thousand", &src);
    let out = Command::new(env!("CARGO_BIN_EXE_lona"))
        .args(["run", "--jit-stats"])
        .arg(dir.path().join("main.lona"))
        .env("LONA_TIER", "jit-eager")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "39999\n");
    let err = String::from_utf8_lossy(&out.stderr);
    let n: u64 = err
        .split("jit: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(n > 40_000, "{err}");
}
