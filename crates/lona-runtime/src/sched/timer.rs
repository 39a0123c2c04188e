//! Timers: receive timeouts, `send_after`, `start_timer` (and the
//! [`Timeout`] message it delivers), `cancel_timer`.
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
//!
//! Timers aimed at a pid are *tracked*: indexed by target (a list per
//! target threaded through the entries themselves, so tracking and
//! untracking are O(1) and allocate nothing; the map holds one head index
//! per pid that has timers) and cancelled when the target ends, receive
//! timeouts included. The two kinds of timer a process sets on itself
//! while it waits, a receive timeout and a wake-up, carry no prepared
//! node: the receive timeout's signal is made when it fires, so the
//! common case, a timer cancelled because the reply came first, costs no
//! allocation. Timers aimed at a registered name resolve it when they fire
//! (Erlang's `send_after` to an atom) and are not tied to any process.
//!
//! Delays: rounded up to the millisecond, never firing early. A delay
//! longer than [`MAX_DELAY`] (about 2.1 years, what the wheel spans) is
//! treated as infinite: the timer is kept, cancellable, but never fires.
//! (Clamping such deadlines into the wheel once made the timer thread spin
//! forever under its lock, so that no timer in the node fired again.)

use crate::base::envelope::Envelope;
use crate::sched::process::IdMap;
use crate::Pid;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::Arc;

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const LEVELS: usize = 6;
const SLOTS: usize = 64;
const NIL: u32 = u32::MAX;
/// The furthest position the wheel links an entry at, in ms from its
/// current time: one top-level slot short of the top level's range, so a
/// position can never share the slot of the current time one lap ahead
/// (which is what made a clamped ~2.2-year timer re-link into the slot
/// being polled, forever). Later deadlines wait at this position and are
/// re-linked when the wheel gets there.
const MAX_SPAN: u64 = (1 << (6 * LEVELS)) - (1 << (6 * (LEVELS - 1))) - 1;

/// The longest delay a timer fires after (about 2.1 years); longer ones,
/// up to `Duration::MAX`, never fire (see the module doc).
pub const MAX_DELAY: std::time::Duration = std::time::Duration::from_millis(MAX_DELAY_MS);
const MAX_DELAY_MS: u64 = MAX_SPAN - 1;

/// `d` in whole milliseconds, rounded up, saturating (`Duration::MAX` is
/// `u64::MAX`): u64 arithmetic, where `as_nanos` would divide a u128.
fn ms_ceil(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(d.subsec_nanos().div_ceil(1_000_000)))
}

/// `d` in whole milliseconds, rounded down, saturating.
fn ms_floor(d: Duration) -> u64 {
    d.as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(d.subsec_millis()))
}

/// The message `start_timer` delivers: Erlang's `{timeout, TRef, Msg}`.
#[derive(Debug, PartialEq)]
pub struct Timeout<M> {
    /// The timer's reference, as `start_timer` returned it.
    pub tref: TimerRef,
    /// The message given to `start_timer`.
    pub msg: M,
}

/// An entry's `slot` when it is not in the wheel (an infinite delay).
const UNLINKED: u16 = u16::MAX;

/// Whom a timer delivers to.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Pid(Pid),
    /// A registered name, resolved when the timer fires.
    Name(Arc<str>),
    /// No message: the process is woken (its futures polled again), for
    /// [`Ctx::timeout`](crate::Ctx::timeout). Tracked like `Pid`.
    Wake(Pid),
    /// A receive timeout (`rules::timeout`): its signal is made when it
    /// fires, by `signal(token, generation)` (handed down by `rules`,
    /// which this layer does not know). Tracked like `Pid`.
    Timeout {
        pid: Pid,
        token: u32,
        signal: fn(u32, u32) -> Envelope,
    },
}

impl Target {
    /// The process whose timers list holds this timer.
    fn tracked(&self) -> Option<Pid> {
        match self {
            Target::Pid(p) | Target::Wake(p) | Target::Timeout { pid: p, .. } => Some(*p),
            Target::Name(_) => None,
        }
    }
}

/// A pending timer, as returned by `send_after` / `start_timer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerRef {
    index: u32,
    gen: u32,
}

