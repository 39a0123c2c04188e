//! The node's half of [`Env`]: the services only the node uses, kept in
//! the machine's [`Env::extension`] slot and reached through
//! [`NodeEnv::node`].
//!
//! The machine's `Env` holds what the compiler and the machine's
//! built-ins read (namespaces, vars, output, the heap limit). What is
//! here belongs to the node: where `require` looks, what it loaded, how
//! the program ended, and the distribution once the node has a name.
//! Only this crate makes a [`NodeServices`] (its fields are private);
//! everyone reads it through its methods.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

pub use lona_machine::node::env::{Env, SharedBuf, CORE_NS};

use crate::ending::EndSignal;
use crate::remote::Distribution;

/// What the node keeps beside the machine's [`Env`]: made empty at its
/// first use, one per `Env`, and only by this crate (no public
/// constructor, private fields):
///
/// ```compile_fail,E0451
/// let _ = lona_vm::NodeServices { load_path: Default::default() };
/// ```
///
/// ```compile_fail,E0599
/// let _ = lona_vm::NodeServices::default();
/// ```
pub struct NodeServices {
    /// Directories searched for `(:require [a.b])` → `a/b.lona`, after the
    /// running file's own directory (`LONA_PATH`). Written by the CLI (and
    /// embedding programs) before code runs, read by every `require`.
    pub(crate) load_path: Mutex<Vec<PathBuf>>,
    /// Namespaces already loaded from files. Written by `load` and
    /// `mark-loaded!`, read by `loaded?` and `require`.
    pub(crate) loaded: Mutex<HashSet<String>>,
    /// How the program ended: set by its main process, or by `(halt n)`
    /// in any process; `lona run` waits on it.
    pub(crate) ending: Arc<EndSignal>,
    /// The node's distribution, once `dist::start` made it a named node
    /// (`dist::of` finds the `Dist` itself). Written once by
    /// `dist::start`, read by every remote send, link and monitor.
    pub(crate) dist: OnceLock<Arc<dyn Distribution>>,
}

impl NodeServices {
    /// Empty services: no load path, nothing loaded, no ending yet, not
    /// distributed.
    fn new() -> NodeServices {
        NodeServices {
            load_path: Mutex::new(Vec::new()),
            loaded: Mutex::new(HashSet::new()),
            ending: Arc::default(),
            dist: OnceLock::new(),
        }
    }

    /// How the program ended, once it has: the main process and
    /// `(halt n)` set it, `lona run` and the REPL wait on it.
    pub fn ending(&self) -> &Arc<EndSignal> {
        &self.ending
    }

    /// Adds directories to search for `(:require [a.b])`, after the
    /// running file's own directory (as `LONA_PATH` does).
    pub fn add_load_path(&self, dirs: impl IntoIterator<Item = PathBuf>) {
        self.load_path
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(dirs);
    }

    /// The directories `require` searches after the running file's own.
    pub fn load_path(&self) -> Vec<PathBuf> {
        self.load_path
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether namespace `ns` was loaded from a file.
    pub fn loaded(&self, ns: &str) -> bool {
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(ns)
    }

    /// Records namespace `ns` as loaded (it will not be loaded again).
    pub(crate) fn mark_loaded(&self, ns: String) {
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ns);
    }

    /// The node's distribution, when `dist::start` made it a named node.
    pub fn dist(&self) -> Option<&Arc<dyn Distribution>> {
        self.dist.get()
    }
}

/// The node's services of an [`Env`]: `env.node().ending()`.
pub trait NodeEnv {
    /// The node's services, made empty at the first call.
    fn node(&self) -> &NodeServices;
}

impl NodeEnv for Env {
    fn node(&self) -> &NodeServices {
        self.extension(NodeServices::new)
            .expect("the Env's extension slot holds lona-vm's NodeServices")
    }
}
