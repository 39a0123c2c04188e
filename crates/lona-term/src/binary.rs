//! Large binaries and strings (64 bytes or more): one off-heap block with
//! an atomic reference count, shared by every heap and fragment that holds
//! it.
//!
//! On a heap, a large binary is a three-word object (`SharedStr`/`SharedBin`
//! header, a pointer to the [`SharedBytes`], and the length this object
//! sees) that owns one count. Copying a term to another heap copies those
//! words and adds a count.
//!
//! # Appending in place (Erlang's writable binaries)
//!
//! A block may have spare capacity beyond the bytes written so far
//! (`used`). The bytes below `used` never change; every object's length is
//! at most `used`. [`Heap::string_append`](crate::Heap::string_append) of
//! an object whose length *is* `used` (the last version of the string)
//! claims the next bytes with one compare-and-swap of `used` and writes
//! them where nobody can see them yet; the new object sees the longer
//! length, every older one still its own. If the CAS loses (another
//! version, in this process or another, appended first) or the capacity is
//! spent, the append copies into a new block with twice the room. So `(str
//! s chunk)` in a loop costs amortised O(len(chunk)), and keeping an older
//! version and appending to it differently is still correct: it copies.
//!
//! # Adopted buffers
//! A block may also be a window on a buffer it did not copy
//! ([`SharedBytes::adopt`]): a message that came from another node in
//! fragments is joined into one buffer, and its binary, when it is most of
//! that buffer, becomes a block that keeps the buffer alive (an `Arc`)
//! instead of a copy, as BEAM's decoder makes a sub-binary of the
//! distribution buffer. Such a block is never appended to in place (its
//! `used` is its capacity, and `try_append` refuses it), and frees nothing
//! but its hold on the buffer.
//!
//! Each heap and fragment keeps an *off-heap list* (BEAM's MSO list) of the
//! addresses of such objects; a collection walks it afterwards and releases
//! the count of every object it did not copy; dropping a heap or fragment
//! releases them all.

use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::HeapError;

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
    /// Bytes written: `[0, used)` is initialised and never changes again.
    used: AtomicUsize,
    /// `cap` bytes from a `Vec<u8>` (its length forgotten), or, when
    /// `keep` holds a buffer, `cap` bytes inside it (then `used == cap`:
    /// nothing is ever appended there).
    ptr: *mut u8,
    cap: usize,
    /// What the block is besides its own bytes.
    keep: Keep,
}

