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
