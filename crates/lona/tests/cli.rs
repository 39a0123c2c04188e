//! `lona run` and `lona eval` as a user runs them: output, exit status,
//! errors on standard error.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;

fn lona() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lona"))
}

/// A program file in a directory of its own, removed when this is dropped
/// (at the end of the test that wrote it).
struct Prog {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Deref for Prog {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for Prog {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

/// A temporary directory for one test (removed when dropped).
fn scratch(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(prefix).tempdir().unwrap()
}

fn write(name: &str, text: &str) -> Prog {
    let dir = scratch("lona-cli-");
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Prog { _dir: dir, path }
}

#[test]
fn run_calls_main_with_the_arguments_and_exits_zero() {
    let f = write(
        "ok.lona",
        "(defn -main [& args] (println \"got\" (count args) (first args)))",
    );
    let out = lona()
        .arg("run")
        .arg(&f)
        .args(["a", "-b"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "got 2 a\n");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_uncaught_error_exits_one_with_the_reason_and_trace_on_stderr() {
    let f = write(
        "bad.lona",
        "(defn f [x]\n  (+ x 1))\n(defn -main [& args] (f :a) :never)",
    );
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[:error :badarith]"), "{err}");
    assert!(
        err.contains("user/f (") && err.contains("bad.lona:2)"),
        "{err}"
    );
}

#[test]
fn halt_exits_with_its_status_at_once() {
    let f = write("halt.lona", "(println :before) (halt 7) (println :after)");
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), ":before\n");
}

#[test]
fn a_reader_error_names_the_place_and_runs_nothing() {
    let f = write(
        "unbalanced.lona",
        "(println :first)\n(defn g [x]\n  (+ x 1)",
    );
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unbalanced.lona:3:10: expected ')' to close '(' opened at 2:1"),
        "{err}"
    );
}

#[test]
fn a_missing_file_is_an_error() {
    let out = lona()
        .args(["run", "/nonexistent/x.lona"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.lona"));
}

#[test]
fn eval_prints_the_last_value() {
    let out = lona()
        .args(["eval", "(def x 20) (+ x 22)"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");
    assert_eq!(out.status.code(), Some(0));
    let out = lona().args(["eval", "(foo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("<eval>:1:5: expected ')' to close '(' opened at 1:1"));
}

#[test]
fn lona_path_finds_required_namespaces() {
    let tmp = scratch("lona-cli-path-");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("lib/app")).unwrap();
    std::fs::write(
        dir.join("lib/app/greet.lona"),
        "(ns app.greet) (defn hi [n] (str \"hi \" n))",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.lona"),
        "(ns main (:require [app.greet :as g])) (defn -main [] (println (g/hi 1)))",
    )
    .unwrap();
    // not beside the file: only through LONA_PATH
    let out = lona()
        .arg("run")
        .arg(dir.join("main.lona"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = lona()
        .env("LONA_PATH", dir.join("lib"))
        .arg("run")
        .arg(dir.join("main.lona"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hi 1\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_crash_of_an_unwatched_process_is_reported_with_pid_reason_and_trace() {
    let f = write(
        "crash.lona",
        "(defn inner [x]\n  (+ x :a))\n(defn outer [x] (inc (inner x)))\n\
         (spawn (fn [] (outer 1)))\n(sleep 100)\n(println :main-lives)",
    );
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the main process is unharmed");
    assert_eq!(String::from_utf8_lossy(&out.stdout), ":main-lives\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("process <0.") && err.contains("crashed with reason [:error :badarith]"),
        "{err}"
    );
    assert!(
        err.contains("at user/inner (") && err.contains("crash.lona:2)"),
        "{err}"
    );
    assert!(err.contains("at user/outer ("), "{err}");
}

#[test]
fn the_main_process_killed_by_a_signal_exits_one() {
    let f = write(
        "killed.lona",
        "(def me (self))\n(spawn (fn [] (exit me :kill)))\n(receive :never nil)",
    );
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("main process exited: killed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn halt_in_any_process_stops_the_node_with_its_status() {
    let f = write(
        "halt2.lona",
        "(spawn (fn [] (println :child) (halt 3)))\n(receive :never nil)",
    );
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), ":child\n");
}

#[test]
fn supervisors_report_crashes_and_giving_up_on_stderr_unless_silenced() {
    let program = |silence: bool| {
        format!(
            r#"(ns app.sup (:require [lona.supervisor :as sup]))
(defn crasher [] [:ok (spawn-link (fn [] (receive :crash (exit :boom))))])
(defn -main []
  {}
  (process-flag :trap-exit true)
  (let [[_ s] (sup/start-link {{:intensity 1 :period 5}} [{{:id :w :start ['app.sup/crasher]}}])]
    (send (second (first (sup/which-children s))) :crash)
    (sleep 50)
    (send (second (first (sup/which-children s))) :crash)
    (receive [:EXIT p r] :when (= p s) (println "supervisor exit" r))))"#,
            if silence { "(reports! false)" } else { "" }
        )
    };
    let f = write("sup_reports.lona", &program(false));
    let out = lona().arg("run").arg(&f).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "supervisor exit :shutdown\n"
    );
    assert_eq!(
        err.matches("=SUPERVISOR REPORT=").count(),
        3,
        "two crashes and the intensity reached:\n{err}"
    );
    assert!(
        err.contains("child_terminated child: :w reason: :boom"),
        "{err}"
    );
    assert!(
        err.contains("reached_max_restart_intensity child: :w"),
        "{err}"
    );
    let f = write("sup_quiet.lona", &program(true));
    let out = lona().arg("run").arg(&f).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "supervisor exit :shutdown\n"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("REPORT"),
        "silenced"
    );
}

#[test]
fn exit_normal_in_the_main_process_is_a_normal_end_with_status_zero() {
    // At top level and from -main: Erlang's normal end, status 0, nothing
    // on standard error, nothing after it runs.
    for (name, text) in [
        (
            "exit_normal_top.lona",
            "(println :before)\n(exit :normal)\n(println :after)",
        ),
        (
            "exit_normal_main.lona",
            "(defn -main [& args] (println :before) (exit :normal) (println :after))",
        ),
    ] {
        let f = write(name, text);
        let out = lona().arg("run").arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), ":before\n", "{name}");
        assert_eq!(err, "", "{name}");
    }
    // Any other exit reason (`:shutdown` included) is not a normal end:
    // status 1, the reason on standard error (docs/lonala.md).
    for reason in [":shutdown", ":boom"] {
        let f = write("exit_other.lona", &format!("(exit {reason})"));
        let out = lona().arg("run").arg(&f).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{reason}: {err}");
        assert!(
            err.contains(&format!("main process exited: {reason}")),
            "{reason}: {err}"
        );
    }
}

#[test]
fn invalid_utf8_is_reported_at_its_line_and_column() {
    let tmp = scratch("lona-cli-utf8-");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("app")).unwrap();
    // Line 3, after 10 characters (two of them two bytes long): an
    // invalid sequence (0xC3 followed by '(').
    let mut bad = b"(println :first)\n\n(println \"\xce\xbb\xc3\xa9".to_vec();
    bad.extend_from_slice(b"\xc3(\")\n");
    std::fs::write(dir.join("bad.lona"), &bad).unwrap();
    let out = lona()
        .arg("run")
        .arg(dir.join("bad.lona"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.lona:3:13: invalid UTF-8 (byte 0xC3)"),
        "{err}"
    );
    // The same for a required namespace, at its first line.
    std::fs::write(dir.join("app/util.lona"), b"\xff(ns app.util)").unwrap();
    std::fs::write(dir.join("main.lona"), "(ns main (:require [app.util]))").unwrap();
    let out = lona()
        .arg("run")
        .arg(dir.join("main.lona"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("util.lona:1:1: invalid UTF-8 (byte 0xFF)"),
        "{err}"
    );
}

#[test]
fn eval_and_run_use_the_same_node() {
    // Both use every core by default, and both take --workers.
    let workers = "(count (:workers (runtime-info)))";
    let f = write("workers.lona", &format!("(println {workers})"));
    let run = |extra: &[&str]| {
        let out = lona().arg("run").args(extra).arg(&f).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let eval = |extra: &[&str]| {
        let out = lona()
            .arg("eval")
            .args(extra)
            .arg(workers)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(run(&[]), cores.to_string());
    assert_eq!(eval(&[]), cores.to_string());
    assert_eq!(run(&["--workers", "3"]), "3");
    assert_eq!(eval(&["--workers", "3"]), "3");
}

#[test]
fn lona_test_reports_failures_and_the_summary_and_exits_one() {
    let tmp = scratch("lona-cli-test-");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/a_test.lona"),
        "(ns a-test (:require [lona.test :refer [deftest is]]))\n\
         (deftest good (is (= 2 (+ 1 1))))\n\
         (deftest bad (is (= 5 (+ 1 1))))\n\
         (deftest boom (error :boom))\n",
    )
    .unwrap();
    std::fs::write(dir.join("helper.lona"), "(error :never-loaded)").unwrap();
    let out = lona().arg("test").arg(dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FAIL in (bad)"), "{stdout}");
    assert!(stdout.contains("expected: 5\n  actual:   2"), "{stdout}");
    assert!(stdout.contains("ERROR in (boom)"), "{stdout}");
    assert!(stdout.ends_with("1 passed, 2 failed\n"), "{stdout}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn lona_test_exits_zero_when_everything_passes_and_one_when_a_file_does_not_load() {
    let ok = write(
        "ok_test.lona",
        "(ns ok-test (:require [lona.test :refer [deftest is]]))\n(deftest t (is true))",
    );
    let out = lona().arg("test").arg(&ok).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("1 passed, 0 failed\n"));
    assert_eq!(out.status.code(), Some(0));
    let bad = write("bad_test.lona", "(ns bad-test)\n(+ 1 :a)");
    let out = lona().arg("test").arg(&bad).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ERROR in"), "{stdout}");
    assert!(stdout.ends_with("0 passed, 1 failed\n"), "{stdout}");
    assert_eq!(out.status.code(), Some(1));
    let out = lona().arg("test").arg("/no/such/dir").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn lona_test_defaults_to_the_test_directory_and_takes_a_timeout() {
    let tmp = scratch("lona-cli-default-");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("test")).unwrap();
    std::fs::write(
        dir.join("test/slow_test.lona"),
        "(ns slow-test (:require [lona.test :refer [deftest is]]))\n\
         (deftest hangs (receive :never :ok))\n\
         (deftest quick (is true))\n",
    )
    .unwrap();
    // Outside test/: not run by default.
    std::fs::write(dir.join("other_test.lona"), "(error :not-run)").unwrap();
    let out = lona()
        .args(["test", "--timeout", "200"])
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("timed out after 200 ms"), "{stdout}");
    assert!(!stdout.contains("other_test"), "{stdout}");
    assert!(stdout.ends_with("1 passed, 1 failed\n"), "{stdout}");
    assert_eq!(out.status.code(), Some(1));
}