impl TimerRef {
    /// The reference as one word (generation high, index low), for a term
    /// heap to store.
    pub const fn to_bits(self) -> u64 {
        ((self.gen as u64) << 32) | self.index as u64
    }

    /// The inverse of [`TimerRef::to_bits`]. Any word is accepted: one that
    /// names no pending timer cancels nothing.
    pub const fn from_bits(bits: u64) -> TimerRef {
        TimerRef {
            index: bits as u32,
            gen: (bits >> 32) as u32,
        }
    }
}

struct Entry {
    when: u64,
    prev: u32,
    next: u32,
    /// level * 64 + slot while linked, `UNLINKED` for an infinite delay.
    slot: u16,
    gen: u32,
    /// The neighbours in its target's list (`Inner::by_target`; tracked
    /// targets only).
    tprev: u32,
    tnext: u32,
    /// Pending (not fired, not cancelled).
    live: bool,
    target: Target,
    /// What is delivered, made when the timer was set (`None` for the
    /// targets that make theirs when it fires, or need none).
    node: Option<Envelope>,
}

pub(crate) struct Wheel {
    elapsed: u64,
    heads: [[u32; SLOTS]; LEVELS],
    occupied: [u64; LEVELS],
    entries: Vec<Entry>,
    free: Vec<u32>,
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
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.free.len()
    }

    /// Link entry `i` into the slot of its deadline, or, for a deadline
    /// beyond the span, of the span's end: polling re-links it from there
    /// (a deadline is never moved, so it never fires early).
    fn link(&mut self, i: u32) {
        let when = self.entries[i as usize].when.min(self.elapsed + MAX_SPAN);
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
        if ls == UNLINKED as usize {
            return;
        }
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
    pub(crate) fn insert(&mut self, when: u64, target: Pid, node: Envelope) -> TimerRef {
        self.insert_with(Some(when), Target::Pid(target), |_| Some(node))
    }

    /// Insert a timer firing at `when` (ms; `None`: never) whose node (if
    /// any) is made knowing the timer's reference.
    pub(crate) fn insert_with(
        &mut self,
        when: Option<u64>,
        target: Target,
        make: impl FnOnce(TimerRef) -> Option<Envelope>,
    ) -> TimerRef {
        let when = when.map(|w| w.max(self.elapsed + 1));
        let (i, gen) = match self.free.pop() {
            Some(i) => (i, self.entries[i as usize].gen.wrapping_add(1)),
            None => (self.entries.len() as u32, 0),
        };
        let tref = TimerRef { index: i, gen };
        let entry = Entry {
            when: when.unwrap_or(u64::MAX),
            prev: NIL,
            next: NIL,
            slot: UNLINKED,
            gen,
            tprev: NIL,
            tnext: NIL,
            live: true,
            target,
            node: make(tref),
        };
        if i as usize == self.entries.len() {
            self.entries.push(entry);
        } else {
            self.entries[i as usize] = entry;
        }
        if when.is_some() {
            self.link(i);
        }
        tref
    }

    /// Free entry `i` (already unlinked from its slot; its target list
    /// links are left for the caller's `untrack`); its target and node.
    fn release(&mut self, i: u32) -> (Target, Option<Envelope>) {
        let e = &mut self.entries[i as usize];
        debug_assert!(e.live, "a timer entry released twice");
        e.live = false;
        let node = e.node.take();
        let target = std::mem::replace(&mut e.target, Target::Pid(Pid::new(0, 0)));
        self.free.push(i);
        (target, node)
    }

    fn live(&self, t: TimerRef) -> Option<&Entry> {
        let e = self.entries.get(t.index as usize)?;
        (e.gen == t.gen && e.live).then_some(e)
    }

    /// Cancel a pending timer; `None` if it already fired or was cancelled.
    pub(crate) fn cancel(&mut self, t: TimerRef) -> Option<(Target, Option<Envelope>)> {
        self.live(t)?;
        self.unlink(t.index);
        Some(self.release(t.index))
    }

    /// When the timer `t` fires (ms on the wheel's clock; `u64::MAX` for
    /// never), if pending.
    pub(crate) fn deadline(&self, t: TimerRef) -> Option<u64> {
        self.live(t).map(|e| e.when)
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

    /// Advance to `now` (ms), moving every expired timer into `out` (with
    /// its index, so the caller can untrack it).
    pub(crate) fn poll(&mut self, now: u64, out: &mut Vec<(u32, Target, Option<Envelope>)>) {
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
                    let (target, node) = self.release(i);
                    out.push((i, target, node));
                } else {
                    self.link(i);
                    debug_assert!(
                        self.entries[i as usize].slot as usize != level * SLOTS + slot,
                        "a timer re-linked into the slot being polled"
                    );
                }
                i = next;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }
}

