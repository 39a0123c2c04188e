//! Starting a node: an [`Env`] with the built-ins installed and the
//! prelude loaded, and the natives an embedding program adds. Above the
//! evaluator (loading the prelude runs Lonala code), so that `env.rs`
//! stays a plain data holder every layer may use.

use std::io::Write;
use std::sync::Arc;

use crate::env::Env;

impl Env {
    /// A node writing to `out`, with the core library loaded.
    pub fn new(out: Box<dyn Write + Send>) -> Arc<Env> {
        lona_term::set_closure_namer(crate::print::fn_name);
        crate::purge::install();
        crate::jit::warm_up();
        let env = Arc::new(Env::empty(out));
        crate::builtins::install(&env);
        crate::services::install(&env);
        crate::eval::load_prelude(&env);
        env
    }

    /// A node writing to standard output.
    pub fn stdout() -> Arc<Env> {
        Env::new(Box::new(std::io::stdout()))
    }

    /// Defines `ns/name` as a function written in Rust taking `min` to
    /// `max` arguments (`u16::MAX`: any number), for a Rust program that
    /// embeds Lonala. The namespace is made if needed; code compiled
    /// afterwards calls it like any function, and defining it again
    /// changes what every process calls next. `f` gets the caller's heap
    /// and its arguments as terms ([`Native`](crate::Native));
    /// [`crate::bridge`] converts them to and from Rust values.
    pub fn define_native(&self, ns: &str, name: &str, min: u16, max: u16, f: crate::Native) {
        let ns = self.namespaces.get_or_create(ns);
        crate::builtins::def_user(ns, name, min, max, f);
    }
}
