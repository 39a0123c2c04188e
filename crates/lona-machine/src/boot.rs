//! Starting a machine: an [`Env`] with the machine's built-ins installed,
//! and the natives an embedding program adds. The node's half (its
//! built-ins, the prelude and the libraries loaded at start) is
//! `lona-vm`'s, which runs it once per `Env` before the first code runs
//! on it ([`Env::boot_node`]).

use std::io::Write;
use std::sync::Arc;

use crate::env::Env;

impl Env {
    /// A node writing to `out`, with the machine's built-ins installed;
    /// `lona-vm` adds the node's built-ins and loads the core library
    /// (the prelude) before the first Lonala code runs on it (its
    /// `Evaluator::new`, `eval_str`, `LonaProcess::call`, ...).
    pub fn new(out: Box<dyn Write + Send>) -> Arc<Env> {
        lona_term::set_closure_namer(crate::print::fn_name);
        crate::purge::install();
        crate::jit::warm_up();
        let env = Arc::new(Env::empty(out));
        crate::builtins::install(&env);
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
