//! The process table: slots at stable addresses, indexed by pid.
//!
//! Slots live in fixed-size chunks allocated on first use and never freed
//! before the runtime is dropped, so a lookup on every send is two loads and
//! no lock: chunk pointer (acquire), then the slot. A slot is reused after
//! its process has exited, with its generation bumped (see `state`), so a
//! stale [`Pid`](crate::Pid) finds a generation that is not its own.
//!
//! The table knows nothing of what a process is: a slot's private part is
//! a type parameter (`sched::process` names the one in use, `Slot` and
//! `Table` of `Private`).
//!
//! Free slots are cached per worker and spill to a shared pool in batches;
//! the live count and the process limit are `live.rs`'s (past the limit,
//! spawn fails with `system_limit`).

use crate::base::inbox::Inbox;
use crate::base::live::LiveCount;
use crate::base::priority::Priority;
use crate::base::state::State;
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
/// The largest process limit (Erlang's too: 2^27 = 134,217,728). Larger
/// limits given to the builder are lowered to it.
pub const MAX_PROCESS_LIMIT: usize = 1 << 27;

/// One process's place in the table.
pub(crate) struct Slot<P> {
    /// Written by the owner (transitions) and producers (notify); see `state`.
    pub(crate) state: State,
    /// Pushed by any producer, taken by the owner; see `inbox`.
    pub(crate) inbox: Inbox,
    /// Owned by whoever holds the process in *running* state, or by the
    /// spawner before the process is first queued, or by the table's pool
    /// while the slot is free. Nobody else reads it.
    pub(crate) private: UnsafeCell<P>,
}

// SAFETY: `private` is only accessed under the exclusive-ownership rule above,
// which the state word enforces; the rest is atomics.
unsafe impl<P: Send> Sync for Slot<P> {}

impl<P: Default> Slot<P> {
    fn new() -> Slot<P> {
        Slot {
            state: State::new(),
            inbox: Inbox::new_closed(),
            private: UnsafeCell::new(P::default()),
        }
    }
}

impl<P> Slot<P> {
    /// The process's priority (kept in its state word, see `priority`).
    #[inline(always)]
    pub(crate) fn priority(&self) -> Priority {
        self.state.priority()
    }
}

pub(crate) struct Table<P> {
    /// Chunk pointers; written once each (under `grow`), read by everyone.
    chunks: Box<[AtomicPtr<Slot<P>>]>,
    /// Never-used slots start here; bumped by spawners.
    next_fresh: AtomicU32,
    capacity: u32,
    /// Free slots spilled by workers, handed back by spawners outside the
    /// runtime, and left by exits off-worker.
    pool: Mutex<Vec<u32>>,
    /// Length of `pool`, stored by every writer of `pool` while it holds
    /// the lock (see `Pool`); read without the lock by spawners, which skip
    /// the lock when it is zero. Relaxed: a hint only; a stale zero just
    /// takes fresh slots, which the capacity's slack covers.
    pool_len: AtomicUsize,
    grow: Mutex<()>,
    /// Live processes (spawned, not yet fully exited) and the limit.
    live: LiveCount,
}

impl<P: Default> Table<P> {
    pub(crate) fn new(limit: usize, workers: usize) -> Table<P> {
        // Enough slots for `limit` live processes plus what the workers'
        // free caches may hold, so the limit is the only thing that fails.
        let limit = limit.clamp(1, MAX_PROCESS_LIMIT);
        let capacity = limit + (workers + 1) * (LOCAL_FREE_MAX + FRESH_BATCH as usize) + CHUNK;
        let chunks = capacity.div_ceil(CHUNK);
        Table {
            chunks: (0..chunks)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            // Slot 0 is never handed out: its pid, `<0.0.0>`, is the
            // runtime's own (`RUNTIME_PID`), which names no process.
            next_fresh: AtomicU32::new(1),
            capacity: (chunks * CHUNK) as u32,
            pool: Mutex::new(Vec::new()),
            pool_len: AtomicUsize::new(0),
            grow: Mutex::new(()),
            live: LiveCount::new(limit, workers),
        }
    }

    /// The slot at `index`, if it was ever allocated.
    #[inline]
    pub(crate) fn get(&self, index: u32) -> Option<&Slot<P>> {
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

    /// Live processes; 0 only once every process has ended and its slot
    /// is cleaned up (`live.rs`).
    pub(crate) fn live(&self) -> usize {
        self.live.live()
    }

    pub(crate) fn limit(&self) -> usize {
        self.live.limit()
    }

    /// Bytes of the chunks allocated so far.
    pub(crate) fn bytes(&self) -> usize {
        let chunks = self
            .chunks
            .iter()
            // Relaxed: a statistic; a chunk being published is counted or not.
            .filter(|c| !c.load(Relaxed).is_null())
            .count();
        chunks * CHUNK * std::mem::size_of::<Slot<P>>()
    }

    /// Slots handed out so far (for scans over all processes).
    pub(crate) fn high_water(&self) -> u32 {
        // Relaxed: a scan only needs slots whose chunk exists; `get` checks
        // the chunk pointer with acquire.
        self.next_fresh.load(Relaxed).min(self.capacity)
    }

    /// Reserve a slot for a new process, spawned by worker `worker`
    /// (`None`: off the workers). `None` past the process limit.
    pub(crate) fn alloc(&self, cache: &mut Vec<u32>, worker: Option<usize>) -> Option<u32> {
        if !self.live.spawn(worker) {
            return None;
        }
        if let Some(i) = cache.pop() {
            return Some(i);
        }
        if self.pool_len.load(Relaxed) > 0 {
            let mut pool = self.pool();
            if !pool.0.is_empty() {
                let take = pool.0.len().min(LOCAL_FREE_MAX / 2);
                let at = pool.0.len() - take;
                cache.extend(pool.0.drain(at..));
                return cache.pop();
            }
        }
        // Fresh slots, a batch at a time: one shared RMW per FRESH_BATCH
        // spawns. The capacity's slack covers what caches hold.
        let first = self.next_fresh.fetch_add(FRESH_BATCH, Relaxed);
        if first >= self.capacity {
            self.next_fresh.fetch_sub(FRESH_BATCH, Relaxed);
            self.live.exit(worker);
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
            let slots: Box<[Slot<P>]> = (0..CHUNK).map(|_| Slot::new()).collect();
            self.chunks[c].store(Box::into_raw(slots).cast::<Slot<P>>(), Release);
        }
    }

    /// The shared pool, locked; `pool_len` is brought up to date when the
    /// guard drops, so no writer can forget it.
    fn pool(&self) -> Pool<'_> {
        Pool(
            self.pool.lock().unwrap_or_else(|e| e.into_inner()),
            &self.pool_len,
        )
    }

