//! The typed errors of `lona-vm`'s public functions: each case a Rust
//! caller can cause comes back as its own variant (matched here, not a
//! message searched), with the message `lona` prints as its `Display`.

use std::io::ErrorKind;
use std::sync::Arc;

use lona_vm::dist::{Config, StartError};
use lona_vm::jit::Tier;
use lona_vm::process::LonaProcess;
use lona_vm::{introspect, Env, LookupError, SharedBuf, TierError};

fn env() -> Arc<Env> {
    let env = Env::new(Box::new(SharedBuf::default()));
    lona_vm::eval_str(&env, "t.lona", "(ns errs) (def x 1) (defn f [a] a)").unwrap();
    env
}

#[test]
fn looking_a_function_up() {
    let env = env();
    assert!(introspect::tier_state(&env, "errs", "f").is_ok());
    assert_eq!(
        introspect::tier_state(&env, "errs", "nope"),
        Err(LookupError::NoVar("errs".into(), "nope".into()))
    );
    assert_eq!(
        introspect::disassemble(&env, "no.such.ns", "f"),
        Err(LookupError::NoVar("no.such.ns".into(), "f".into()))
    );
    let e = introspect::compiled_arities(&env, "errs", "x").unwrap_err();
    assert_eq!(e, LookupError::NotAFunction("errs".into(), "x".into()));
    assert_eq!(e.to_string(), "errs/x is not a function");
    lona_vm::eval_str(&env, "t.lona", "(ns errs) (declare later)").unwrap();
    assert_eq!(
        introspect::tier_state(&env, "errs", "later"),
        Err(LookupError::Unbound("errs".into(), "later".into()))
    );
}

#[test]
fn a_process_calling_what_is_not_there() {
    let env = env();
    let args = lona_vm::bridge::to_message(&(1,)).unwrap();
    let err = |q: &str, args: &lona_term::Fragment| {
        LonaProcess::call(env.clone(), q, args).err().expect(q)
    };
    assert!(LonaProcess::call(env.clone(), "errs/f", &args).is_ok());
    assert_eq!(err("f", &args), LookupError::NotQualified("f".into()));
    assert_eq!(
        err("errs/g", &args),
        LookupError::NoVar("errs".into(), "g".into())
    );
    let not_a_seq = lona_vm::bridge::to_message(&"text").unwrap();
    let e = err("errs/f", &not_a_seq);
    assert!(matches!(e, LookupError::BadArguments(_)), "{e:?}");
    assert!(e.to_string().contains("vector or a list"), "{e}");
}

#[test]
fn a_tier_by_name() {
    assert_eq!(Tier::parse("interp"), Ok(Tier::Interp));
    assert_eq!(Tier::parse("fast"), Err(TierError::Unknown("fast".into())));
    assert_eq!(
        Tier::parse("fast").unwrap_err().to_string(),
        "unknown tier \"fast\": interp, jit or jit-eager"
    );
}

#[test]
fn test_files_that_are_not_there() {
    let missing = std::path::PathBuf::from("/no/such/dir/x_test.lona");
    let e = lona_vm::test_runner::find_tests(std::slice::from_ref(&missing)).unwrap_err();
    assert_eq!(e.path, missing);
    assert_eq!(e.source.kind(), ErrorKind::NotFound);
    assert_eq!(
        e.to_string(),
        "/no/such/dir/x_test.lona: no such file or directory"
    );
}

#[test]
fn a_quoted_keyword_too_long_for_an_atom() {
    let long = "k".repeat(lona_term::MAX_ATOM_CHARS + 1);
    let forms =
        lona_vm::read_all(&lona_vm::Source::new("q.lona", format!(":{long}").as_str())).unwrap();
    let heap = lona_term::Heap::new();
    let e = lona_vm::form_to_term(&heap, &forms[0]).unwrap_err();
    assert_eq!(e.name, format!(":{long}"));
    assert_eq!(e.source, lona_term::AtomError::TooLong);
    assert!(e.to_string().starts_with("keyword :kkk"), "{e}");
}

/// Each refusal before the node touches `epmd` (no `epmd` needed).
#[test]
fn a_node_that_cannot_be_distributed() {
    let rt = lona_runtime::Runtime::builder().workers(1).build().unwrap();
    let start = |cfg: Config| {
        lona_vm::dist::start_native(&rt.handle(), cfg)
            .err()
            .unwrap()
    };
    let mut cfg = Config::short("bad name");
    assert!(matches!(start(cfg.clone()), StartError::BadName(n) if n == "bad name"));
    cfg = Config::short("a@host.with.dots");
    assert!(matches!(start(cfg.clone()), StartError::BadHost(_)));
    cfg = Config::short("a");
    cfg.long_names = true;
    assert!(matches!(start(cfg.clone()), StartError::NoHost(_)));
    cfg = Config::short("a");
    cfg.cookie = Some(String::new());
    assert!(matches!(start(cfg.clone()), StartError::EmptyCookie));
    // A port already taken: the listener's error, kept as the source, and
    // an `io::Error` of kind `AddrInUse` for a `Builder` caller.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    cfg = Config::short("a");
    cfg.cookie = Some("c".into());
    cfg.ip = [127, 0, 0, 1].into();
    cfg.port = taken.local_addr().unwrap().port();
    let e = start(cfg);
    assert!(
        matches!(&e, StartError::Listen(a, io) if a.port() == cfg_port(&taken) && io.kind() == ErrorKind::AddrInUse),
        "{e:?}"
    );
    assert!(std::error::Error::source(&e).is_some());
    let io: std::io::Error = e.into();
    assert_eq!(io.kind(), ErrorKind::AddrInUse);
    assert!(
        io.to_string()
            .starts_with("cannot listen for other nodes on 127.0.0.1:"),
        "{io}"
    );
}

fn cfg_port(l: &std::net::TcpListener) -> u16 {
    l.local_addr().unwrap().port()
}
