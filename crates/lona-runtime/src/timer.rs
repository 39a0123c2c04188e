//! Timers: receive timeouts, `send_after`, `start_timer`, `cancel_timer`.
//!
//! A hierarchical timing wheel (G. Varghese and T. Lauck, "Hashed and
//! Hierarchical Timing Wheels", SOSP 1987), laid out as in tokio's time
//! driver: six levels of 64 slots, level `l` slots spanning `64^l` ms, so
//! insert and cancel are O(1) and the next deadline is found with one
//! bit-scan per level. Entries live in a slab and are linked into their slot
//! by index (prev/next), so a pending timer costs one ~64-byte entry and a
//! cancelled one is freed at once.
//!
//! One timer thread drives the wheel: it sleeps on a condition variable until
//! the next deadline (or forever when there is none, so an idle runtime uses
//! no CPU), then delivers each expired timer's prepared node to its target's
//! inbox like any other signal. Inserting a timer earlier than the one it
//! sleeps for wakes it.

use crate::envelope::Envelope;
use crate::Pid;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::*};

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const LEVELS: usize = 6;
const SLOTS: usize = 64;
const NIL: u32 = u32::MAX;
/// The furthest deadline the wheel represents (~2.2 years); later ones are
/// clamped to it.
const MAX_SPAN: u64 = (1 << (6 * LEVELS)) - 1;

/// A pending timer, as returned by `send_after` / `start_timer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerRef {
    index: u32,
    gen: u32,
}

struct Entry {
    when: u64,
    prev: u32,
    next: u32,
    /// level * 64 + slot while linked.
    slot: u16,
    gen: u32,
    target: Pid,
    /// Counted in `by_target` (cancelled when the target exits).
    tracked: bool,
    node: Option<Envelope>,
}

pub(crate) struct Wheel {
    elapsed: u64,
    heads: [[u32; SLOTS]; LEVELS],
    occupied: [u64; LEVELS],
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// Tracked timers released since the owner last looked (to untrack).
    fired_tracked: Vec<(Pid, TimerRef)>,
}

fn level_for(elapsed: u64, when: u64) -> usize {
    let masked = (elapsed ^ when) | (SLOTS as u64 - 1);
    let significant = 63 - masked.leading_zeros() as usize;
    (significant / 6).min(LEVELS - 1)
}

