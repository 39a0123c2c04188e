//! `lona repl`: a line editor (rustyline) in front of a shell process.
//!
//! 1. Lines are read with history (`~/.lona_history`, or `LONA_HISTORY`)
//!    and tab completion of namespace and var names. A form that is not
//!    complete yet (the reader says so) continues on the next line under a
//!    `...` prompt; a reader error is printed with its column, after the
//!    complete forms before it are evaluated (`(+ 1 2))` prints `3`, then
//!    the error); the input after a stray closing bracket is read on, as
//!    Clojure's REPL does, any other reader error drops the rest.
//! 2. Complete input goes to the shell process
//!    ([`lona_vm::shell::Shell`]) as a message; the REPL waits for it to be
//!    evaluated. Ctrl-C while it runs kills the shell process; a new one
//!    replaces any shell that ended (by Ctrl-C, a crash, an exit signal),
//!    keeping the session's definitions; an end while at the prompt is
//!    reported at the next input, which runs in the new shell.
//! 3. Ctrl-C at the prompt drops the current input; Ctrl-D (or the end of
//!    piped input) leaves with status 0.

use lona_vm::NodeEnv;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lona_runtime::{Handle, Pid, Reason};

use crate::NodeArgs;
use lona_vm::process::Ending;
use lona_vm::shell::{Console, Shell, ShellEvent, ShellInput};
use lona_vm::{read_all, Env, ReadError, Source};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

/// Set by the Ctrl-C handler while an evaluation runs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Completes namespace and var names (`ns/name` too).
struct Names {
    env: Arc<Env>,
    console: Arc<Console>,
}

/// Characters that end a symbol (where completion starts).
fn is_delim(c: char) -> bool {
    c.is_whitespace() || "()[]{}'`~@\",;^".contains(c)
}

impl Completer for Names {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = line[..pos]
            .char_indices()
            .rev()
            .find(|(_, c)| is_delim(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &line[start..pos];
        let mut out: Vec<String> = Vec::new();
        let namespaces = &self.env.namespaces;
        if let Some((ns, prefix)) = word.split_once('/') {
            if let Some(n) = namespaces.get(ns) {
                for v in n.vars() {
                    let q = v.qualified();
                    if let Some(name) = q.rsplit_once('/').map(|x| x.1) {
                        if name.starts_with(prefix) && !v.is_private() {
                            out.push(format!("{ns}/{name}"));
                        }
                    }
                }
            }
        } else {
            let current = self.console.ns();
            for ns in [current.as_str(), "lona.core"] {
                if let Some(n) = namespaces.get(ns) {
                    for v in n.vars() {
                        let q = v.qualified();
                        if let Some(name) = q.rsplit_once('/').map(|x| x.1) {
                            if name.starts_with(word) {
                                out.push(name.to_string());
                            }
                        }
                    }
                }
            }
            for ns in namespaces.names() {
                if ns.starts_with(word) {
                    out.push(format!("{ns}/"));
                }
            }
        }
        out.sort();
        out.dedup();
        Ok((
            start,
            out.into_iter()
                .map(|s| Pair {
                    display: s.clone(),
                    replacement: s,
                })
                .collect(),
        ))
    }
}

impl Hinter for Names {
    type Hint = String;
}
impl Highlighter for Names {}
impl Validator for Names {}
impl Helper for Names {}

/// Where the history is kept.
fn history_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LONA_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".lona_history"))
}

/// A shell process on `h`, reporting to `console`.
fn start_shell(h: &Handle, env: &Arc<Env>, console: &Arc<Console>) -> Result<Pid, String> {
    h.spawn_process(Shell::new(env.clone(), console.clone()))
        .map_err(|e| format!("cannot start the shell process: {e}"))
}

/// How many forms `text` holds, all complete (`Ok(None)`: wait for more).
fn complete(text: &str) -> Result<Option<usize>, ReadError> {
    match read_all(&Source::new("<repl>", text)) {
        Ok(forms) => Ok(Some(forms.len())),
        Err(e) if e.incomplete => Ok(None),
        Err(e) => Err(e),
    }
}

