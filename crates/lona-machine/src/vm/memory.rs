//! The process's memory beside its heap: register stack, frames and
//! handlers.
//!
//! The register stack, the frames and the handlers are the process's
//! memory beside its heap, and `:max-heap-size` counts them with it
//! ([`Vm::memory_words`]: a frame is [`FRAME_WORDS`] words). They only grow
//! when a call or `try` finds them full, and that is where the limit is
//! checked (`grow_stack`, `grow_frames`, `grow_handlers`): nothing is
//! added to an instruction that does not grow them; a collection checks
//! heap and stack together. Every growth is asked of the allocator
//! fallibly. Past the limit the growth unwinds with
//! [`HeapError::MaxHeapSize`], and when the allocator cannot back it with
//! [`HeapError::OutOfMemory`], as a heap allocation does
//! (`lona_term::Heap`, "Allocation failure"); whoever runs the VM catches
//! the payload and ends the process (`process.rs`), so a runaway ends
//! itself, never the node.

use lona_term::HeapError;

use super::{Frame, Handler, Vm};
use crate::tag::NIL;

/// Words a caller's frame takes, as `:max-heap-size` counts it.
pub const FRAME_WORDS: usize = std::mem::size_of::<Frame>().div_ceil(8);
pub(super) const HANDLER_WORDS: usize = std::mem::size_of::<Handler>().div_ceil(8);

impl Vm {
    /// The process's memory as `:max-heap-size` counts it, in words: heap
    /// blocks (young and old), register stack, frames and handlers, as
    /// allocated (capacity, not use).
    pub fn memory_words(&self) -> usize {
        self.heap.heap_words() + self.stack_memory_words()
    }

    fn stack_memory_words(&self) -> usize {
        self.stack.capacity()
            + self.frames.capacity() * FRAME_WORDS
            + self.handlers.capacity() * HANDLER_WORDS
    }

    /// Before the stack, frames or handlers grow by `more` words: unwinds
    /// with [`HeapError::MaxHeapSize`] if that would take the process past
    /// its limit (module documentation).
    fn limit_growth(&self, more: usize) {
        let max = self.heap.config().max_heap_size;
        if max > 0 {
            let words = self.memory_words().saturating_add(more);
            if words > max {
                HeapError::MaxHeapSize { words, max }.raise();
            }
        }
    }

    /// Makes sure the stack has `n` words (plus one spare for the
    /// collector's extra root); false past [`super::MAX_STACK_WORDS`] (or the
    /// VM's own limit). Growth past `:max-heap-size` or beyond what the
    /// allocator can back unwinds (module documentation).
    #[inline]
    pub(super) fn ensure(&mut self, n: usize) -> bool {
        if self.stack.len() > n {
            return true;
        }
        self.grow_stack(n)
    }

    #[cold]
    #[inline(never)]
    fn grow_stack(&mut self, n: usize) -> bool {
        if n >= self.max_stack() {
            return false;
        }
        let new = (n + 1).max(self.stack.len() * 2).min(self.max_stack());
        let more = new - self.stack.len();
        self.limit_growth(new.saturating_sub(self.stack.capacity()));
        if self.stack.try_reserve_exact(more).is_err() {
            out_of_memory(new * 8);
        }
        self.stack.resize(new, NIL);
        true
    }

    /// Pushes the caller's frame; the one place the frame stack grows.
    #[inline(always)]
    pub(super) fn push_caller(&mut self, f: Frame) {
        if self.frames.len() == self.frames.capacity() {
            self.grow_frames();
        }
        self.frames.push(f);
    }

    #[cold]
    #[inline(never)]
    fn grow_frames(&mut self) {
        let more = self.frames.capacity().max(4);
        self.limit_growth(more * FRAME_WORDS);
        if self.frames.try_reserve_exact(more).is_err() {
            out_of_memory(more * std::mem::size_of::<Frame>());
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn grow_handlers(&mut self) {
        let more = self.handlers.capacity().max(4);
        self.limit_growth(more * HANDLER_WORDS);
        if self.handlers.try_reserve_exact(more).is_err() {
            out_of_memory(more * std::mem::size_of::<Handler>());
        }
    }

    /// Memory follows the data: a stack grown by a deep recursion that
    /// has returned is given back (state synced). Never fails: when the
    /// allocator cannot give a smaller copy, the larger one stays.
    pub(super) fn shrink_stack(&mut self) {
        let top = (self.cur.base + self.cur.nregs) as usize;
        let keep = (2 * (top + 1)).max(64);
        if self.stack.len() > 4 * keep {
            self.stack.truncate(keep);
            shrink_vec(&mut self.stack);
        }
        if self.frames.capacity() > 4 * (self.frames.len() + 16) {
            let mut v = Vec::new();
            if v.try_reserve_exact(2 * (self.frames.len() + 16)).is_ok() {
                v.extend_from_slice(&self.frames);
                self.frames = v;
            }
        }
    }
}

/// The process cannot have `bytes` more: unwinds with
/// [`HeapError::OutOfMemory`] (module documentation).
#[cold]
fn out_of_memory(bytes: usize) -> ! {
    HeapError::OutOfMemory { bytes }.raise()
}

/// Gives back a vector's spare capacity when the allocator can make the
/// smaller copy (`shrink_to_fit` would abort the node when it cannot).
fn shrink_vec<T: Copy>(v: &mut Vec<T>) {
    let mut n = Vec::new();
    if n.try_reserve_exact(v.len()).is_ok() {
        n.extend_from_slice(v);
        *v = n;
    }
}
