//! [`WorkerLoad`]: one worker's idle-time accounting, which
//! `node::stats` reads for [`RuntimeInfo`](crate::RuntimeInfo).
//!
//! A worker counts the time it is *idle* (searching for work, spinning,
//! parked), never the time it runs processes: the busy path pays nothing,
//! the idle path reads the clock twice per idle period.
//! 1. When a worker finds no task it stores the time in `idle_since`.
//! 2. When it finds one again it adds the elapsed time to `idle_ns` and
//!    stores 0 in `idle_since`.
//! 3. A reader takes both; a worker idle right now counts as idle up to
//!    the moment of reading. Busy time is the rest of the worker's life.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// One worker's idle-time accounting (module doc).
/// Written by that worker only; read by anyone.
#[derive(Default)]
pub(crate) struct WorkerLoad {
    /// Nanoseconds spent idle in finished idle periods. Relaxed: a
    /// statistic; nothing is published through it.
    idle_ns: AtomicU64,
    /// Nanoseconds since the node started at which the current idle period
    /// began, 0 while busy. Relaxed, as `idle_ns`.
    idle_since: AtomicU64,
}

impl WorkerLoad {
    /// Step 1: the worker found nothing to do.
    pub(crate) fn idle_start(&self, epoch: Instant) {
        let now = nanos_since(epoch).max(1);
        self.idle_since.store(now, Relaxed);
    }

    /// Step 2: the worker found work (or stops).
    pub(crate) fn idle_end(&self, epoch: Instant) {
        let since = self.idle_since.swap(0, Relaxed);
        if since != 0 {
            let d = nanos_since(epoch).saturating_sub(since);
            self.idle_ns.fetch_add(d, Relaxed);
        }
    }

    /// Step 3: idle nanoseconds up to `now` (nanoseconds since the node
    /// started).
    pub(crate) fn idle_now(&self, now: u64) -> u64 {
        let since = self.idle_since.load(Relaxed);
        let done = self.idle_ns.load(Relaxed);
        if since == 0 {
            done
        } else {
            done + now.saturating_sub(since)
        }
    }
}

/// Nanoseconds since `epoch` (the node's start).
pub(crate) fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_idle_period_is_counted_once() {
        let epoch = Instant::now() - Duration::from_secs(10);
        let l = WorkerLoad::default();
        l.idle_start(epoch);
        assert!(l.idle_now(nanos_since(epoch)) > 0, "idle right now counts");
        l.idle_end(epoch);
        let done = l.idle_ns.load(Relaxed);
        assert!(done > 0);
        assert_eq!(l.idle_since.load(Relaxed), 0);
        // Ending twice adds nothing.
        l.idle_end(epoch);
        assert_eq!(l.idle_ns.load(Relaxed), done);
    }
}
