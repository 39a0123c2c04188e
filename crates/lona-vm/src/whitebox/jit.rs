//! Freeing machine code (`free_code`): compiled functions freed give their
//! memory back, and new code compiled into it runs correctly.

use std::sync::Arc;

use crate::bytecode::Proto;
use crate::env::{Env, SharedBuf};

/// Set in the OS process the test runs itself in.
const ALONE: &str = "LONA_TEST_CODE_HEAP_ALONE";

/// The machine code's figures are the OS process's, and other tests
/// compile meanwhile: the test runs in a process of its own (this test
/// binary again, running only `freed_code_alone`).
#[test]
fn freed_code_is_reused_by_new_code_that_runs() {
    alone("freed_code_alone");
}

/// Runs the ignored test `name` (`whitebox::jit::NAME`) alone, in an OS
/// process of its own (this test binary again): its figures are the
/// process's, or it holds the compiling thread back.
fn alone(name: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            &format!("whitebox::jit::{name}"),
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ALONE, "1")
        .env_remove("LONA_TIER")
        .env_remove("LONA_JIT_THRESHOLD")
        .env_remove("LONA_JIT_SYNC")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

/// A function found hot waits in the compiling thread's queue
/// (`queue.rs`) while the program moves on: it is redefined, nothing can
/// reach it, and a collection cycle runs. The queue's pin keeps it (the
/// thread then compiles it from live memory); once compiled and no longer
/// queued, the next cycle frees it and its code.
#[test]
fn a_queued_function_outlives_a_collection() {
    alone("queued_function_alone");
}

#[test]
#[ignore = "run by a_queued_function_outlives_a_collection, alone"]
fn queued_function_alone() {
    if std::env::var_os(ALONE).is_none() {
        return;
    }
    crate::jit::set_tier(crate::jit::Tier::Jit);
    crate::jit::set_background(true);
    let env = Arc::new(Env::empty(Box::new(SharedBuf::default())));
    lona_machine::whitebox::install(&env);
    // The built-ins only, as the test always ran: not the node's half
    // (its built-ins, the prelude).
    env.boot_node(|| {});
    let gate = lona_machine::whitebox::jit::queue::GATE.lock().unwrap();
    crate::boot::eval_str(
        &env,
        "defs.lona",
        "(ns q) (defn down [n] (if (= n 0) :done (down (- n 1))))",
    )
    .unwrap();
    let p = proto(&env, "q", "down");
    let area = p.area.load(std::sync::atomic::Ordering::Acquire) as usize;
    assert_ne!(area, 0);
    let bytes = lona_machine::whitebox::jit::code_bytes();
    let got = crate::boot::eval_str(&env, "hot.lona", "(ns q) (down 3000)").unwrap();
    assert_eq!(got, ":done");
    assert_eq!(
        lona_machine::whitebox::jit::state_name(p),
        "queued",
        "interpreted meanwhile"
    );
    crate::boot::eval_str(&env, "redef.lona", "(ns q) (defn down [n] n)").unwrap();
    assert!(crate::purge::collect(), "the cycle ran");
    assert!(
        lona_machine::whitebox::registered(area),
        "freed while queued"
    );
    drop(gate);
    crate::jit::settle();
    assert_eq!(lona_machine::whitebox::jit::state_name(p), "compiled");
    assert!(lona_machine::whitebox::jit::code_bytes() > bytes);
    assert!(crate::jit::stats().background >= 1);
    assert!(crate::purge::collect(), "the cycle ran");
    assert!(
        !lona_machine::whitebox::registered(area),
        "kept once compiled"
    );
    assert_eq!(
        lona_machine::whitebox::jit::code_bytes(),
        bytes,
        "its code freed with it"
    );
}

/// The prototype of the function `name` of namespace `ns`.
fn proto(env: &Env, ns: &str, name: &str) -> &'static Proto {
    let var = env.namespaces.get(ns).unwrap().lookup(name).unwrap();
    let code = crate::tag::closure_code(var.get().unwrap().bits()).unwrap();
    // SAFETY: the code id of a closure this VM made.
    unsafe { Proto::from_code(code) }
}

fn extent() -> usize {
    lona_machine::whitebox::jit::compiler::heap_extent()
}