/// The byte offset of `pos` (line and column in characters) in `text`.
fn offset_of(text: &str, line: u32, col: u32) -> Option<usize> {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n')? + 1;
    }
    let rest = &text[start..];
    let skip = (col as usize).saturating_sub(1);
    Some(start + rest.char_indices().nth(skip).map_or(rest.len(), |(i, _)| i))
}

/// Where `e` leaves `text`: the complete forms before the error (if there
/// are any) and, when the error is a stray closing bracket, the input
/// after it.
fn split_at_error<'a>(text: &'a str, e: &ReadError) -> (Option<&'a str>, Option<&'a str>) {
    let Some(at) = offset_of(text, e.pos.line, e.pos.col) else {
        return (None, None);
    };
    let before = &text[..at];
    let forms = match read_all(&Source::new("<repl>", before)) {
        Ok(f) if !f.is_empty() => Some(before),
        _ => None,
    };
    let stray = text[at..]
        .chars()
        .next()
        .filter(|c| ")]}".contains(*c) && e.message.starts_with("unexpected"));
    let rest = stray
        .map(|c| &text[at + c.len_utf8()..])
        .filter(|r| !r.trim().is_empty());
    (forms, rest)
}

/// Says that the shell process `shell` ended, unless `(halt n)` ended it.
fn report_end(env: &Env, shell: Pid, reason: Option<String>) {
    if matches!(env.node().ending().try_get(), Some(Ending::Halt(_))) {
        return;
    }
    match reason {
        Some(r) => eprintln!("** shell process {shell} exited: {r}"),
        None => eprintln!("** shell process {shell} exited"),
    }
}

/// The reason a shell found ended gives in `close` (which runs just after
/// it is marked ended: wait a little for it).
fn end_reason(console: &Console) -> Option<String> {
    match console.wait(Duration::from_secs(1)) {
        Some(ShellEvent::Ended(r)) => Some(r),
        _ => None,
    }
}

/// A shell to replace one that ended, or (`Err`) the exit status to leave
/// with: `(halt n)` ended it, or no shell can be started.
fn next_shell(h: &Handle, env: &Arc<Env>, console: &Arc<Console>) -> Result<Pid, i32> {
    if let Some(Ending::Halt(n)) = env.node().ending().try_get() {
        return Err(n);
    }
    start_shell(h, env, console).map_err(|e| {
        eprintln!("lona: {e}");
        1
    })
}

/// Sends `text` to the shell and waits for it to be evaluated; Ctrl-C
/// kills the shell. Returns whether the shell still runs.
fn evaluate(h: &Handle, env: &Arc<Env>, console: &Console, shell: Pid, text: String) -> bool {
    INTERRUPTED.store(false, Ordering::SeqCst);
    // A late word of a shell before this one is not about this input.
    while console.wait(Duration::ZERO).is_some() {}
    h.send(shell, ShellInput(text));
    loop {
        if let Some(ev) = console.wait(Duration::from_millis(50)) {
            env.flush_out();
            return match ev {
                ShellEvent::Done => true,
                ShellEvent::Ended(reason) => {
                    report_end(env, shell, Some(reason));
                    false
                }
            };
        }
        if INTERRUPTED.swap(false, Ordering::SeqCst) {
            h.send_exit(shell, Reason::Kill);
        }
        if !h.is_alive(shell) {
            // Ended, its report not seen yet: take it as ended.
            let reason = end_reason(console);
            env.flush_out();
            report_end(env, shell, reason);
            return false;
        }
    }
}

/// Evaluates `text` in the shell, first replacing a shell that ended at the
/// prompt, and after the input a shell that ended while it ran; `Err(n)`:
/// leave with status `n`.
fn run_input(
    h: &Handle,
    env: &Arc<Env>,
    console: &Arc<Console>,
    shell: &mut Pid,
    text: String,
) -> Result<(), i32> {
    if !h.is_alive(*shell) {
        // It ended at the prompt (an exit signal from a linked process):
        // say so; the input runs in a new shell.
        report_end(env, *shell, end_reason(console));
        *shell = next_shell(h, env, console)?;
    }
    if !evaluate(h, env, console, *shell, text) {
        *shell = next_shell(h, env, console)?;
    }
    Ok(())
}