/// What a block holds that is not its own `Vec` of bytes.
pub(crate) enum Keep {
    /// Nothing: `ptr` and `cap` are the block's own `Vec<u8>`.
    Nothing,
    /// A buffer these bytes are a part of ([`SharedBytes::adopt`]): kept
    /// alive by this block, never written through it.
    Buffer(#[allow(dead_code)] Arc<Vec<u8>>),
    /// No bytes at all (`cap` 0), but something else the block's holders
    /// share (a cell's state, `cell.rs`), dropped with the last of them.
    Other(Box<dyn std::any::Any + Send + Sync>),
}

#[cfg(test)]
thread_local! {
    /// Bytes this thread copied into off-heap blocks (a test hook).
    pub(crate) static COPIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn count_copied(n: usize) {
    COPIED.with(|c| c.set(c.get() + n));
}

#[cfg(not(test))]
#[inline]
fn count_copied(_: usize) {}

impl SharedBytes {
    /// A new block with one reference, as a raw pointer. Unwinds with
    /// [`HeapError::OutOfMemory`] if the bytes cannot be backed (`heap.rs`,
    /// "Allocation failure").
    pub(crate) fn create(bytes: &[u8]) -> *const SharedBytes {
        SharedBytes::with_capacity(bytes, bytes.len())
    }

    /// A new block holding `bytes` with room for at least `cap` bytes.
    /// Unwinds with [`HeapError::OutOfMemory`] if it cannot be backed.
    pub(crate) fn with_capacity(bytes: &[u8], cap: usize) -> *const SharedBytes {
        let want = cap.max(bytes.len());
        let mut v = Vec::new();
        if v.try_reserve_exact(want).is_err() {
            HeapError::OutOfMemory { bytes: want }.raise();
        }
        v.extend_from_slice(bytes);
        count_copied(bytes.len());
        let mut v = std::mem::ManuallyDrop::new(v);
        let (ptr, cap) = (v.as_mut_ptr(), v.capacity());
        LIVE.fetch_add(1, Ordering::SeqCst);
        LIVE_BYTES.fetch_add(cap, Ordering::Relaxed);
        Box::into_raw(Box::new(SharedBytes {
            refc: AtomicUsize::new(1),
            used: AtomicUsize::new(bytes.len()),
            ptr,
            cap,
            keep: Keep::Nothing,
        }))
    }

    /// A block with one reference for `buf[start..start + len]`, without
    /// copying: the block keeps `buf` alive (a decoded message's binary
    /// that is most of the buffer it came in, `etf`). Panics if the range
    /// is not inside `buf`.
    pub(crate) fn adopt(buf: Arc<Vec<u8>>, start: usize, len: usize) -> *const SharedBytes {
        assert!(
            start.checked_add(len).is_some_and(|end| end <= buf.len()),
            "an adopted range inside its buffer"
        );
        // The bytes are only ever read through this pointer (`used ==
        // cap`, so `try_append` never writes); `*mut` is the field's type.
        let ptr = buf[start..].as_ptr() as *mut u8;
        LIVE.fetch_add(1, Ordering::SeqCst);
        LIVE_BYTES.fetch_add(len, Ordering::Relaxed);
        Box::into_raw(Box::new(SharedBytes {
            refc: AtomicUsize::new(1),
            used: AtomicUsize::new(len),
            ptr,
            cap: len,
            keep: Keep::Buffer(buf),
        }))
    }

    /// A block with one reference that holds `thing` and no bytes.
    pub(crate) fn holding(thing: Box<dyn std::any::Any + Send + Sync>) -> *const SharedBytes {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Box::into_raw(Box::new(SharedBytes {
            refc: AtomicUsize::new(1),
            used: AtomicUsize::new(0),
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            cap: 0,
            keep: Keep::Other(thing),
        }))
    }

    /// What a block made by [`SharedBytes::holding`] holds, `None` for a
    /// binary's.
    ///
    /// # Safety
    /// `p` must be alive for `'a` (some holder keeps a reference for `'a`).
    pub(crate) unsafe fn held<'a>(
        p: *const SharedBytes,
    ) -> Option<&'a (dyn std::any::Any + Send + Sync)> {
        // SAFETY: per the caller's contract the block is alive for 'a, and
        // `keep` is never changed after the block is made.
        match unsafe { &(*p).keep } {
            Keep::Other(s) => Some(&**s),
            _ => None,
        }
    }

