//! Cells: a value the whole node shares and any holder may replace
//! (Lonala's atoms, Clojure's `atom`).
//!
//! A cell is made like a large binary (`binary.rs`): a three-word object
//! on the heap (`Cell` header, its block, 0) owning one count of an
//! off-heap block, and the block's count is that of every object, in any
//! heap, fragment or permanent area, that holds the cell. Copying a cell
//! into a message copies those words and adds a count, so the receiver
//! holds the same cell; the last holder to go frees it.
//!
//! What the block holds is a [`CellState`]: slots, each a value kept in a
//! [`Fragment`] of its own (off every heap) and a version that counts its
//! changes. The rules:
//!
//! 1. **Reading copies.** [`CellRef::read`] copies a slot's value into
//!    the reader's heap, under the slot lock, with its version. The copy
//!    is the reader's: a later change of the cell does not change it.
//! 2. **Writing compares versions.** [`CellRef::compare_and_set`] copies
//!    the new value into a fragment *before* it takes the lock, then
//!    replaces the slot only if its version is still the one read, and
//!    bumps the version. So `swap!` is a loop of read, compute,
//!    compare-and-set, which runs its function again when another
//!    process changed the cell meanwhile (as Clojure's does). Versions
//!    rather than values are compared: two copies of a value are never
//!    the same object, and an equal value put back in between is a change
//!    all the same.
//! 3. **The old value is dropped after the lock is let go:** dropping it
//!    may free other cells (their values too), which never waits for this
//!    one's lock.
//! 4. **Identity.** A cell equals only itself; it orders and hashes by
//!    its serial number, given when it is made (so that `#{a b}` and
//!    printing are the same in every run).
//!
//! A cell that holds itself, directly or through other cells, keeps
//! itself alive: such a cycle is never freed (as with reference counts
//! anywhere). A cell cannot leave the node: the distribution and the
//! serialized form refuse it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::binary::{CellRef, SharedBytes};
use crate::fragment::Fragment;
use crate::heap::Heap;
use crate::term::{Kind, Term};

/// How many slots a cell has: its value, and what its language keeps
/// beside it (Lonala: the validator, watches and metadata, as one map).
pub const CELL_SLOTS: usize = 2;

/// Serial numbers of cells (rule 4). Relaxed: only uniqueness matters.
static SERIAL: AtomicU64 = AtomicU64::new(1);

/// One slot: a value and how many times it was replaced.
struct Slot {
    version: u64,
    value: Fragment,
}

/// What a cell's block holds (module documentation).
pub(crate) struct CellState {
    serial: u64,
    /// Written by [`CellRef::compare_and_set`], read by [`CellRef::read`],
    /// from any thread, under the lock.
    slots: Mutex<[Slot; CELL_SLOTS]>,
}

impl CellState {
    /// Slots holding `values`, each at version 0.
    fn new(values: [Fragment; CELL_SLOTS]) -> CellState {
        CellState {
            // Relaxed: a counter whose values need only be distinct.
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            slots: Mutex::new(values.map(|value| Slot { version: 0, value })),
        }
    }

    /// The slots. A panic while one was held (a heap that ran out of
    /// memory while copying a value in) left them whole: copying into a
    /// heap never changes the slot it reads.
    fn lock(&self) -> MutexGuard<'_, [Slot; CELL_SLOTS]> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

// `CellRef` itself is `binary.rs`'s (what `view.rs` makes, below every
// module that copies); its operations are here.
impl<'h> CellRef<'h> {
    fn state(self) -> &'h CellState {
        // SAFETY: a `CellRef<'h>` is made only from a live `Cell` object
        // (`view.rs`), which holds a count of its block for 'h; a `Cell`
        // object's block is always a cell's.
        unsafe { SharedBytes::held(self.block) }
            .and_then(|x| x.downcast_ref::<CellState>())
            .expect("a cell's block holds a cell")
    }

    /// The cell's serial number: distinct for every cell of this OS
    /// process, and how cells order and hash.
    pub fn serial(self) -> u64 {
        self.state().serial
    }

    /// A copy of slot `slot`'s value in `heap`, and the slot's version
    /// (rule 1). Panics if `slot` is not below [`CELL_SLOTS`].
    pub fn read(self, slot: usize, heap: &Heap) -> (u64, Term<'_>) {
        let slots = self.state().lock();
        let s = &slots[slot];
        (s.version, heap.copy_from(s.value.root()))
    }

    /// Slot `slot`'s version now.
    pub fn version(self, slot: usize) -> u64 {
        self.state().lock()[slot].version
    }

    /// Replaces slot `slot`'s value by a copy of `new` if its version is
    /// still `version`, and bumps it; false (the cell untouched) if
    /// another change came first (rule 2). Panics if `slot` is not below
    /// [`CELL_SLOTS`].
    pub fn compare_and_set(self, slot: usize, version: u64, new: Term<'_>) -> bool {
        let fresh = Fragment::new(new);
        let old = {
            let mut slots = self.state().lock();
            let s = &mut slots[slot];
            if s.version != version {
                return false;
            }
            s.version = version.wrapping_add(1);
            std::mem::replace(&mut s.value, fresh)
        };
        // Rule 3: outside the lock.
        drop(old);
        true
    }

    /// How many objects hold the cell (tests and diagnostics).
    pub fn holders(self) -> usize {
        // SAFETY: the term this was read from holds the block for 'h.
        unsafe { SharedBytes::count(self.block) }
    }
}

impl std::fmt::Debug for CellRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cell({})", self.serial())
    }
}

impl Heap {
    /// A new cell whose slots hold copies of `values` (slot 0 is the
    /// value `deref` reads), each at version 0. `values` may belong to any
    /// heap or fragment.
    pub fn cell(&self, values: [Term<'_>; CELL_SLOTS]) -> Term<'_> {
        let state = CellState::new(values.map(Fragment::new));
        self.shared_object(Kind::Cell, SharedBytes::holding(Box::new(state)), 0)
    }
}
