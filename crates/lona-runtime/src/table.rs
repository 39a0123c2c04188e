//! The process table: slots at stable addresses, indexed by pid.
//!
//! Slots live in fixed-size chunks allocated on first use and never freed
//! before the runtime is dropped, so a lookup on every send is two loads and
//! no lock: chunk pointer (acquire), then the slot. A slot is reused after
//! its process has exited, with its generation bumped (see `state`), so a
//! stale [`Pid`](crate::Pid) finds a generation that is not its own.
//!
//! Free slots are cached per worker and spill to a shared pool in batches;
//! the live count is one atomic, checked against the configured process
//! limit on every spawn (past it, spawn fails with `system_limit`).

use crate::inbox::Inbox;
use crate::process::Private;
use crate::state::State;
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};
use std::sync::Mutex;

const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;
/// Free slots a worker keeps before spilling half to the shared pool.
pub(crate) const LOCAL_FREE_MAX: usize = 512;
/// Fresh slots a spawner takes at once.
const FRESH_BATCH: u32 = 64;

/// One process's place in the table.
pub(crate) struct Slot {
    /// Written by the owner (transitions) and producers (notify); see `state`.
    pub(crate) state: State,
    /// Pushed by any producer, taken by the owner; see `inbox`.
    pub(crate) inbox: Inbox,
    /// Owned by whoever holds the process in *running* state (or by the
    /// spawner before the process is first queued, or by a killer that
    /// claimed it from *waiting*). Nobody else reads it.
    pub(crate) private: UnsafeCell<Private>,
}

// SAFETY: `private` is only accessed under the exclusive-ownership rule above,
// which the state word enforces; the rest is atomics.
unsafe impl Sync for Slot {}

impl Slot {
    fn new() -> Slot {
        Slot {
            state: State::new(),
            inbox: Inbox::new_closed(),
            private: UnsafeCell::new(Private::default()),
        }
    }
}

pub(crate) struct Table {
    /// Chunk pointers; written once each (under `grow`), read by everyone.
    chunks: Box<[AtomicPtr<Slot>]>,
    /// Never-used slots start here; bumped by spawners.
    next_fresh: AtomicU32,
    capacity: u32,
    /// Free slots spilled by workers (and by exits off-worker).
    pool: Mutex<Vec<u32>>,
    /// Length of `pool` (a hint, written under its lock): spawners skip the
    /// lock when it is empty.
    pool_len: AtomicUsize,
    grow: Mutex<()>,
    /// Live processes (spawned, not yet fully exited).
    live: AtomicUsize,
    limit: usize,
}

impl Table {
    pub(crate) fn new(limit: usize, workers: usize) -> Table {
        // Enough slots for `limit` live processes plus what the workers'
        // free caches may hold, so the limit is the only thing that fails.
        let capacity = (limit + (workers + 1) * LOCAL_FREE_MAX + CHUNK).min(u32::MAX as usize);
        let chunks = capacity.div_ceil(CHUNK);
        Table {
            chunks: (0..chunks)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            next_fresh: AtomicU32::new(0),
            capacity: (chunks * CHUNK).min(u32::MAX as usize) as u32,
            pool: Mutex::new(Vec::new()),
            pool_len: AtomicUsize::new(0),
            grow: Mutex::new(()),
            live: AtomicUsize::new(0),
            limit,
        }
    }

    /// The slot at `index`, if it was ever allocated.
    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&Slot> {
        let chunk = self
            .chunks
            .get((index >> CHUNK_BITS) as usize)?
            .load(Acquire);
        if chunk.is_null() {
            return None;
        }
        // SAFETY: allocated chunks hold CHUNK initialised slots and live as
        // long as the table.
        Some(unsafe { &*chunk.add(index as usize & (CHUNK - 1)) })
    }

