//! A process heap (`docs/design.md`, D7): one young block holding the stack (growing
//! down from the top) and young objects (growing up from the bottom), an
//! old block for promoted objects, a high-water mark, and a list of heap
//! fragments (attached messages and overflow chunks) that count as young.
//!
//! ```text
//! young block:  base                 hwm          htop               stop        end
//!               | survived a GC      | new objects  |      free       | stack ... |
//!               +--------------------+--------------+-----------------+-----------+
//! old block:    | promoted objects          | free                    |
//!               +---------------------------+-------------------------+
//! fragments:    [message] -> [message] -> [overflow chunk] ...
//! ```
//!
//! Allocation takes `&self` and never moves anything: it bumps `htop`, and
//! when the young block is full it bumps into an *overflow chunk* (a heap
//! fragment, as BEAM does for allocations that cannot trigger a collection)
//! and sets [`Heap::needs_gc`]. Collection takes `&mut self`; see
//! [`crate::gc`] and the safety contract on [`Term`].
//!
//! # Large binaries count too (BEAM's virtual binary heap)
//!
//! A large binary is three words here and its bytes elsewhere, so a
//! process that receives 1 MiB binaries and drops them would, going by
//! its words alone, hardly ever collect, and hold every one of them until
//! it did. The heap therefore counts the bytes of the large binaries that
//! became its own since the last collection (made here, copied in, come
//! in a message: `vheap`) and wants a collection once they reach a limit
//! (`vheap_limit`): at least [`VHEAP_MIN_BYTES`], else as much as
//! survived the last collection, so that memory stays within about twice
//! what the process really holds. Binaries that survive into the old
//! block are released only by a major collection: when those alive after
//! a minor one are more than twice those after the last major one (and
//! past the minimum), the next collection is a major one.
//!
//! # Allocation failure and the size limit
//!
//! A heap belongs to one process, and no input to that process may take
//! the node down. Every block a heap takes (young and old blocks, a
//! collection's to-space, overflow chunks, message fragments, large
//! binaries) is asked of the allocator fallibly; when it cannot be had,
//! the allocation unwinds with a [`HeapError::OutOfMemory`] payload
//! ([`HeapError::raise`]) instead of aborting. Allocation takes `&self` and
//! returns plain words, so unwinding is the one way out of it: the
//! process that catches the payload (a Lonala process, in `lona-vm`) ends
//! with a reason saying so, and the heap, consistent at every point a
//! block is asked for, is dropped with it. A collection asks for its
//! to-space before it changes anything; shrinking a block that the
//! allocator cannot move keeps the larger block.
//!
//! [`HeapConfig::max_heap_size`] is checked after every collection
//! (Erlang's rule) and, because allocation never collects, also when an
//! overflow chunk is taken: a single object larger than the limit, or more
//! than [`OVERFLOW_LIMIT_FACTOR`] times the limit allocated since the last
//! collection, unwinds with [`HeapError::MaxHeapSize`] (a slice's garbage
//! stays far below that; a built-in building a value many times the
//! limit does not).

use std::cell::{Cell, OnceCell, RefCell};
use std::marker::PhantomData;
use std::sync::Arc;

use num_bigint::{BigInt, Sign};

use crate::atom::Atom;
use crate::binary::{SharedBytes, SHARED_THRESHOLD};
use crate::block::{words_between, Block};
use crate::error::HeapError;
use crate::sizes::{next_heap_size, MIN_HEAP_WORDS};
use crate::term::{
    header, is_ptr, ptr_of, Kind, Pid, RawTerm, Term, MAX_REF_IDS, SMALL_INT_MAX, SMALL_INT_MIN,
    TAG_BOXED, TAG_CONS,
};

/// Per-heap settings (Erlang's `min_heap_size`, `max_heap_size`,
/// `fullsweep_after`). Sizes are in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapConfig {
    /// The young block never shrinks below this (rounded up to the growth
    /// sequence). Default [`MIN_HEAP_WORDS`] (89 words, 712 bytes).
    pub min_heap_size: usize,
    /// When young + old blocks exceed this after a collection, the
    /// collection reports [`HeapError::MaxHeapSize`]. 0 means no limit.
    pub max_heap_size: usize,
    /// After this many minor collections the next one is a major one.
    pub fullsweep_after: u32,
}

impl Default for HeapConfig {
    fn default() -> Self {
        HeapConfig {
            min_heap_size: MIN_HEAP_WORDS,
            max_heap_size: 0,
            fullsweep_after: 65_535,
        }
    }
}

/// Between two collections, an owner may allocate this many times its
/// `max_heap_size` in overflow chunks before the allocation that would go
/// further unwinds with [`HeapError::MaxHeapSize`] (module documentation).
pub const OVERFLOW_LIMIT_FACTOR: usize = 8;

/// The first overflow chunk after a collection is at most this many
/// words (256 KiB): what an owner allocates between its young block
/// filling up and its next safe point is mostly far less (a few hundred
/// to a few thousand words in k-nucleotide's processes), and a chunk
/// as large as a young block of megabytes is a large block of its own
/// (`block.rs`): it went through the node's block cache at every
/// collection, taking the place of the to-spaces that cache is for, and
/// its first touch cleared a fresh huge page when the cache had none.
pub const OVERFLOW_FIRST_MAX: usize = 32 * 1024;

/// A heap wants a collection once this many bytes of large binaries
/// became its own since the last one (at least; more when more survived:
/// module doc, "Large binaries count too"). BEAM's `min_bin_vheap_size`,
/// 46,422 words.
pub const VHEAP_MIN_BYTES: usize = 46_422 * 8;

/// The young block has no room for another stack word: collect (with
/// `need`) and retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackFull;

/// A handle to a root registered with [`Heap::add_root`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Root(usize);

/// A block of young objects outside the young block.
pub(crate) struct Frag {
    pub(crate) block: Block,
    /// Words in use (for the current overflow chunk: see `ovf_top`).
    pub(crate) used: usize,
}

