//! `lona repl` driven as a person drives it: through a pseudo-terminal,
//! typing lines, Enter (`\r`), Ctrl-C, Ctrl-D, Up arrow and Tab, and
//! reading what the terminal shows.
//!
//! Every step waits for what the REPL shows next (a value on a line of its
//! own, a report, the prompt) before typing on: no sleeps. Each expect has
//! a generous timeout (slow CI machines); no test asserts how long anything
//! takes.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use rexpect::process::WaitStatus;
use rexpect::session::{spawn_with_options, Options, PtySession};

/// The time one expect waits before the test fails.
const TIMEOUT_MS: u64 = 20_000;

/// The prompt in the `user` namespace.
const PROMPT: &str = "user=> ";
/// The prompt while a form continues.
const MORE: &str = "... ";

/// A fresh directory for one test's files (its history), removed when
/// dropped at the end of the test.
struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

fn scratch(test: &str) -> Scratch {
    Scratch(
        tempfile::Builder::new()
            .prefix(&format!("lona-repl-{test}-"))
            .tempdir()
            .unwrap(),
    )
}

/// `s` with the regex metacharacters escaped.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A regex for `text` printed on a line of its own.
fn own_line(text: &str) -> String {
    format!(r"\n{}\r?\n", escape(text))
}

/// A `lona repl` in a pseudo-terminal.
struct Repl {
    s: PtySession,
}

impl Repl {
    /// Starts `lona repl --workers 2` with its history in `history`, and
    /// waits for the first prompt.
    fn start(history: &Path) -> Repl {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lona"));
        c.args(["repl", "--workers", "2"])
            .env("LONA_HISTORY", history)
            // A terminal rustyline edits on (not `dumb`: that turns off
            // history keys and completion); its escapes are stripped.
            .env("TERM", "xterm")
            .env_remove("NO_COLOR");
        let s = spawn_with_options(
            c,
            Options::new()
                .timeout_ms(Some(TIMEOUT_MS))
                .strip_ansi_escape_codes(true),
        )
        .expect("cannot start lona repl in a pty");
        let mut r = Repl { s };
        r.expect(PROMPT);
        r
    }

    /// Types `keys` (no Enter).
    fn keys(&mut self, keys: &str) {
        self.s.send(keys).unwrap();
        self.s.flush().unwrap();
    }

    /// Types `line` and Enter.
    fn line(&mut self, line: &str) {
        self.keys(line);
        self.keys("\r");
    }

    /// Waits for `text`; returns what came before it.
    fn expect(&mut self, text: &str) -> String {
        match self.s.exp_string(text) {
            Ok(before) => before,
            Err(e) => panic!("waiting for {text:?}: {e}"),
        }
    }

    /// Waits for a match of `re`; returns (what came before, the match).
    fn expect_re(&mut self, re: &str) -> (String, String) {
        match self.s.exp_regex(re) {
            Ok(m) => m,
            Err(e) => panic!("waiting for /{re}/: {e}"),
        }
    }

    /// Types `line`, waits for `value` on a line of its own, then for the
    /// prompt. Returns all that was shown before the value.
    fn eval(&mut self, line: &str, value: &str) -> String {
        self.line(line);
        let (before, _) = self.expect_re(&own_line(value));
        self.expect(PROMPT);
        before
    }

    /// Ctrl-D at the prompt; waits for the REPL to end and returns its
    /// exit status.
    fn quit(mut self) -> WaitStatus {
        self.s.send_control('d').unwrap();
        if let Err(e) = self.s.exp_eof() {
            panic!("waiting for the end after Ctrl-D: {e}");
        }
        self.s.process().wait().unwrap()
    }
}

