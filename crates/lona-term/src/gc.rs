//! Generational copying collection of one [`Heap`] (Cheney, BEAM-style).
//!
//! **Roots** are the stack, the register file, the registered roots, and
//! (through the `unsafe` [`Heap::collect_with_roots`]) any raw words the
//! caller passes.
//!
//! **Minor collection.** From-space is the young block plus every fragment
//! (attached messages and overflow chunks). Live objects below the
//! high-water mark (they already survived one collection) are promoted to
//! the old block; live objects above it and in fragments are copied to a new
//! young block sized for the worst case, `next_heap_size(young data +
//! fragments + stack + need)`, and that block is then shrunk in place to
//! what the survivors need, but never below its previous size: the young
//! block keeps its size, as BEAM's does, and dead attached messages do not
//! make it grow. The old block is not scanned: objects are immutable and
//! only ever point to older objects, so nothing old points at young data.
//! Afterwards the high-water mark is the new `htop`. If the old block
//! cannot take everything below the mark, or `fullsweep_after` minors have
//! run, a major collection runs instead.
//!
//! **Major collection.** Everything (young, old, fragments) is copied into
//! one new young block sized for the worst case, the old block is freed, and
//! the new block is then shrunk in place (`realloc`) to
//! `next_heap_size(live + stack + need)`; if the allocator moves it, every
//! pointer is relocated. Memory therefore falls back when live data falls.
//!
//! Forwarding: a moved boxed object's header becomes the new boxed pointer;
//! a moved cons cell's car becomes a `Forward` header and its cdr the new cons
//! pointer. Afterwards the off-heap list is swept: entries whose object was
//! moved are updated, the others' binaries are released.
//!
//! Every from-space block is freed at the end, so memory goes back to the
//! allocator after each collection.
//!
//! A to-space the allocator cannot back unwinds with
//! [`HeapError::OutOfMemory`] before anything is copied (`heap.rs`,
//! "Allocation failure"); a shrink it cannot do keeps the larger block.

use crate::binary::SharedBytes;
use crate::block::{words_between, Block};
use crate::error::HeapError;
use crate::heap::{Heap, VHEAP_MIN_BYTES};
use crate::sizes::next_heap_size;
use crate::term::{
    header_arity, is_header, is_ptr, ptr_of, Kind, RawTerm, FORWARD_CONS, TAG_CONS, TAG_MASK,
};

/// Which collection ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcKind {
    /// Young generation and fragments only.
    Minor,
    /// Everything, compacted into one block.
    Major,
}

/// What a collection did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcStats {
    /// Which collection ran (a requested minor may become a major).
    pub kind: GcKind,
    /// Words of live objects afterwards (young + old, stack excluded).
    pub live_words: usize,
    /// Young block size afterwards, in words.
    pub young_words: usize,
    /// Old block size afterwards, in words.
    pub old_words: usize,
}

struct Collector<const MINOR: bool> {
    old_lo: usize,
    old_hi: usize,
    young_lo: usize,
    young_hi: usize,
    hwm: usize,
    /// The fragments' address ranges, sorted: with the young block (and,
    /// in a major collection, the old block) they are from-space. A
    /// pointer outside all of them is a literal (code's constants, shared
    /// by every process) and is left as it is.
    frags: Vec<(usize, usize)>,
    young_top: *mut u64,
    young_end: *mut u64,
    old_top: *mut u64,
    old_end: *mut u64,
}