/// A process heap. See the module documentation.
pub struct Heap {
    pub(crate) young: Block,
    pub(crate) htop: Cell<*mut u64>,
    pub(crate) stop: Cell<*mut u64>,
    pub(crate) hwm: *mut u64,
    pub(crate) old: Block,
    pub(crate) old_top: *mut u64,
    pub(crate) frags: RefCell<Vec<Frag>>,
    /// Index in `frags` of the overflow chunk being filled (usize::MAX: none).
    pub(crate) ovf_idx: Cell<usize>,
    pub(crate) ovf_top: Cell<*mut u64>,
    pub(crate) ovf_end: Cell<*mut u64>,
    pub(crate) ovf_total: Cell<usize>,
    /// Words of attached message fragments since the last collection.
    pub(crate) msg_words: Cell<usize>,
    /// Addresses of the `SharedStr`/`SharedBin` objects in this heap.
    pub(crate) offheap: RefCell<Vec<*mut u64>>,
    /// Bytes of large binaries that became this heap's since the last
    /// collection (module doc, "Large binaries count too").
    pub(crate) vheap: Cell<usize>,
    /// At `vheap` bytes or more, the heap wants a collection.
    pub(crate) vheap_limit: usize,
    /// Bytes of large binaries alive after the last major collection.
    pub(crate) vheap_after_major: usize,
    /// Registers, roots and pins: made by their first use (most process
    /// heaps never have any), one word until then.
    pub(crate) extra: OnceCell<Box<Extra>>,
    pub(crate) config: HeapConfig,
    pub(crate) gc_wanted: Cell<bool>,
    /// Whether its owner reports the closures in it to a code collector
    /// itself (a VM's process heap: [`Heap::set_visited`]); if not, each
    /// closure copied or attached into it is pinned in `Extra::pinned`
    /// until the heap is dropped (`pins.rs`).
    pub(crate) visited: Cell<bool>,
    pub(crate) minors_since_major: u32,
    pub(crate) counts: GcCounts,
}

/// The parts of a heap only some heaps use, boxed apart ([`Heap::extra`]):
/// every process has a heap, and an idle one uses none of these (issue
/// 36: they were 104 of a process's bytes).
#[derive(Default)]
pub(crate) struct Extra {
    /// Registers ([`Heap::set_reg`]).
    pub(crate) regs: RefCell<Vec<u64>>,
    /// Roots ([`Heap::add_root`]) and the free places among them.
    pub(crate) roots: RefCell<Vec<u64>>,
    pub(crate) free_roots: RefCell<Vec<usize>>,
    /// Code ids pinned until the heap is dropped (a heap nobody visits:
    /// [`Heap::set_visited`]).
    pub(crate) pinned: RefCell<Vec<u64>>,
}

/// How many collections a heap has run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcCounts {
    /// Minor collections.
    pub minor: u64,
    /// Major collections.
    pub major: u64,
}

// SAFETY: a Heap exclusively owns its blocks, and the off-heap objects it
// points to have atomic reference counts and bytes that never change below
// any holder's length (appends claim bytes past them with a CAS:
// `binary.rs`); nothing else in it is shared with another thread. (It is
// not Sync: allocation uses Cells.)
unsafe impl Send for Heap {}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Heap {
    /// An empty heap with the default configuration: one young block of
    /// 89 words (712 bytes) and no old block.
    pub fn new() -> Heap {
        Heap::with_config(HeapConfig::default())
    }

    /// An empty heap; the young block is `next_heap_size(min_heap_size)`.
    /// Unwinds with [`HeapError::OutOfMemory`] if the allocator cannot back
    /// it ([`Heap::try_with_config`] returns the error instead).
    pub fn with_config(config: HeapConfig) -> Heap {
        Heap::with_young(Block::new(next_heap_size(config.min_heap_size)), config)
    }

    /// An empty heap as [`Heap::with_config`] makes, or
    /// [`HeapError::OutOfMemory`] if its young block cannot be had (e.g. a
    /// `min_heap_size` the machine cannot back).
    pub fn try_with_config(config: HeapConfig) -> Result<Heap, HeapError> {
        let words = next_heap_size(config.min_heap_size);
        match Block::try_new(words) {
            Some(young) => Ok(Heap::with_young(young, config)),
            None => Err(HeapError::OutOfMemory {
                bytes: words.saturating_mul(8),
            }),
        }
    }

