//! The live-process count and the process limit, without a shared write
//! at every spawn and exit.
//!
//! One atomic counter, incremented by every spawn and decremented by every
//! exit, was a cache line the two workers of `skynet` (a million spawns
//! and exits) took from each other at each: a fifth of its time on two
//! workers (`lock xadd`, 265 -> 220 ms with it gone). Instead:
//!
//! 1. **The limit** is enforced on `reserved`: the live processes plus the
//!    *credits* the workers hold (reservations made in advance). A spawn
//!    on a worker spends a credit of its own; with none, it reserves
//!    [`CREDIT_BATCH`] at once (one shared write per batch) while that
//!    stays within the limit, else one; and if even one does not fit,
//!    every worker's credits are taken back (`reclaim`) and it tries once
//!    more. So a spawn fails only when the processes alive (and spawns
//!    racing it) fill the limit, as before.
//! 2. **An exit** on a worker gives its reservation back to that worker as
//!    a credit (past `2 * CREDIT_BATCH` it returns a batch to `reserved`);
//!    off the workers, straight to `reserved`. A worker that stops returns
//!    its credits.
//! 3. **The count** ([`LiveCount::live`]): each worker counts the spawns
//!    it made and the exits on it in a cache line of its own (the only
//!    writer: a plain load and store), spawns and exits off the workers in
//!    a shared entry (atomic adds). A reader sums every entry's exits
//!    first, then the spawns: an exit it sees happened after its process's
//!    spawn was counted (the spawn is counted before the process is
//!    queued; the exit after its slot is cleaned up, with Release), so
//!    the sum never falls below the truth, and a 0 means every process has
//!    ended and been cleaned up (shutdown waits for it).
//!
//! Who writes what: `reserved`: any thread (atomic adds). `credit` of a
//! worker: that worker (compare-and-swap, add), and `reclaim` from any
//! thread (swap). `spawned`/`exited` of a worker: that worker only; of the
//! last entry (off the workers): any thread (atomic adds). Everyone reads.

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicUsize, Ordering::*};

/// Reservations a worker takes at once.
pub(crate) const CREDIT_BATCH: usize = 32;

/// One worker's counts (or, the last entry, those off the workers).
#[derive(Default)]
struct Entry {
    credit: AtomicUsize,
    spawned: AtomicUsize,
    exited: AtomicUsize,
}

pub(crate) struct LiveCount {
    /// Live processes plus the workers' credits; never above `limit`.
    reserved: AtomicUsize,
    limit: usize,
    /// One per worker, then one for spawns and exits off the workers.
    entries: Box<[CachePadded<Entry>]>,
}

impl LiveCount {
    pub(crate) fn new(limit: usize, workers: usize) -> LiveCount {
        LiveCount {
            reserved: AtomicUsize::new(0),
            limit,
            entries: (0..=workers).map(|_| CachePadded::default()).collect(),
        }
    }

    /// The entry of worker `w` (`None`: off the workers; so is an index
    /// past the workers').
    fn entry(&self, w: Option<usize>) -> (&Entry, bool) {
        let last = self.entries.len() - 1;
        match w {
            Some(w) if w < last => (&self.entries[w], true),
            _ => (&self.entries[last], false),
        }
    }

    /// Counts a spawn by worker `w` (`None`: off the workers), if the
    /// limit allows it. Called before the process is queued.
    pub(crate) fn spawn(&self, w: Option<usize>) -> bool {
        let (e, own) = self.entry(w);
        let ok = own && self.spend_credit(e) || self.reserve_one();
        if ok {
            add(&e.spawned, own);
        }
        ok
    }

    /// Counts the exit of a process on worker `w` (`None`: off the
    /// workers), after its slot is cleaned up (or a spawn undone).
    pub(crate) fn exit(&self, w: Option<usize>) {
        let (e, own) = self.entry(w);
        // Release (in `add`): a reader that counts this exit sees the
        // cleanup before it (step 3).
        add(&e.exited, own);
        if !own {
            // Relaxed: `reserved` is a limit only (the slot itself is
            // handed over through the table's free lists).
            self.reserved.fetch_sub(1, Relaxed);
            return;
        }
        let now = e.credit.fetch_add(1, Relaxed) + 1;
        if now > 2 * CREDIT_BATCH
            && e.credit
                .compare_exchange(now, now - CREDIT_BATCH, Relaxed, Relaxed)
                .is_ok()
        {
            self.reserved.fetch_sub(CREDIT_BATCH, Relaxed);
        }
    }

    /// A worker's own credit, or a new batch of them; false if neither
    /// (near the limit).
    fn spend_credit(&self, e: &Entry) -> bool {
        let mut c = e.credit.load(Relaxed);
        // A compare-and-swap, not a store: `reclaim` may take the credits
        // meanwhile, and a stale store would bring them back from nothing.
        while c > 0 {
            match e.credit.compare_exchange_weak(c, c - 1, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(now) => c = now,
            }
        }
        if self.reserved.fetch_add(CREDIT_BATCH, Relaxed) + CREDIT_BATCH <= self.limit {
            e.credit.fetch_add(CREDIT_BATCH - 1, Relaxed);
            return true;
        }
        self.reserved.fetch_sub(CREDIT_BATCH, Relaxed);
        false
    }

    /// One reservation; at the limit, the workers' credits are taken back
    /// first, so a spawn fails only when live processes fill the limit.
    fn reserve_one(&self) -> bool {
        for again in [true, false] {
            if self.reserved.fetch_add(1, Relaxed) < self.limit {
                return true;
            }
            self.reserved.fetch_sub(1, Relaxed);
            if again {
                self.reclaim(None);
            }
        }
        false
    }