#[test]
#[ignore = "run by freed_code_is_reused_by_new_code_that_runs, alone"]
fn freed_code_alone() {
    if std::env::var_os(ALONE).is_none() {
        return;
    }
    crate::jit::set_tier(crate::jit::Tier::Jit);
    let env = Arc::new(Env::empty(Box::new(SharedBuf::default())));
    lona_machine::whitebox::install(&env);
    // The built-ins only, as the test always ran: not the node's half
    // (its built-ins, the prelude).
    env.boot_node(|| {});
    const N: u64 = 60;
    let base = lona_machine::whitebox::jit::code_bytes();
    let mut addrs = std::collections::HashSet::new();
    let mut first_extent = 0;
    for round in 0..4u64 {
        // Functions calling themselves (a direct call: the relocation
        // patched at install), each with constants of its round.
        let ns = format!("heap{round}");
        let mut src = format!("(ns {ns})\n");
        for k in 0..N {
            let c = k + 1000 * round;
            src.push_str(&format!(
                "(defn g{k} [n] (if (< n 2) n (+ (g{k} (- n 1)) {c})))\n"
            ));
        }
        crate::boot::eval_str(&env, "defs.lona", &src).unwrap();
        let ps: Vec<_> = (0..N).map(|k| proto(&env, &ns, &format!("g{k}"))).collect();
        let mut bytes = 0;
        let mut reused = 0;
        for p in &ps {
            assert!(
                lona_machine::whitebox::jit::compile(p, 1).is_some(),
                "{} not compiled",
                p.name
            );
            let (size, code) = lona_machine::whitebox::jit::arity_code(p, 1);
            bytes += size;
            reused += !addrs.insert(code) as usize;
        }
        assert_eq!(lona_machine::whitebox::jit::code_bytes(), base + bytes);
        if round == 0 {
            first_extent = extent();
        } else {
            assert!(reused > 0, "round {round}: no address reused");
        }
        assert_eq!(extent(), first_extent, "round {round}: the code space grew");
        // They run compiled (the interpreter entered each), and right:
        // g(n) = 1 + (n - 1) c.
        let calls: Vec<String> = (0..N).map(|k| format!("(g{k} 10)")).collect();
        let got = crate::boot::eval_str(
            &env,
            "run.lona",
            &format!("(ns {ns}) [{}]", calls.join(" ")),
        )
        .unwrap();
        let want: Vec<String> = (0..N)
            .map(|k| (1 + 9 * (k + 1000 * round)).to_string())
            .collect();
        assert_eq!(got, format!("[{}]", want.join(" ")), "round {round}");
        for p in &ps {
            assert!(
                lona_machine::whitebox::jit::entries(p) > 0,
                "{} ran interpreted",
                p.name
            );
        }
        for p in &ps {
            // SAFETY: the code returned, no thread holds its address.
            unsafe { lona_machine::whitebox::jit::free_code(p) };
            assert!(!lona_machine::whitebox::jit::any_entry(p));
        }
        assert_eq!(
            lona_machine::whitebox::jit::code_bytes(),
            base,
            "round {round}"
        );
        // Freed, a function runs interpreted, and is never compiled again.
        let got = crate::boot::eval_str(&env, "again.lona", &format!("(ns {ns}) (g3 10)")).unwrap();
        assert_eq!(got, (1 + 9 * (3 + 1000 * round)).to_string());
        assert!(lona_machine::whitebox::jit::compile(ps[3], 1).is_none());
        assert_eq!(lona_machine::whitebox::jit::code_bytes(), base);
    }
}

