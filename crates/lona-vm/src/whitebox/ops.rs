//! The opcode table is complete and consistent with itself and with the
//! enum it is made with. (Against the interpreter: `vm/tests.rs`; against
//! the compiling tier's former matches: `jit/analysis/tests.rs`.)

use std::collections::HashSet;
use std::sync::Arc;

use crate::bytecode::Proto;
use crate::env::{Env, SharedBuf};
use lona_compiler::bytecode::ops::*;

/// Code to look at: every function of the core library and the
/// libraries that come with Lonala, and a program using every kind of
/// form (loops, calls of itself, of built-ins and of other functions,
/// receive, try, patterns, closures, apply), with the functions made
/// inside each. Prototypes are never freed while a var holds them.
pub(crate) fn corpus() -> Vec<&'static Proto> {
    static CORPUS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    let addrs = CORPUS.get_or_init(|| {
        let env = Env::new(Box::new(SharedBuf::default()));
        crate::boot::eval_str(&env, "corpus.lona", PROGRAM).unwrap();
        // The environment and its code stay alive for the test binary.
        let env: &'static Arc<Env> = Box::leak(Box::new(env));
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for ns in env.namespaces.names() {
            for var in env.namespaces.get(&ns).unwrap().vars() {
                let Some(w) = var.get() else { continue };
                let Some(code) = crate::tag::closure_code(w.bits()) else {
                    continue;
                };
                // SAFETY: the code id of a closure this VM made.
                let mut todo = vec![unsafe { Proto::from_code(code) }];
                while let Some(p) = todo.pop() {
                    if seen.insert(p as *const Proto as usize) {
                        out.push(p as *const Proto as usize);
                        todo.extend(p.protos.iter());
                    }
                }
            }
        }
        out
    });
    addrs
        .iter()
        // SAFETY: leaked prototypes, held by the leaked environment's vars.
        .map(|&a| unsafe { &*(a as *const Proto) })
        .collect()
}

const PROGRAM: &str = r#"
(ns corpus (:require [lona.server] [lona.supervisor] [lona.test]
                     [clojure.string] [clojure.set]))
(defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(defn fact [n] (if (= n 0) 1 (* n (fact (dec n)))))
(defn sum-to [n i acc] (if (= i n) acc (sum-to n (inc i) (+ acc i))))
(defn loops [n] (loop [i 0 acc []] (if (< i n) (recur (inc i) (conj acc i)) acc)))
(declare pong)
(defn ping [n] (if (<= n 0) :done (pong (dec n))))
(defn pong [n] (ping n))
(defn shapes [s]
  (match s
    {:kind :circle :r r} (* 3 r r)
    [:rect w h] :when (= w h) [:square w]
    [:rect w h] (* w h)
    [x & more] (count more)
    (a & b) [a b]
    (& r) r
    [a a] :twice
    () :empty
    _ :unknown))
(defn waits [t]
  (receive
    [:add a b] (+ a b)
    [:ping from] (do (send from :pong) (waits t))
    :stop :stopped
    :timeout t :timed-out))
(defn forever [] (receive x (do (println x) (forever))))
(defn safe [f]
  (try (f) (catch :error e [:caught e]) (finally (println "done"))))
(defn rethrows [f] (try (f) (catch :throw e e)))
(defn adder [k] (fn [x] (+ x k)))
(defn spread [f & xs] (apply f 1 xs))
(defn tail-spread [f xs] (apply f xs))
(defn cmp [a b] [(< a b) (<= a b) (> a b) (>= a b) (== a b) (= a b)])
(defn vecs [v] (let [[a b & r] v] [a b r {:a a} (list a b)]))
(defn sure [x] (let [[:ok v] x] v))
(defn trace [] (try (throw :x) (catch :throw _ (stacktrace))))
(def table {:a 1})
(defn multi ([] 0) ([a] a) ([a b] (+ a b)) ([a b & r] (reduce + (+ a b) r)))
"#;

#[test]
fn every_instruction_kind_has_its_row() {
    let samples = Instr::samples();
    assert_eq!(samples.len(), COUNT);
    assert_eq!(OPS.len(), COUNT);
    let mut names = HashSet::new();
    for (i, (ins, op)) in samples.iter().zip(&OPS).enumerate() {
        assert_eq!(op.code as usize, i, "{}", op.name);
        assert_eq!(ins.opcode() as usize, i, "{}", op.name);
        assert!(std::ptr::eq(ins.op(), op), "{}", op.name);
        assert!(names.insert(op.name), "{} twice", op.name);
        // The name and operands are the variant's and its fields, in
        // order (as `Debug` shows them).
        let debug = format!("{ins:?}");
        let (name, fields) = split_debug(&debug);
        assert_eq!(name, op.name);
        let got: Vec<&str> = op.operands.iter().map(|o| o.name).collect();
        let want: Vec<&str> = fields.iter().map(|(f, _)| *f).collect();
        assert_eq!(got, want, "{}", op.name);
        assert!(op.operands.len() <= MAX_OPERANDS);
    }
}

/// `Name { a: 1, b: 2 }` as `("Name", [("a", "1"), ("b", "2")])`.
fn split_debug(s: &str) -> (&str, Vec<(&str, &str)>) {
    let Some((name, rest)) = s.split_once(" { ") else {
        return (s, Vec::new());
    };
    let fields = rest
        .trim_end_matches(" }")
        .split(", ")
        .map(|f| f.split_once(": ").unwrap())
        .collect();
    (name, fields)
}

#[test]
fn operands_are_the_fields_values() {
    let mut kinds = HashSet::new();
    for p in corpus() {
        for &ins in p.code.iter() {
            kinds.insert(ins.opcode() as usize);
            let debug = format!("{ins:?}");
            let (_, fields) = split_debug(&debug);
            let values = ins.operands();
            for (i, (_, v)) in fields.iter().enumerate() {
                assert_eq!(v.parse::<i64>().unwrap(), values[i], "{debug}");
            }
            assert!(values[fields.len()..].iter().all(|&v| v == 0));
        }
    }
    // Every kind the compiler emits was seen (the two it does not emit
    // and the one made by hand are checked by their fields above).
    let unseen: Vec<&str> = OPS
        .iter()
        .filter(|op| !kinds.contains(&(op.code as usize)))
        .map(|op| op.name)
        .collect();
    assert_eq!(unseen, ["MakeList", "JumpIfTrue"], "unseen kinds");
}

#[test]
fn flags_agree_with_each_other() {
    for op in &OPS {
        let targets = op
            .operands
            .iter()
            .filter(|o| o.kind == Kind::Target)
            .count();
        let branches = matches!(op.flow, Flow::Branch | Flow::Jump);
        assert_eq!(
            targets, branches as usize,
            "{}: a target exactly when it jumps",
            op.name
        );
        assert_eq!(
            op.flow == Flow::Raise,
            matches!(op.raising, Raising::Always | Raising::Again),
            "{}: raise flow exactly when it always raises",
            op.name
        );
        if op.operands.iter().any(|o| o.kind == Kind::Handler) {
            assert_eq!(op.flow, Flow::Next, "{}: a handler is not a jump", op.name);
        }
        if op.flow == Flow::TailCall {
            assert_eq!(op.yields, Yields::Safepoint, "{}: a call", op.name);
        }
        if op.jit == Jit::Callee {
            assert!(
                op.operands.iter().any(|o| o.kind == Kind::Var),
                "{}: a callee is a var's",
                op.name
            );
        }
        if op.covers > 0 {
            assert_eq!(op.jit, Jit::Inline, "{}: fused for compiled code", op.name);
        }
        if matches!(op.flow, Flow::TailCall) || op.jit == Jit::Callee {
            assert_eq!(
                op.raising,
                Raising::Maybe,
                "{}: a callee may raise",
                op.name
            );
            assert!(op.allocates, "{}: a callee may allocate", op.name);
        }
        assert!(!op.effect.is_empty(), "{}: no effect", op.name);
        assert!(!op.effect.contains('\n') && !op.effect.contains("  "));
        assert_eq!(op.ends_block(), !op.falls_through(), "{}", op.name);
    }
}

#[test]
fn the_effect_is_the_doc_comment() {
    // The doc comment of a variant is the row's `effect` (one macro
    // entry makes both); its lines joined into one.
    let op = Instr::LoadVar { dst: 0, var: 0 }.op();
    assert_eq!(
        op.effect,
        "`R[dst] = ` the value of var `V[var]`; raises `[:undef sym]` if the var is unbound."
    );
    assert_eq!(Instr::RecvStart.op().name, "RecvStart");
    assert!(Instr::RecvStart.op().operands.is_empty());
}

#[test]
fn instructions_print_by_their_operands_kinds() {
    let shown = |i: Instr| i.to_string();
    assert_eq!(shown(Instr::Move { dst: 1, src: 0 }), "Move r1, r0");
    assert_eq!(
        shown(Instr::JumpUnlessLtImm {
            a: 0,
            imm: -2,
            to: 7
        }),
        "JumpUnlessLtImm r0, imm=-2, ->7"
    );
    assert_eq!(
        shown(Instr::CallVar {
            a: 2,
            argc: 1,
            var: 3
        }),
        "CallVar r2, argc=1, var #3"
    );
    assert_eq!(
        shown(Instr::RecvWait {
            t: crate::bytecode::NO_TIMEOUT,
            to: 4
        }),
        "RecvWait no-timeout, ->4"
    );
    assert_eq!(
        shown(Instr::TryBegin { r: 5, handler: 9 }),
        "TryBegin r5, catch ->9"
    );
    assert_eq!(shown(Instr::FunctionClause), "FunctionClause");
}

#[test]
fn the_disassembler_prints_from_the_table() {
    let env = Env::new(Box::new(SharedBuf::default()));
    crate::boot::eval_str(
        &env,
        "dis.lona",
        "(ns dis) (defn fib [n] (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
         (defn greet [x] (str \"hello \" x))",
    )
    .unwrap();
    let proto = |name: &str| {
        let var = env.namespaces.get("dis").unwrap().lookup(name).unwrap();
        let code = crate::tag::closure_code(var.get().unwrap().bits()).unwrap();
        // SAFETY: the code id of a closure this VM made.
        unsafe { Proto::from_code(code) }
    };
    let fib = proto("fib").disassemble();
    let want = "\
dis/fib (dis.lona)
  arity 1: pc 0 regs 6
     0 JumpUnlessLtImm r0, imm=2, ->2
     1 Ret r0
     2 CallVar1Imm r2, r0, imm=-1, var dis/fib
     3 CallVar r2, argc=1, var dis/fib  (fused into 2)
     4 CallVar1Imm r3, r0, imm=-2, var dis/fib
     5 CallVar r3, argc=1, var dis/fib  (fused into 4)
     6 AddRet r1, r2, r3
     7 Ret r1  (fused into 6)
";
    assert_eq!(fib, want);
    let greet = proto("greet").disassemble();
    assert!(greet.contains("k0 (\"hello \")"), "{greet}");
    assert!(greet.contains("var lona.core/str"), "{greet}");
}
