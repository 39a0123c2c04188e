//! The runner behind `lona test`: finds `*_test.lona` files and runs each
//! on a node of its own.
//!
//! For one file:
//! 1. A fresh [`Env`] and runtime (a node): files cannot see each other's
//!    definitions, and a file that crashes or halts its node ends only
//!    its own run.
//! 2. The main process loads the file (its `deftest`s register with
//!    `lona.test`), then calls `(lona.test/run-tests {:timeout ms :file
//!    path})`, which runs each test in a Lonala process of its own and
//!    prints each failure (`src/lonala/test.lona`).
//! 3. The counts are read from the var `lona.test/result` (`[passed
//!    failed assertions failed-assertions]`) once the node has stopped. A file that does not load, or
//!    whose run does not end normally, is a [`FileResult::error`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lona_runtime::Runtime;
use lona_term::View;

use crate::env::Env;
use crate::eval::Evaluator;
use crate::process::Ending;
use lona_reader::Source;

/// The default time a test may take, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// How one file's tests went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileResult {
    /// The file.
    pub file: PathBuf,
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed (an `is` failed, crashed or timed out).
    pub failed: usize,
    /// The `is` assertions the tests ran (`are` runs one per group).
    pub assertions: usize,
    /// Those of them that failed.
    pub failed_assertions: usize,
    /// Why the file did not run to the end (it did not load, its runner
    /// crashed, it halted the node), if it did not.
    pub error: Option<String>,
}

impl FileResult {
    /// Whether nothing failed.
    pub fn ok(&self) -> bool {
        self.failed == 0 && self.error.is_none()
    }
}

/// The `*_test.lona` files of `paths`: a file is taken as given, a
/// directory searched recursively; sorted, each once.
pub fn find_tests(paths: &[PathBuf]) -> Result<Vec<PathBuf>, crate::PathError> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), crate::PathError> {
        let at = |source| crate::PathError {
            path: dir.to_path_buf(),
            source,
        };
        let rd = std::fs::read_dir(dir).map_err(at)?;
        for entry in rd {
            let p = entry.map_err(at)?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("_test.lona"))
            {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(crate::PathError {
                path: p.clone(),
                source: std::io::ErrorKind::NotFound.into(),
            });
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

/// Runs the tests of `file` as the main process of `rt` with node `env`
/// (fresh ones: see the module documentation); each failure is printed to
/// the node's output.
pub fn run_file(env: &Arc<Env>, rt: Runtime, file: &Path, timeout_ms: u64) -> FileResult {
    let mut res = FileResult {
        file: file.to_path_buf(),
        passed: 0,
        failed: 0,
        assertions: 0,
        failed_assertions: 0,
        error: None,
    };
    let mut ev = Evaluator::new(env.clone());
    // Units run last pushed first: the runner after the file.
    let runner = format!(
        "(ns lona.test.runner (:require [lona.test]))\n\
         (lona.test/run-tests {{:timeout {timeout_ms} :file {}}})",
        quote(&file.display().to_string())
    );
    if let Err(e) = ev.push_source(&Source::new("<lona test>", runner)) {
        res.error = Some(e.to_string());
        return res;
    }
    if let Err(e) = ev.push_file(file) {
        res.error = Some(e.to_string());
        return res;
    }
    match crate::node::run_main_on(rt, env, ev) {
        Ok(Ending::Normal) => {}
        Ok(Ending::Failed(e)) => res.error = Some(e.to_string()),
        Ok(Ending::Halt(n)) => res.error = Some(format!("the file halted the node ({n})")),
        Ok(Ending::Killed(r)) => res.error = Some(format!("the runner was killed: {r}")),
        Err(e) => res.error = Some(e.to_string()),
    }
    if res.error.is_none() {
        match read_result(env) {
            Some([p, f, a, fa]) => {
                (res.passed, res.failed) = (p, f);
                (res.assertions, res.failed_assertions) = (a, fa);
            }
            None => res.error = Some("the runner left no result".into()),
        }
    }
    res
}

/// `lona.test/result`: `[passed failed assertions failed-assertions]`.
fn read_result(env: &Env) -> Option<[usize; 4]> {
    let v = env.namespaces.get("lona.test")?.lookup("result")?.value()?;
    let v = v.root();
    let View::Vector(items) = v.view() else {
        return None;
    };
    let n = |i: usize| {
        items
            .get(i)
            .and_then(|t| t.as_i64())
            .and_then(|x| usize::try_from(x).ok())
    };
    Some([n(0)?, n(1)?, n(2)?, n(3)?])
}

/// `s` as a Lonala string literal.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The summary line: `N passed, M failed` (a file that did not run to the
/// end counts as one failure).
pub fn summary(results: &[FileResult]) -> (usize, usize) {
    let passed = results.iter().map(|r| r.passed).sum();
    let failed = results
        .iter()
        .map(|r| r.failed + usize::from(r.error.is_some()))
        .sum();
    (passed, failed)
}