    pub(crate) fn live(&self) -> usize {
        self.live.load(Acquire)
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Slots handed out so far (for scans over all processes).
    pub(crate) fn high_water(&self) -> u32 {
        self.next_fresh.load(Acquire).min(self.capacity)
    }

    /// Reserve a slot for a new process. `None` past the process limit.
    pub(crate) fn alloc(&self, cache: &mut Vec<u32>) -> Option<u32> {
        // Relaxed: the count is only a limit; the slot itself is handed over
        // through the state word.
        if self.live.fetch_add(1, Relaxed) >= self.limit {
            self.live.fetch_sub(1, Relaxed);
            return None;
        }
        if let Some(i) = cache.pop() {
            return Some(i);
        }
        if self.pool_len.load(Relaxed) > 0 {
            let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
            if !pool.is_empty() {
                let take = pool.len().min(LOCAL_FREE_MAX / 2);
                let at = pool.len() - take;
                cache.extend(pool.drain(at..));
                self.pool_len.store(pool.len(), Relaxed);
                return cache.pop();
            }
        }
        // Fresh slots, a batch at a time: one shared RMW per FRESH_BATCH
        // spawns. The capacity's slack covers what caches hold.
        let first = self.next_fresh.fetch_add(FRESH_BATCH, Relaxed);
        if first >= self.capacity {
            self.next_fresh.fetch_sub(FRESH_BATCH, Relaxed);
            self.live.fetch_sub(1, Relaxed);
            // Slots may still sit in other workers' caches; they come back
            // through the pool as those workers spill. Past the limit the
            // live count failed above, so this is only a transient shortage.
            return None;
        }
        let end = (first + FRESH_BATCH).min(self.capacity);
        self.ensure_chunk(first);
        self.ensure_chunk(end - 1);
        cache.extend((first + 1..end).rev());
        Some(first)
    }

    fn ensure_chunk(&self, index: u32) {
        let c = (index >> CHUNK_BITS) as usize;
        if !self.chunks[c].load(Acquire).is_null() {
            return;
        }
        let _g = self.grow.lock().unwrap_or_else(|e| e.into_inner());
        if self.chunks[c].load(Acquire).is_null() {
            let slots: Box<[Slot]> = (0..CHUNK).map(|_| Slot::new()).collect();
            self.chunks[c].store(Box::into_raw(slots).cast::<Slot>(), Release);
        }
    }

    /// Return a slot whose process has fully exited.
    pub(crate) fn release(&self, index: u32, cache: Option<&mut Vec<u32>>) {
        match cache {
            Some(cache) => {
                cache.push(index);
                if cache.len() > LOCAL_FREE_MAX {
                    let at = cache.len() - LOCAL_FREE_MAX / 2;
                    let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
                    pool.extend(cache.drain(at..));
                }
            }
            None => self
                .pool
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(index),
        }
        self.live.fetch_sub(1, AcqRel);
    }

    /// Give a worker's cached free slots back (worker exit).
    pub(crate) fn return_cache(&self, cache: &mut Vec<u32>) {
        self.pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(cache);
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        for c in self.chunks.iter() {
            let p = c.load(Acquire);
            if p.is_null() {
                continue;
            }
            // SAFETY: allocated in `ensure_chunk` as a Box<[Slot]> of CHUNK;
            // the table is being dropped, so nobody else can reach it.
            let mut slots = unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(p, CHUNK)) };
            for s in slots.iter_mut() {
                // Nodes a stale sender left behind, or a process never run.
                let (first, _) = s.inbox.close();
                // SAFETY: the chain is ours now.
                unsafe { crate::envelope::drop_chain(first) };
            }
            drop(slots);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn limit_is_enforced_and_slots_are_reused() {
        let t = Table::new(3, 1);
        let mut cache = vec![];
        let a = t.alloc(&mut cache).unwrap();
        let b = t.alloc(&mut cache).unwrap();
        let c = t.alloc(&mut cache).unwrap();
        assert_eq!(t.alloc(&mut cache), None, "past the limit");
        assert_eq!(t.live(), 3);
        t.release(b, Some(&mut cache));
        assert_eq!(t.alloc(&mut cache), Some(b), "freed slot reused");
        assert!(t.get(a).is_some() && t.get(c).is_some());
        assert!(t.get(u32::MAX).is_none());
    }
}

#[cfg(all(test, not(loom)))]
mod size_tests {
    use super::Slot;

    /// A slot is what every process costs in the table; keep it small
    /// (an idle native process is this plus its boxed future).
    #[test]
    fn slot_fits_in_two_cache_lines() {
        let size = std::mem::size_of::<Slot>();
        eprintln!("Slot = {size} bytes");
        assert!(size <= 128, "Slot grew to {size} bytes");
    }
}
