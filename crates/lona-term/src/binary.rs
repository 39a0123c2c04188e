//! Large binaries and strings (64 bytes or more): one immutable off-heap
//! block with an atomic reference count, shared by every heap and fragment
//! that holds it.
//!
//! On a heap, a large binary is a two-word object (`SharedStr`/`SharedBin`
//! header, then a pointer to the [`SharedBytes`]) that owns one count.
//! Copying a term to another heap copies those two words and adds a count.
//! Each heap and fragment keeps an *off-heap list* (BEAM's MSO list) of the
//! addresses of such objects; a collection walks it afterwards and releases
//! the count of every object it did not copy; dropping a heap or fragment
//! releases them all.

use std::sync::atomic::{fence, AtomicUsize, Ordering};

use crate::heap::HeapError;

/// Strings and binaries of at least this many bytes live off-heap.
pub const SHARED_THRESHOLD: usize = 64;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Bytes held by live off-heap binaries. Relaxed: a statistic.
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Bytes held by every live off-heap (shared) binary in the whole process
/// (Erlang's `memory(binary)`).
pub fn shared_binary_bytes() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// How many off-heap binaries exist in the whole process (a test hook: it
/// falls back to its earlier value once every holder is gone).
pub fn live_shared_binaries() -> usize {
    LIVE.load(Ordering::SeqCst)
}

pub(crate) struct SharedBytes {
    refc: AtomicUsize,
    data: Box<[u8]>,
}

impl SharedBytes {
    /// A new block with one reference, as a raw pointer. Unwinds with
    /// [`HeapError::OutOfMemory`] if the bytes cannot be backed (`heap.rs`,
    /// "Allocation failure").
    pub(crate) fn create(bytes: &[u8]) -> *const SharedBytes {
        let mut data = Vec::new();
        if data.try_reserve_exact(bytes.len()).is_err() {
            HeapError::OutOfMemory { bytes: bytes.len() }.raise();
        }
        data.extend_from_slice(bytes);
        LIVE.fetch_add(1, Ordering::SeqCst);
        LIVE_BYTES.fetch_add(bytes.len(), Ordering::Relaxed);
        Box::into_raw(Box::new(SharedBytes {
            refc: AtomicUsize::new(1),
            data: data.into_boxed_slice(),
        }))
    }

    /// Adds a reference.
    ///
    /// # Safety
    /// `p` must come from [`SharedBytes::create`] and still hold a reference.
    pub(crate) unsafe fn retain(p: *const SharedBytes) {
        // SAFETY: the caller holds a reference, so the block is alive.
        unsafe { (*p).refc.fetch_add(1, Ordering::Relaxed) };
    }

    /// Drops a reference, freeing the block with the last one.
    ///
    /// # Safety
    /// `p` must come from [`SharedBytes::create`] and the caller must own
    /// the reference it gives up.
    pub(crate) unsafe fn release(p: *const SharedBytes) {
        // SAFETY: the caller owns a reference, so the block is alive here.
        if unsafe { (*p).refc.fetch_sub(1, Ordering::Release) } == 1 {
            fence(Ordering::Acquire);
            // SAFETY: that was the last reference; nobody else can reach it.
            let b = unsafe { Box::from_raw(p as *mut SharedBytes) };
            LIVE_BYTES.fetch_sub(b.data.len(), Ordering::Relaxed);
            drop(b);
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The bytes.
    ///
    /// # Safety
    /// `p` must be alive for `'a` (some holder keeps a reference for `'a`).
    pub(crate) unsafe fn bytes<'a>(p: *const SharedBytes) -> &'a [u8] {
        // SAFETY: per the caller's contract.
        unsafe { &(*p).data }
    }

    /// The current count.
    ///
    /// # Safety
    /// As for [`SharedBytes::bytes`].
    pub(crate) unsafe fn count(p: *const SharedBytes) -> usize {
        // SAFETY: per the caller's contract.
        unsafe { (*p).refc.load(Ordering::SeqCst) }
    }
}

/// Releases every off-heap object in `list` (heap or fragment being dropped).
///
/// # Safety
/// Every address must be a live `SharedStr`/`SharedBin` object owning one
/// count, and none may be used afterwards.
pub(crate) unsafe fn release_all(list: &[*mut u64]) {
    for &obj in list {
        // SAFETY: per the caller's contract, word 1 is the SharedBytes pointer.
        unsafe { SharedBytes::release(*obj.add(1) as usize as *const SharedBytes) };
    }
}
