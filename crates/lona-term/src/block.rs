//! A block of words from the global allocator: young heaps, old heaps and
//! fragments are all blocks. A block is freed when dropped, so heap memory
//! goes back to the allocator whenever a collection replaces a block.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

pub(crate) struct Block {
    ptr: NonNull<u64>,
    words: usize,
}

impl Block {
    /// An empty block (no allocation).
    pub(crate) const fn empty() -> Block {
        Block {
            ptr: NonNull::dangling(),
            words: 0,
        }
    }

    /// A fresh, uninitialised block of `words` words.
    pub(crate) fn new(words: usize) -> Block {
        if words == 0 {
            return Block::empty();
        }
        let layout = Layout::array::<u64>(words).expect("heap block too large");
        // SAFETY: the layout has non-zero size.
        let p = unsafe { alloc::alloc(layout) } as *mut u64;
        let Some(ptr) = NonNull::new(p) else {
            alloc::handle_alloc_error(layout)
        };
        Block { ptr, words }
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

    /// Resizes the block in place if the allocator can, returning how far
    /// the base moved in bytes (0 if it did not move). The first
    /// `min(old, new)` words are preserved.
    pub(crate) fn resize(&mut self, words: usize) -> isize {
        assert!(words > 0 && self.words > 0);
        let old = Layout::array::<u64>(self.words).expect("layout");
        let new_size = Layout::array::<u64>(words)
            .expect("heap block too large")
            .size();
        // SAFETY: ptr was allocated with `old`, new_size is non-zero and the
        // alignment is unchanged.
        let p = unsafe { alloc::realloc(self.ptr.as_ptr() as *mut u8, old, new_size) } as *mut u64;
        let Some(ptr) = NonNull::new(p) else {
            alloc::handle_alloc_error(Layout::array::<u64>(words).expect("layout"))
        };
        let delta = (p as isize).wrapping_sub(self.ptr.as_ptr() as isize);
        self.ptr = ptr;
        self.words = words;
        delta
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.words > 0 {
            let layout = Layout::array::<u64>(self.words).expect("layout");
            // SAFETY: allocated with this layout in `new`/`resize`.
            unsafe { alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) };
        }
    }
}