    fn with_young(young: Block, config: HeapConfig) -> Heap {
        let (base, end) = (young.base(), young.end());
        Heap {
            young,
            htop: Cell::new(base),
            stop: Cell::new(end),
            hwm: base,
            old: Block::empty(),
            old_top: std::ptr::null_mut(),
            frags: RefCell::new(Vec::new()),
            ovf_idx: Cell::new(usize::MAX),
            ovf_top: Cell::new(std::ptr::null_mut()),
            ovf_end: Cell::new(std::ptr::null_mut()),
            ovf_total: Cell::new(0),
            msg_words: Cell::new(0),
            offheap: RefCell::new(Vec::new()),
            vheap: Cell::new(0),
            vheap_limit: VHEAP_MIN_BYTES,
            vheap_after_major: 0,
            extra: OnceCell::new(),
            config,
            gc_wanted: Cell::new(false),
            visited: Cell::new(false),
            minors_since_major: 0,
            counts: GcCounts::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> HeapConfig {
        self.config
    }

    /// Words in the young block (stack included).
    pub fn young_words(&self) -> usize {
        self.young.words()
    }

    /// Words in the old block.
    pub fn old_words(&self) -> usize {
        self.old.words()
    }

    /// Words in heap fragments and overflow chunks not yet collected.
    pub fn fragment_words(&self) -> usize {
        self.frags.borrow().iter().map(|f| f.block.words()).sum()
    }

    /// The heap size as Erlang's `heap_size` + `old_heap_size` count it:
    /// young plus old block, in words.
    pub fn heap_words(&self) -> usize {
        self.young.words() + self.old.words()
    }

    /// Replaces `max_heap_size` (Erlang's `process_flag(max_heap_size,
    /// N)`; 0: no limit). A heap already larger is reported by its next
    /// collection.
    pub fn set_max_heap_size(&mut self, words: usize) {
        self.config.max_heap_size = words;
    }

    /// Bytes this heap has taken from the allocator for blocks.
    pub fn allocated_bytes(&self) -> usize {
        (self.heap_words() + self.fragment_words()) * 8
    }

    /// Words of objects in the young block (below `htop`).
    pub fn young_used(&self) -> usize {
        words_between(self.young.base(), self.htop.get())
    }

    /// Words of objects in the old block.
    pub fn old_used(&self) -> usize {
        if self.old.words() == 0 {
            0
        } else {
            words_between(self.old.base(), self.old_top)
        }
    }

    /// Collections run so far.
    pub fn gc_counts(&self) -> GcCounts {
        self.counts
    }

    /// Whether the owner should collect at its next safe point: an
    /// allocation spilled into an overflow chunk, a stack push failed, or
    /// attached messages outweigh the young block.
    pub fn needs_gc(&self) -> bool {
        self.gc_wanted.get()
            || self.msg_words.get() >= self.young.words()
            || self.vheap.get() >= self.vheap_limit
    }

    /// Counts `bytes` of large binaries that became this heap's.
    #[inline]
    pub(crate) fn note_offheap(&self, bytes: usize) {
        self.vheap.set(self.vheap.get().saturating_add(bytes));
    }

    // ---- allocation -------------------------------------------------

    /// `n` contiguous uninitialised words for an object.
    #[inline]
    pub(crate) fn alloc(&self, n: usize) -> *mut u64 {
        let top = self.htop.get();
        if words_between(top, self.stop.get()) >= n {
            // SAFETY: top + n stays within the free part of the young block.
            self.htop.set(unsafe { top.add(n) });
            top
        } else {
            self.alloc_slow(n)
        }
    }

    #[cold]
    fn alloc_slow(&self, n: usize) -> *mut u64 {
        self.gc_wanted.set(true);
        let top = self.ovf_top.get();
        if !top.is_null() && words_between(top, self.ovf_end.get()) >= n {
            // SAFETY: within the current overflow chunk.
            self.ovf_top.set(unsafe { top.add(n) });
            return top;
        }
        // The first chunk of a collection cycle is as large as the young
        // block up to `OVERFLOW_FIRST_MAX`, each next one as large as all
        // before it (so a built-in building a large value takes a few).
        let size = n
            .max(self.young.words().min(OVERFLOW_FIRST_MAX))
            .max(self.ovf_total.get())
            .max(MIN_HEAP_WORDS);
        let max = self.config.max_heap_size;
        let overflow = self.ovf_total.get().saturating_add(size);
        if max > 0 && (n > max || overflow > max.saturating_mul(OVERFLOW_LIMIT_FACTOR)) {
            let words = self.heap_words().saturating_add(overflow);
            HeapError::MaxHeapSize { words, max }.raise();
        }
        let block = Block::new(size);
        let mut frags = self.frags.borrow_mut();
        let idx = self.ovf_idx.get();
        if idx != usize::MAX {
            frags[idx].used = words_between(frags[idx].block.base(), top);
        }
        let base = block.base();
        frags.push(Frag { block, used: 0 });
        self.ovf_idx.set(frags.len() - 1);
        // SAFETY: n <= size, so both pointers are inside the new block.
        unsafe {
            self.ovf_top.set(base.add(n));
            self.ovf_end.set(base.add(size));
        }
        self.ovf_total.set(self.ovf_total.get() + size);
        base
    }

    /// Shrinks the object of `n` words at `p`, the last one allocated, to
    /// its first `keep` words (none: the whole object goes). The words past
    /// `keep` go back to the young block or the overflow chunk when `p` was
    /// the last allocation there; otherwise they are made a dead raw-word
    /// object of their own (its header counts the words after it), so the
    /// heap stays a sequence of whole objects. `p`'s own header is the
    /// caller's to rewrite (for `keep` > 0).
    pub(crate) fn give_back(&self, p: *mut u64, n: usize, keep: usize) {
        debug_assert!(keep <= n);
        if keep == n {
            return;
        }
        // SAFETY: `p .. p + n` is one object this heap allocated, so both
        // ends are inside (or one past) the same block.
        let (end, rest) = unsafe { (p.add(n), p.add(keep)) };
        if self.htop.get() == end {
            self.htop.set(rest);
        } else if self.ovf_top.get() == end {
            self.ovf_top.set(rest);
        } else {
            // SAFETY: `rest` is inside the object, whose words past `keep`
            // nothing refers to; a header of the words after it makes them
            // an object that holds no terms.
            unsafe { rest.write(header(Kind::BigPos, n - keep - 1)) };
        }
    }

    /// Closes the overflow chunk so that every `Frag::used` is exact.
    pub(crate) fn close_overflow(&self) {
        let idx = self.ovf_idx.get();
        if idx != usize::MAX {
            let mut frags = self.frags.borrow_mut();
            frags[idx].used = words_between(frags[idx].block.base(), self.ovf_top.get());
        }
        self.ovf_idx.set(usize::MAX);
        self.ovf_top.set(std::ptr::null_mut());
        self.ovf_end.set(std::ptr::null_mut());
    }

    /// Whether a pointer word refers into one of this heap's blocks.
    pub(crate) fn owns_bits(&self, bits: u64) -> bool {
        if !is_ptr(bits) {
            return true;
        }
        let p = ptr_of(bits);
        self.young.contains(p)
            || self.old.contains(p)
            || self
                .frags
                .borrow()
                .iter()
                .rev()
                .any(|f| f.block.contains(p))
    }

    /// Whether `t` may be stored in this heap as it is: an immediate, an
    /// object of this heap (or of a fragment it took in), or a permanent
    /// term. Otherwise it belongs to another heap or fragment and must be
    /// copied in first ([`Heap::copy_from`]).
    #[inline]
    pub fn owns(&self, t: Term<'_>) -> bool {
        let bits = t.bits();
        self.owns_bits(bits) || crate::ranges::is_permanent(bits)
    }

    /// The word of a term about to be stored in this heap.
    ///
    /// # Panics
    /// If the term's objects live in another heap or fragment: storing it
    /// would leave a pointer the collector cannot follow. Use
    /// [`Heap::copy_from`].
    #[inline]
    pub(crate) fn own(&self, t: Term<'_>) -> u64 {
        let bits = t.bits();
        assert!(
            self.owns_bits(bits) || crate::ranges::is_permanent(bits),
            "term belongs to another heap or fragment; use Heap::copy_from"
        );
        bits
    }

    /// Reads a word of this heap as a term.
    ///
    /// # Safety
    /// `raw` must be an immediate, or a pointer into this heap obtained
    /// since its last collection (or updated by it as an extra root).
    pub unsafe fn term(&self, raw: RawTerm) -> Term<'_> {
        // SAFETY: per the caller's contract the word is valid for &self.
        unsafe { Term::from_bits(raw.0) }
    }

    /// # Safety
    /// `bits` must be valid in this heap for the borrow of `self`.
    #[inline]
    pub(crate) unsafe fn wrap(&self, bits: u64) -> Term<'_> {
        // SAFETY: per the caller's contract.
        unsafe { Term::from_bits(bits) }
    }

