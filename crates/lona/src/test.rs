//! `lona test [PATH...]`: runs the `*_test.lona` files of PATHs (files,
//! or directories searched recursively; default `test/` if it exists,
//! else the current directory), each file on a fresh node and each test
//! in a process of its own (`lona_vm::test_runner`, `lona.test`). Prints
//! each failure, a line per file (its tests and the `is` assertions they
//! ran), `assertions: A, F failed` and `N passed, M failed`; exit status 1
//! when a test failed or a file did not load, 2 when no file was found.

use lona_vm::NodeEnv;
use std::path::PathBuf;
use std::process::ExitCode;

use lona_vm::test_runner::{find_tests, run_file, summary};
use lona_vm::Env;

use crate::NodeArgs;

/// `lona test`
pub fn run(paths: Vec<PathBuf>, timeout_ms: u64, node: NodeArgs) -> ExitCode {
    let paths = if paths.is_empty() {
        let t = PathBuf::from("test");
        vec![if t.is_dir() { t } else { PathBuf::from(".") }]
    } else {
        paths
    };
    let files = match find_tests(&paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lona test: {e}");
            return ExitCode::from(2);
        }
    };
    if files.is_empty() {
        eprintln!("lona test: no *_test.lona files found");
        return ExitCode::from(2);
    }
    let mut results = Vec::new();
    for file in &files {
        let env = Env::stdout();
        env.node().add_load_path(crate::program::load_path());
        let rt = match node.runtime() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("lona test: {e}");
                return ExitCode::from(1);
            }
        };
        let r = run_file(&env, rt, file, timeout_ms);
        env.flush_out();
        match &r.error {
            Some(e) => println!("ERROR in {}: {}", file.display(), e.trim_end()),
            None => {
                let n = r.passed + r.failed;
                let tests = if n == 1 { "test" } else { "tests" };
                println!(
                    "{}: {n} {tests}, {} failed ({} assertions, {} failed)",
                    file.display(),
                    r.failed,
                    r.assertions,
                    r.failed_assertions
                );
            }
        }
        results.push(r);
    }
    let (passed, failed) = summary(&results);
    let assertions: usize = results.iter().map(|r| r.assertions).sum();
    let failed_assertions: usize = results.iter().map(|r| r.failed_assertions).sum();
    println!("assertions: {assertions}, {failed_assertions} failed");
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
