//! Starting a node: the machine's [`Env`] (`Env::new`, in `lona-machine`,
//! with the machine's built-ins) gets the node's built-ins and the
//! prelude once, before the first code runs on it. The public ways to
//! run code on a node start it first, so they are here, above the node's
//! built-ins (`services/`) and the evaluator (loading the prelude runs
//! Lonala code): [`Evaluator::new`], [`eval_str`],
//! [`LonaProcess::spawned`], [`LonaProcess::call`].

use std::sync::Arc;

use lona_reader::Source;
use lona_term::{Heap, HeapConfig};

use crate::env::Env;
use crate::eval::{EvalError, Evaluator, Progress};
use crate::process::LonaProcess;
use crate::Fragment;

/// Installs the node's built-ins in `env` and loads the prelude and the
/// libraries loaded at start, once per node (the machine's
/// [`Env::boot_node`]); a no-op afterwards.
pub(crate) fn boot(env: &Arc<Env>) {
    env.boot_node(|| {
        crate::services::install(env);
        crate::eval::load_prelude(env);
    });
}

impl Evaluator {
    /// An evaluator with a fresh VM in namespace `user` (the node started
    /// first, if it has not: its built-ins installed, the prelude loaded).
    pub fn new(env: Arc<Env>) -> Evaluator {
        boot(&env);
        Evaluator::unbooted(env)
    }
}

impl LonaProcess {
    /// A process that calls `start`'s `[f & args]` (a fragment the spawner
    /// made) on a heap configured by `heap`.
    pub fn spawned(env: Arc<Env>, start: Fragment, heap: HeapConfig) -> LonaProcess {
        boot(&env);
        LonaProcess::spawned_on(env, start, Heap::with_config(heap))
    }

    /// A process that calls the function `qualified` (`"ns/name"`) with
    /// the elements of `args`, a vector or list in a message fragment
    /// (e.g. [`crate::bridge::to_message`] of a tuple): how a Rust program
    /// starts a Lonala process. An error if no such function is defined or
    /// `args` is not a sequence.
    pub fn call(
        env: Arc<Env>,
        qualified: &str,
        args: &Fragment,
    ) -> Result<LonaProcess, crate::LookupError> {
        boot(&env);
        LonaProcess::call_started(env, qualified, args)
    }
}

/// Evaluates `text` to completion on the current thread (tests, `lona
/// eval`): the printed value of the last form, or the error.
pub fn eval_str(env: &Arc<Env>, name: &str, text: &str) -> Result<String, EvalError> {
    let mut ev = Evaluator::new(env.clone());
    ev.push_source(&Source::new(name, text))?;
    loop {
        match ev.step(2000) {
            Progress::Yield => continue,
            Progress::Done => {
                let mut s = String::new();
                crate::print::readable(&mut s, ev.last_value());
                return Ok(s);
            }
            Progress::Failed(e) => return Err(e),
            Progress::Halt(n) => return Ok(format!("<halt {n}>")),
            // Outside a process `receive` raises, so neither can happen.
            Progress::Wait | Progress::HeapLimit(_) => {
                return Err(EvalError::Load("cannot wait outside a process".into()))
            }
        }
    }
}