    /// Allocates an object from its words (header first).
    fn put(&self, words: &[u64]) -> Term<'_> {
        let p = self.alloc(words.len());
        // SAFETY: `alloc` returned words.len() writable words; the object is
        // well-formed (callers build header + payload), so the boxed term
        // is valid for the borrow of self.
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr(), p, words.len());
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }

    // ---- constructors -----------------------------------------------

    /// An integer: an immediate when it fits, a boxed big integer otherwise.
    pub fn int(&self, v: i64) -> Term<'_> {
        match Term::small_int(v) {
            Some(t) => t,
            None => self.int_from_limbs(v < 0, &[v.unsigned_abs()]),
        }
    }

    /// Any integer, in its canonical (smallest) form.
    pub fn bigint(&self, v: &BigInt) -> Term<'_> {
        let digits = v.magnitude().iter_u64_digits();
        self.int_by(v.sign() == Sign::Minus, digits.len(), |w| {
            digits.for_each(|d| w.push(d))
        })
    }

    /// The integer of sign `neg` (ignored for zero) whose magnitude `fill`
    /// pushes into a [`LimbWriter`] of at most `n` limbs, in its canonical
    /// form (as [`Heap::int_with`], without zeroing the limbs first:
    /// linear kernels write each limb once).
    pub fn int_by(&self, neg: bool, n: usize, fill: impl FnOnce(&mut LimbWriter<'_>)) -> Term<'_> {
        let p = self.alloc(1 + n);
        // SAFETY: `alloc` returned 1 + n writable words. The header makes
        // them an object of raw words (none is read as a term, by the
        // collector or a walk) before `fill` writes into the limbs through
        // the writer, which stays within them.
        let written = unsafe {
            p.write(header(Kind::BigPos, n));
            let mut w = LimbWriter {
                ptr: p.add(1),
                len: 0,
                cap: n,
                _words: PhantomData,
            };
            fill(&mut w);
            std::slice::from_raw_parts(p.add(1), w.len)
        };
        self.finish_int(p, n, neg, written)
    }

    /// The integer of sign `neg` (ignored for zero) and magnitude `limbs`
    /// (`u64`, least significant first; top zero limbs allowed), in its
    /// canonical form.
    pub fn int_from_limbs(&self, neg: bool, limbs: &[u64]) -> Term<'_> {
        self.int_by(neg, limbs.len(), |w| limbs.iter().for_each(|&l| w.push(l)))
    }

    /// The integer of sign `neg` (ignored for zero) whose magnitude `fill`
    /// writes into `n` zeroed limbs (least significant first; it may leave
    /// top limbs zero), in its canonical form: an immediate when it fits,
    /// else a big integer of exactly its limbs. The object is made in place
    /// (header, `n` limbs), then shrunk to what the value needs; the words
    /// it no longer needs go back to the heap when nothing was allocated
    /// after it (nothing is, unless `fill` allocates), else they become a
    /// dead object of their own, so the heap stays a walkable sequence of
    /// objects (`scan.rs`).
    pub fn int_with(&self, neg: bool, n: usize, fill: impl FnOnce(&mut [u64])) -> Term<'_> {
        let p = self.alloc(1 + n);
        // SAFETY: `alloc` returned 1 + n writable words, which nothing else
        // refers to yet. The header is written first and the limbs zeroed,
        // so the words are a well-formed (raw-word) object from here on;
        // `fill` sees them as an initialised `&mut [u64]` for its call only.
        let limbs = unsafe {
            p.write(header(Kind::BigPos, n));
            std::ptr::write_bytes(p.add(1), 0, n);
            let out = std::slice::from_raw_parts_mut(p.add(1), n);
            fill(out);
            out
        };
        self.finish_int(p, n, neg, limbs)
    }

    /// Ends the object of `n` limbs at `p` whose first limbs are `limbs`
    /// (the value; any after them are not part of it): an immediate when
    /// the value fits one, else the object shrunk to the value's limbs.
    fn finish_int(&self, p: *mut u64, n: usize, neg: bool, limbs: &[u64]) -> Term<'_> {
        let len = limbs.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1);
        if let Some(t) = small_of(neg, &limbs[..len]) {
            self.give_back(p, 1 + n, 0);
            return t;
        }
        let kind = if neg { Kind::BigNeg } else { Kind::BigPos };
        // SAFETY: `p` is the caller's object of `n` limbs (header first,
        // `limbs` the start of its payload); its header now counts the
        // `len` limbs that hold the value, and the words past them are
        // given back or made a dead object of their own.
        unsafe {
            p.write(header(kind, len));
            self.give_back(p, 1 + n, 1 + len);
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }

    /// A float; every NaN becomes the canonical `f64::NAN`.
    pub fn float(&self, f: f64) -> Term<'_> {
        let f = if f.is_nan() { f64::NAN } else { f };
        self.put(&[header(Kind::Float, 1), f.to_bits()])
    }

    /// A string; 64 bytes or more are shared off-heap.
    pub fn string(&self, s: &str) -> Term<'_> {
        self.bytes_object(s.as_bytes(), Kind::Str, Kind::SharedStr)
    }

    /// A binary; 64 bytes or more are shared off-heap.
    pub fn binary(&self, b: &[u8]) -> Term<'_> {
        self.bytes_object(b, Kind::Bin, Kind::SharedBin)
    }

    fn bytes_object(&self, b: &[u8], inline: Kind, shared: Kind) -> Term<'_> {
        if b.len() >= SHARED_THRESHOLD {
            return self.shared_object(shared, SharedBytes::create(b), b.len());
        }
        let n = b.len().div_ceil(8);
        let p = self.alloc(2 + n);
        // SAFETY: 2 + n fresh words; the last payload word is zeroed before
        // the bytes are copied over it, so no padding is left uninitialised.
        unsafe {
            p.write(header(inline, 1 + n));
            p.add(1).write(b.len() as u64);
            if n > 0 {
                p.add(1 + n).write(0);
            }
            std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(2) as *mut u8, b.len());
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }

    /// A binary of `buf[start..start + len]` that shares `buf` instead of
    /// copying it (`len` of at least 64 bytes; the binary keeps the whole
    /// buffer alive, so callers adopt only what is most of it).
    pub(crate) fn binary_in(&self, buf: &Arc<Vec<u8>>, start: usize, len: usize) -> Term<'_> {
        debug_assert!(len >= SHARED_THRESHOLD);
        self.shared_object(
            Kind::SharedBin,
            SharedBytes::adopt(buf.clone(), start, len),
            len,
        )
    }

    /// The object for `len` bytes of block `sb`, owning one count of it.
    pub(crate) fn shared_object(&self, kind: Kind, sb: *const SharedBytes, len: usize) -> Term<'_> {
        let t = self.put(&[header(kind, 2), sb as usize as u64, len as u64]);
        self.offheap.borrow_mut().push(ptr_of(t.bits()));
        self.note_offheap(len);
        t
    }

    /// The string `s` followed by `tail`, or `None` if `s` is not a
    /// string. Amortised O(len(tail)): appending to the newest version of
    /// a large string writes into its block's spare room, as Erlang
    /// appends to a writable binary (`binary.rs`, "Appending in place");
    /// otherwise the result is copied into a block with room to double.
    /// `s` may belong to any heap or fragment.
    pub fn string_append(&self, s: Term<'_>, tail: &str) -> Option<Term<'_>> {
        let head = s.as_str()?;
        let total = head.len() + tail.len();
        if total < SHARED_THRESHOLD {
            let mut buf = [0u8; SHARED_THRESHOLD];
            buf[..head.len()].copy_from_slice(head.as_bytes());
            buf[head.len()..total].copy_from_slice(tail.as_bytes());
            return Some(self.bytes_object(&buf[..total], Kind::Str, Kind::SharedStr));
        }
        if let Some(sb) = shared_block(s) {
            // SAFETY: `s` holds `sb` alive, and `head.len()` is its length.
            if tail.is_empty()
                // SAFETY: `s` holds `sb` alive, and `head.len()` is its length.
                || unsafe { SharedBytes::try_append(sb, head.len(), tail.as_bytes()) }
            {
                // SAFETY: as above; the new object takes its own count.
                unsafe { SharedBytes::retain(sb) };
                return Some(self.shared_object(Kind::SharedStr, sb, total));
            }
        }
        let sb = SharedBytes::with_capacity(head.as_bytes(), 2 * total);
        // SAFETY: a fresh block of ours with room for the tail.
        let appended = unsafe { SharedBytes::try_append(sb, head.len(), tail.as_bytes()) };
        debug_assert!(appended);
        Some(self.shared_object(Kind::SharedStr, sb, total))
    }

    /// A cons cell `(head . tail)`.
    pub fn cons(&self, head: Term<'_>, tail: Term<'_>) -> Term<'_> {
        let (h, t) = (self.own(head), self.own(tail));
        let p = self.alloc(2);
        // SAFETY: two fresh words, both valid terms of this heap.
        unsafe {
            p.write(h);
            p.add(1).write(t);
            self.wrap(p as usize as u64 | TAG_CONS)
        }
    }

    /// A proper list of `items`.
    pub fn list(&self, items: &[Term<'_>]) -> Term<'_> {
        self.list_with_tail(items, Term::EMPTY_LIST)
    }

    /// A list of `items` ending in `tail` (improper unless `tail` is a list).
    pub fn list_with_tail(&self, items: &[Term<'_>], tail: Term<'_>) -> Term<'_> {
        let mut acc = self.own(tail);
        if items.is_empty() {
            // SAFETY: checked to be ours.
            return unsafe { self.wrap(acc) };
        }
        let p = self.alloc(2 * items.len());
        for (i, item) in items.iter().enumerate().rev() {
            let w = self.own(*item);
            // SAFETY: cell i of the 2*len fresh words; cells are written
            // back to front so each cdr is an already written cell.
            unsafe {
                let c = p.add(2 * i);
                c.write(w);
                c.add(1).write(acc);
                acc = c as usize as u64 | TAG_CONS;
            }
        }
        // SAFETY: acc is the first cell just written.
        unsafe { self.wrap(acc) }
    }

    /// A vector (Lonala's tuple).
    pub fn vector(&self, items: &[Term<'_>]) -> Term<'_> {
        self.with_terms(header(Kind::Vector, items.len()), &[], items)
    }

    /// A closure: an opaque code id and its captured values.
    ///
    /// # Safety
    /// `code` must be a code word its interpreter made and keeps alive
    /// (for `lona-vm`, the id of a live compiled function): the
    /// interpreter calls it, and the printer names it, by following it as
    /// a pointer. This crate itself never reads it.
    pub unsafe fn closure(&self, code: u64, captured: &[Term<'_>]) -> Term<'_> {
        self.with_terms(header(Kind::Closure, 1 + captured.len()), &[code], captured)
    }

    pub(crate) fn with_terms(&self, head: u64, raw: &[u64], items: &[Term<'_>]) -> Term<'_> {
        let p = self.alloc(1 + raw.len() + items.len());
        // SAFETY: fresh words for header, raw payload and terms.
        unsafe {
            p.write(head);
            for (i, w) in raw.iter().enumerate() {
                p.add(1 + i).write(*w);
            }
            let q = p.add(1 + raw.len());
            for (i, t) in items.iter().enumerate() {
                q.add(i).write(self.own(*t));
            }
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }

    /// A regular expression value: its source, as `#"..."` reads it. Its
    /// syntax is checked by whoever compiles it.
    pub fn regex(&self, source: &str) -> Term<'_> {
        let s = self.string(source);
        self.with_terms(header(Kind::Regex, 1), &[], &[s])
    }

    /// A map from pairs already sorted with unique keys (at most
    /// [`crate::MAP_SMALL_MAX`]).
    pub(crate) fn sorted_map(&self, pairs: &[(Term<'_>, Term<'_>)]) -> Term<'_> {
        let n = pairs.len();
        let p = self.alloc(1 + 2 * n);
        // SAFETY: 1 + 2n fresh words: header, n keys, n values.
        unsafe {
            p.write(header(Kind::Map, 2 * n));
            for (i, (k, v)) in pairs.iter().enumerate() {
                p.add(1 + i).write(self.own(*k));
                p.add(1 + n + i).write(self.own(*v));
            }
            self.wrap(p as usize as u64 | TAG_BOXED)
        }
    }

    // ---- unchecked constructors for an interpreter -------------------

    /// The addresses of the young block's allocation cursor (`htop`) and
    /// of its end (`stop`), for code made at run time that allocates
    /// inline (Lona's compiling tier): `n` words fit when `htop + n <=
    /// stop`; they are taken by storing `htop + n` at the first address.
    /// Else the heap's own allocation (its slow path) must allocate. Both addresses stay
    /// valid as long as the heap does (a collection changes what they
    /// hold, not where they are); writing through them is up to the
    /// caller's own `unsafe`.
    pub fn bump_cursor(&self) -> (*mut *mut u64, *const *mut u64) {
        (self.htop.as_ptr(), self.stop.as_ptr())
    }

    /// The addresses of the current overflow chunk's cursor and end (both
    /// null while there is none), for the same code: where the young
    /// block is full, `n` words fit in the chunk when its cursor is not
    /// null and `cursor + n <= end`, taken by storing `cursor + n` at the
    /// first address, as the heap's slow path takes them. A chunk exists
    /// only once that slow path has asked for a collection (`needs_gc`),
    /// so nothing else needs doing. Valid as long as the heap is; writing
    /// through them is up to the caller's own `unsafe`.
    pub fn overflow_cursor(&self) -> (*mut *mut u64, *const *mut u64) {
        (self.ovf_top.as_ptr(), self.ovf_end.as_ptr())
    }

    /// A cons cell from raw words, without the ownership check.
    ///
    /// # Safety
    /// `head` and `tail` must be immediates, words of this heap valid since
    /// its last collection, or permanent terms.
    #[inline]
    pub unsafe fn cons_raw(&self, head: RawTerm, tail: RawTerm) -> RawTerm {
        let p = self.alloc(2);
        // SAFETY: two fresh words; valid terms per the caller.
        unsafe {
            p.write(head.0);
            p.add(1).write(tail.0);
        }
        RawTerm(p as usize as u64 | TAG_CONS)
    }

    /// A list of `items` (as many as `items.len()` says, at most) in
    /// reverse order (the first item last), ending in `tail`, its cells in
    /// one allocation, without the ownership check: a long list built at
    /// once (`reverse`, or `range` from a reversed iterator) takes the
    /// allocator's slow path once, not once a cell.
    ///
    /// # Safety
    /// As for [`Heap::cons_raw`], for every item and for `tail`.
    pub unsafe fn list_raw_rev(
        &self,
        items: impl ExactSizeIterator<Item = RawTerm>,
        tail: RawTerm,
    ) -> RawTerm {
        let n = items.len();
        if n == 0 {
            return tail;
        }
        let p = self.alloc(2 * n);
        let mut acc = tail.0;
        for (k, w) in items.take(n).enumerate() {
            // SAFETY: cell n-1-k of the 2n fresh words, written back to
            // front, so each cdr is a whole cell (or `tail`).
            unsafe {
                let c = p.add(2 * (n - 1 - k));
                c.write(w.0);
                c.add(1).write(acc);
                acc = c as usize as u64 | TAG_CONS;
            }
        }
        RawTerm(acc)
    }

    /// A vector from raw words, without the ownership check.
    ///
    /// # Safety
    /// As for [`Heap::cons_raw`], for every item.
    pub unsafe fn vector_raw(&self, items: &[RawTerm]) -> RawTerm {
        // SAFETY: per the caller.
        unsafe { self.boxed_raw(header(Kind::Vector, items.len()), &[], items) }
    }

    /// A closure from raw words, without the ownership check.
    ///
    /// # Safety
    /// As for [`Heap::cons_raw`], for every captured value; `code` as for
    /// [`Heap::closure`].
    pub unsafe fn closure_raw(&self, code: u64, captured: &[RawTerm]) -> RawTerm {
        // SAFETY: per the caller.
        unsafe { self.boxed_raw(header(Kind::Closure, 1 + captured.len()), &[code], captured) }
    }

    /// # Safety
    /// As for [`Heap::cons_raw`]; `head` describes `raw` + `items`.
    unsafe fn boxed_raw(&self, head: u64, raw: &[u64], items: &[RawTerm]) -> RawTerm {
        let p = self.alloc(1 + raw.len() + items.len());
        // SAFETY: fresh words for header, raw payload and terms.
        unsafe {
            p.write(head);
            std::ptr::copy_nonoverlapping(raw.as_ptr(), p.add(1), raw.len());
            std::ptr::copy_nonoverlapping(
                items.as_ptr() as *const u64,
                p.add(1 + raw.len()),
                items.len(),
            );
        }
        RawTerm(p as usize as u64 | TAG_BOXED)
    }

    /// A reference.
    pub fn reference(&self, id: u64) -> Term<'_> {
        self.put(&[header(Kind::Ref, 1), id])
    }

    /// A pid: an immediate when its value fits 61 bits, boxed otherwise.
    pub fn pid(&self, p: Pid) -> Term<'_> {
        match Term::local_pid(p) {
            Some(t) => t,
            None => self.put(&[header(Kind::Pid, 1), p.0]),
        }
    }

    /// A pid of another node (the distribution's `NEW_PID_EXT`): the
    /// node's name, and the pid's id, serial and creation there. The heap
    /// does not know this node's own name: one naming it is kept as given
    /// (and differs from every local pid); `etf::decode_node` makes local
    /// pids of those.
    pub fn ext_pid(&self, node: Atom, id: u32, serial: u32, creation: u32) -> Term<'_> {
        self.put(&[
            header(Kind::ExtPid, 4),
            u64::from(node.index()),
            u64::from(id),
            u64::from(serial),
            u64::from(creation),
        ])
    }

    /// A reference of another node (the distribution's
    /// `NEWER_REFERENCE_EXT`): the node's name, its creation and the
    /// reference's id words (1 to [`MAX_REF_IDS`]).
    ///
    /// # Panics
    /// If `ids` is empty or longer than [`MAX_REF_IDS`] (a decoder checks
    /// the count first).
    pub fn ext_ref(&self, node: Atom, creation: u32, ids: &[u32]) -> Term<'_> {
        assert!(
            (1..=MAX_REF_IDS).contains(&ids.len()),
            "a reference has 1 to {MAX_REF_IDS} id words, not {}",
            ids.len()
        );
        let mut words = [0u64; 3 + MAX_REF_IDS];
        words[0] = header(Kind::ExtRef, 2 + ids.len());
        words[1] = u64::from(node.index());
        words[2] = u64::from(creation);
        for (w, id) in words[3..].iter_mut().zip(ids) {
            *w = u64::from(*id);
        }
        self.put(&words[..3 + ids.len()])
    }

    /// A deep copy of `t` (from any heap or fragment) in this heap. Shared
    /// subterms are copied once per reference (as BEAM's copy does);
    /// large binaries are shared, not copied.
    pub fn copy_from(&self, t: Term<'_>) -> Term<'_> {
        if t.is_immediate() {
            // SAFETY: immediates are valid anywhere.
            return unsafe { self.wrap(t.bits()) };
        }
        let size = crate::copy::tree_size(t);
        let p = self.alloc(size);
        let mut offheap = self.offheap.borrow_mut();
        let before = offheap.len();
        let mut codes = Vec::new();
        let track = (!self.visited.get()).then_some(&mut codes);
        // SAFETY: p has `size` fresh words, exactly what the copy writes.
        let bits = unsafe { crate::copy::copy_tree(t, p, size, &mut offheap, track) };
        if !codes.is_empty() {
            for c in &codes {
                crate::pins::retain(*c);
            }
            self.keep_pinned(codes);
        }
        // SAFETY: the entries the copy added are live shared objects.
        self.note_offheap(unsafe { crate::binary::offheap_bytes(&offheap[before..]) });
        drop(offheap);
        // SAFETY: the copy wrote a term into this heap's fresh words.
        unsafe { self.wrap(bits) }
    }

    // ---- stack --------------------------------------------------------

    /// Pushes a word on the stack (at the top of the young block).
    pub fn push(&self, t: Term<'_>) -> Result<(), StackFull> {
        let w = self.own(t);
        let stop = self.stop.get();
        if stop == self.htop.get() {
            self.gc_wanted.set(true);
            return Err(StackFull);
        }
        // SAFETY: stop > htop, so stop - 1 is a free word of the young block.
        unsafe {
            let s = stop.sub(1);
            s.write(w);
            self.stop.set(s);
        }
        Ok(())
    }

    /// Pops the top of the stack.
    pub fn pop(&self) -> Option<Term<'_>> {
        let stop = self.stop.get();
        if stop == self.young.end() {
            return None;
        }
        // SAFETY: stop < end, so it is a pushed, valid word of this heap.
        unsafe {
            let w = stop.read();
            self.stop.set(stop.add(1));
            Some(self.wrap(w))
        }
    }

    /// Words on the stack.
    pub fn stack_len(&self) -> usize {
        words_between(self.stop.get(), self.young.end())
    }

    /// The stack word `i` below the top (0 is the top).
    pub fn stack_get(&self, i: usize) -> Option<Term<'_>> {
        (i < self.stack_len()).then(|| {
            // SAFETY: i is within the stack, whose words are valid terms.
            unsafe { self.wrap(self.stop.get().add(i).read()) }
        })
    }

    /// Overwrites the stack word `i` below the top; false if out of range.
    pub fn stack_set(&self, i: usize, t: Term<'_>) -> bool {
        let w = self.own(t);
        if i >= self.stack_len() {
            return false;
        }
        // SAFETY: i is within the stack.
        unsafe { self.stop.get().add(i).write(w) };
        true
    }

    // ---- registers and roots -------------------------------------------

    /// The registers, roots and pins, made at the first use of any.
    pub(crate) fn extra(&self) -> &Extra {
        self.extra.get_or_init(Box::default)
    }

    /// Sets register `i` (the interpreter's X registers; grows as needed).
    pub fn set_reg(&self, i: usize, t: Term<'_>) {
        let w = self.own(t);
        let mut regs = self.extra().regs.borrow_mut();
        if regs.len() <= i {
            regs.resize(i + 1, crate::term::NIL);
        }
        regs[i] = w;
    }

    /// Register `i` (`nil` if never set).
    pub fn reg(&self, i: usize) -> Term<'_> {
        let w = self
            .extra
            .get()
            .and_then(|x| x.regs.borrow().get(i).copied())
            .unwrap_or(crate::term::NIL);
        // SAFETY: registers hold valid terms of this heap (checked on store,
        // updated by every collection).
        unsafe { self.wrap(w) }
    }

    /// Number of registers in use.
    pub fn reg_count(&self) -> usize {
        self.extra.get().map_or(0, |x| x.regs.borrow().len())
    }

    /// Truncates the register file to `n` registers.
    pub fn truncate_regs(&self, n: usize) {
        if let Some(x) = self.extra.get() {
            x.regs.borrow_mut().truncate(n);
        }
    }

    /// Registers a root: the term survives collections and is read back
    /// with [`Heap::root`].
    pub fn add_root(&self, t: Term<'_>) -> Root {
        let w = self.own(t);
        let x = self.extra();
        if let Some(i) = x.free_roots.borrow_mut().pop() {
            x.roots.borrow_mut()[i] = w;
            return Root(i);
        }
        let mut roots = x.roots.borrow_mut();
        roots.push(w);
        Root(roots.len() - 1)
    }

    /// The current value of a root.
    ///
    /// # Panics
    /// If the root was never added to this heap.
    pub fn root(&self, r: Root) -> Term<'_> {
        let w = self.extra().roots.borrow()[r.0];
        // SAFETY: roots hold valid terms of this heap.
        unsafe { self.wrap(w) }
    }

    /// Replaces the value of a root.
    pub fn set_root(&self, r: Root, t: Term<'_>) {
        let w = self.own(t);
        self.extra().roots.borrow_mut()[r.0] = w;
    }

    /// Drops a root; its handle may be reused by a later `add_root`.
    pub fn remove_root(&self, r: Root) {
        let x = self.extra();
        x.roots.borrow_mut()[r.0] = crate::term::NIL;
        x.free_roots.borrow_mut().push(r.0);
    }
}