fn slot_for(when: u64, level: usize) -> usize {
    ((when >> (6 * level)) as usize) & (SLOTS - 1)
}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        Wheel {
            elapsed: 0,
            heads: [[NIL; SLOTS]; LEVELS],
            occupied: [0; LEVELS],
            entries: Vec::new(),
            free: Vec::new(),
            fired_tracked: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    fn link(&mut self, i: u32) {
        let when = self.entries[i as usize].when;
        let level = level_for(self.elapsed, when);
        let slot = slot_for(when, level);
        let head = self.heads[level][slot];
        let e = &mut self.entries[i as usize];
        e.slot = (level * SLOTS + slot) as u16;
        e.prev = NIL;
        e.next = head;
        if head != NIL {
            self.entries[head as usize].prev = i;
        }
        self.heads[level][slot] = i;
        self.occupied[level] |= 1 << slot;
    }

    fn unlink(&mut self, i: u32) {
        let (prev, next, ls) = {
            let e = &self.entries[i as usize];
            (e.prev, e.next, e.slot as usize)
        };
        let (level, slot) = (ls / SLOTS, ls % SLOTS);
        if prev == NIL {
            self.heads[level][slot] = next;
            if next == NIL {
                self.occupied[level] &= !(1 << slot);
            }
        } else {
            self.entries[prev as usize].next = next;
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        }
    }

    /// Add a timer firing at `when` (ms); a past `when` fires at the next
    /// poll.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn insert(
        &mut self,
        when: u64,
        target: Pid,
        node: Envelope,
        tracked: bool,
    ) -> TimerRef {
        self.insert_with(when, target, tracked, |_| node)
    }

    /// Insert a timer whose node is made knowing the timer's reference.
    pub(crate) fn insert_with(
        &mut self,
        when: u64,
        target: Pid,
        tracked: bool,
        make: impl FnOnce(TimerRef) -> Envelope,
    ) -> TimerRef {
        let when = when.clamp(self.elapsed + 1, self.elapsed + MAX_SPAN);
        let (i, gen) = match self.free.pop() {
            Some(i) => (i, self.entries[i as usize].gen.wrapping_add(1)),
            None => (self.entries.len() as u32, 0),
        };
        let tref = TimerRef { index: i, gen };
        let entry = Entry {
            when,
            prev: NIL,
            next: NIL,
            slot: 0,
            gen,
            target,
            tracked,
            node: Some(make(tref)),
        };
        if i as usize == self.entries.len() {
            self.entries.push(entry);
        } else {
            self.entries[i as usize] = entry;
        }
        self.link(i);
        tref
    }

    fn release(&mut self, i: u32) -> (Pid, bool, Envelope) {
        let e = &mut self.entries[i as usize];
        let node = e.node.take().expect("live timer entry");
        let (target, tracked) = (e.target, e.tracked);
        if tracked {
            self.fired_tracked.push((
                target,
                TimerRef {
                    index: i,
                    gen: e.gen,
                },
            ));
        }
        self.free.push(i);
        (target, tracked, node)
    }

    /// Cancel a pending timer; `None` if it already fired or was cancelled.
    pub(crate) fn cancel(&mut self, t: TimerRef) -> Option<(Pid, bool, Envelope)> {
        let e = self.entries.get(t.index as usize)?;
        if e.gen != t.gen || e.node.is_none() {
            return None;
        }
        self.unlink(t.index);
        let r = self.release(t.index);
        if r.1 {
            self.fired_tracked.pop(); // cancelled, not fired: the caller untracks
        }
        Some(r)
    }

    /// Milliseconds until the timer `t` fires, if pending.
    pub(crate) fn remaining(&self, t: TimerRef) -> Option<u64> {
        let e = self.entries.get(t.index as usize)?;
        (e.gen == t.gen && e.node.is_some()).then(|| e.when.saturating_sub(self.elapsed))
    }

    /// The start of the earliest occupied slot (an entry there fires no
    /// earlier).
    pub(crate) fn next_expiration(&self) -> Option<(usize, usize, u64)> {
        for level in 0..LEVELS {
            let occ = self.occupied[level];
            if occ == 0 {
                continue;
            }
            let pos = slot_for(self.elapsed, level);
            let slot = (pos + occ.rotate_right(pos as u32).trailing_zeros() as usize) % SLOTS;
            let slot_range = 1u64 << (6 * level);
            let level_range = slot_range << 6;
            let level_start = self.elapsed & !(level_range - 1);
            let mut deadline = level_start + slot as u64 * slot_range;
            if slot < pos {
                deadline += level_range;
            }
            return Some((level, slot, deadline.max(self.elapsed)));
        }
        None
    }

    /// Advance to `now` (ms), moving every expired timer into `out`.
    pub(crate) fn poll(&mut self, now: u64, out: &mut Vec<(Pid, bool, Envelope)>) {
        while let Some((level, slot, deadline)) = self.next_expiration() {
            if deadline > now {
                break;
            }
            self.elapsed = deadline;
            let mut i = std::mem::replace(&mut self.heads[level][slot], NIL);
            self.occupied[level] &= !(1 << slot);
            while i != NIL {
                let next = self.entries[i as usize].next;
                if self.entries[i as usize].when <= now {
                    out.push(self.release(i));
                } else {
                    self.link(i);
                }
                i = next;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }
}

struct Inner {
    wheel: Wheel,
    /// Tracked timers per target, cancelled when it exits.
    by_target: HashMap<Pid, Vec<TimerRef>>,
    /// Deadline the timer thread sleeps until (None: forever).
    sleeping_until: Option<u64>,
    stop: bool,
}

/// The runtime's timers (shared; see the module doc).
pub(crate) struct Timers {
    inner: Mutex<Inner>,
    cv: Condvar,
    start: Instant,
    /// How many tracked timers are pending: lets exits skip the lock.
    tracked: AtomicUsize,
}

impl Timers {
    pub(crate) fn new() -> Timers {
        Timers {
            inner: Mutex::new(Inner {
                wheel: Wheel::new(),
                by_target: HashMap::new(),
                sleeping_until: None,
                stop: false,
            }),
            cv: Condvar::new(),
            start: Instant::now(),
            tracked: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Deliver `node` to `target` after `after`. `tracked` timers are
    /// cancelled when their target exits (send_after, start_timer); receive
    /// timeouts are cancelled by their receive instead.
    pub(crate) fn insert(
        &self,
        after: Duration,
        target: Pid,
        node: Envelope,
        tracked: bool,
    ) -> TimerRef {
        self.insert_with(after, target, tracked, |_| node)
    }

    /// [`Timers::insert`], the node made knowing the timer's reference.
    pub(crate) fn insert_with(
        &self,
        after: Duration,
        target: Pid,
        tracked: bool,
        make: impl FnOnce(TimerRef) -> Envelope,
    ) -> TimerRef {
        let ms =
            after.as_millis() as u64 + u64::from(!after.subsec_nanos().is_multiple_of(1_000_000));
        let mut g = self.lock();
        // The current time rounded *up*, so a timer never fires early (the
        // wheel fires when the truncated clock reaches `when`).
        let now = self.start.elapsed().as_micros().div_ceil(1000) as u64;
        let when = now.max(g.wheel.elapsed) + ms.max(1);
        let t = g.wheel.insert_with(when, target, tracked, make);
        if tracked {
            g.by_target.entry(target).or_default().push(t);
            self.tracked.fetch_add(1, Relaxed);
        }
        if g.sleeping_until.is_none_or(|s| when < s) {
            self.cv.notify_one();
        }
        t
    }

    /// Cancel; returns the undelivered node if the timer was pending.
    pub(crate) fn cancel(&self, t: TimerRef) -> Option<Envelope> {
        let mut g = self.lock();
        let (target, tracked, node) = g.wheel.cancel(t)?;
        if tracked {
            untrack(&mut g, target, t);
            self.tracked.fetch_sub(1, Relaxed);
        }
        Some(node)
    }

    /// Cancel and say how many milliseconds were left (`None`: it had
    /// fired or was cancelled already), under one lock.
    pub(crate) fn cancel_remaining(&self, t: TimerRef) -> Option<u64> {
        let mut g = self.lock();
        let left = g.wheel.remaining(t)?;
        let (target, tracked, node) = g.wheel.cancel(t)?;
        if tracked {
            untrack(&mut g, target, t);
            self.tracked.fetch_sub(1, Relaxed);
        }
        drop(g);
        drop(node);
        Some(left)
    }

    pub(crate) fn pending(&self) -> usize {
        self.lock().wheel.len()
    }

    /// Cancel every tracked timer addressed to `target` (it exited).
    pub(crate) fn cancel_target(&self, target: Pid) {
        // The fence pairs with the one in `Shared::cancel_if_dead`: either
        // this sees the new timer counted, or the inserter sees its target
        // exited and cancels the timer itself.
        std::sync::atomic::fence(SeqCst);
        if self.tracked.load(Relaxed) == 0 {
            return;
        }
        let mut dropped = Vec::new();
        {
            let mut g = self.lock();
            if let Some(ts) = g.by_target.remove(&target) {
                for t in ts {
                    if let Some((_, _, node)) = g.wheel.cancel(t) {
                        self.tracked.fetch_sub(1, Relaxed);
                        dropped.push(node);
                    }
                }
            }
        }
        drop(dropped);
    }

    /// The timer thread's loop: deliver what expires via `deliver` until
    /// [`Timers::stop`].
    pub(crate) fn run(&self, deliver: impl Fn(Pid, Envelope)) {
        let mut fired = Vec::new();
        let mut g = self.lock();
        loop {
            if g.stop {
                break;
            }
            let now = self.now_ms();
            g.wheel.poll(now, &mut fired);
            if !fired.is_empty() {
                for (target, t) in std::mem::take(&mut g.wheel.fired_tracked) {
                    untrack(&mut g, target, t);
                    self.tracked.fetch_sub(1, Relaxed);
                }
                drop(g);
                for (target, _, node) in fired.drain(..) {
                    deliver(target, node);
                }
                g = self.lock();
                continue;
            }
            match g.wheel.next_expiration() {
                Some((_, _, d)) => {
                    g.sleeping_until = Some(d);
                    let wait = Duration::from_millis(d.saturating_sub(now).max(1));
                    g = self
                        .cv
                        .wait_timeout(g, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => {
                    g.sleeping_until = None;
                    g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
        // Undelivered timers are dropped with the wheel's entries.
        let w = std::mem::replace(&mut g.wheel, Wheel::new());
        g.by_target.clear();
        drop(g);
        drop(w);
    }

    pub(crate) fn stop(&self) {
        self.lock().stop = true;
        self.cv.notify_all();
    }
}

fn untrack(g: &mut Inner, target: Pid, t: TimerRef) {
    if let Some(v) = g.by_target.get_mut(&target) {
        if let Some(i) = v.iter().position(|x| *x == t) {
            v.swap_remove(i);
        }
        if v.is_empty() {
            g.by_target.remove(&target);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pid(i: u32) -> Pid {
        Pid::new(i, 0)
    }

    proptest! {
        /// Against a sorted model: polling at arbitrary times fires exactly
        /// the timers due, each once, none early; cancel removes.
        #[test]
        fn wheel_matches_model(
            ops in proptest::collection::vec((0u8..3, 0u64..300_000), 1..150)
        ) {
            let mut w = Wheel::new();
            let mut model: Vec<(u64, TimerRef, u32)> = vec![];
            let mut now = 0u64;
            let mut id = 0u32;
            let mut out = vec![];
            for (op, x) in ops {
                match op {
                    0 => {
                        let when = now + 1 + x % 100_000;
                        let t = w.insert(when, pid(id), Envelope::new(id, 0, false), false);
                        model.push((when, t, id));
                        id += 1;
                    }
                    1 if !model.is_empty() => {
                        let (_, t, i) = model.remove(x as usize % model.len());
                        let (p, _, n) = w.cancel(t).expect("pending timer cancels");
                        prop_assert_eq!(p, pid(i));
                        prop_assert_eq!(n.downcast::<u32>().unwrap(), i);
                        prop_assert!(w.cancel(t).is_none());
                    }
                    _ => {
                        now += x % 5_000;
                        w.poll(now, &mut out);
                        let mut fired: Vec<u32> = out.drain(..).map(|(_, _, n)| n.downcast::<u32>().unwrap()).collect();
                        fired.sort();
                        let mut due: Vec<u32> = model.iter().filter(|m| m.0 <= now).map(|m| m.2).collect();
                        due.sort();
                        prop_assert_eq!(fired, due);
                        model.retain(|m| m.0 > now);
                    }
                }
                prop_assert_eq!(w.len(), model.len());
            }
        }
    }

    #[test]
    fn next_expiration_is_never_late() {
        let mut w = Wheel::new();
        for when in [5u64, 70, 4100, 300_000, 63, 64, 65] {
            w.insert(when, pid(0), Envelope::new(when, 0, false), false);
        }
        let mut out = vec![];
        let mut fired = vec![];
        while let Some((_, _, d)) = w.next_expiration() {
            w.poll(d, &mut out);
            for (_, _, n) in out.drain(..) {
                let when = n.downcast::<u64>().unwrap();
                assert!(when <= d);
                fired.push((when, d));
            }
        }
        let whens: Vec<u64> = fired.iter().map(|f| f.0).collect();
        assert_eq!(whens, vec![5, 63, 64, 65, 70, 4100, 300_000]);
        assert!(
            fired.iter().all(|(w, d)| w == d),
            "fired exactly on time: {fired:?}"
        );
    }
}