    /// Return a slot whose process has fully exited (or never started: a
    /// spawn that failed after `alloc`).
    pub(crate) fn release(&self, index: u32, local: Option<(&mut Vec<u32>, usize)>) {
        let worker = match local {
            Some((cache, w)) => {
                cache.push(index);
                if cache.len() > LOCAL_FREE_MAX {
                    let at = cache.len() - LOCAL_FREE_MAX / 2;
                    self.pool().0.extend(cache.drain(at..));
                }
                Some(w)
            }
            None => {
                self.pool().0.push(index);
                None
            }
        };
        // After the cleanup: `live()` readers that count this exit see it
        // (shutdown waits for zero, then frees slots).
        self.live.exit(worker);
    }

    /// Gives back the reservations worker `w` holds (it stops).
    pub(crate) fn return_credits(&self, w: usize) {
        self.live.reclaim(Some(w));
    }

    /// Give cached free slots back (a worker's at exit, or what an outside
    /// spawner took with a fresh batch).
    pub(crate) fn return_cache(&self, cache: &mut Vec<u32>) {
        if !cache.is_empty() {
            self.pool().0.append(cache);
        }
    }
}

/// The locked pool; stores its length into `pool_len` on drop.
struct Pool<'a>(std::sync::MutexGuard<'a, Vec<u32>>, &'a AtomicUsize);

impl Drop for Pool<'_> {
    fn drop(&mut self) {
        // Relaxed: a hint (see `Table::pool_len`), written under the lock.
        self.1.store(self.0.len(), Relaxed);
    }
}

impl<P> Drop for Table<P> {
    fn drop(&mut self) {
        for c in self.chunks.iter() {
            let p = c.load(Acquire);
            if p.is_null() {
                continue;
            }
            // SAFETY: allocated in `ensure_chunk` as a Box<[Slot<P>]> of CHUNK;
            // the table is being dropped, so nobody else can reach it.
            let mut slots = unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(p, CHUNK)) };
            for s in slots.iter_mut() {
                // Nodes a stale sender left behind, or a process never run.
                let (first, _) = s.inbox.close();
                // SAFETY: the chain is ours now.
                unsafe { crate::base::envelope::drop_chain(first) };
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
        let t = Table::<()>::new(3, 1);
        let mut cache = vec![];
        let a = t.alloc(&mut cache, Some(0)).unwrap();
        let b = t.alloc(&mut cache, Some(0)).unwrap();
        let c = t.alloc(&mut cache, Some(0)).unwrap();
        assert_eq!(t.alloc(&mut cache, Some(0)), None, "past the limit");
        assert_eq!(t.live(), 3);
        t.release(b, Some((&mut cache, 0)));
        assert_eq!(t.alloc(&mut cache, Some(0)), Some(b), "freed slot reused");
        assert!(t.get(a).is_some() && t.get(c).is_some());
        assert!(t.get(u32::MAX).is_none());
    }

    /// The review's reproduction: slots released without a worker cache
    /// (spawns and exits outside the runtime) were never reused, so the
    /// table ran out while few processes lived.
    #[test]
    fn churn_from_outside_never_runs_out() {
        let t = Table::<()>::new(10, 2);
        let rounds = if cfg!(miri) { 500 } else { 200_000 };
        for round in 0..rounds {
            let mut cache = vec![];
            let a = t
                .alloc(&mut cache, None)
                .unwrap_or_else(|| panic!("round {round}"));
            t.return_cache(&mut cache);
            t.release(a, None);
        }
        assert_eq!(t.live(), 0);
        assert!(t.high_water() <= t.capacity, "fresh slots exhausted");
    }

    #[test]
    fn churn_through_a_worker_cache_never_runs_out() {
        let t = Table::<()>::new(900, 1);
        let mut cache = vec![];
        let rounds = if cfg!(miri) { 3 } else { 100 };
        for round in 0..rounds {
            let got: Vec<u32> = (0..900)
                .map(|_| {
                    t.alloc(&mut cache, Some(0))
                        .unwrap_or_else(|| panic!("round {round}"))
                })
                .collect();
            assert_eq!(t.alloc(&mut cache, Some(0)), None, "the limit still holds");
            for i in got {
                t.release(i, Some((&mut cache, 0)));
            }
        }
    }

    #[test]
    fn huge_limits_saturate() {
        let t = Table::<()>::new(usize::MAX, 2);
        assert_eq!(t.limit(), MAX_PROCESS_LIMIT);
        assert!(t.capacity as usize >= MAX_PROCESS_LIMIT);
        let mut cache = vec![];
        assert!(t.alloc(&mut cache, Some(0)).is_some());
    }
}