    /// Writes `extra` after the first `len` bytes if `len` is all that was
    /// ever written and there is room; false (nothing written) otherwise.
    ///
    /// # Safety
    /// `p` must be alive (the caller holds a reference) and `len` the
    /// length of an object holding it.
    pub(crate) unsafe fn try_append(p: *const SharedBytes, len: usize, extra: &[u8]) -> bool {
        // SAFETY: the caller holds a reference, so the block is alive.
        let b = unsafe { &*p };
        if !matches!(b.keep, Keep::Nothing)
            || b.cap - len < extra.len()
            || b.used.load(Ordering::Relaxed) != len
        {
            return false;
        }
        // Claim [len, len + extra.len()): after this CAS no other append
        // can, and no object sees those bytes until we make one.
        if b.used
            .compare_exchange(len, len + extra.len(), Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        // SAFETY: the range is inside the allocation (checked against
        // cap), claimed by us alone, and read by nobody: every object's
        // length is at most `len`. Readers of [0, len) are not disturbed.
        unsafe { std::ptr::copy_nonoverlapping(extra.as_ptr(), b.ptr.add(len), extra.len()) };
        count_copied(extra.len());
        true
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
            LIVE_BYTES.fetch_sub(b.cap, Ordering::Relaxed);
            if matches!(b.keep, Keep::Nothing) {
                // SAFETY: ptr and cap are the Vec's own; bytes need no
                // drop, so a length of 0 frees the allocation and nothing
                // else.
                drop(unsafe { Vec::from_raw_parts(b.ptr, 0, b.cap) });
            }
            // An adopted block lets go of its buffer here, a cell of its
            // values (which may release other blocks in turn).
            drop(b);
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The first `len` bytes.
    ///
    /// # Safety
    /// `p` must be alive for `'a` (some holder keeps a reference for `'a`)
    /// and `len` the length of an object holding it (at most `used`).
    pub(crate) unsafe fn bytes<'a>(p: *const SharedBytes, len: usize) -> &'a [u8] {
        // SAFETY: per the caller's contract: [0, len) is written and never
        // changes again.
        unsafe { std::slice::from_raw_parts((*p).ptr, len) }
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

/// A counted reference to the bytes of a large binary or string, held
/// outside any heap: what lets a socket or a connection to another node
/// write a binary where it is, after the process that sent it has moved
/// on or collected (BEAM's writers hold a count on a refc binary the
/// same way). Made by [`Term::shared_binary`](crate::Term::shared_binary);
/// the bytes it sees never change; dropping it gives the count back.
pub struct SharedBinary {
    /// A block this value owns one count of.
    block: std::ptr::NonNull<SharedBytes>,
    /// The length the object it was made from saw (at most `used`).
    len: usize,
}

// SAFETY: the block's count is atomic and the bytes [0, len) are written
// before any object of that length exists and never change (module doc),
// so the value may be read, cloned and dropped from any thread.
unsafe impl Send for SharedBinary {}
// SAFETY: as for `Send`: `&SharedBinary` only reads immutable bytes.
unsafe impl Sync for SharedBinary {}

impl SharedBinary {
    /// A new reference to the block at `p`, seeing `len` bytes.
    ///
    /// # Safety
    /// `p` must be alive (the caller holds a count for the duration of
    /// this call) and `len` the length of an object holding it.
    pub(crate) unsafe fn retain(p: *const SharedBytes, len: usize) -> SharedBinary {
        // SAFETY: per the caller's contract the block is alive.
        unsafe { SharedBytes::retain(p) };
        SharedBinary {
            block: std::ptr::NonNull::new(p as *mut SharedBytes).expect("a block's address"),
            len,
        }
    }
}

impl std::ops::Deref for SharedBinary {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: this value owns a count, so the block lives as long as
        // `self`; `len` is an object's length, so its bytes are written.
        unsafe { SharedBytes::bytes(self.block.as_ptr(), self.len) }
    }
}

impl Clone for SharedBinary {
    fn clone(&self) -> SharedBinary {
        // SAFETY: `self` owns a count, so the block is alive.
        unsafe { SharedBinary::retain(self.block.as_ptr(), self.len) }
    }
}

impl Drop for SharedBinary {
    fn drop(&mut self) {
        // SAFETY: the count this value owns is given back once.
        unsafe { SharedBytes::release(self.block.as_ptr()) };
    }
}

impl std::fmt::Debug for SharedBinary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedBinary({} bytes)", self.len)
    }
}

/// A cell, borrowed from a term that holds it ([`View::Cell`](crate::View::Cell));
/// what it does is `cell.rs`'s.
#[derive(Clone, Copy)]
pub struct CellRef<'h> {
    /// A block the term holds a count of for `'h` (one made by
    /// [`SharedBytes::holding`] with a cell's state).
    pub(crate) block: *const SharedBytes,
    _term: std::marker::PhantomData<&'h ()>,
}

impl<'h> CellRef<'h> {
    /// The cell whose block is `block`.
    pub(crate) fn new(block: *const SharedBytes) -> CellRef<'h> {
        CellRef {
            block,
            _term: std::marker::PhantomData,
        }
    }
}