/// Entries into `p`'s code until arity `argc` is optimised: the
/// `optimise_after()`th does it (or queues it for the compiling thread,
/// whose work is waited for), or a later one if another optimise (of
/// another test) was under way.
fn judge_until_optimised(p: &'static Proto, argc: usize) {
    for _ in 0..10_000 {
        if !lona_machine::whitebox::jit::is_quick(p, argc) {
            crate::jit::settle();
            return;
        }
        lona_machine::whitebox::jit::judge(p, false);
        if lona_machine::whitebox::jit::is_quick(p, argc) {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
    panic!("{} never optimised", p.name);
}

/// Whether quick code at `addr` is retired, or retired code was freed
/// since `freed` (a collection cycle another test started may free it).
fn retired_or_freed(addr: usize, freed: u64) -> bool {
    lona_machine::whitebox::jit::is_retired(addr) || crate::jit::stats().retired_freed > freed
}

/// A function found hot is compiled quick; at its `optimise_after()`th
/// entry its code is replaced by optimised code, which runs right, while
/// the quick code is retired (another worker may run it), for the code
/// collector to free (`tests/purge.rs`), not with the prototype's code.
/// A leaf is optimised at once.
#[test]
fn quick_code_is_replaced_by_optimised_code_and_retired() {
    if !lona_machine::whitebox::jit::optimise::quick_tier() {
        return;
    }
    let env = Arc::new(Env::empty(Box::new(SharedBuf::default())));
    lona_machine::whitebox::install(&env);
    // The built-ins only, as the test always ran: not the node's half
    // (its built-ins, the prelude).
    env.boot_node(|| {});
    let src = "(ns tiers)
        (defn count-down [n acc] (if (= n 0) acc (count-down (- n 1) (+ acc 2))))
        (defn sq [x] (* x x))";
    crate::boot::eval_str(&env, "defs.lona", src).unwrap();
    let p = proto(&env, "tiers", "count-down");
    let quick = lona_machine::whitebox::jit::compile(p, 2).expect("compiled");
    use lona_machine::whitebox::jit as slot;
    assert!(slot::is_quick(p, 2));
    assert_eq!(slot::entry(p, 2), Some(quick));
    // Entries short of the count change nothing.
    let after = lona_machine::whitebox::jit::optimise::optimise_after();
    let before = slot::entries(p);
    assert!(before < after - 1, "{before} entries already");
    for _ in before + 1..after {
        slot::judge(p, false);
    }
    assert!(slot::is_quick(p, 2));
    assert_eq!(slot::entry(p, 2), Some(quick));
    // The last one: optimised code in its place, the quick code retired.
    // (Or a later one, should another test be optimising meanwhile.)
    assert!(!lona_machine::whitebox::jit::is_retired(quick));
    let freed = crate::jit::stats().retired_freed;
    judge_until_optimised(p, 2);
    let optimised = slot::entry(p, 2).expect("still compiled");
    assert_ne!(optimised, quick);
    assert!(retired_or_freed(quick, freed));
    assert_eq!(slot::arity_code(p, 2).1, optimised);
    // More entries do not compile it again.
    slot::judge(p, false);
    assert_eq!(slot::entry(p, 2), Some(optimised));
    // It runs (the interpreter enters the optimised code), and right.
    let entries = slot::entries(p);
    let got = crate::boot::eval_str(&env, "run.lona", "(ns tiers) (count-down 100000 7)").unwrap();
    assert_eq!(got, "200007");
    assert!(slot::entries(p) > entries, "ran interpreted");
    // An arity compiled from now on is optimised at once; so is a leaf.
    let leaf = proto(&env, "tiers", "sq");
    assert!(
        lona_machine::whitebox::jit::compile(leaf, 1).is_none(),
        "a leaf is not entered"
    );
    assert!(lona_machine::whitebox::jit::entry(leaf, 1).is_some());
    assert!(!lona_machine::whitebox::jit::is_quick(leaf, 1));
    // Freed with its prototype: the optimised code; the quick code stays
    // retired (the code collector frees it, once, after a cycle).
    // SAFETY: the code returned, no thread holds its address.
    unsafe { lona_machine::whitebox::jit::free_code(p) };
    assert_eq!(slot::arity_code(p, 2).1, 0);
    assert!(!slot::any_entry(p));
    assert!(retired_or_freed(quick, freed));
    let got = crate::boot::eval_str(&env, "again.lona", "(ns tiers) (count-down 1000 1)").unwrap();
    assert_eq!(got, "2001");
}

/// Optimising on one thread while another compiles functions found hot:
/// each finishes, and every function runs right on its final code (the
/// optimiser takes the compiler's lock only to take its arities and to
/// install, so the two interleave).
#[test]
fn optimising_and_compiling_at_once() {
    if !lona_machine::whitebox::jit::optimise::quick_tier() {
        return;
    }
    const N: usize = 12;
    let env = Arc::new(Env::empty(Box::new(SharedBuf::default())));
    lona_machine::whitebox::install(&env);
    // The built-ins only, as the test always ran: not the node's half
    // (its built-ins, the prelude).
    env.boot_node(|| {});
    let mut src = String::from("(ns race)\n");
    for k in 0..2 * N {
        src.push_str(&format!(
            "(defn f{k} [n acc] (if (= n 0) acc (f{k} (- n 1) (+ acc {k}))))\n"
        ));
    }
    crate::boot::eval_str(&env, "defs.lona", &src).unwrap();
    let ps: Vec<&'static Proto> = (0..2 * N)
        .map(|k| proto(&env, "race", &format!("f{k}")))
        .collect();
    // The first half compiled (quick) before; the second half compiled
    // while the first is optimised.
    let mut quick = Vec::new();
    for p in &ps[..N] {
        quick.push(lona_machine::whitebox::jit::compile(p, 2).expect("compiled"));
        assert!(lona_machine::whitebox::jit::is_quick(p, 2), "{}", p.name);
    }
    let (first, second) = (ps[..N].to_vec(), ps[N..].to_vec());
    let freed = crate::jit::stats().retired_freed;
    let optimiser = std::thread::spawn(move || {
        for p in first {
            judge_until_optimised(p, 2);
        }
    });
    for p in &second {
        assert!(lona_machine::whitebox::jit::compile(p, 2).is_some());
    }
    optimiser.join().unwrap();
    for (p, q) in ps[..N].iter().zip(&quick) {
        assert!(
            !lona_machine::whitebox::jit::is_quick(p, 2),
            "{} not optimised",
            p.name
        );
        assert!(retired_or_freed(*q, freed), "{}", p.name);
    }
    let calls: Vec<String> = (0..2 * N).map(|k| format!("(f{k} 5000 0)")).collect();
    let got = crate::boot::eval_str(
        &env,
        "run.lona",
        &format!("(ns race) [{}]", calls.join(" ")),
    )
    .unwrap();
    let want: Vec<String> = (0..2 * N).map(|k| (5000 * k).to_string()).collect();
    assert_eq!(got, format!("[{}]", want.join(" ")));
    for p in &ps {
        // SAFETY: the code returned, no thread holds its address.
        unsafe { lona_machine::whitebox::jit::free_code(p) };
    }
}
