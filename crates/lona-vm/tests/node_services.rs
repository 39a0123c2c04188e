//! The node's half of `Env` (`NodeServices`, `env.node()`): where
//! `require` looks, what it loaded, how the program ended, and the slot
//! the machine keeps it in. Safe Rust, as an embedding program is.
#![forbid(unsafe_code)]

use std::sync::Arc;

use lona_vm::process::Ending;
use lona_vm::{eval_str, Env, Evaluator, NodeEnv, SharedBuf, Source};

fn env() -> (Arc<Env>, SharedBuf) {
    let out = SharedBuf::default();
    (Env::new(Box::new(out.clone())), out)
}

#[test]
fn a_load_path_added_is_where_require_looks() {
    let dir = std::env::temp_dir().join(format!("lona-node-services-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("acme")).unwrap();
    std::fs::write(
        dir.join("acme/tools.lona"),
        "(ns acme.tools)\n(defn twice [x] (* 2 x))\n",
    )
    .unwrap();
    let (env, _) = env();
    assert!(env.node().load_path().is_empty());
    assert!(!env.node().loaded("acme.tools"));
    // Not found before the directory is on the path.
    let err = eval_str(&env, "t.lona", "(require '[acme.tools]) 1").unwrap_err();
    assert!(err.to_string().contains("acme"), "{err}");
    env.node().add_load_path([dir.clone()]);
    assert_eq!(env.node().load_path(), vec![dir.clone()]);
    let got = eval_str(&env, "t.lona", "(require '[acme.tools :as t]) (t/twice 21)").unwrap();
    assert_eq!(got, "42");
    assert!(env.node().loaded("acme.tools"));
    // Another node has its own services.
    let (other, _) = self::env();
    assert!(other.node().load_path().is_empty());
    assert!(!other.node().loaded("acme.tools"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn halt_sets_the_ending_the_caller_waits_on() {
    let (env, out) = env();
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new(
        "main.lona",
        "(println \"before\") (halt 7) (println \"after\")",
    ))
    .unwrap();
    let ending = lona_vm::node::run_main(&env, ev, Some(1)).unwrap();
    assert_eq!(ending, Ending::Halt(7));
    assert_eq!(env.node().ending().try_get(), Some(Ending::Halt(7)));
    assert_eq!(out.text(), "before\n");
}

#[test]
fn the_extension_slot_holds_one_type() {
    let (env, _) = env();
    // The node claims the slot at its first use...
    assert!(env.node().dist().is_none());
    // ...and another type is refused, not confused with it.
    assert!(env.extension(|| 5u64).is_none());
    let mut made = false;
    let again = env.extension(|| -> u64 {
        made = true;
        6
    });
    assert!(again.is_none() && !made, "the slot is made once");
}
