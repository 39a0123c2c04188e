//! The interpreter's unsafe paths under Miri (`.ci/run`'s miri-vm step).

use crate::env::{Env, SharedBuf};
use crate::eval::{Evaluator, Progress};
use lona_reader::Source;

/// The interpreter's unsafe paths (register windows, calls and tail
/// calls, native calls on raw words, closures, exceptions unwinding
/// frames, a collection at a safepoint with the register stack as
/// roots) in one small program: small enough for Miri.
#[test]
fn miri_smoke() {
    // The built-ins without the prelude: compiling the core library is
    // most of a node's start-up, minutes under Miri, and the program
    // below needs none of it (it defines what it uses).
    let env = std::sync::Arc::new(Env::empty(Box::new(SharedBuf::default())));
    lona_machine::whitebox::install(&env);
    // The built-ins only, as the test always ran: not the node's half
    // (its built-ins, the prelude).
    env.boot_node(|| {});
    // Scaled down under Miri, still past the young block (a collection).
    let n: i64 = if cfg!(miri) { 600 } else { 2500 };
    let src = format!(
        "
        (defn build [n acc] (if (= n 0) acc (build (dec n) (cons [n (str n)] acc))))
        (defn depth [n] (if (= n 0) 0 (inc (depth (dec n)))))
        (defn safe [f] (try (f) (catch :error e [:caught e])))
        (defn len [xs k] (if (empty? xs) k (len (rest xs) (inc k))))
        (defn sum-firsts [xs acc]
          (if (empty? xs) acc (sum-firsts (rest xs) (+ acc (first (first xs))))))
        (let [xs (build {n} ())
              adder (fn [k] (fn [x] (+ x k)))]
          [(len xs 0) (depth 50) ((adder 2) 40)
           (safe (fn [] (depth :x)))
           (sum-firsts xs 0)])"
    );
    let mut ev = Evaluator::new(env);
    ev.push_source(&Source::new("miri.lona", src.as_str()))
        .unwrap();
    while let Progress::Yield = ev.step(200) {}
    let want = format!("[{n} 50 42 [:caught :badarith] {}]", n * (n + 1) / 2);
    assert_eq!(ev.last_value().to_string(), want);
    let gcs = ev.vm.heap.gc_counts();
    assert!(gcs.minor + gcs.major > 0, "no collection ran");
}

/// The opcode table's flags against the interpreter's own code: the
/// arms of `interpret`'s `match ins`, read from this directory's
/// `mod.rs`, with the bodies of the loop's macros they use (transitively).
/// The interpreter never looks a row up; this is where it answers to the
/// table.
mod table {
    use std::collections::{HashMap, HashSet};

    use lona_compiler::bytecode::ops::{Flow, Kind, Raising, Yields, OPS};

    const SOURCE: &str = include_str!("../../../lona-machine/src/vm/mod.rs");

    /// What allocates on the process heap, as the interpreter's arms call
    /// it: the heap's term makers, the functions that make terms on it,
    /// and the ways into other code (a built-in, a call, compiled code).
    /// Kept by hand: a new allocating call must be added here.
    const ALLOCATING: &[&str] = &[
        "heap.vector(",
        "heap.vector_raw(",
        "heap.cons_raw(",
        "heap.closure_raw(",
        "heap.map(",
        "heap.copy_from(",
        "heap.attach(",
        "num::arith(",
        "cons_any(",
        "message_term(",
        "self.undef(",
        "self.trace_term(",
        "self.spread(",
        "nf(&mut cx",
        "self.enter(",
        "self.tail_enter(",
        "self.run_compiled(",
    ];