/// 1. A form typed over two lines: the continuation prompt, then the
///    definition is made and works.
#[test]
fn multi_line_defn_continues_under_the_continuation_prompt() {
    let dir = scratch("multiline");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(defn sq [x]");
    r.expect(MORE);
    r.eval("(* x x))", "user/sq");
    r.eval("(sq 7)", "49");
    assert!(matches!(r.quit(), WaitStatus::Exited(_, 0)));
}

/// 2. An error prints its reason and a Lonala trace; the REPL goes on with
///    its definitions.
#[test]
fn an_error_prints_reason_and_trace_and_the_repl_goes_on() {
    let dir = scratch("error");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(defn sq [x] (* x x))", "user/sq");
    r.line("(/ 1 0)");
    r.expect("badarith");
    // The trace: at least one `  at <fn> (<where>)` line.
    r.expect_re(r"\n  at [^\r\n]+\(");
    r.expect(PROMPT);
    r.eval("(sq 3)", "9");
}

/// 3. `(exit :boom)` ends the shell process: a report names it and the
///    reason, a new shell (another pid) takes its place, definitions kept.
#[test]
fn a_crashed_shell_is_reported_and_replaced_keeping_definitions() {
    let dir = scratch("crash");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(defn sq [x] (* x x))", "user/sq");
    r.line("(self)");
    let (_, before) = r.expect_re(r"#pid<[0-9.]+>");
    r.expect(PROMPT);
    r.line("(exit :boom)");
    // The report names the old shell process (`<0.0.0>` for `#pid<0.0.0>`)
    // and the reason.
    let old = before.trim_start_matches("#pid");
    r.expect(&format!("shell process {old} exited: :boom"));
    r.expect(PROMPT);
    r.eval("(sq 4)", "16");
    r.line("(self)");
    let (_, after) = r.expect_re(r"#pid<[0-9.]+>");
    r.expect(PROMPT);
    assert_ne!(before, after, "the new shell is another process");
}

/// 4. A message to the shell waits in its mailbox; `(flush)` prints and
///    drops it, so a second `(flush)` shows nothing of it.
#[test]
fn flush_prints_the_shells_messages_once() {
    let dir = scratch("flush");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(send (self) [:hello 1])", "[:hello 1]");
    let shown = r.eval("(flush)", ":ok");
    assert!(
        shown.contains("Shell got [:hello 1]"),
        "first flush shows the message: {shown:?}"
    );
    let shown = r.eval("(flush)", ":ok");
    assert!(
        !shown.contains("Shell got"),
        "second flush shows no message: {shown:?}"
    );
}

/// 5. History: a form typed in one session is kept in `LONA_HISTORY` and
///    comes back with Up arrow in the next.
#[test]
fn history_is_kept_across_sessions() {
    let dir = scratch("history");
    let history = dir.join("history");
    let form = "(+ 40000 2345)";
    let mut r = Repl::start(&history);
    r.eval(form, "42345");
    match r.quit() {
        WaitStatus::Exited(_, 0) => {}
        other => panic!("Ctrl-D should exit with status 0, got {other:?}"),
    }
    let saved = std::fs::read_to_string(&history).unwrap();
    assert!(
        saved.lines().any(|l| l == form),
        "history file holds the form: {saved:?}"
    );

    let mut r = Repl::start(&history);
    r.keys("\x1b[A");
    r.expect(form);
    r.keys("\r");
    r.expect_re(&own_line("42345"));
    r.expect(PROMPT);
    assert!(matches!(r.quit(), WaitStatus::Exited(_, 0)));
}

/// 6. Ctrl-C during an evaluation kills the shell process (an endless
///    loop ends); a new shell takes over.
#[test]
fn ctrl_c_interrupts_an_endless_loop() {
    let dir = scratch("interrupt");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(defn spin [n] (spin (inc n)))", "user/spin");
    // The marker says the evaluation runs (the terminal is out of the
    // line editor's raw mode): Ctrl-C is then a signal, not a key.
    r.line("(do (println \"spin-started\") (spin 0))");
    r.expect_re(&own_line("spin-started"));
    r.s.send_control('c').unwrap();
    let (before, _) = r.expect_re(r"shell process <[0-9.]+> exited: killed\r?\n");
    // Killed by Ctrl-C, not ended by itself (a heap limit says so first).
    assert!(
        !before.contains("exception") && !before.contains("shell process killed"),
        "the loop ended by itself: {before:?}"
    );
    r.expect(PROMPT);
    r.eval("(+ 1 2)", "3");
}

/// 7. Ctrl-C at the prompt drops a half-typed form.
#[test]
fn ctrl_c_at_the_prompt_drops_the_unfinished_form() {
    let dir = scratch("dropform");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(+ 1");
    r.expect(MORE);
    r.s.send_control('c').unwrap();
    r.expect(PROMPT);
    // Had `(+ 1` been kept, this would continue it (another `... `).
    r.eval("(+ 2 2)", "4");
}

/// 8. Garbage gives a reader error with its column; the REPL goes on.
#[test]
fn garbage_gives_a_reader_error_with_its_column() {
    let dir = scratch("garbage");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(+ 1 2]");
    r.expect("<repl>:1:7:");
    r.expect(PROMPT);
    r.line(")");
    r.expect("<repl>:1:1:");
    r.expect(PROMPT);
    r.eval("(+ 5 5)", "10");
}

/// 8b. A stray `)` after complete forms: the forms are evaluated and their
///     value printed, then the error; what follows the stray `)` is read
///     on (as in Clojure's REPL).
#[test]
fn a_stray_paren_after_a_form_keeps_the_value_and_reports_the_paren() {
    let dir = scratch("stray");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(+ 1 2))");
    r.expect_re(&own_line("3"));
    r.expect("<repl>:1:8: unexpected ')'");
    r.expect(PROMPT);
    r.line("(def a 4) (* a 10)) (+ a 1)");
    r.expect_re(&own_line("40"));
    r.expect("unexpected ')'");
    r.expect_re(&own_line("5"));
    r.expect(PROMPT);
    // Read on into a form that continues on the next line.
    r.line("(+ 1 1)) (+ 1");
    r.expect_re(&own_line("2"));
    r.expect(MORE);
    r.eval("2)", "3");
}

/// 9. Tab completes a var's name.
#[test]
fn tab_completes_a_var_name() {
    let dir = scratch("complete");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(def zebra-unique 5)", "user/zebra-unique");
    r.keys("zebra-un");
    r.expect("zebra-un");
    r.keys("\t");
    r.expect("zebra-unique");
    r.keys("\r");
    r.expect_re(&own_line("5"));
    r.expect(PROMPT);
}

/// The prompt names the namespace the shell is in; `(ns foo)` is worth
/// `nil` (not the value of the input before it), and a new shell after a
/// crash stays in that namespace.
#[test]
fn the_prompt_follows_ns_and_a_new_shell_stays_there() {
    let dir = scratch("ns");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(+ 20 3)", "23");
    r.line("(ns foo)");
    r.expect_re(&own_line("nil"));
    r.expect("foo=> ");
    r.line("(def x 11)");
    r.expect_re(&own_line("foo/x"));
    r.expect("foo=> ");
    r.line("(exit :boom)");
    r.expect("exited: :boom");
    r.expect("foo=> ");
    r.line("x");
    r.expect_re(&own_line("11"));
    r.expect("foo=> ");
}

/// Input with no form (a comment, a discarded form) prints no value: not
/// the value of the input before it.
#[test]
fn a_comment_alone_prints_no_value() {
    let dir = scratch("comment");
    let mut r = Repl::start(&dir.join("history"));
    r.eval("(+ 20 3)", "23");
    for line in ["; just a note", "#_(+ 1 1)"] {
        r.line(line);
        let shown = r.expect(PROMPT);
        assert!(!shown.contains("23"), "{line:?} shows {shown:?}");
    }
    r.eval("(+ 1 1)", "2");
}

/// A shell process that ends while the REPL waits at the prompt (a linked
/// process exits) is reported at the next input, which then runs in a new
/// shell: it is not lost, and the shell after it answers in step.
#[test]
fn a_shell_ended_at_the_prompt_is_reported_and_the_next_input_runs() {
    let dir = scratch("idle-crash");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(self)");
    let (_, me) = r.expect_re(r"#pid<[0-9.]+>");
    r.expect(PROMPT);
    // A watcher prints when the shell is down, so the test knows the shell
    // ended before it types on.
    r.line("(defn watch [sh]");
    r.expect(MORE);
    r.line("  (let [m (monitor sh)]");
    r.expect(MORE);
    r.eval(
        "    (receive [:DOWN r _ why] :when (= r m) (println \"shell-down\" why))))",
        "user/watch",
    );
    r.eval(
        "(defn doomed [] (receive _ :x :timeout 300 (exit :bad)))",
        "user/doomed",
    );
    r.eval(
        "(let [sh (self)] (spawn (fn [] (watch sh))) (spawn-link doomed) :armed)",
        ":armed",
    );
    r.expect("shell-down :bad");
    r.line("(+ 1 2)");
    let old = me.trim_start_matches("#pid");
    r.expect(&format!("shell process {old} exited: :bad"));
    r.expect_re(&own_line("3"));
    r.expect(PROMPT);
    let shown = r.eval("(+ 3 4)", "7");
    assert!(!shown.contains("exited"), "no second report: {shown:?}");
    r.eval("(+ 5 6)", "11");
}

/// `(halt n)` leaves the REPL with status n, quietly: the shell process
/// ending is not reported as a crash.
#[test]
fn halt_leaves_with_its_status() {
    let dir = scratch("halt");
    let mut r = Repl::start(&dir.join("history"));
    r.line("(halt 3)");
    let shown = match r.s.exp_eof() {
        Ok(s) => s,
        Err(e) => panic!("waiting for the end after (halt 3): {e}"),
    };
    assert!(!shown.contains("exited"), "shown: {shown:?}");
    match r.s.process().wait().unwrap() {
        WaitStatus::Exited(_, 3) => {}
        other => panic!("(halt 3) should exit with status 3, got {other:?}"),
    }
}

/// Runs `lona repl` with `input` piped to it; returns (status, stdout,
/// stderr).
fn piped(test: &str, input: &str) -> (Option<i32>, String, String) {
    let dir = scratch(test);
    let mut child = Command::new(env!("CARGO_BIN_EXE_lona"))
        .args(["repl", "--workers", "2"])
        .env("LONA_HISTORY", dir.join("history"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// 10. Piped input is evaluated form by form and the REPL exits 0.
#[test]
fn piped_input_is_evaluated_and_exits_zero() {
    let (status, out, err) = piped("piped", "(defn f [x] (* 2 x))\n(f 21)\n");
    assert_eq!(status, Some(0), "stderr: {err}");
    assert!(out.lines().any(|l| l == "42"), "stdout: {out:?}");
}

/// 10b. Piped input that ends inside a form: the reader says where the
///      form was opened, and the exit status is still 0.
#[test]
fn piped_input_ending_inside_a_form_says_so_and_exits_zero() {
    let (status, out, err) = piped("piped-open", "(+ 1 2)\n(+ 1\n");
    assert_eq!(status, Some(0), "stderr: {err}");
    assert!(out.lines().any(|l| l == "3"), "stdout: {out:?}");
    assert!(
        err.contains("<repl>:1:5: expected ')' to close '(' opened at 1:1"),
        "stderr: {err:?}"
    );
}

/// 10c. Piped: the value before a stray `)` is printed, then the error.
#[test]
fn piped_input_with_a_stray_paren_prints_the_values_around_it() {
    let (status, out, err) = piped("piped-stray", "(+ 1 2))\n(+ 3 4)) (* 2 5)\n");
    assert_eq!(status, Some(0), "stderr: {err}");
    let values: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(values.ends_with(&["3", "7", "10"]), "stdout: {out:?}");
    assert_eq!(err.matches("unexpected ')'").count(), 2, "stderr: {err:?}");
}
