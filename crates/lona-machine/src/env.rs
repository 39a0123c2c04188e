//! The node-wide state the machine needs: namespaces and vars, where
//! output goes, the default heap limit, and one slot the node above keeps
//! its own services in.
//!
//! The split: what the compiler and the built-ins of this crate read is
//! here, in fields. What only the node (`lona-vm`) uses (the load path,
//! the namespaces loaded from files, how the program ended, the
//! distribution) is `lona_vm::NodeServices`, a type this crate does not
//! know: the node makes it at its first use and finds it again through
//! [`Env::extension`], the way a callback is handed down instead of an
//! import going up.

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
    /// Whether `report` writes (supervisor reports); `(reports! false)`
    /// silences them, as Erlang's `logger:set_primary_config(level, none)`.
    pub reports: std::sync::atomic::AtomicBool,
    /// The default `:max-heap-size` of the node's processes, in words (0:
    /// none): [`Env::set_max_heap_size`].
    max_heap_size: std::sync::atomic::AtomicUsize,
    /// The services of the layer above (`lona_vm::NodeServices`), made at
    /// its first [`Env::extension`]. Written once (by whoever asks first),
    /// read by the node's built-ins.
    extension: std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>,
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
            reports: std::sync::atomic::AtomicBool::new(true),
            max_heap_size: std::sync::atomic::AtomicUsize::new(0),
            extension: std::sync::OnceLock::new(),
            node_booted: std::sync::Once::new(),
            early_natives: Mutex::new(Vec::new()),
        }
    }

    /// The state of type `T` a layer above keeps in this `Env`, made by
    /// `make` at the first call: the one slot such a layer has, without
    /// this crate knowing its type (`lona-vm` keeps its `NodeServices`
    /// here).
    ///
    /// One type per `Env`: `None` when the slot already holds another
    /// type (two layers above one machine is not a thing this crate
    /// supports).
    pub fn extension<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> T,
    ) -> Option<&T> {
        self.extension
            .get_or_init(|| Box::new(make()))
            .downcast_ref::<T>()
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
