//! A block of words from the global allocator: young heaps, old heaps and
//! fragments are all blocks. A block is freed when dropped, so heap memory
//! goes back to the allocator whenever a collection replaces a block.
//!
//! Large blocks (at least [`CACHE_MIN_WORDS`], 1 MiB) pass through a small
//! node-wide cache on their way back, like the segment cache of Erlang's
//! allocators: at most [`CACHE_MAX_BLOCKS`] blocks and [`CACHE_MAX_BYTES`]
//! in total. A later request for a block of the same size (or up to 25 %
//! smaller) takes one from the cache instead of asking the kernel for fresh
//! pages, whose first-touch page faults otherwise cost as much as the
//! copying in a large collection. [`trim_block_cache`] empties it.
//!
//! A block the allocator cannot back is never an abort of the node:
//! [`Block::try_new`] says so, and [`Block::new`] ends the allocating
//! process by unwinding with [`HeapError::OutOfMemory`] (`heap.rs`,
//! "Allocation failure").

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Mutex;

use crate::heap::HeapError;

/// Blocks this large go through the cache.
pub const CACHE_MIN_WORDS: usize = 1 << 17;
/// The cache holds at most this many blocks.
pub const CACHE_MAX_BLOCKS: usize = 4;
/// The cache holds at most this many bytes.
pub const CACHE_MAX_BYTES: usize = 384 << 20;

/// A free block kept for reuse: base address and real size in words.
struct Cached(usize, usize);

static CACHE: Mutex<Vec<Cached>> = Mutex::new(Vec::new());

fn cache() -> std::sync::MutexGuard<'static, Vec<Cached>> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Returns every cached block to the allocator.
pub fn trim_block_cache() {
    let blocks = std::mem::take(&mut *cache());
    for Cached(p, words) in blocks {
        // SAFETY: cached blocks were allocated with this layout and are
        // owned by the cache alone.
        unsafe { alloc::dealloc(p as *mut u8, Layout::array::<u64>(words).expect("layout")) };
    }
}

/// Bytes held by the block cache.
pub fn block_cache_bytes() -> usize {
    cache().iter().map(|c| c.1 * 8).sum()
}

pub(crate) struct Block {
    ptr: NonNull<u64>,
    /// Usable words (what the heap asked for).
    words: usize,
    /// Words actually allocated (>= words when taken from the cache).
    cap: usize,
}

impl Block {
    /// An empty block (no allocation).
    pub(crate) const fn empty() -> Block {
        Block {
            ptr: NonNull::dangling(),
            words: 0,
            cap: 0,
        }
    }

    /// A fresh, uninitialised block of `words` words; unwinds with
    /// [`HeapError::OutOfMemory`] if the allocator cannot back it.
    pub(crate) fn new(words: usize) -> Block {
        match Block::try_new(words) {
            Some(b) => b,
            None => out_of_memory(words),
        }
    }

    /// A fresh, uninitialised block of `words` words, or `None` if the
    /// allocator cannot back it.
    pub(crate) fn try_new(words: usize) -> Option<Block> {
        if words == 0 {
            return Some(Block::empty());
        }
        if words >= CACHE_MIN_WORDS {
            let mut c = cache();
            let fit = c
                .iter()
                .position(|b| b.1 >= words && b.1 - words <= b.1 / 4);
            if let Some(i) = fit {
                let Cached(p, cap) = c.swap_remove(i);
                let ptr = NonNull::new(p as *mut u64).expect("cached block");
                return Some(Block { ptr, words, cap });
            }
        }
        let layout = Layout::array::<u64>(words).ok()?;
        // SAFETY: the layout has non-zero size.
        let p = unsafe { alloc::alloc(layout) } as *mut u64;
        let ptr = NonNull::new(p)?;
        Some(Block {
            ptr,
            words,
            cap: words,
        })
    }

    #[inline]
    pub(crate) fn base(&self) -> *mut u64 {
        self.ptr.as_ptr()
    }

    #[inline]
    pub(crate) fn end(&self) -> *mut u64 {
        // SAFETY: one past the end of the allocation (or the dangling
        // pointer itself when empty).
        unsafe { self.ptr.as_ptr().add(self.words) }
    }

    #[inline]
    pub(crate) fn words(&self) -> usize {
        self.words
    }

    #[inline]
    pub(crate) fn contains(&self, p: *const u64) -> bool {
        (self.base() as usize) <= (p as usize) && (p as usize) < (self.end() as usize)
    }

    /// Resizes the block (in place if the allocator can), returning how
    /// far the base moved in bytes (0 if it did not move); `None`, with
    /// the block unchanged, if the allocator cannot. The first
    /// `min(old, new)` words are preserved.
    pub(crate) fn try_resize(&mut self, words: usize) -> Option<isize> {
        assert!(words > 0 && self.words > 0);
        let old = Layout::array::<u64>(self.cap).expect("layout");
        let new_size = Layout::array::<u64>(words).ok()?.size();
        // SAFETY: ptr was allocated with `old`, new_size is non-zero and the
        // alignment is unchanged.
        let p = unsafe { alloc::realloc(self.ptr.as_ptr() as *mut u8, old, new_size) } as *mut u64;
        // On failure realloc leaves the old block as it was.
        let ptr = NonNull::new(p)?;
        let delta = (p as isize).wrapping_sub(self.ptr.as_ptr() as isize);
        self.ptr = ptr;
        self.words = words;
        self.cap = words;
        Some(delta)
    }
}

/// Ends the allocating process: a block of `words` words cannot be had.
#[cold]
fn out_of_memory(words: usize) -> ! {
    HeapError::OutOfMemory {
        bytes: words.saturating_mul(8),
    }
    .raise()
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.cap >= CACHE_MIN_WORDS && self.cap * 8 <= CACHE_MAX_BYTES {
            // Keep the largest blocks: evict smaller ones to make room.
            let mut evicted = Vec::new();
            {
                let mut c = cache();
                c.sort_by_key(|b| std::cmp::Reverse(b.1));
                while c.len() >= CACHE_MAX_BLOCKS
                    || c.iter().map(|b| b.1 * 8).sum::<usize>() + self.cap * 8 > CACHE_MAX_BYTES
                {
                    match c.last() {
                        Some(b) if b.1 < self.cap => evicted.push(c.pop().expect("last")),
                        _ => break,
                    }
                }
                let fits = c.len() < CACHE_MAX_BLOCKS
                    && c.iter().map(|b| b.1 * 8).sum::<usize>() + self.cap * 8 <= CACHE_MAX_BYTES;
                if fits {
                    c.push(Cached(self.ptr.as_ptr() as usize, self.cap));
                    self.cap = 0;
                }
            }
            for Cached(p, words) in evicted {
                // SAFETY: evicted blocks were allocated with this layout and
                // are owned by nobody else.
                unsafe {
                    alloc::dealloc(p as *mut u8, Layout::array::<u64>(words).expect("layout"))
                };
            }
        }
        if self.cap > 0 {
            let layout = Layout::array::<u64>(self.cap).expect("layout");
            // SAFETY: allocated with this layout in `new`/`resize`.
            unsafe { alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) };
        }
    }
}
