//! The README as a new user reads it, kept true: every code block marked
//! `sh transcript` is run (each `$ command` by `sh` with the `lona` just
//! built first on `PATH`, its output compared with the lines under it; a
//! line `...` stands for the rest), the block marked `repl transcript` is
//! typed into `lona repl` (the lines after `user=> ` and `... ` are the
//! input, the others the output; pids may differ, and so may the order
//! of `(i)`'s rows), and the supervised counter server of the OTP section
//! is `examples/counter.lona`, verbatim, and survives a bad call from
//! `erl` (skipped without `erl`).

mod dist_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use dist_common::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The fenced code blocks: their info string and their lines.
fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), Vec::new())),
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some((_, lines)), None) => lines.push(line.to_string()),
            (None, None) => {}
        }
    }
    out
}

/// `actual` as `expected` says: equal lines, up to a line `...` that
/// matches whatever is left.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.iter().position(|l| l == "...") {
        Some(i) => actual.len() >= i && expected[..i] == actual[..i],
        None => expected == actual,
    }
}

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_lona"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn path_with_lona() -> String {
    format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Each `sh transcript` block's commands, run in a directory holding the
/// repository's `examples/` and the README's files under `test/` (the
/// Clojure blocks whose first line is `;; test/NAME`).
#[test]
fn the_readmes_shell_transcripts_are_true() {
    let text = readme();
    let all = blocks(&text);
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join("examples"), dir.path().join("examples")).unwrap();
    for (info, lines) in &all {
        if info != "clojure" {
            continue;
        }
        if let Some(name) = lines.first().and_then(|l| l.strip_prefix(";; test/")) {
            std::fs::create_dir_all(dir.path().join("test")).unwrap();
            std::fs::write(
                dir.path().join("test").join(name.trim()),
                lines.join("\n") + "\n",
            )
            .unwrap();
        }
    }
    let mut ran = 0;
    for (info, lines) in all.iter().filter(|(i, _)| i == "sh transcript") {
        let mut i = 0;
        while i < lines.len() {
            let cmd = lines[i]
                .strip_prefix("$ ")
                .unwrap_or_else(|| panic!("{info}: expected a `$ command`, got {:?}", lines[i]));
            let end = lines[i + 1..]
                .iter()
                .position(|l| l.starts_with("$ "))
                .map_or(lines.len(), |p| i + 1 + p);
            let expected = &lines[i + 1..end];
            // Standard error into the same pipe, so the order is kept.
            let out = Command::new("sh")
                .args(["-c", &format!("exec 2>&1\n{cmd}")])
                .current_dir(dir.path())
                .env("PATH", path_with_lona())
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            let actual: Vec<String> = text.lines().map(str::to_string).collect();
            assert!(
                matches(expected, &actual),
                "`{cmd}` printed\n{}\nwhere the README says\n{}",
                actual.join("\n"),
                expected.join("\n")
            );
            ran += 1;
            i = end;
        }
    }
    assert!(
        ran >= 4,
        "only {ran} commands found in the README's transcripts"
    );
}

/// Pids as `<pid>`, and each run of lines that start with a pid (the
/// rows of `(i)`) sorted.
fn normalized(lines: &[String]) -> Vec<String> {
    let pid = regex_lite_pid;
    let mut out: Vec<String> = lines.iter().map(|l| pid(l)).collect();
    let mut i = 0;
    while i < out.len() {
        let j = (i..out.len())
            .find(|&j| !out[j].starts_with("<pid>"))
            .unwrap_or(out.len());
        out[i..j].sort();
        i = j.max(i + 1);
    }
    out
}

/// `line` with every `<0.N.M>` as `<pid>`.
fn regex_lite_pid(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("<0.") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let end = tail.find('>');
        match end {
            Some(e) if tail[..e].chars().all(|c| c.is_ascii_digit() || c == '.') => {
                out.push_str("<pid>");
                rest = &tail[e + 1..];
            }
            _ => {
                out.push('<');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn the_readmes_shell_session_is_true() {
    let all = blocks(&readme());
    let (_, lines) = all
        .iter()
        .find(|(i, _)| i == "repl transcript")
        .expect("a `repl transcript` block");
    assert_eq!(lines[0], "$ lona repl");
    let mut input = String::new();
    let mut expected = Vec::new();
    for l in &lines[1..] {
        if let Some(form) = l.strip_prefix("user=> ").or_else(|| l.strip_prefix("... ")) {
            input.push_str(form);
            input.push('\n');
        } else {
            expected.push(l.clone());
        }
    }
    // Standard error into the same pipe, so the order is kept.
    let mut child = Command::new("sh")
        .args(["-c", "exec \"$0\" repl 2>&1", env!("CARGO_BIN_EXE_lona")])
        .env("LONA_HISTORY", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let actual: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(
        normalized(&actual),
        normalized(&expected),
        "lona repl printed\n{text}"
    );
}

/// The OTP section's counter server, under its supervisor: a
/// `gen_server:call` from `erl` that no clause matches gets the crash's
/// reason, the node lives on, and the server, restarted, answers.
#[test]
fn the_readmes_counter_server_is_supervised_and_survives_a_bad_call() {
    let src = std::fs::read_to_string(root().join("examples/counter.lona")).unwrap();
    let shown = blocks(&readme())
        .into_iter()
        .any(|(i, l)| i == "clojure" && l.join("\n") + "\n" == src);
    assert!(shown, "the README shows examples/counter.lona verbatim");
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "creadme", &src);
    lona.expect("count: 5");
    let eval = r#"S = {counter, 'LONA'},
io:format("get ~p~n", [gen_server:call(S, get)]),
io:format("bad ~w~n", [catch gen_server:call(S, nonsense)]),
timer:sleep(100),
io:format("get ~p~n", [gen_server:call(S, get)]),
io:format("state ~p~n", [sys:get_state(S)]),
halt()."#
        .replace("LONA", &format!("{l}@{h}"));
    let erl = Node::erl(&e, "creadme", &eval);
    erl.expect("get 5");
    erl.expect(&format!(
        "bad {{'EXIT',{{{{error,{{case_clause,nonsense}}}},{{gen_server,call,[{{counter,{l}@{h}}},nonsense]}}}}}}"
    ));
    erl.expect("get 0");
    erl.expect("state 0");
    assert!(
        lona.stderr().contains("child_terminated"),
        "{}",
        lona.stderr()
    );
}
