//! `lona run` and `lona eval`: a Lonala program in a main process.

use lona_vm::NodeEnv;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use lona_vm::process::Ending;
use lona_vm::{Env, EvalError, Evaluator, Source};

use crate::NodeArgs;

/// Directories in `LONA_PATH` (separated like `PATH`).
pub(crate) fn load_path() -> Vec<std::path::PathBuf> {
    std::env::var_os("LONA_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

fn report(e: &EvalError) {
    match e {
        EvalError::Uncaught {
            exit_reason, trace, ..
        } => {
            eprintln!("** main process exited: {exit_reason}");
            eprint!("{trace}");
        }
        other => eprintln!("{other}"),
    }
}

/// Runs the evaluator in a main process of a fresh node.
fn run_main(env: &Arc<Env>, ev: Evaluator, node: NodeArgs) -> Result<Ending, String> {
    node.apply(env);
    let rt = node.runtime()?;
    node.distribute(env, &rt)?;
    lona_vm::node::run_main_on(rt, env, ev).map_err(|e| e.to_string())
}

/// Reports how the program ended and gives `lona run`'s exit status
/// (`(halt n)` exits at once with `n`).
pub(crate) fn finish(env: &Arc<Env>, r: Result<Ending, String>) -> ExitCode {
    env.flush_out();
    match r {
        Ok(Ending::Failed(e)) => {
            report(&e);
            ExitCode::from(1)
        }
        Ok(Ending::Halt(n)) => std::process::exit(n),
        Ok(Ending::Normal) => ExitCode::SUCCESS,
        Ok(Ending::Killed(reason)) => {
            eprintln!("** main process exited: {reason}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("lona: {e}");
            ExitCode::from(1)
        }
    }
}

/// A node writing to standard output, with `LONA_PATH`, and an evaluator.
fn new_node() -> (Arc<Env>, Evaluator) {
    let env = Env::stdout();
    env.node().add_load_path(load_path());
    let ev = Evaluator::new(env.clone());
    (env, ev)
}

/// `lona run FILE ARGS...`
pub fn run(file: &Path, args: Vec<String>, node: NodeArgs) -> ExitCode {
    let (env, mut ev) = new_node();
    if let Err(e) = ev.push_file(file) {
        report(&e);
        return ExitCode::from(1);
    }
    ev.call_main_after(args);
    let stats = node.jit_stats;
    let r = run_main(&env, ev, node);
    if stats {
        eprintln!("{}", lona_vm::jit::stats());
        eprintln!("{}", lona_vm::purge::stats());
    }
    finish(&env, r)
}

/// `lona eval EXPR`: the same node as `lona run` (every core unless
/// `--workers` says otherwise).
pub fn eval(expr: &str, node: NodeArgs) -> ExitCode {
    let (env, mut ev) = new_node();
    ev.print_last_value(true);
    if let Err(e) = ev.push_source(&Source::new("<eval>", expr)) {
        report(&e);
        return ExitCode::from(1);
    }
    let r = run_main(&env, ev, node);
    finish(&env, r)
}