struct Inner {
    wheel: Wheel,
    /// Pending timers per pid target, cancelled when it ends: the first
    /// entry of the target's list, linked on through `tnext`/`tprev`.
    /// Pids are the runtime's own unique ids (`IdMap`).
    by_target: IdMap<Pid, u32>,
    /// Deadline the timer thread sleeps until (None: forever).
    sleeping_until: Option<u64>,
    stop: bool,
}

impl Inner {
    /// O(1): push entry `i` at the front of `pid`'s list.
    fn track(&mut self, pid: Pid, i: u32) {
        let head = self.by_target.entry(pid).or_insert(NIL);
        let old = std::mem::replace(head, i);
        let e = &mut self.wheel.entries[i as usize];
        e.tprev = NIL;
        e.tnext = old;
        if old != NIL {
            self.wheel.entries[old as usize].tprev = i;
        }
    }

    /// O(1): unlink entry `i` from `pid`'s list (dropping the list's map
    /// entry with its last timer).
    fn untrack(&mut self, pid: Pid, i: u32) {
        let (prev, next) = {
            let e = &self.wheel.entries[i as usize];
            (e.tprev, e.tnext)
        };
        if prev == NIL {
            if next == NIL {
                self.by_target.remove(&pid);
            } else if let Some(head) = self.by_target.get_mut(&pid) {
                debug_assert_eq!(*head, i);
                *head = next;
            }
        } else {
            self.wheel.entries[prev as usize].tnext = next;
        }
        if next != NIL {
            self.wheel.entries[next as usize].tprev = prev;
        }
    }
}

/// The runtime's timers (shared; see the module doc).
pub(crate) struct Timers {
    inner: Mutex<Inner>,
    cv: Condvar,
    start: Instant,
    /// How many pid-targeted timers are pending: lets exits skip the lock.
    /// Changed under the lock; read without it (see `cancel_target`).
    tracked: AtomicUsize,
}