impl Heap {
    /// Tells the heap that its owner reports the closures in it to the
    /// code collector of the VM that made them (a process heap, asked on
    /// each visit), so closures copied or attached into it need no pins
    /// (`pins.rs`). A heap nobody asks (the default: one a Rust program
    /// keeps) pins them until it is dropped.
    pub fn set_visited(&self, on: bool) {
        self.visited.set(on);
    }

    /// Whether [`Heap::set_visited`] is on.
    pub fn is_visited(&self) -> bool {
        self.visited.get()
    }

    /// Keeps pins on `codes` until the heap is dropped.
    pub(crate) fn keep_pinned(&self, codes: Vec<u64>) {
        self.extra().pinned.borrow_mut().extend(codes);
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        // SAFETY: the list holds every live shared object of this heap, each
        // owning one count; the heap's blocks die with it.
        unsafe { crate::binary::release_all(&self.offheap.borrow()) };
        if let Some(x) = self.extra.get_mut() {
            crate::pins::release_all(x.pinned.get_mut());
        }
    }
}

/// The off-heap block of a `SharedStr`/`SharedBin` term.
fn shared_block(t: Term<'_>) -> Option<*const SharedBytes> {
    let h = t.boxed_header()?;
    match Kind::from_header(h) {
        // SAFETY: a shared object's payload word 0 is its block.
        Kind::SharedStr | Kind::SharedBin => {
            // SAFETY: a shared object's payload word 0 is its block.
            Some(unsafe { t.payload(0) } as usize as *const SharedBytes)
        }
        _ => None,
    }
}

