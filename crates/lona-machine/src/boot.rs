//! Starting a machine: an [`Env`] with the machine's built-ins installed,
//! and the natives an embedding program adds. The node's half (its
//! built-ins, the prelude and the libraries loaded at start) is
//! `lona-vm`'s, which runs it once per `Env` before the first code runs
//! on it ([`Env::boot_node`]).

use std::io::Write;
use std::sync::Arc;

use crate::env::{EarlyNative, Env};

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
    ///
    /// A native defined before the node has started (before the first
    /// code runs on this `Env`) is defined again once it has, so a
    /// native named as a function of the prelude or of the node stays
    /// the program's.
    pub fn define_native(&self, ns_name: &str, name: &str, min: u16, max: u16, f: crate::Native) {
        let ns = self.namespaces.get_or_create(ns_name);
        crate::builtins::def_user(ns, name, min, max, f);
        self.note_early_native((ns_name.to_string(), name.to_string(), min, max, f));
    }

    /// Runs `boot` (the node's half of the start: its built-ins, the
    /// prelude) if it has not run on this node yet; another thread
    /// calling meanwhile waits for it to finish. `lona-vm` calls it
    /// before the first code runs on the node.
    pub fn boot_node(&self, boot: impl FnOnce()) {
        self.node_booted.call_once(|| {
            boot();
            // The program's natives defined meanwhile, again over what
            // the start defined.
            let early =
                std::mem::take(&mut *self.early_natives.lock().unwrap_or_else(|e| e.into_inner()));
            for (ns, name, min, max, f) in early {
                crate::builtins::def_user(self.namespaces.get_or_create(&ns), &name, min, max, f);
            }
        });
    }

    /// Notes a native defined before the node's start (see `early_natives`).
    pub(crate) fn note_early_native(&self, n: EarlyNative) {
        if !self.node_booted.is_completed() {
            self.early_natives
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(n);
        }
    }
}
