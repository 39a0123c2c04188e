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
//! copying in a large collection. A request larger than every cached
//! block grows the largest mapped one (`pages::grow`: its pages move to
//! the start of the new block, only the rest is fresh), so a heap that
//! keeps growing reuses what it freed: `maps` faulted in 242 fresh huge
//! pages before and 30-59 after, and its peak memory fell from 225 to
//! 136 MB. [`trim_block_cache`] empties it.
//!
//! Blocks of 2 MiB and more are mapped from the kernel, on huge pages
//! where it gives them (`pages.rs`); smaller ones come from the global
//! allocator.
//!
//! A block the allocator cannot back is never an abort of the node:
//! [`Block::try_new`] says so, and [`Block::new`] ends the allocating
//! process by unwinding with [`HeapError::OutOfMemory`] (`heap.rs`,
//! "Allocation failure").

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Mutex;

use crate::error::HeapError;
use crate::pages;

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
        // SAFETY: cached blocks are owned by the cache alone.
        unsafe { free(p as *mut u64, words) };
    }
}

/// Cached blocks grown into a larger one (`Block::try_new`).
static GROWN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many times a request was served by growing a smaller cached block.
pub fn block_cache_grown() -> usize {
    GROWN.load(std::sync::atomic::Ordering::Relaxed)
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
            // None large enough: the largest smaller mapped one, grown
            // (`pages::grow`: its pages move, only the rest is fresh).
            let smaller = c
                .iter()
                .enumerate()
                .filter(|(_, b)| b.1 < words && pages::is_large(b.1 * 8))
                .max_by_key(|(_, b)| b.1)
                .map(|(i, _)| i);
            if let Some(i) = smaller {
                let Cached(p, cap) = c.swap_remove(i);
                drop(c);
                // SAFETY: a cached mapped block of `cap` words, owned by
                // the cache alone until taken out just now.
                match unsafe { pages::grow(p as *mut u8, cap * 8, words * 8) } {
                    Some(to) => {
                        GROWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let ptr = NonNull::new(to as *mut u64).expect("mapped");
                        return Some(Block {
                            ptr,
                            words,
                            cap: words,
                        });
                    }
                    // SAFETY: untouched by the failed grow; ours.
                    None => unsafe { free(p as *mut u64, cap) },
                }
            }
        }
        let ptr = NonNull::new(allocate(words)?)?;
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
        let (was_large, large) = (pages::is_large(self.cap * 8), pages::is_large(words * 8));
        if was_large && large && words <= self.cap {
            // SAFETY: a mapped block of `cap` words; the words past
            // `words` are the caller's to give up.
            unsafe { pages::shrink(self.base() as *mut u8, self.cap * 8, words * 8) };
            self.words = words;
            self.cap = words;
            return Some(0);
        }
        if was_large || large {
            // Into or out of a mapping, or a mapping grown: a new block.
            let mut b = Block::try_new(words)?;
            // SAFETY: both hold at least min(old, new) words; distinct.
            unsafe { std::ptr::copy_nonoverlapping(self.base(), b.base(), self.words.min(words)) };
            let delta = (b.base() as isize).wrapping_sub(self.base() as isize);
            std::mem::swap(self, &mut b);
            return Some(delta);
        }
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

/// `words` fresh words: mapped if large (`pages.rs`), else from the
/// global allocator; `None` if they cannot be had.
fn allocate(words: usize) -> Option<*mut u64> {
    let layout = Layout::array::<u64>(words).ok()?;
    if pages::is_large(layout.size()) {
        return pages::map(layout.size()).map(|p| p as *mut u64);
    }
    // SAFETY: the layout has non-zero size (words > 0).
    Some(unsafe { alloc::alloc(layout) } as *mut u64)
}

/// Frees a block.
///
/// # Safety
/// `p` is a block of `words` words from [`allocate`] (or resized by
/// [`Block::try_resize`] to `words`), used by nobody afterwards.
unsafe fn free(p: *mut u64, words: usize) {
    let bytes = words * 8;
    if pages::is_large(bytes) {
        // SAFETY: per the contract, a mapping of `bytes`.
        unsafe { pages::unmap(p as *mut u8, bytes) };
    } else {
        // SAFETY: per the contract, allocated with this layout.
        unsafe { alloc::dealloc(p as *mut u8, Layout::array::<u64>(words).expect("layout")) };
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
                // SAFETY: evicted blocks are owned by nobody else.
                unsafe { free(p as *mut u64, words) };
            }
        }
        if self.cap > 0 {
            // SAFETY: a block of `cap` words from `allocate`, dropped.
            unsafe { free(self.ptr.as_ptr(), self.cap) };
        }
    }
}

