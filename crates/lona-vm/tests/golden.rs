//! The golden suite: every `tests/lona/*.lona` program runs, and what it
//! prints must equal the `.out` file beside it. A program that ends with
//! an error adds a last line `!! <error>` (the error as `lona run` reports
//! it, without the stack trace unless the test prints it itself).
//!
//! `LONA_BLESS=1 cargo test --test golden` writes the `.out` files from
//! the current output: review the diff before committing.

mod common;

use std::path::{Path, PathBuf};

use lona_vm::process::Ending;
use lona_vm::{node, Env, EvalError, Evaluator, SharedBuf, Source};

fn run(path: &Path) -> String {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let text = std::fs::read_to_string(path).expect("read test");
    // Named relative to the crate (the tests' working directory), so
    // `require` finds namespaces beside the file and messages are stable.
    let name = format!("tests/lona/{}", path.file_name().unwrap().to_string_lossy());
    let mut ev = Evaluator::new(env.clone());
    let tail = match ev.push_source(&Source::new(name, text)) {
        Err(e) => format!("!! {e}\n"),
        Ok(()) => {
            ev.call_main_after(vec!["a1".into(), "a2".into()]);
            // Each program is the main process of a node of its own.
            match node::run_main(&env, ev, Some(common::workers(2))).expect("node starts") {
                Ending::Normal => String::new(),
                Ending::Halt(n) => format!("!! halt {n}\n"),
                Ending::Failed(EvalError::Uncaught { exit_reason, .. }) => {
                    format!("!! exit {exit_reason}\n")
                }
                Ending::Failed(other) => format!("!! {other}\n"),
                Ending::Killed(r) => format!("!! killed {r}\n"),
            }
        }
    };
    buf.text() + &tail
}

#[test]
fn golden() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lona");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/lona")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "lona"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let bless = std::env::var_os("LONA_BLESS").is_some();
    let mut failed = Vec::new();
    for f in &files {
        // A program that hangs fails the suite instead of stalling it.
        let (tx, rx) = std::sync::mpsc::channel();
        let path = f.clone();
        std::thread::spawn(move || {
            let _ = tx.send(run(&path));
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{} did not end within 120 s", f.display()));
        let out = f.with_extension("out");
        if bless {
            std::fs::write(&out, &got).expect("write .out");
            continue;
        }
        let want =
            std::fs::read_to_string(&out).unwrap_or_else(|_| panic!("missing {}", out.display()));
        if got != want {
            failed.push(format!(
                "--- {}\n### expected\n{want}### got\n{got}",
                f.display()
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} golden test(s) differ:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
