//! [`HeapError`]: why a heap's owner must act, because its process cannot
//! go on (`heap.rs`, "Allocation failure and the size limit"). Below every
//! module that takes memory for a heap (`block.rs`, `binary.rs`), which
//! raise it.

/// Why the heap's owner must act: its process cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapError {
    /// The heap outgrew `max_heap_size`; the runtime should kill the
    /// process (as Erlang does). The heap itself is consistent.
    MaxHeapSize {
        /// The words the process holds (after a collection: young plus
        /// old block; an owner may add memory it keeps beside the heap,
        /// as the Lonala VM adds its stack).
        words: usize,
        /// The configured limit.
        max: usize,
    },
    /// The allocator could not back a block of `bytes` bytes (`heap.rs`,
    /// "Allocation failure").
    OutOfMemory {
        /// The size asked for.
        bytes: usize,
    },
}

impl HeapError {
    /// Unwinds with this error as the panic payload
    /// (`std::panic::panic_any`): how an allocation that cannot go on
    /// ends the process making it. Whoever runs the process catches the
    /// payload (`std::panic::catch_unwind`, then `downcast::<HeapError>`)
    /// and ends the process with a reason.
    #[cold]
    pub fn raise(self) -> ! {
        std::panic::panic_any(self)
    }
}

impl std::fmt::Display for HeapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeapError::MaxHeapSize { words, max } => {
                write!(f, "{words} words exceed max_heap_size {max}")
            }
            HeapError::OutOfMemory { bytes } => {
                write!(f, "out of memory: cannot allocate {bytes} bytes")
            }
        }
    }
}

impl std::error::Error for HeapError {}
