//! The node-wide state of Lonala: namespaces and vars, where output goes,
//! the program's arguments.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::var::{Namespace, Namespaces};

/// The namespace of the core library.
pub const CORE_NS: &str = "lona.core";

/// The node: what every Lonala process of it shares.
pub struct Env {
    /// Every namespace.
    pub namespaces: Namespaces,
    /// `lona.core`.
    pub core: &'static Namespace,
    /// Where `print`/`println` write (standard output, or a buffer in tests).
    pub out: Mutex<Box<dyn Write + Send>>,
    /// Directories searched for `(:require [a.b])` → `a/b.lona`, after the
    /// running file's own directory (`LONA_PATH`).
    pub load_path: Mutex<Vec<std::path::PathBuf>>,
    /// Namespaces already loaded from files.
    pub loaded: Mutex<std::collections::HashSet<String>>,
    /// How the program ended: set by its main process, or by `(halt n)`
    /// in any process; `lona run` waits on it.
    pub ending: Arc<crate::ending::EndSignal>,
    /// Whether `report` writes (supervisor reports); `(reports! false)`
    /// silences them, as Erlang's `logger:set_primary_config(level, none)`.
    pub reports: std::sync::atomic::AtomicBool,
    /// The default `:max-heap-size` of the node's processes, in words (0:
    /// none): [`Env::set_max_heap_size`].
    max_heap_size: std::sync::atomic::AtomicUsize,
    /// The node's distribution, once `dist::start` made it a named node
    /// (`dist::of` finds the `Dist` itself).
    pub dist: std::sync::OnceLock<Arc<dyn crate::remote::Distribution>>,
    /// Whether the node's half of the start ran ([`Env::boot_node`]).
    pub(crate) node_booted: std::sync::Once,
    /// The natives an embedding program defined before the node's half
    /// of the start ran ([`Env::define_native`]): defined again after it,
    /// so that the program's definitions win over the prelude's, as when
    /// `Env::new` loaded the prelude itself. Written by `define_native`,
    /// taken once by `boot_node`.
    pub(crate) early_natives: Mutex<Vec<EarlyNative>>,
}

/// A native defined before the node's start: namespace, name, arities,
/// function.
pub(crate) type EarlyNative = (String, String, u16, u16, crate::Native);

impl Env {
    /// A node writing to `out`, with no namespace but an empty `lona.core`
    /// and `user`: the data [`Env::new`](crate::Env::new) (in `boot.rs`)
    /// fills with the machine's built-ins, and the node (`lona-vm`) with
    /// its own and the prelude.
    pub fn empty(out: Box<dyn Write + Send>) -> Env {
        let namespaces = Namespaces::default();
        let core = namespaces.get_or_create(CORE_NS);
        namespaces.get_or_create("user");
        Env {
            namespaces,
            core,
            out: Mutex::new(out),
            load_path: Mutex::new(Vec::new()),
            loaded: Mutex::new(Default::default()),
            ending: Arc::default(),
            reports: std::sync::atomic::AtomicBool::new(true),
            max_heap_size: std::sync::atomic::AtomicUsize::new(0),
            dist: std::sync::OnceLock::new(),
            node_booted: std::sync::Once::new(),
            early_natives: Mutex::new(Vec::new()),
        }
    }

    /// Whether [`Env::boot_node`] ran.
    pub fn node_booted(&self) -> bool {
        self.node_booted.is_completed()
    }

    /// Sets the default `:max-heap-size` (words, 0: none) of every process
    /// started afterwards, the main process included (Erlang's `+hmax`;
    /// `lona run --max-heap`): heap and stack together, as
    /// `lona_vm::process` explains. `spawn-opt` and `process-flag` override
    /// it for one process.
    pub fn set_max_heap_size(&self, words: usize) {
        self.max_heap_size
            .store(words, std::sync::atomic::Ordering::Relaxed);
    }

    /// The default `:max-heap-size` (words, 0: none).
    pub fn max_heap_size(&self) -> usize {
        self.max_heap_size
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes text to the node's output.
    pub fn write_out(&self, s: &str) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(s.as_bytes());
    }

    /// Flushes the node's output.
    pub fn flush_out(&self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.flush();
    }
}

/// A `Write` that appends to a shared buffer (tests, `lona eval` capture).
#[derive(Clone, Default)]
pub struct SharedBuf(pub Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    /// What was written so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