/// Evaluates what `buf` holds once it is complete (or up to a reader
/// error), leaving in `buf` what waits for more lines.
fn process(
    buf: &mut String,
    rl: &mut Editor<Names, DefaultHistory>,
    h: &Handle,
    env: &Arc<Env>,
    console: &Arc<Console>,
    shell: &mut Pid,
) -> Result<(), i32> {
    let mut first = true;
    loop {
        if buf.trim().is_empty() {
            buf.clear();
            return Ok(());
        }
        let r = complete(buf);
        if first && !matches!(r, Ok(None)) {
            let _ = rl.add_history_entry(buf.as_str());
        }
        first = false;
        match r {
            Ok(None) => return Ok(()),
            Err(e) => {
                let text = std::mem::take(buf);
                let (forms, rest) = split_at_error(&text, &e);
                if let Some(forms) = forms {
                    run_input(h, env, console, shell, forms.to_string())?;
                }
                eprintln!("{e}");
                match rest {
                    // Read on after a stray `)`.
                    Some(rest) => *buf = rest.to_string(),
                    None => return Ok(()),
                }
            }
            // Only comments or discarded forms: nothing to evaluate (the
            // shell would print its last value).
            Ok(Some(0)) => {
                buf.clear();
                return Ok(());
            }
            Ok(Some(_)) => {
                let text = std::mem::take(buf);
                return run_input(h, env, console, shell, text);
            }
        }
    }
}

/// `lona repl`
pub fn repl(node: NodeArgs) -> ExitCode {
    let env = Env::stdout();
    node.apply(&env);
    let rt = match node.runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lona: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = node.distribute(&env, &rt) {
        eprintln!("lona: {e}");
        return ExitCode::from(1);
    }
    let h = rt.handle();
    let console = Arc::new(Console::default());
    let mut shell = match start_shell(&h, &env, &console) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lona: {e}");
            return ExitCode::from(1);
        }
    };
    // Ctrl-C while evaluating (at the prompt the line editor reads it).
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let mut rl: Editor<Names, DefaultHistory> = match Editor::new() {
        Ok(rl) => rl,
        Err(e) => {
            eprintln!("lona: cannot read input: {e}");
            return ExitCode::from(1);
        }
    };
    rl.set_helper(Some(Names {
        env: env.clone(),
        console: console.clone(),
    }));
    let history = history_file();
    if let Some(p) = &history {
        let _ = rl.load_history(p);
    }
    let mut buf = String::new();
    let status = loop {
        if let Some(Ending::Halt(n)) = env.node().ending().try_get() {
            break n;
        }
        let prompt = if buf.is_empty() {
            format!("{}=> ", console.ns())
        } else {
            "... ".to_string()
        };
        match rl.readline(&prompt) {
            Ok(line) => {
                if !buf.is_empty() {
                    buf.push('\n');
                }
                buf.push_str(&line);
                match process(&mut buf, &mut rl, &h, &env, &console, &mut shell) {
                    Ok(()) => {}
                    Err(n) => break n,
                }
            }
            Err(ReadlineError::Interrupted) => {
                buf.clear();
                eprintln!("^C");
            }
            Err(ReadlineError::Eof) => {
                if !buf.trim().is_empty() {
                    // Piped input that ends inside a form: say so.
                    if let Err(e) = read_all(&Source::new("<repl>", buf.as_str())) {
                        eprintln!("{e}");
                    }
                }
                break 0;
            }
            Err(e) => {
                eprintln!("lona: {e}");
                break 1;
            }
        }
    };
    if let Some(p) = &history {
        let _ = rl.save_history(p);
    }
    env.flush_out();
    if let Some(Ending::Halt(n)) = env.node().ending().try_get() {
        std::process::exit(n);
    }
    rt.shutdown();
    ExitCode::from(status.clamp(0, 255) as u8)
}