    /// Takes back the credits of worker `w` (a worker that stops), or of
    /// every worker (`None`).
    pub(crate) fn reclaim(&self, w: Option<usize>) {
        let workers = &self.entries[..self.entries.len() - 1];
        let which: &[CachePadded<Entry>] = match w {
            Some(w) => workers.get(w..=w).unwrap_or(&[]),
            None => workers,
        };
        for e in which {
            let n = e.credit.swap(0, Relaxed);
            if n > 0 {
                self.reserved.fetch_sub(n, Relaxed);
            }
        }
    }

    /// Live processes: spawned and not yet ended and cleaned up. Never
    /// below the truth (step 3); above it only while spawns race the read.
    pub(crate) fn live(&self) -> usize {
        // Acquire: pairs with the Release of each count (`add`).
        let exited: usize = self.entries.iter().map(|e| e.exited.load(Acquire)).sum();
        let spawned: usize = self.entries.iter().map(|e| e.spawned.load(Acquire)).sum();
        spawned.saturating_sub(exited)
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

/// Adds one to a count of an entry: by its worker alone (`own`), a plain
/// load and store; else an atomic add.
fn add(count: &AtomicUsize, own: bool) {
    if own {
        // Release: see `live`. Only this worker writes its entry's counts.
        count.store(count.load(Relaxed) + 1, Release);
    } else {
        count.fetch_add(1, Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn smoke() {
        let l = LiveCount::new(5, 2);
        assert!(l.spawn(Some(0)));
        assert!(l.spawn(None));
        assert_eq!(l.live(), 2);
        l.exit(Some(1));
        l.exit(None);
        assert_eq!(l.live(), 0);
    }

    /// The limit is exact whoever spawns: credits one worker holds never
    /// make another's spawn (or one off the workers) fail.
    #[test]
    fn the_limit_is_exact_across_workers() {
        let l = LiveCount::new(100, 2);
        for _ in 0..3 {
            // Worker 0 fills half, worker 1 the rest but one, outside the
            // last; then nothing more fits anywhere.
            for _ in 0..50 {
                assert!(l.spawn(Some(0)));
            }
            for _ in 0..49 {
                assert!(l.spawn(Some(1)));
            }
            assert!(l.spawn(None));
            assert_eq!(l.live(), 100);
            for w in [Some(0), Some(1), None] {
                assert!(!l.spawn(w), "past the limit from {w:?}");
            }
            // All end on worker 0, which then holds credits for 100:
            // worker 1 and outsiders can still spawn up to the limit.
            for _ in 0..100 {
                l.exit(Some(0));
            }
            assert_eq!(l.live(), 0);
            for _ in 0..60 {
                assert!(l.spawn(Some(1)));
            }
            for _ in 0..40 {
                assert!(l.spawn(None));
            }
            assert!(!l.spawn(Some(0)));
            for _ in 0..100 {
                l.exit(None);
            }
            assert_eq!(l.live(), 0);
        }
    }

    /// Two workers and an outsider spawning and ending processes at once
    /// (up to 90 alive, over the limit of 64): the processes alive never
    /// exceed the limit, and at the end the count is exact and the whole
    /// limit can be spawned again.
    #[test]
    fn stampede_never_passes_the_limit() {
        const LIMIT: usize = 64;
        let rounds = if cfg!(miri) { 200 } else { 100_000 };
        let l = Arc::new(LiveCount::new(LIMIT, 2));
        let alive = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = [Some(0), Some(1), None]
            .into_iter()
            .map(|w| {
                let (l, alive) = (l.clone(), alive.clone());
                std::thread::spawn(move || {
                    let mut mine = 0usize;
                    for i in 0..rounds {
                        if mine < 30 && i % 3 != 2 {
                            if l.spawn(w) {
                                let now = alive.fetch_add(1, SeqCst) + 1;
                                assert!(now <= LIMIT, "{now} alive");
                                mine += 1;
                            }
                        } else if mine > 0 {
                            alive.fetch_sub(1, SeqCst);
                            l.exit(w);
                            mine -= 1;
                        }
                    }
                    for _ in 0..mine {
                        alive.fetch_sub(1, SeqCst);
                        l.exit(w);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(l.live(), 0);
        let reserved = l.reserved.load(SeqCst);
        let credits: usize = l.entries.iter().map(|e| e.credit.load(SeqCst)).sum();
        assert_eq!(reserved, credits, "reserved = live + credits");
        // Everything can be spawned again, to the limit exactly.
        for _ in 0..LIMIT {
            assert!(l.spawn(None));
        }
        assert!(!l.spawn(Some(0)));
    }

    /// A reader never sees fewer processes than are alive.
    #[test]
    fn the_count_is_never_below_the_truth() {
        let l = Arc::new(LiveCount::new(1 << 20, 2));
        let floor = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // One long-lived process per worker: the count stays >= 2.
        assert!(l.spawn(Some(0)));
        assert!(l.spawn(Some(1)));
        floor.store(2, SeqCst);
        let workers: Vec<_> = [0, 1]
            .into_iter()
            .map(|w| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let n = if cfg!(miri) { 200 } else { 200_000 };
                    // Spawned on one worker, ended on the other.
                    for _ in 0..n {
                        assert!(l.spawn(Some(w)));
                        l.exit(Some(1 - w));
                    }
                })
            })
            .collect();
        let reader = {
            let (l, stop) = (l.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(SeqCst) {
                    assert!(l.live() >= 2, "read {}", l.live());
                    reads += 1;
                }
                reads
            })
        };
        for w in workers {
            w.join().unwrap();
        }
        stop.store(true, SeqCst);
        assert!(reader.join().unwrap() > 0);
        l.exit(Some(0));
        l.exit(Some(1));
        assert_eq!(l.live(), 0);
    }
}