impl<const MINOR: bool> Collector<MINOR> {
    /// Moves the object `w` points to, if it is in from-space, and returns
    /// its new word.
    ///
    /// # Safety
    /// `w` is a valid term word of the heap being collected; the to-spaces
    /// are writable up to their ends.
    #[inline(always)]
    unsafe fn evac(&mut self, w: u64) -> u64 {
        if !is_ptr(w) {
            return w;
        }
        let p = ptr_of(w);
        let a = p as usize;
        if !(self.young_lo <= a && a < self.young_hi) {
            let in_old = self.old_lo <= a && a < self.old_hi;
            if MINOR && in_old {
                return w;
            }
            if !in_old && !self.in_frags(a) {
                // Not ours: a literal outside every process heap.
                return w;
            }
        }
        // SAFETY: p is a from-space object (caller); writes go to `dest`,
        // which checks room, and to p itself (forwarding).
        unsafe {
            if w & TAG_MASK == TAG_CONS {
                let car = *p;
                if car == FORWARD_CONS {
                    return *p.add(1);
                }
                let d = self.dest(a, 2);
                *d = car;
                *d.add(1) = *p.add(1);
                let nw = d as usize as u64 | TAG_CONS;
                *p = FORWARD_CONS;
                *p.add(1) = nw;
                nw
            } else {
                let h = *p;
                if !is_header(h) {
                    return h;
                }
                let n = 1 + header_arity(h);
                let d = self.dest(a, n);
                std::ptr::copy_nonoverlapping(p, d, n);
                let nw = d as usize as u64;
                *p = nw;
                nw
            }
        }
    }

    #[inline]
    fn in_frags(&self, a: usize) -> bool {
        let i = self.frags.partition_point(|&(lo, _)| lo <= a);
        i > 0 && a < self.frags[i - 1].1
    }

    #[inline(always)]
    fn dest(&mut self, src: usize, n: usize) -> *mut u64 {
        let (top, end) = if MINOR && self.young_lo <= src && src < self.hwm {
            (&mut self.old_top, self.old_end)
        } else {
            (&mut self.young_top, self.young_end)
        };
        assert!(words_between(*top, end) >= n, "to-space overflow");
        let d = *top;
        // SAFETY: checked that n words fit.
        *top = unsafe { d.add(n) };
        d
    }

    /// Scans the object at `s` in to-space, returning the next object.
    ///
    /// # Safety
    /// `s` is the start of an object copied during this collection.
    #[inline(always)]
    unsafe fn scan(&mut self, s: *mut u64) -> *mut u64 {
        // SAFETY: the object at s is complete; its term slots hold valid
        // words of the heap being collected.
        unsafe {
            let w = *s;
            if is_header(w) {
                let arity = header_arity(w);
                let (off, n) = Kind::from_header(w).term_slots(arity);
                for i in 0..n {
                    let q = s.add(1 + off + i);
                    *q = self.evac(*q);
                }
                s.add(1 + arity)
            } else {
                *s = self.evac(w);
                *s.add(1) = self.evac(*s.add(1));
                s.add(2)
            }
        }
    }

    /// # Safety
    /// As for [`Collector::evac`], for every slot.
    unsafe fn evac_slots(&mut self, slots: &mut [u64]) {
        for w in slots {
            // SAFETY: per the caller.
            *w = unsafe { self.evac(*w) };
        }
    }
}

impl Heap {
    /// Collects: a minor collection unless a major one is due. Afterwards at
    /// least `need` words are free in the young block. Returns an error
    /// (after collecting) if the heap exceeds `max_heap_size`.
    pub fn collect(&mut self, need: usize) -> Result<GcStats, HeapError> {
        // SAFETY: no extra roots.
        unsafe { self.collect_with_roots(GcKind::Minor, need, &mut []) }
    }

    /// A major (full) collection, as `(gc :full)`.
    pub fn collect_major(&mut self, need: usize) -> Result<GcStats, HeapError> {
        // SAFETY: no extra roots.
        unsafe { self.collect_with_roots(GcKind::Major, need, &mut []) }
    }

