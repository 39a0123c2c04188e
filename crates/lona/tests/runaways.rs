//! Runaway processes end themselves, never the node (issue 17, defect 5):
//! `lona run` under a limited address space (`prlimit --as`, as an
//! operator's `ulimit -v` or a container's memory limit), with and without
//! `--max-heap`.

use std::process::{Command, Output};

/// Sixteen processes recursing without a tail call (stack and frames grow
/// without end, the heap stays a few words), each monitored; main prints
/// how each ended, then `node alive`.
const RUNAWAYS: &str = r#"
(defn f [n] (+ 1 (f n)))
(defn spawn-all [i]
  (when (< i 16)
    (spawn-opt (fn [] (f i)) {:monitor true})
    (spawn-all (inc i))))
(defn wait-all [k]
  (when (< k 16)
    (receive [:DOWN _ _ r] (println "ended:" r))
    (wait-all (inc k))))
(defn -main [& args]
  (spawn-all 0)
  (wait-all 0)
  (println "node alive"))
"#;

/// The program, in a directory of its own per test (removed when the
/// test ends): the tests run in parallel, and a second `fs::write`
/// truncating a shared file while another test's `lona run` read it made
/// that run see an empty program (exit 0, no output; CI, 2026-11-26).
fn program() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("lona-runaways-")
        .tempdir()
        .unwrap();
    std::fs::write(dir.path().join("runaways.lona"), RUNAWAYS).unwrap();
    dir
}

/// `lona run [flags] runaways.lona` under `prlimit --as=bytes`, or `None`
/// (with a message) when util-linux's `prlimit` is not on this machine.
fn run_limited(address_space: u64, flags: &[&str]) -> Option<Output> {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is not installed");
        return None;
    }
    let dir = program();
    let out = Command::new("prlimit")
        .arg(format!("--as={address_space}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .args(flags)
        .arg(dir.path().join("runaways.lona"))
        .output()
        .unwrap();
    Some(out)
}

/// The reasons the sixteen runaways ended with, checking that the node
/// lived on: `node alive` printed, exit status 0, no allocator abort.
fn endings(out: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("memory allocation of"),
        "the node aborted:\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.last(), Some(&"node alive"), "{stdout}\n{stderr}");
    let ended: Vec<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("ended: "))
        .map(str::to_string)
        .collect();
    assert_eq!(ended.len(), 16, "{stdout}");
    ended
}

/// Without a limit each runaway grows until the machine cannot back it;
/// then it, and only it, ends: `[:system-limit :out-of-memory]` (or the
/// register stack's own cap, a catchable `:system-limit` error, for one
/// that got that far).
fn all_end_alone(address_space: u64) {
    let Some(out) = run_limited(address_space, &[]) else {
        return;
    };
    for r in endings(&out) {
        assert!(
            r == "[:system-limit :out-of-memory]" || r == "[:error :system-limit]",
            "{r}"
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("out of memory: cannot allocate"),
        "{stderr}"
    );
}

#[test]
fn sixteen_runaways_in_one_gib_all_end_and_the_node_lives() {
    // Under a second: the same as the next test, with less memory to fill.
    all_end_alone(1 << 30);
}

/// The issue's setting. Slow: 16 runaways fill 4 GiB several times over
/// (about 9 GB of page faults): 6-22 s on a loaded two-core machine.
#[test]
#[ignore = "fills 4 GiB of memory several times over, 6-22 s"]
fn sixteen_runaways_in_four_gib_all_end_and_the_node_lives() {
    all_end_alone(4 << 30);
}

#[test]
fn with_max_heap_every_runaway_is_killed_at_its_limit() {
    // 100,000 words (800 KB) each: killed long before the address space
    // matters, with Erlang's reason and a report naming the limit.
    let Some(out) = run_limited(1 << 30, &["--max-heap", "100000"]) else {
        return;
    };
    for r in endings(&out) {
        assert_eq!(r, ":killed");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("exceed max_heap_size 100000"), "{stderr}");
    assert!(!stderr.contains("out of memory"), "{stderr}");
}

#[test]
fn max_heap_is_in_the_help() {
    for cmd in ["run", "repl"] {
        let out = Command::new(env!("CARGO_BIN_EXE_lona"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--max-heap <WORDS>"), "{cmd}: {help}");
    }
}