/// The bytes the off-heap objects in `list` see.
///
/// # Safety
/// Every address must be a live `SharedStr`/`SharedBin` object.
pub(crate) unsafe fn offheap_bytes(list: &[*mut u64]) -> usize {
    list.iter()
        // SAFETY: per the caller's contract, word 2 is the object's length.
        .map(|&obj| unsafe { *obj.add(2) } as usize)
        .fold(0, usize::saturating_add)
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

#[cfg(test)]
mod tests {
    use super::COPIED;
    use crate::{Fragment, Heap};

    fn copied() -> usize {
        COPIED.with(|c| c.get())
    }

    /// Bytes copied into off-heap blocks while building an `n`-chunk
    /// string by appending 4 bytes at a time.
    fn copied_building(n: usize) -> usize {
        let h = Heap::new();
        let before = copied();
        let mut s = h.string("");
        for i in 0..n {
            s = h.string_append(s, &format!("{:04}", i % 10_000)).unwrap();
        }
        assert_eq!(s.as_str().unwrap().len(), 4 * n);
        copied() - before
    }

    #[test]
    fn appending_copies_each_byte_a_bounded_number_of_times() {
        // Doubling: every byte is copied at most about three times (once
        // when appended, and into each bigger block while it was in the
        // upper half), so the total grows linearly with the length. A
        // quadratic append (a fresh copy of the whole string each time)
        // copies n^2 * 2 bytes: 200 million for 10,000 chunks.
        // Scaled down under Miri, where an append costs milliseconds (the
        // full sizes took CI's Miri step past its 25-minute bound).
        let sizes: &[usize] = if cfg!(miri) {
            &[100, 1_000]
        } else {
            &[1_000, 10_000, 100_000]
        };
        for &n in sizes {
            let c = copied_building(n);
            assert!(c <= 3 * 4 * n + 256, "{n} appends copied {c} bytes");
        }
        let (small, large) = if cfg!(miri) {
            (500, 2_000)
        } else {
            (10_000, 40_000)
        };
        let (small, large) = (copied_building(small), copied_building(large));
        assert!(large <= 5 * small, "{small} then {large}: not linear");
    }

    #[test]
    fn older_versions_keep_their_text_and_append_differently() {
        let mut h = Heap::new();
        let base = "b".repeat(70);
        let v0 = h.string(&base);
        let r0 = h.add_root(v0);
        // v1 extends v0's block... (v0 was made exact: v1 copies with room)
        let v1 = h.string_append(h.root(r0), "-one").unwrap();
        let r1 = h.add_root(v1);
        // v2 extends v1 in place; then v1 and v0 are appended to again,
        // differently: each must copy, not overwrite v2's bytes.
        let v2 = h.string_append(h.root(r1), "-two").unwrap();
        let r2 = h.add_root(v2);
        let v1b = h.string_append(h.root(r1), "-other").unwrap();
        let r1b = h.add_root(v1b);
        let v0b = h.string_append(h.root(r0), "!").unwrap();
        let r0b = h.add_root(v0b);
        // A message holding v2, then the owner goes on appending to v2
        // while the message (in "another process") appends to its copy.
        let msg = Fragment::new(h.root(r2));
        let other = Heap::new();
        let theirs = other.copy_from(msg.root());
        drop(msg);
        let ours = h.string_append(h.root(r2), "-ours").unwrap();
        let r3 = h.add_root(ours);
        let theirs = other.string_append(theirs, "-theirs").unwrap();
        h.collect_major(0).unwrap();
        h.collect(0).unwrap();
        assert_eq!(h.root(r0).as_str().unwrap(), base);
        assert_eq!(h.root(r1).as_str().unwrap(), format!("{base}-one"));
        assert_eq!(h.root(r2).as_str().unwrap(), format!("{base}-one-two"));
        assert_eq!(h.root(r1b).as_str().unwrap(), format!("{base}-one-other"));
        assert_eq!(h.root(r0b).as_str().unwrap(), format!("{base}!"));
        assert_eq!(h.root(r3).as_str().unwrap(), format!("{base}-one-two-ours"));
        assert_eq!(theirs.as_str().unwrap(), format!("{base}-one-two-theirs"));
        // Small results stay on the heap; appending to a non-string is None.
        let small = h.string("ab");
        let s = h.string_append(small, "c").unwrap();
        assert_eq!((s.as_str(), s.shared_refcount()), (Some("abc"), None));
        assert!(h.string_append(crate::Term::NIL, "x").is_none());
    }

    #[test]
    fn appends_from_many_threads_to_one_shared_version_never_mix() {
        // Eight threads each receive the same version and append their own
        // text: at most one wins the room in place, every result is right.
        let h = Heap::new();
        let mut s = h.string(&"x".repeat(100));
        s = h.string_append(s, "y").unwrap(); // a block with spare room
        let msg = std::sync::Arc::new(std::sync::Mutex::new(Some(Fragment::new(s))));
        let frags: Vec<Fragment> = (0..8)
            .map(|_| {
                let g = msg.lock().unwrap();
                let f = g.as_ref().unwrap();
                Fragment::new(f.root())
            })
            .collect();
        let handles: Vec<_> = frags
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                std::thread::spawn(move || {
                    let h = Heap::new();
                    let mut t = h.copy_from(f.root());
                    drop(f);
                    for k in 0..50 {
                        t = h.string_append(t, &format!("<{i}.{k}>")).unwrap();
                    }
                    t.as_str().unwrap().to_string()
                })
            })
            .collect();
        for (i, th) in handles.into_iter().enumerate() {
            let want: String = (0..50).map(|k| format!("<{i}.{k}>")).collect();
            assert_eq!(th.join().unwrap(), format!("{}y{want}", "x".repeat(100)));
        }
    }
}