    /// Collects with extra roots held outside the heap (for an interpreter
    /// that keeps its own register file of [`RawTerm`]s).
    ///
    /// # Safety
    /// Every word in `extra` must be an immediate or a pointer into this
    /// heap obtained since its last collection (or updated by it). The words
    /// are updated in place; any other `RawTerm` pointing into this heap is
    /// dangling afterwards and must not be turned back into a term.
    pub unsafe fn collect_with_roots(
        &mut self,
        kind: GcKind,
        need: usize,
        extra: &mut [RawTerm],
    ) -> Result<GcStats, HeapError> {
        self.close_overflow();
        // Binaries alive after the last minor collection more than twice
        // those after the last major one: old ones may be dead (heap.rs,
        // "Large binaries count too").
        let vheap_grown =
            self.vheap_limit > VHEAP_MIN_BYTES && self.vheap_limit / 2 > self.vheap_after_major;
        let want_major = kind == GcKind::Major
            || self.minors_since_major >= self.config.fullsweep_after
            || vheap_grown;
        // SAFETY: RawTerm is repr(transparent) over u64.
        let extra: &mut [u64] = unsafe { &mut *(extra as *mut [RawTerm] as *mut [u64]) };
        let kind = if want_major || !self.minor(need, extra) {
            self.major(need, extra);
            self.minors_since_major = 0;
            self.counts.major += 1;
            GcKind::Major
        } else {
            self.minors_since_major += 1;
            self.counts.minor += 1;
            GcKind::Minor
        };
        self.gc_wanted.set(false);
        self.msg_words.set(0);
        self.ovf_total.set(0);
        let stats = GcStats {
            kind,
            live_words: self.young_used() + self.old_used(),
            young_words: self.young.words(),
            old_words: self.old.words(),
        };
        let words = self.heap_words();
        let max = self.config.max_heap_size;
        if max > 0 && words > max {
            return Err(HeapError::MaxHeapSize { words, max });
        }
        Ok(stats)
    }

    fn frag_ranges(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = self
            .frags
            .borrow()
            .iter()
            .map(|f| (f.block.base() as usize, f.block.end() as usize))
            .collect();
        v.sort_unstable();
        v
    }

    fn frag_used(&self) -> usize {
        self.frags.borrow().iter().map(|f| f.used).sum()
    }

    /// A minor collection; false (having changed nothing) if the old block
    /// cannot take the promoted data and a major collection is needed.
    fn minor(&mut self, need: usize, extra: &mut [u64]) -> bool {
        let promote = words_between(self.young.base(), self.hwm);
        if promote > 0 {
            if self.old.words() == 0 {
                self.old = Block::new(next_heap_size(2 * promote));
                self.old_top = self.old.base();
            } else if words_between(self.old_top, self.old.end()) < promote {
                return false;
            }
        }
        let stack_len = self.stack_len();
        let young_before = self.config.min_heap_size.max(self.young.words());
        let young_bound = words_between(self.hwm, self.htop.get()) + self.frag_used();
        // The young block keeps its size (it only grows here; a major
        // collection is where it shrinks), as BEAM's minor collection does.
        let size = next_heap_size(
            self.config
                .min_heap_size
                .max(young_bound + stack_len + need)
                .max(self.young.words()),
        );
        let to = Block::new(size);
        let old_scan_start = self.old_top;
        let mut c = Collector::<true> {
            old_lo: self.old.base() as usize,
            old_hi: self.old.end() as usize,
            young_lo: self.young.base() as usize,
            young_hi: self.young.end() as usize,
            hwm: self.hwm as usize,
            frags: self.frag_ranges(),
            young_top: to.base(),
            // SAFETY: stack_len <= size.
            young_end: unsafe { to.end().sub(stack_len) },
            old_top: self.old_top,
            old_end: self.old.end(),
        };
        // SAFETY: the collector only follows valid words of this heap and
        // writes into `to` and the free part of the old block.
        unsafe {
            let new_stop = self.copy_stack(&to, stack_len);
            self.evac_roots(&mut c, new_stop, stack_len, extra);
            let mut ys = to.base();
            let mut os = old_scan_start;
            while ys < c.young_top || os < c.old_top {
                while ys < c.young_top {
                    ys = c.scan(ys);
                }
                while os < c.old_top {
                    os = c.scan(os);
                }
            }
            self.sweep_offheap(&c);
            self.install(to, c.young_top, new_stop);
        }
        self.old_top = c.old_top;
        // The new block was sized for the worst case (every fragment word
        // alive). Attached messages are mostly dead by now: give back what
        // the survivors do not need, down to the block's previous size, so
        // a process that lives by receiving does not grow its young block
        // at every collection.
        let live = self.young_used();
        let target = next_heap_size(young_before.max(live + stack_len + need));
        if target < size {
            self.shrink_young(target, extra);
        }
        true
    }

