//! Starting a node: the machine's [`Env`] (`Env::new`, in `lona-machine`,
//! with the machine's built-ins) gets the node's built-ins and the
//! prelude once, before the first code runs on it. Above the evaluator
//! (loading the prelude runs Lonala code).

use std::sync::Arc;

use crate::env::Env;

/// Installs the node's built-ins in `env` and loads the prelude and the
/// libraries loaded at start, once per node (the machine's
/// [`Env::boot_node`]); a no-op afterwards.
pub(crate) fn boot(env: &Arc<Env>) {
    env.boot_node(|| {
        crate::services::install(env);
        crate::eval::load_prelude(env);
    });
}
