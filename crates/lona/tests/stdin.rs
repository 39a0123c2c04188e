//! Standard input, line by line, from a Lonala program (`read-line` runs
//! on the blocking pool: the other processes go on meanwhile).

use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn read_line_reads_standard_input_to_its_end() {
    let dir = tempfile::Builder::new()
        .prefix("lona-stdin-")
        .tempdir()
        .unwrap();
    let prog = dir.path().join("lines.lona");
    std::fs::write(
        &prog,
        r#"
(defn -main [& args]
  ;; A ticker proves the node runs while main waits for input.
  (let [me (self)]
    (spawn (fn [] (send me :tick))))
  (loop [n 0]
    (let [l (read-line)]
      (if l
        (do (println (str n ":" l)) (recur (inc n)))
        (println "end" (receive :tick :ticked :timeout 1000 :no-tick))))))
"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(&prog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all("first\nsecond line\r\nünïcode\nno newline".as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0:first\n1:second line\n2:ünïcode\n3:no newline\nend :ticked\n"
    );
}

/// The address space a node runs in below (`prlimit --as`, as an
/// operator's `ulimit -v`): ample for the node (the runaways tests run
/// sixteen processes in it), less than one copy of the long line below
/// and the copies a read without a bound makes of it.
const ADDRESS_SPACE: u64 = 1 << 30;

/// `lona run` of `src` under `prlimit --as=ADDRESS_SPACE`, its standard
/// input fed by `feed` on a thread of its own (errors there, once the
/// node stopped reading, are ignored); `None` (with a message) when
/// util-linux's `prlimit` is not on this machine.
fn run_limited(
    src: &str,
    feed: impl FnOnce(&mut std::process::ChildStdin) -> std::io::Result<()> + Send + 'static,
) -> Option<std::process::Output> {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is not installed");
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("lona-stdin-")
        .tempdir()
        .unwrap();
    let prog = dir.path().join("main.lona");
    std::fs::write(&prog, src).unwrap();
    let mut child = Command::new("prlimit")
        .arg(format!("--as={ADDRESS_SPACE}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(&prog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = feed(&mut stdin);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Some(out)
}

/// What the node printed, checking it lived on: exit status 0, no
/// allocator abort.
fn printed(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("memory allocation of"),
        "the node aborted:\n{stdout}\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    stdout
}

/// Issue 36: a line of 768 MB without a newline on standard input made
/// `(read-line)` buffer it whole, and the node aborted. Now a line past
/// 1 MB raises `:line-too-long` (the reason `file/read-line` answers for
/// one), the next `(read-line)` skips the rest of it, and the node goes
/// on.
#[test]
fn an_over_long_line_on_standard_input_is_an_error_and_the_node_goes_on() {
    let Some(out) = run_limited(
        r#"
(defn -main [& args]
  (println "first" (try (read-line) (catch :error e [:caught e])))
  (println "second" (read-line))
  (println "third" (read-line)))
"#,
        |w| {
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..768 {
                w.write_all(&chunk)?;
            }
            w.write_all(b"\nnext line\n")
        },
    ) else {
        return;
    };
    assert_eq!(
        printed(&out),
        "first [:caught :line-too-long]\nsecond next line\nthird nil\n"
    );
}

/// Issue 36: `(file/read-lines "/dev/zero")` and `(slurp "/dev/zero")`
/// read without end, and the node aborted; so did `file/read-lines` of a
/// stream of short lines that never ends. Now each is an error with a
/// reason: a line past 1 MB is `:line-too-long`, a file past 64 MB or
/// 1,048,576 lines `:file-too-large`. A source file to `load` has the
/// same bound (a sparse file of 2 GiB: no disk, nothing written).
#[test]
fn whole_file_reads_of_endless_files_are_errors_and_the_node_goes_on() {
    let dir = tempfile::Builder::new()
        .prefix("lona-stdin-")
        .tempdir()
        .unwrap();
    let big = dir.path().join("big.lona");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let big = big.display().to_string();
    let Some(out) = run_limited(
        &format!(
            r#"
(defn attempt [f] (try (f) (catch :error e [:caught e])))
(defn -main [& args]
  (println "read-lines" (attempt #(file/read-lines "/dev/zero")))
  (println "slurp" (attempt #(slurp "/dev/zero")))
  (println "load" (attempt #(load "{big}")))
  ;; Standard input: "y" lines without end.
  (println "many lines" (attempt #(file/read-lines "/dev/stdin")))
  (println "alive"))
"#
        ),
        |w| {
            let chunk = b"y\n".repeat(1 << 15);
            loop {
                w.write_all(&chunk)?;
            }
        },
    ) else {
        return;
    };
    assert_eq!(
        printed(&out),
        format!(
            "read-lines [:caught :line-too-long]\n\
         slurp [:caught :file-too-large]\n\
         load [:caught [:load-error {big}: file too large (more than 64 MB)]]\n\
         many lines [:caught :file-too-large]\n\
         alive\n"
        )
    );
}