/// Words from `a` up to `b` (0 if `b` is below `a`).
#[inline]
pub(crate) fn words_between(a: *const u64, b: *const u64) -> usize {
    (b as usize).saturating_sub(a as usize) / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(b: &Block, from: usize) {
        for i in from..b.words() {
            // SAFETY: i < words.
            unsafe { b.base().add(i).write(i as u64 ^ 0x5a5a) };
        }
    }

    fn check(b: &Block, n: usize) {
        for i in 0..n {
            // SAFETY: i < words, written by `fill`.
            assert_eq!(
                unsafe { b.base().add(i).read() },
                i as u64 ^ 0x5a5a,
                "word {i}"
            );
        }
    }

    /// Blocks resized within and across the 2 MiB line keep their words,
    /// and large blocks are mapped on a 2 MiB boundary.
    #[test]
    #[cfg_attr(miri, ignore = "about mappings, which Miri does not make")]
    fn resizes_keep_words_across_the_large_line() {
        let large = pages::LARGE_BYTES / 8;
        let sizes = [
            1000,
            large - 1,
            large,
            large + 12_345,
            3 * large + 7,
            large + 1,
            large - 1,
            512,
            2 * large,
        ];
        let mut b = Block::new(sizes[0]);
        fill(&b, 0);
        for w in sizes.windows(2) {
            let (from, to) = (w[0], w[1]);
            b.try_resize(to).expect("resize");
            assert_eq!(b.words(), to);
            check(&b, from.min(to));
            fill(&b, from.min(to));
            if cfg!(all(target_os = "linux", not(miri))) && pages::is_large(to * 8) {
                assert_eq!(b.base() as usize % pages::LARGE_BYTES, 0, "{to} words");
            }
        }
    }

    /// `pages::grow`: the whole 2 MiB pieces of the old block move to the
    /// start of the new one with what they hold, the rest is fresh
    /// (zero) and every byte of it can be written.
    #[test]
    #[cfg_attr(miri, ignore = "about mappings, which Miri does not make")]
    fn a_mapped_block_grows_keeping_its_pages() {
        if !pages::is_large(pages::LARGE_BYTES) {
            return;
        }
        let mb = pages::LARGE_BYTES / 2;
        let (old, new) = (5 * mb, 9 * mb);
        let p = pages::map(old).expect("map") as *mut u64;
        for i in 0..old / 8 {
            // SAFETY: within the mapping just made.
            unsafe { p.add(i).write(i as u64 ^ 0xa5a5) };
        }
        // SAFETY: the block `map` made, given up here.
        let q = unsafe { pages::grow(p as *mut u8, old, new) }.expect("grow") as *mut u64;
        assert_eq!(q as usize % pages::LARGE_BYTES, 0, "aligned");
        let kept = old / pages::LARGE_BYTES * pages::LARGE_BYTES;
        for i in 0..new / 8 {
            // SAFETY: within the grown mapping.
            let w = unsafe { q.add(i).read() };
            if i < kept / 8 {
                assert_eq!(w, i as u64 ^ 0xa5a5, "moved word {i}");
            } else {
                assert_eq!(w, 0, "fresh word {i}");
            }
            // SAFETY: as above.
            unsafe { q.add(i).write(!w) };
        }
        // SAFETY: the grown block, `new` bytes, unused from here.
        unsafe { pages::unmap(q as *mut u8, new) };
    }

    /// A large block that went through the cache is used and freed as
    /// the size it was mapped with.
    #[test]
    #[cfg_attr(miri, ignore = "about mappings, which Miri does not make")]
    fn cached_large_blocks_come_back_whole() {
        let words = 3 * pages::LARGE_BYTES / 8;
        let b = Block::new(words);
        fill(&b, 0);
        drop(b);
        let c = Block::new(words - words / 8);
        fill(&c, 0);
        check(&c, c.words());
        drop(c);
        trim_block_cache();
    }
}