impl Timers {
    pub(crate) fn new() -> Timers {
        Timers {
            inner: Mutex::new(Inner {
                wheel: Wheel::new(),
                by_target: IdMap::default(),
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
        ms_floor(self.start.elapsed())
    }

    /// Deliver the node `make` builds to `target` after `after` (rounded up
    /// to the millisecond; longer than [`MAX_DELAY`]: never).
    pub(crate) fn insert_with(
        &self,
        after: Duration,
        target: Target,
        make: impl FnOnce(TimerRef) -> Envelope,
    ) -> TimerRef {
        self.insert_entry(after, target, |t| Some(make(t)))
    }

    /// A timer whose target needs no prepared node ([`Target::Wake`],
    /// [`Target::Timeout`]).
    pub(crate) fn insert_bare(&self, after: Duration, target: Target) -> TimerRef {
        debug_assert!(matches!(target, Target::Wake(_) | Target::Timeout { .. }));
        self.insert_entry(after, target, |_| None)
    }

    fn insert_entry(
        &self,
        after: Duration,
        target: Target,
        make: impl FnOnce(TimerRef) -> Option<Envelope>,
    ) -> TimerRef {
        // Saturating (`Duration::MAX` once wrapped to about 2 ms).
        let ms = ms_ceil(after);
        // The current time rounded *up*, so a timer never fires early (the
        // wheel fires when the truncated clock reaches `when`); read before
        // the lock, and never behind the wheel's own clock.
        let now = ms_ceil(self.start.elapsed());
        let mut g = self.lock();
        let when = (ms <= MAX_DELAY_MS).then(|| now.max(g.wheel.elapsed).saturating_add(ms.max(1)));
        let pid = target.tracked();
        let t = g.wheel.insert_with(when, target, make);
        if let Some(pid) = pid {
            g.track(pid, t.index);
            // Relaxed: changed under the lock; the lock-free reader pairs
            // through the fences described in `cancel_target`.
            self.tracked.fetch_add(1, Relaxed);
        }
        if let Some(when) = when {
            if g.sleeping_until.is_none_or(|s| when < s) {
                self.cv.notify_one();
            }
        }
        t
    }

    /// Cancel under the lock: `Some` if it was pending, with its
    /// undelivered node if it had one.
    fn cancel_locked(&self, g: &mut Inner, t: TimerRef) -> Option<Option<Envelope>> {
        let (target, node) = g.wheel.cancel(t)?;
        if let Some(pid) = target.tracked() {
            g.untrack(pid, t.index);
            self.tracked.fetch_sub(1, Relaxed);
        }
        Some(node)
    }

    /// Cancel: `Some` if the timer was pending, with its undelivered node
    /// if it had one (for the caller to drop outside any lock of its own).
    pub(crate) fn cancel(&self, t: TimerRef) -> Option<Option<Envelope>> {
        let mut g = self.lock();
        self.cancel_locked(&mut g, t)
    }

    /// Cancel and say how long was left, measured on the clock (`None`: it
    /// had fired or was cancelled already; `Duration::MAX`: it was never
    /// going to fire), under one lock.
    pub(crate) fn cancel_remaining(&self, t: TimerRef) -> Option<Duration> {
        let mut g = self.lock();
        let when = g.wheel.deadline(t)?;
        let node = self.cancel_locked(&mut g, t);
        drop(g);
        drop(node);
        if when == u64::MAX {
            return Some(Duration::MAX);
        }
        let now = self.start.elapsed();
        Some(Duration::from_millis(when).saturating_sub(now))
    }

    pub(crate) fn pending(&self) -> usize {
        self.lock().wheel.len()
    }

    /// Cancel every timer addressed to the pid `target` (it ended).
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
            let mut i = g.by_target.remove(&target).unwrap_or(NIL);
            while i != NIL {
                // Read the link before the entry is released (and may be
                // reused: not while this lock is held).
                let (gen, next) = {
                    let e = &g.wheel.entries[i as usize];
                    (e.gen, e.tnext)
                };
                if let Some((_, node)) = g.wheel.cancel(TimerRef { index: i, gen }) {
                    self.tracked.fetch_sub(1, Relaxed);
                    dropped.extend(node);
                }
                i = next;
            }
        }
        // User payloads are dropped outside the lock (their drops are
        // contained by `Envelope`).
        drop(dropped);
    }

    /// The timer thread's loop: deliver what expires via `deliver` until
    /// [`Timers::stop`].
    pub(crate) fn run(&self, deliver: impl Fn(Target, Option<Envelope>)) {
        let mut fired = Vec::new();
        let mut g = self.lock();
        loop {
            if g.stop {
                break;
            }
            let now = self.now_ms();
            g.wheel.poll(now, &mut fired);
            if !fired.is_empty() {
                for (i, target, _) in &fired {
                    if let Some(pid) = target.tracked() {
                        g.untrack(pid, *i);
                        self.tracked.fetch_sub(1, Relaxed);
                    }
                }
                drop(g);
                for (_, target, node) in fired.drain(..) {
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
                        let t = w.insert(when, pid(id), Envelope::new(id, 0, false));
                        model.push((when, t, id));
                        id += 1;
                    }
                    1 if !model.is_empty() => {
                        let (_, t, i) = model.remove(x as usize % model.len());
                        let (p, n) = w.cancel(t).expect("pending timer cancels");
                        prop_assert!(matches!(p, Target::Pid(p) if p == pid(i)));
                        prop_assert_eq!(n.unwrap().downcast::<u32>().unwrap(), i);
                        prop_assert!(w.cancel(t).is_none());
                    }
                    _ => {
                        now += x % 5_000;
                        w.poll(now, &mut out);
                        let mut fired: Vec<u32> = out.drain(..).map(|(_, _, n): (u32, Target, Option<Envelope>)| n.unwrap().downcast::<u32>().unwrap()).collect();
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
            w.insert(when, pid(0), Envelope::new(when, 0, false));
        }
        let mut out = vec![];
        let mut fired = vec![];
        while let Some((_, _, d)) = w.next_expiration() {
            w.poll(d, &mut out);
            for (_, _, n) in out.drain(..) {
                let when = n.unwrap().downcast::<u64>().unwrap();
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

    /// The review's wedge: with the clock moved, a deadline at the far end
    /// of the wheel shared the slot position of the current time one lap
    /// ahead, and polling re-linked it into the slot being polled forever.
    /// Every clock position near a top-level boundary, the furthest
    /// deadline: polling returns and fires nothing early.
    #[test]
    fn far_deadlines_never_wedge_the_wheel() {
        let top = 1u64 << 30;
        for start in [
            0,
            1,
            top - 1,
            top,
            5 * top + 17,
            (1 << 36) - 3,
            63 * top + 5,
        ] {
            let mut w = Wheel::new();
            let mut out = vec![];
            w.poll(start, &mut out);
            let edge = w.insert(start + MAX_SPAN, pid(1), Envelope::new(1u8, 0, false));
            let beyond = start + MAX_SPAN + 3 * top + 7;
            let far = w.insert(beyond, pid(2), Envelope::new(2u8, 0, false));
            assert_eq!(w.deadline(edge), Some(start + MAX_SPAN));
            assert_eq!(w.deadline(far), Some(beyond), "a deadline is never moved");
            for now in [start + 1, start + top, start + MAX_SPAN - 1] {
                w.poll(now, &mut out);
                assert!(out.is_empty(), "fired early at {now} (start {start})");
            }
            w.poll(start + MAX_SPAN, &mut out);
            assert_eq!(
                out.len(),
                1,
                "the edge fires at its deadline (start {start})"
            );
            out.clear();
            w.poll(beyond - 1, &mut out);
            assert!(out.is_empty(), "the far one fired early (start {start})");
            w.poll(beyond, &mut out);
            assert_eq!(
                out.len(),
                1,
                "the far one fires at its deadline (start {start})"
            );
            out.clear();
        }
    }

    /// An infinite timer stays pending, is never polled out, and cancels.
    #[test]
    fn infinite_timers_never_fire_and_cancel() {
        let mut w = Wheel::new();
        let mut out = vec![];
        let t = w.insert_with(None, Target::Pid(pid(2)), |_| {
            Some(Envelope::new(2u8, 0, false))
        });
        w.poll(u64::MAX / 2, &mut out);
        assert!(out.is_empty());
        assert_eq!(w.len(), 1);
        assert_eq!(w.deadline(t), Some(u64::MAX));
        assert!(w.cancel(t).is_some());
        assert_eq!(w.len(), 0);
    }

    /// The entries of `p`'s list, front to back, checking every back link.
    fn tracked_of(timers: &Timers, p: Pid) -> Vec<u32> {
        let g = timers.lock();
        let mut out = vec![];
        let (mut prev, mut i) = (NIL, g.by_target.get(&p).copied().unwrap_or(NIL));
        while i != NIL {
            let e = &g.wheel.entries[i as usize];
            assert!(e.live, "a released entry is still in {p:?}'s list");
            assert_eq!(e.tprev, prev, "entry {i}'s back link");
            assert_eq!(e.target.tracked(), Some(p));
            out.push(i);
            (prev, i) = (i, e.tnext);
        }
        out
    }

    /// Many timers to a few targets: tracked per target in lists through
    /// the entries; cancelling and firing any of them in any order keeps
    /// every list exactly the target's pending timers, and a target's end
    /// cancels all of its own and none of the others'.
    #[test]
    fn per_target_lists_stay_consistent() {
        let timers = Timers::new();
        let (p, q) = (pid(9), pid(10));
        let mut refs: Vec<(Pid, TimerRef)> = (0..1000u32)
            .map(|i| {
                let to = if i % 4 == 0 { q } else { p };
                let t = match i % 3 {
                    0 => timers.insert_with(Duration::from_secs(100), Target::Pid(to), |_| {
                        Envelope::new(i, 0, false)
                    }),
                    1 => timers.insert_bare(Duration::from_secs(100), Target::Wake(to)),
                    _ => timers.insert_bare(
                        Duration::from_secs(100),
                        Target::Timeout {
                            pid: to,
                            token: i,
                            signal: |token, gen| Envelope::new(token, gen, true),
                        },
                    ),
                };
                (to, t)
            })
            .collect();
        // Cancel every third, from the back (the lists' middles and ends).
        let mut k = refs.len();
        while k > 0 {
            k -= 1;
            if k % 3 == 1 {
                let (_, t) = refs.remove(k);
                assert!(timers.cancel(t).is_some());
                assert!(timers.cancel(t).is_none(), "cancelled twice");
            }
        }
        // Fire a batch: the wheel's poll, untracking as the timer thread does.
        {
            let mut g = timers.lock();
            let soon = refs.iter().step_by(5).map(|r| r.1).collect::<Vec<_>>();
            // All released first, then untracked, as `run` does after a
            // poll: a released entry's links stay valid until untracked.
            let fired: Vec<(u32, Target)> = soon
                .iter()
                .map(|t| (t.index, g.wheel.cancel(*t).unwrap().0))
                .collect();
            for (i, target) in fired {
                g.untrack(target.tracked().unwrap(), i);
                timers.tracked.fetch_sub(1, Relaxed);
            }
            refs.retain(|r| !soon.contains(&r.1));
        }
        for who in [p, q] {
            let mut want: Vec<u32> = refs
                .iter()
                .filter(|r| r.0 == who)
                .map(|r| r.1.index)
                .collect();
            let mut got = tracked_of(&timers, who);
            want.sort();
            got.sort();
            assert_eq!(got, want, "{who:?}'s list");
        }
        timers.cancel_target(p);
        assert!(tracked_of(&timers, p).is_empty());
        let left = refs.iter().filter(|r| r.0 == q).count();
        assert_eq!(timers.pending(), left, "q's timers are untouched");
        assert_eq!(tracked_of(&timers, q).len(), left);
        timers.cancel_target(q);
        assert_eq!(timers.pending(), 0);
        assert_eq!(timers.tracked.load(Relaxed), 0);
        assert!(timers.lock().by_target.is_empty(), "no list left behind");
    }

    /// Milliseconds in u64 arithmetic: rounded up for delays, saturating.
    #[test]
    fn milliseconds_round_and_saturate() {
        assert_eq!(ms_ceil(Duration::ZERO), 0);
        assert_eq!(ms_ceil(Duration::from_nanos(1)), 1);
        assert_eq!(ms_ceil(Duration::from_micros(1000)), 1);
        assert_eq!(ms_ceil(Duration::from_micros(1001)), 2);
        assert_eq!(ms_ceil(Duration::new(3, 999_999_999)), 4000);
        assert_eq!(ms_ceil(Duration::MAX), u64::MAX);
        assert_eq!(ms_floor(Duration::new(3, 999_999_999)), 3999);
        assert_eq!(ms_floor(Duration::MAX), u64::MAX);
        assert_eq!(ms_ceil(MAX_DELAY), MAX_DELAY_MS);
    }

    #[test]
    fn remaining_time_is_measured_on_the_clock() {
        let timers = Timers::new();
        let t = timers.insert_with(Duration::from_millis(2000), Target::Pid(pid(3)), |_| {
            Envelope::new(0u8, 0, false)
        });
        std::thread::sleep(Duration::from_millis(300));
        let left = timers.cancel_remaining(t).unwrap();
        assert!(
            left <= Duration::from_millis(1701),
            "{left:?} left after 300 ms of 2000"
        );
        let inf = timers.insert_with(Duration::MAX, Target::Pid(pid(3)), |_| {
            Envelope::new(0u8, 0, false)
        });
        assert_eq!(timers.cancel_remaining(inf), Some(Duration::MAX));
    }
}
