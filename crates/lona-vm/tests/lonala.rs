//! The Lonala test suites (`tests/lonala/*_test.lona`, written with
//! `lona.test`) run through the runner of `lona test`, and tests of that
//! runner (`tests/runner/`).

mod common;

use std::path::{Path, PathBuf};

use lona_vm::test_runner::{find_tests, run_file, FileResult};
use lona_vm::{Env, SharedBuf};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

/// Runs one file on a fresh two-worker node (`common::workers`); its result and output.
fn run(file: &Path, timeout_ms: u64) -> (FileResult, String) {
    let buf = SharedBuf::default();
    let env = Env::new(Box::new(buf.clone()));
    let rt = lona_runtime::Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let r = run_file(&env, rt, file, timeout_ms);
    (r, buf.text())
}

#[test]
fn every_lonala_test_passes() {
    let files = find_tests(&[dir("lonala")]).unwrap();
    assert!(!files.is_empty());
    let mut bad = Vec::new();
    for f in &files {
        let (r, out) = run(f, 10_000);
        if !r.ok() || r.passed == 0 {
            bad.push(format!("{r:?}\n{out}"));
        }
    }
    assert!(bad.is_empty(), "failing Lonala tests:\n{}", bad.join("\n"));
}

#[test]
fn a_failing_is_is_reported_with_its_values_and_a_crash_does_not_end_the_run() {
    let (r, out) = run(&dir("runner").join("mixed_test.lona"), 300);
    assert_eq!((r.passed, r.failed, r.error.clone()), (4, 3, None), "{out}");
    // One `is` in each of four tests and three of `are`'s; one failed.
    // (The crash and the hang ran none.)
    assert_eq!((r.assertions, r.failed_assertions), (7, 1), "{out}");
    assert!(out.contains("FAIL in (fails)"), "{out}");
    assert!(out.contains("form:     (= 4 (+ 1 2))"), "{out}");
    assert!(out.contains("expected: 4\n  actual:   3"), "{out}");
    assert!(out.contains("ERROR in (crashes)"), "{out}");
    assert!(out.contains("crashed: [:error :boom]"), "{out}");
    assert!(out.contains("ERROR in (hangs)"), "{out}");
    assert!(out.contains("timed out after 300 ms"), "{out}");
}

#[test]
fn a_file_that_does_not_load_is_an_error() {
    let (r, _) = run(&dir("runner").join("broken_test.lona"), 1000);
    assert_eq!((r.passed, r.failed), (0, 0));
    assert!(
        r.error.as_deref().unwrap_or("").contains(":badarith"),
        "{r:?}"
    );
    assert!(!r.ok());
}

#[test]
fn find_tests_searches_directories_recursively_for_test_files_only() {
    let files = find_tests(&[dir("runner"), dir("runner").join("mixed_test.lona")]).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["broken_test.lona", "mixed_test.lona"]);
    assert!(find_tests(&[dir("no-such-dir")]).is_err());
}
