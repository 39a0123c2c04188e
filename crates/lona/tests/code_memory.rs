//! Code lifetime, as a user sees it: a node that redefines a function a
//! million times (`eval` of a `defn`, as a REPL or a reload does) keeps its
//! memory flat, for the code collector frees the versions no process can
//! run (`lona_vm::purge`). Runs the `lona` binary, whose allocator is the
//! one a node runs with.

use std::process::Command;

fn samples(tier: &str, n: u64, every: u64, calls: u64, trigger: &str) -> (Vec<u64>, String) {
    let src = format!(
        r#"
(declare f)
(defn go [i]
  (when (< i {n})
    (eval '(defn f [x] (+ x 1)))
    (loop [j 0] (when (< j {calls}) (f j) (recur (inc j))))
    (when (= 0 (rem i {every})) (println (memory)))
    (recur (inc i))))
(go 0)
"#
    );
    let dir = std::env::temp_dir().join(format!("lona-code-memory-{}-{tier}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("redefine.lona");
    std::fs::write(&file, src).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lona"))
        .args(["run", "--jit-stats", "--tier", tier])
        .env("LONA_PURGE_AREAS", trigger)
        .arg(&file)
        .output()
        .expect("lona runs");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let v = stdout.lines().map(|l| l.parse().expect(l)).collect();
    (v, stderr)
}

/// The number before the first `word` on the `--jit-stats` line
/// starting with `line`.
fn figure(stats: &str, line: &str, word: &str) -> u64 {
    let l = stats.lines().find(|l| l.starts_with(line)).expect(stats);
    let words: Vec<&str> = l.split_whitespace().collect();
    let i = words.iter().position(|w| *w == word).expect(l);
    words[i - 1].parse().expect(l)
}

/// The areas freed, from the code collector's line.
fn freed(stats: &str) -> u64 {
    figure(stats, "code collector:", "areas")
}

#[test]
fn redefining_a_function_a_million_times_keeps_memory_flat() {
    // Before the collector, each definition leaked about 1 KB: 1 GB here.
    let (s, stats) = samples("interp", 1_000_000, 100_000, 30, "2000");
    let most = *s.iter().max().unwrap();
    assert!(most <= 2 * s[1], "memory grew: {s:?}\n{stats}");
    // An area per definition (the compiled form; the closure without
    // captures is its constant, and the var holds it in place).
    assert!(freed(&stats) >= 900_000, "{stats}");
}

#[test]
fn compiled_versions_are_freed_with_their_code() {
    // Every version compiled (jit-eager); a debug build compiles slowly,
    // so fewer versions than above, collected every 100.
    let (_, stats) = samples("jit-eager", 1_000, 500, 3, "100");
    let compiled = figure(&stats, "jit:", "functions");
    assert!(compiled >= 1_000, "{stats}");
    assert!(freed(&stats) >= 700, "{stats}");
    // What is left is the versions since the last cycle or two (each
    // under 200 bytes), not a thousand.
    assert!(
        figure(&stats, "jit:", "bytes") < 300 * 200,
        "machine code not freed: {stats}"
    );
}