/// The integer of sign `neg` and magnitude `limbs` (top limb not zero) as
/// an immediate, if it is in the small range.
#[inline]
fn small_of(neg: bool, limbs: &[u64]) -> Option<Term<'static>> {
    match *limbs {
        [] => Term::small_int(0),
        [m] if !neg && m <= SMALL_INT_MAX as u64 => Term::small_int(m as i64),
        [m] if neg && m <= SMALL_INT_MIN.unsigned_abs() => {
            Term::small_int((m as i64).wrapping_neg())
        }
        _ => None,
    }
}

/// Where [`Heap::int_by`]'s caller writes a magnitude, limb after limb
/// (least significant first), straight into the heap object: no zeroing
/// first, no copy after.
pub struct LimbWriter<'a> {
    ptr: *mut u64,
    len: usize,
    cap: usize,
    _words: PhantomData<&'a mut [u64]>,
}

impl LimbWriter<'_> {
    /// Appends the next limb.
    ///
    /// # Panics
    /// Past the number of limbs the writer was made for.
    #[inline]
    pub fn push(&mut self, limb: u64) {
        assert!(self.len < self.cap, "more limbs than allocated");
        // SAFETY: `ptr` points at `cap` writable words of one object
        // (`int_by`), and `len < cap`.
        unsafe { self.ptr.add(self.len).write(limb) };
        self.len += 1;
    }

    /// The limbs written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no limb was written yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(h: &Heap, t: RawTerm) -> Vec<i64> {
        // SAFETY: a word of `h` made since its last collection.
        let t = unsafe { h.term(t) };
        t.list_iter().map(|e| e.as_i64().unwrap()).collect()
    }

    /// An iterator that claims `len` items and yields `real`.
    struct Liar(std::ops::Range<i64>, usize);
    impl Iterator for Liar {
        type Item = RawTerm;
        fn next(&mut self) -> Option<RawTerm> {
            self.0.next().map(|i| Term::small_int(i).unwrap().raw())
        }
        fn size_hint(&self) -> (usize, Option<usize>) {
            (self.1, Some(self.1))
        }
    }
    impl ExactSizeIterator for Liar {}

    #[test]
    fn lists_in_one_allocation() {
        let h = Heap::new();
        let small = |i: usize| Term::small_int(i as i64).unwrap().raw();
        let tail = h.cons(Term::small_int(99).unwrap(), Term::EMPTY_LIST).raw();
        // SAFETY: immediates and a word of `h`.
        let (l, r, e) = unsafe {
            (
                h.list_raw_rev((0..5).rev().map(small), tail),
                h.list_raw_rev((0..5).map(small), tail),
                h.list_raw_rev((0..0).map(small), Term::EMPTY_LIST.raw()),
            )
        };
        assert_eq!(ints(&h, l), [0, 1, 2, 3, 4, 99]);
        assert_eq!(ints(&h, r), [4, 3, 2, 1, 0, 99]);
        assert!(ints(&h, e).is_empty());
        // Past the young block: one overflow chunk.
        let big = 10 * h.young_words();
        // SAFETY: immediates.
        let b = unsafe { h.list_raw_rev((0..big).map(small), Term::EMPTY_LIST.raw()) };
        assert_eq!(ints(&h, b).len(), big);
        assert!(h.needs_gc(), "it took the slow path");
        // An iterator yielding fewer or more items than it claims gives
        // a whole list of what it yielded (at most its claim).
        // SAFETY: immediates.
        let (few, many) = unsafe {
            (
                h.list_raw_rev(Liar(0..3, 5), Term::EMPTY_LIST.raw()),
                h.list_raw_rev(Liar(0..9, 4), Term::EMPTY_LIST.raw()),
            )
        };
        assert_eq!(ints(&h, few), [2, 1, 0]);
        assert_eq!(ints(&h, many), [3, 2, 1, 0]);
    }
}