    /// The loop's macros: name → body.
    fn macros(body: &str) -> HashMap<&str, &str> {
        let starts: Vec<usize> = body
            .match_indices("macro_rules! ")
            .map(|(i, _)| i)
            .collect();
        let mut out = HashMap::new();
        for (n, &at) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(body.len());
            let text = &body[at..end];
            let name = text["macro_rules! ".len()..].split(' ').next().unwrap();
            out.insert(name, text);
        }
        out
    }

    /// Whether `text` invokes macro `name` (`name!(`, not `xname!(`).
    fn invokes(text: &str, name: &str) -> bool {
        let pat = format!("{name}!(");
        text.match_indices(&pat).any(|(i, _)| {
            !text[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }

    /// `text` with the bodies of the macros it invokes, transitively.
    fn expand(text: &str, macros: &HashMap<&str, &str>) -> String {
        let mut out = text.to_string();
        let mut seen = HashSet::new();
        loop {
            let more: Vec<&str> = macros
                .keys()
                .filter(|m| !seen.contains(*m) && invokes(&out, m))
                .copied()
                .collect();
            if more.is_empty() {
                return out;
            }
            for m in more {
                seen.insert(m);
                out.push_str(macros[m]);
            }
        }
    }

    /// Without whitespace: a call split over lines by rustfmt is one string.
    fn squeeze(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// The arms of the dispatch: variant name → arm text.
    fn arms() -> (HashMap<String, String>, HashMap<&'static str, &'static str>) {
        let start = SOURCE.find("    fn interpret(").expect("interpret");
        let end = SOURCE.find("    fn undef(").expect("undef");
        let body = &SOURCE[start..end];
        let dispatch = body.find("let ins = unsafe { *ip };").expect("dispatch");
        let macros = macros(&body[..dispatch]);
        let mut arms: HashMap<String, String> = HashMap::new();
        let mut cur: Option<String> = None;
        for line in body[dispatch..].lines() {
            // An arm starts at the match's indentation.
            if let Some(rest) = line.strip_prefix("                Instr::") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
                assert!(!arms.contains_key(&name), "two arms for {name}");
                arms.insert(name.clone(), String::new());
                cur = Some(name);
            }
            if let Some(name) = &cur {
                let arm = arms.get_mut(name).unwrap();
                arm.push_str(line);
                arm.push('\n');
            }
        }
        (arms, macros)
    }

    #[test]
    fn every_row_has_one_arm_in_the_interpreter() {
        let (arms, _) = arms();
        let mut names: Vec<&str> = arms.keys().map(String::as_str).collect();
        let mut rows: Vec<&str> = OPS.iter().map(|op| op.name).collect();
        names.sort_unstable();
        rows.sort_unstable();
        assert_eq!(names, rows);
    }

    #[test]
    fn the_flags_agree_with_the_interpreters_arms() {
        let (arms, macros) = arms();
        let mut wrong = Vec::new();
        for op in &OPS {
            let direct = &arms[op.name];
            let flat = squeeze(direct);
            let all = squeeze(&expand(direct, &macros));
            let mut say = |what: &str, ok: bool| {
                if !ok {
                    wrong.push(format!("{}: {what}", op.name));
                }
            };
            // Raising: every raise goes through `raise!` or `Vm::throw`.
            let raises = all.contains("raise!(") || all.contains("self.throw(");
            say("raising", raises == (op.raising != Raising::Never));
            // Allocating: one of the allocating calls.
            let allocates = ALLOCATING.iter().any(|a| all.contains(&squeeze(a)));
            say("allocates", allocates == op.allocates);
            // Ending the slice: a safepoint, or a yield or wait in a receive.
            let safepoint = invokes(direct, "safepoint");
            say("safepoint", safepoint == (op.yields == Yields::Safepoint));
            if !safepoint {
                let ends = all.contains("Outcome::Yield") || all.contains("Outcome::Wait");
                say(
                    "yields in a receive",
                    ends == (op.yields == Yields::Receive),
                );
            }
            // Control: a return, a tail call, a raise, a jump to its target.
            say(
                "returns",
                invokes(direct, "ret_value") == (op.flow == Flow::Return),
            );
            say(
                "tail-calls",
                invokes(direct, "tail_enter") == (op.flow == Flow::TailCall),
            );
            if op.flow == Flow::Raise {
                say(
                    "only raises",
                    raises && !invokes(direct, "set") && !invokes(direct, "jump"),
                );
            }
            let values: Vec<(&str, Kind)> = op.operands.iter().map(|o| (o.name, o.kind)).collect();
            // Macros that jump to an argument (`jump_unless!`).
            let jumping: Vec<&str> = macros
                .iter()
                .filter(|(m, body)| **m != "jump" && body.contains("jump!($"))
                .map(|(m, _)| *m)
                .collect();
            // The arm's code, after its pattern.
            let code = flat.split_once("=>").map_or("", |(_, c)| c);
            let mut jumps_to_target = false;
            for (name, kind) in &values {
                let passed = jumping.iter().any(|m| {
                    invokes(direct, m)
                        && (code.contains(&format!(",{name},"))
                            || code.contains(&format!(",{name})")))
                });
                if code.contains(&format!("jump!({name})")) || passed {
                    say("jumps to a target operand", *kind == Kind::Target);
                    jumps_to_target |= *kind == Kind::Target;
                }
            }
            say(
                "branches",
                jumps_to_target == matches!(op.flow, Flow::Branch | Flow::Jump),
            );
            if op.flow == Flow::Jump {
                // Unconditionally: the jump is a statement of the arm.
                let target = values.iter().find(|(_, k)| *k == Kind::Target).unwrap().0;
                let stmt = format!("                    jump!({target});");
                let one_line = format!("=> jump!({target}),");
                say(
                    "jumps always",
                    direct.lines().any(|l| l == stmt || l.ends_with(&one_line)),
                );
            }
            // A superinstruction skips what it covers.
            let skips = flat.contains("ip=unsafe{ip.add(1)}");
            say("covers", skips == (op.covers == 1));
        }
        assert!(
            wrong.is_empty(),
            "the table and the interpreter disagree: {wrong:#?}"
        );
    }
}