    fn major(&mut self, need: usize, extra: &mut [u64]) {
        let stack_len = self.stack_len();
        let bound = self.young_used() + self.old_used() + self.frag_used();
        let min = self.config.min_heap_size;
        let size = next_heap_size(min.max(bound + stack_len + need));
        let to = Block::new(size);
        let (old_lo, old_hi) = if self.old.words() == 0 {
            (0, 0)
        } else {
            (self.old.base() as usize, self.old.end() as usize)
        };
        let mut c = Collector::<false> {
            old_lo,
            old_hi,
            young_lo: self.young.base() as usize,
            young_hi: self.young.end() as usize,
            hwm: 0,
            frags: self.frag_ranges(),
            young_top: to.base(),
            // SAFETY: stack_len <= size.
            young_end: unsafe { to.end().sub(stack_len) },
            old_top: std::ptr::null_mut(),
            old_end: std::ptr::null_mut(),
        };
        // SAFETY: as in `minor`; everything is from-space.
        unsafe {
            let new_stop = self.copy_stack(&to, stack_len);
            self.evac_roots(&mut c, new_stop, stack_len, extra);
            let mut s = to.base();
            while s < c.young_top {
                s = c.scan(s);
            }
            self.sweep_offheap(&c);
            self.install(to, c.young_top, new_stop);
        }
        self.old = Block::empty();
        self.old_top = std::ptr::null_mut();
        let live = self.young_used();
        let target = next_heap_size(min.max(live + stack_len + need));
        if target < size {
            self.shrink_young(target, extra);
        }
    }

    /// Copies the stack to the top of `to`, returning the new stack pointer.
    ///
    /// # Safety
    /// `to` has at least `stack_len` words.
    unsafe fn copy_stack(&self, to: &Block, stack_len: usize) -> *mut u64 {
        // SAFETY: both ranges hold stack_len words and do not overlap.
        unsafe {
            let new_stop = to.end().sub(stack_len);
            std::ptr::copy_nonoverlapping(self.stop.get(), new_stop, stack_len);
            new_stop
        }
    }

    /// # Safety
    /// `new_stop..+stack_len` holds the copied stack.
    unsafe fn evac_roots<const M: bool>(
        &mut self,
        c: &mut Collector<M>,
        new_stop: *mut u64,
        stack_len: usize,
        extra: &mut [u64],
    ) {
        // SAFETY: the copied stack, registers, roots and extra roots all hold
        // valid words of this heap.
        unsafe {
            c.evac_slots(std::slice::from_raw_parts_mut(new_stop, stack_len));
            if let Some(x) = self.extra.get_mut() {
                c.evac_slots(x.regs.get_mut());
                c.evac_slots(x.roots.get_mut());
            }
            c.evac_slots(extra);
        }
    }

