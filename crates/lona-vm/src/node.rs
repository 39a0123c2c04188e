//! A node: a runtime with a Lonala program's main process in it.

use crate::NodeEnv;
use std::sync::Arc;

use lona_runtime::Runtime;

use crate::env::Env;
use crate::eval::Evaluator;
use crate::process::{Ending, LonaProcess};

/// Runs `ev` as the main process of a fresh node with `workers` worker
/// threads (default: one per core) and returns how the program ended.
/// A worker idle for a second empties the node's cache of freed heap
/// blocks (`lona_term::trim_block_cache`): an idle node keeps no heap
/// memory that no process uses.
/// The node stops with the main process: processes still running are shut
/// down (after `(halt n)`, at once).
pub fn run_main(
    env: &Arc<Env>,
    ev: Evaluator,
    workers: Option<usize>,
) -> Result<Ending, crate::NodeError> {
    let mut b = Runtime::builder().on_idle(
        std::time::Duration::from_secs(1),
        lona_term::trim_block_cache,
    );
    if let Some(w) = workers {
        b = b.workers(w);
    }
    let rt = b.build().map_err(crate::NodeError::Start)?;
    run_main_on(rt, env, ev)
}

/// Runs `ev` as the main process on a runtime the caller built (its
/// process limit, workers; Rust processes it already runs) and returns how
/// the program ended; the runtime is shut down afterwards.
pub fn run_main_on(rt: Runtime, env: &Arc<Env>, ev: Evaluator) -> Result<Ending, crate::NodeError> {
    rt.handle()
        .spawn_process(LonaProcess::main(ev, env.node().ending().clone()))
        .map_err(crate::NodeError::Spawn)?;
    let ending = env.node().ending().wait();
    env.flush_out();
    if let Ending::Halt(_) = ending {
        // `(halt n)` stops the node at once: the caller exits.
        std::mem::forget(rt);
        return Ok(ending);
    }
    if let Some(d) = crate::dist::of(env) {
        d.flush(std::time::Duration::from_secs(2));
    }
    rt.shutdown();
    env.flush_out();
    Ok(ending)
}