    /// Updates or releases every off-heap entry after copying, and sets
    /// the next collection's binary limit from the bytes that stay
    /// (`heap.rs`, "Large binaries count too").
    ///
    /// # Safety
    /// Called after the copy and before from-space is freed.
    unsafe fn sweep_offheap<const M: bool>(&mut self, c: &Collector<M>) {
        let mut live = 0usize;
        self.offheap.get_mut().retain_mut(|entry| {
            let a = *entry as usize;
            // SAFETY: the entry is a shared object (word 2: its length),
            // in the old block, or in from-space and still readable:
            // either forwarded (header replaced by the new address, where
            // the object was copied whole) or dead, in which case its
            // count is released.
            unsafe {
                if M && c.old_lo <= a && a < c.old_hi {
                    live = live.saturating_add(*entry.add(2) as usize);
                    return true;
                }
                let h = **entry;
                if is_header(h) {
                    SharedBytes::release(*entry.add(1) as usize as *const SharedBytes);
                    false
                } else {
                    *entry = ptr_of(h);
                    live = live.saturating_add(*entry.add(2) as usize);
                    true
                }
            }
        });
        self.vheap.set(0);
        self.vheap_limit = live.max(VHEAP_MIN_BYTES);
        if !M {
            self.vheap_after_major = live;
        }
    }

    /// Makes `to` the young block and frees the old young block and all
    /// fragments.
    ///
    /// # Safety
    /// `htop` and `stop` lie in `to`.
    unsafe fn install(&mut self, to: Block, htop: *mut u64, stop: *mut u64) {
        self.young = to;
        self.htop.set(htop);
        self.stop.set(stop);
        self.hwm = htop;
        self.frags.get_mut().clear();
    }

    /// Shrinks the young block to `target` words, relocating pointers if the
    /// allocator moves it.
    fn shrink_young(&mut self, target: usize, extra: &mut [u64]) {
        let stack_len = self.stack_len();
        let base = self.young.base();
        let used = self.young_used();
        debug_assert!(used + stack_len <= target);
        let old_stop = self.stop.get();
        // SAFETY: the stack moves down within the block, to above htop.
        unsafe {
            let new_stop = base.add(target - stack_len);
            std::ptr::copy(old_stop, new_stop, stack_len);
        }
        let old_lo = base as usize;
        let old_hi = old_lo + target * 8;
        let Some(delta) = self.young.try_resize(target) else {
            // The allocator could not: keep the larger block, with the
            // stack back at its top.
            // SAFETY: the block is unchanged; both ranges lie in it.
            unsafe { std::ptr::copy(base.add(target - stack_len), old_stop, stack_len) };
            return;
        };
        let nb = self.young.base();
        // SAFETY: the first `target` words were preserved by resize.
        unsafe {
            self.htop.set(nb.add(used));
            self.hwm = nb.add(used);
            self.stop.set(nb.add(target - stack_len));
        }
        if delta == 0 {
            return;
        }
        let fix = |w: &mut u64| {
            if is_ptr(*w) {
                let a = ptr_of(*w) as usize;
                if old_lo <= a && a < old_hi {
                    *w = (*w as i64).wrapping_add(delta as i64) as u64;
                }
            }
        };
        // SAFETY: walks the objects of the (moved) young block and its stack,
        // adjusting words that pointed into the old range.
        unsafe {
            let mut s = nb;
            let end = nb.add(used);
            while s < end {
                let w = *s;
                if is_header(w) {
                    let arity = header_arity(w);
                    let (off, n) = Kind::from_header(w).term_slots(arity);
                    for i in 0..n {
                        fix(&mut *s.add(1 + off + i));
                    }
                    s = s.add(1 + arity);
                } else {
                    fix(&mut *s);
                    fix(&mut *s.add(1));
                    s = s.add(2);
                }
            }
            for w in std::slice::from_raw_parts_mut(self.stop.get(), stack_len) {
                fix(w);
            }
        }
        if let Some(x) = self.extra.get_mut() {
            x.regs.get_mut().iter_mut().for_each(fix);
            x.roots.get_mut().iter_mut().for_each(fix);
        }
        extra.iter_mut().for_each(fix);
        // Entries in the old block (after a minor collection) stay.
        for e in self.offheap.get_mut().iter_mut() {
            let a = *e as usize;
            if old_lo <= a && a < old_hi {
                *e = (*e as isize).wrapping_add(delta) as *mut u64;
            }
        }
    }
}
