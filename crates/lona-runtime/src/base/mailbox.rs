//! The mailbox: a process's private, ordered buffer of received messages,
//! and selective receive over it.
//!
//! The owner moves what arrives in its [`Inbox`](crate::base::inbox) here (control
//! signals are acted on during that move and never reach the mailbox, except
//! as the messages they turn into: `Exit`, `Down`). The list is intrusive
//! (the nodes' own `next` links), so removing a match from the middle is
//! O(1) once found.
//!
//! # Selective receive
//!
//! 1. A receive scans oldest first and removes only the first message its
//!    predicate accepts.
//! 2. When nothing matches, the receive records a *cursor*: the last message
//!    it rejected, tagged with the receive's id. When it looks again (after
//!    new messages arrived), it resumes after the cursor instead of
//!    rescanning messages it already rejected (Erlang's "save pointer").
//! 3. Any removal clears the cursor, and a different receive (another id)
//!    ignores it and starts from the oldest message, so the cursor can never
//!    point at a removed node or skip a message someone else has not seen.
//!
//! # Scan hints
//!
//! A scan is a pointer chase, and a message that waited long (a process
//! that sends 20,000 messages before it reads its own) is cold: every
//! step would wait for memory. So a drain gives each node it appends the
//! address of the node [`AHEAD`] places after it ([`Ahead`]; further when
//! a signal's message, an `Exit` or a `Down`, was appended in between),
//! and every scan prefetches the hint of the node it starts from (a
//! step-by-step [`Mailbox::peek`], of each node it shows): receives that
//! take the oldest message one after another keep `AHEAD` misses in
//! flight.
//! (`mesh`, 100 processes x 20,000 messages: 3.5 -> 5.1 M msgs/s on one
//! worker, 8.7 -> 12.7 M on two.) Only the start: a prefetch at every
//! node passed cost a long scan over messages in the cache 15%
//! (`selective`). A hint is only a hint: prefetching never faults, and a
//! node taken since is harmless.

use crate::base::envelope::{Envelope, Header};
use std::ptr;

pub(crate) struct Mailbox {
    head: *mut Header,
    tail: *mut Header,
    /// Last node rejected by receive `cursor_owner`; null means "before the
    /// head". Meaningful only while `cursor_owner != 0`.
    cursor: *mut Header,
    len: u32,
    /// Receive ids are 32 bits: every scanning receive overwrites this, so a
    /// wrapped-around id can never meet a cursor it did not leave.
    cursor_owner: u32,
}

// SAFETY: the mailbox owns its nodes, which are all `Send`; it is only ever
// touched by the worker currently running its process.
unsafe impl Send for Mailbox {}

impl Default for Mailbox {
    fn default() -> Self {
        Mailbox {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
            cursor: ptr::null_mut(),
            cursor_owner: 0,
        }
    }
}

impl Mailbox {
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Append one owned node at the end, as one of a drain's `run`: the
    /// node [`AHEAD`] places before it in the run (more, counting nodes
    /// appended by [`Mailbox::push`] in between) gets its address as a
    /// scan hint (module doc).
    #[inline]
    pub(crate) fn push_run(&mut self, e: Envelope, run: &mut Ahead) {
        let n = self.push(e);
        if run.count == 0 {
            run.back = n;
        } else if run.count >= AHEAD {
            // SAFETY: `back` and every node after it were appended during
            // this drain, and nothing takes a node out of the mailbox during
            // a drain (`Ahead`): it and its successor are live.
            unsafe {
                (*run.back).set_ahead(n);
                run.back = (*run.back).next;
            }
        }
        run.count += 1;
    }

    /// Append one owned node at the end (with no scan hint); returns it.
    #[inline]
    pub(crate) fn push(&mut self, e: Envelope) -> *mut Header {
        let n = e.into_raw();
        // SAFETY: we own `n`, and `tail` (if any) is one of our nodes.
        unsafe {
            (*n).set_ahead(ptr::null());
            (*n).next = ptr::null_mut();
            if self.tail.is_null() {
                self.head = n;
            } else {
                (*self.tail).next = n;
            }
        }
        self.tail = n;
        self.len += 1;
        n
    }

    /// Scan for the first message `accept` takes, as receive `owner` (a
    /// non-zero id unique to one receive operation), rejecting at most
    /// `limit` messages. Resumes after the cursor `owner` left on its
    /// previous scan, so a scan cut short by the limit continues where it
    /// stopped. Returns the match, if any, and how many messages were
    /// rejected (a scan that rejected `limit` may not have reached the end).
    /// `accept` gets each node's pointer (valid for the call).
    #[inline]
    pub(crate) fn take_first(
        &mut self,
        owner: u32,
        limit: u32,
        mut accept: impl FnMut(*mut Header) -> bool,
    ) -> (Option<Envelope>, u32) {
        let mut rejected = 0u32;
        debug_assert_ne!(owner, 0);
        let (mut prev, mut cur) = if self.cursor_owner == owner && !self.cursor.is_null() {
            // SAFETY: the cursor is a live node of ours (rule 3).
            (self.cursor, unsafe { (*self.cursor).next })
        } else {
            (ptr::null_mut(), self.head)
        };
        if !cur.is_null() {
            prefetch_ahead(cur);
        }
        while !cur.is_null() && rejected < limit {
            if accept(cur) {
                // SAFETY: `cur` is a live node of ours.
                let next = unsafe { (*cur).next };
                if prev.is_null() {
                    self.head = next;
                } else {
                    // SAFETY: live node of ours.
                    unsafe { (*prev).next = next };
                }
                if self.tail == cur {
                    self.tail = prev;
                }
                self.len -= 1;
                self.cursor_owner = 0;
                // SAFETY: unlinked, so now exclusively owned by the result.
                let e = unsafe { Envelope::from_raw(cur) };
                return (Some(e), rejected);
            }
            rejected += 1;
            prev = cur;
            // SAFETY: `cur` is a live node of ours.
            cur = unsafe { (*cur).next };
        }
        self.cursor = prev;
        self.cursor_owner = owner;
        (None, rejected)
    }

    /// The message receive `owner` looks at next: the one after its cursor
    /// (after the messages it already rejected), or the oldest for a new
    /// receive. Null when it has seen them all. (The step-by-step form of
    /// [`Mailbox::take_first`], for an interpreter whose patterns are code:
    /// BEAM's `loop_rec`.)
    #[inline]
    pub(crate) fn peek(&mut self, owner: u32) -> *mut Header {
        let cur = self.seen_next(owner);
        if !cur.is_null() {
            prefetch_ahead(cur);
        }
        cur
    }

    /// [`Mailbox::peek`] without the prefetch: for `skip` and
    /// `remove_peeked`, which act on the node a peek already showed.
    #[inline]
    fn seen_next(&mut self, owner: u32) -> *mut Header {
        debug_assert_ne!(owner, 0);
        if self.cursor_owner != owner {
            self.cursor_owner = owner;
            self.cursor = ptr::null_mut();
        }
        if self.cursor.is_null() {
            self.head
        } else {
            // SAFETY: the cursor is a live node of ours (rule 3).
            unsafe { (*self.cursor).next }
        }
    }

    /// Receive `owner` rejects the message [`Mailbox::peek`] showed it: the
    /// cursor moves past it. Returns false if there was none.
    #[inline]
    pub(crate) fn skip(&mut self, owner: u32) -> bool {
        let cur = self.seen_next(owner);
        if cur.is_null() {
            return false;
        }
        self.cursor = cur;
        true
    }

    /// Receive `owner` rejects, from the message [`Mailbox::peek`] shows
    /// it on, every message `accept` rejects, at most `limit` of them: the
    /// cursor moves past each. Stops at the first message `accept` takes,
    /// which stays in the mailbox (what `peek` shows next) and is returned;
    /// null when the end or the limit came first. Also returns how many
    /// were rejected. (Many [`Mailbox::skip`]s in one loop, for a receive
    /// that can tell cheaply that a message cannot match.)
    #[inline]
    pub(crate) fn skip_while(
        &mut self,
        owner: u32,
        limit: u32,
        mut accept: impl FnMut(*mut Header) -> bool,
    ) -> (*mut Header, u32) {
        let mut cur = self.peek(owner);
        let mut prev = self.cursor;
        let mut rejected = 0u32;
        let mut found = ptr::null_mut();
        while !cur.is_null() && rejected < limit {
            // SAFETY: `cur` is a live node of ours.
            let next = unsafe { (*cur).next };
            prefetch(next);
            if accept(cur) {
                found = cur;
                break;
            }
            rejected += 1;
            prev = cur;
            cur = next;
        }
        self.cursor = prev;
        (found, rejected)
    }

    /// Receive `owner` takes the message [`Mailbox::peek`] showed it.
    /// `None` if there is none, or if a removal since that peek (a flush)
    /// took the cursor: the message seen may be gone, and no other is
    /// taken in its place.
    pub(crate) fn remove_peeked(&mut self, owner: u32) -> Option<Envelope> {
        if self.cursor_owner != owner {
            return None;
        }
        let cur = self.seen_next(owner);
        if cur.is_null() {
            return None;
        }
        let prev = self.cursor;
        // SAFETY: `cur` and `prev` (when not null) are live nodes of ours.
        let next = unsafe { (*cur).next };
        if prev.is_null() {
            self.head = next;
        } else {
            // SAFETY: as above.
            unsafe { (*prev).next = next };
        }
        if self.tail == cur {
            self.tail = prev;
        }
        self.len -= 1;
        self.cursor_owner = 0;
        // SAFETY: unlinked, so now exclusively owned by the result.
        Some(unsafe { Envelope::from_raw(cur) })
    }

    /// Remove the first message `accept` takes, from the oldest, ignoring
    /// any cursor (for flushes such as `demonitor(.., flush)`).
    pub(crate) fn remove_first(
        &mut self,
        accept: impl FnMut(*mut Header) -> bool,
    ) -> Option<Envelope> {
        // Scan from the oldest and leave no cursor of its own: a second
        // flush must not resume where a first one stopped. A receive's
        // cursor survives a flush that removes nothing.
        let saved = (self.cursor, self.cursor_owner);
        self.cursor_owner = 0;
        let (found, _) = self.take_first(u32::MAX, u32::MAX, accept);
        if found.is_none() {
            (self.cursor, self.cursor_owner) = saved;
        }
        found
    }

    /// Take every message out as one chain (linked by `next`, oldest
    /// first, null-terminated), leaving the mailbox empty; the caller owns
    /// the chain (it hands it to the reclaimer, see `reclaim`).
    pub(crate) fn take_all(&mut self) -> *mut Header {
        let head = std::mem::replace(&mut self.head, ptr::null_mut());
        self.tail = ptr::null_mut();
        self.len = 0;
        self.cursor_owner = 0;
        head
    }

    /// Drop every message.
    pub(crate) fn clear(&mut self) {
        let head = std::mem::replace(&mut self.head, ptr::null_mut());
        self.tail = ptr::null_mut();
        self.len = 0;
        self.cursor_owner = 0;
        // SAFETY: the chain was ours and is now unreachable from `self`
        // (not assigned over `self`: that would run Drop on the old value).
        unsafe { crate::base::envelope::drop_chain(head) };
    }
}

/// How far ahead a node's scan hint points (module doc): enough misses in
/// flight to hide a memory access behind the work of as many receives.
pub(crate) const AHEAD: usize = 8;

/// Where one drain's run of appends ([`Mailbox::push_run`]) stands: each
/// node gets its hint when the node `AHEAD` places later arrives, found by
/// a trailing pointer that follows the list `AHEAD` nodes behind the tail.
/// Lives for one drain only, because the nodes it reaches must still be in
/// the mailbox when they are written to, and only the process's own
/// receives take nodes out of the mailbox, never a drain (signals acted on
/// during a drain append, or end the process).
pub(crate) struct Ahead {
    /// The node `AHEAD` places before the next one to come (once `count`
    /// reaches `AHEAD`; the run's first node until then).
    back: *mut Header,
    /// Nodes appended in this run so far.
    count: usize,
}

impl Ahead {
    pub(crate) fn new() -> Ahead {
        Ahead {
            back: ptr::null_mut(),
            count: 0,
        }
    }
}

/// Prefetch the scan hint of `n`, a live node of the mailbox.
#[inline(always)]
fn prefetch_ahead(n: *mut Header) {
    // SAFETY: `n` is a live node of the mailbox (the caller's), and every
    // node in the mailbox had its hint written by `push`.
    let to = unsafe { (*n).ahead() };
    // Not at 0 (no hint): a prefetch of an unmapped page can cost a page
    // walk (`call`, one message at a time: 5% slower with it).
    if to != 0 {
        prefetch(ptr::without_provenance(to));
    }
}

/// A hint to bring the node at `p` (if any) into the cache: a scan looks
/// at it next, and the list's order is not the memory's.
#[inline(always)]
pub(crate) fn prefetch(p: *const Header) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the
    // address (null included), and reads nothing the program sees.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::envelope::{header_is, value_ref};
    use proptest::prelude::*;

    fn int(h: *mut Header) -> Option<i64> {
        header_is::<i64>(unsafe { &*h }).then(|| *unsafe { value_ref::<i64>(h) })
    }

    /// The mailbox's nodes, oldest first.
    fn nodes(m: &Mailbox) -> Vec<*mut Header> {
        let mut out = vec![];
        let mut p = m.head;
        while !p.is_null() {
            out.push(p);
            p = unsafe { (*p).next };
        }
        out
    }

    #[test]
    fn selective_takes_only_the_match() {
        let mut m = Mailbox::default();
        for i in 0..5i64 {
            m.push(Envelope::new(i, 0, false));
        }
        m.push(Envelope::new("str", 0, false));
        let e = m.take_first(1, u32::MAX, |h| int(h) == Some(3)).0.unwrap();
        assert_eq!(e.downcast::<i64>().unwrap(), 3);
        assert_eq!(m.len(), 5);
        let s = m.take_first(2, u32::MAX, |h| int(h).is_none()).0.unwrap();
        assert_eq!(s.downcast::<&str>().unwrap(), "str");
        let rest: Vec<i64> = std::iter::from_fn(|| m.take_first(3, u32::MAX, |_| true).0)
            .map(|e| e.downcast::<i64>().unwrap())
            .collect();
        assert_eq!(rest, vec![0, 1, 2, 4]);
        assert_eq!(m.len(), 0);
    }

    #[test]
    fn cursor_skips_rejected_messages() {
        let mut m = Mailbox::default();
        for i in 0..3i64 {
            m.push(Envelope::new(i, 0, false));
        }
        let mut seen = vec![];
        assert!(m
            .take_first(7, u32::MAX, |h| {
                seen.push(int(h).unwrap());
                false
            })
            .0
            .is_none());
        m.push(Envelope::new(10i64, 0, false));
        seen.clear();
        let got = m
            .take_first(7, u32::MAX, |h| {
                seen.push(int(h).unwrap());
                int(h) == Some(10)
            })
            .0;
        assert_eq!(
            seen,
            vec![10],
            "resumed after the messages already rejected"
        );
        assert!(got.is_some());
        // Another receive starts from the oldest.
        seen.clear();
        m.take_first(8, u32::MAX, |h| {
            seen.push(int(h).unwrap());
            false
        });
        assert_eq!(seen, vec![0, 1, 2]);
    }

    /// Two flushes in a row both scan the whole mailbox (the first, finding
    /// nothing, once left a cursor the second resumed after).
    #[test]
    fn consecutive_flushes_scan_from_the_oldest() {
        let mut m = Mailbox::default();
        for i in 0..3i64 {
            m.push(Envelope::new(i, 0, false));
        }
        assert!(m.remove_first(|h| int(h) == Some(9)).is_none());
        let got = m.remove_first(|h| int(h) == Some(1));
        assert_eq!(got.unwrap().downcast::<i64>().unwrap(), 1);
    }

    /// A scan cut short by its limit resumes where it stopped: no message
    /// is examined twice by one receive, none is skipped.
    #[test]
    fn limited_scans_resume() {
        let mut m = Mailbox::default();
        for i in 0..10i64 {
            m.push(Envelope::new(i, 0, false));
        }
        let mut seen = vec![];
        let mut scan = |m: &mut Mailbox| {
            m.take_first(5, 3, |h| {
                seen.push(int(h).unwrap());
                int(h) == Some(7)
            })
        };
        assert_eq!(scan(&mut m).1, 3);
        assert_eq!(scan(&mut m).1, 3);
        let (got, rejected) = scan(&mut m);
        assert_eq!(rejected, 1);
        assert_eq!(got.unwrap().downcast::<i64>().unwrap(), 7);
        assert_eq!(seen, vec![0, 1, 2, 3, 4, 5, 6, 7]);
    }

    /// Peek, skip and remove step by step as `take_first` does in one go:
    /// a new receive starts at the oldest, one that skipped resumes after.
    #[test]
    fn peek_skip_remove() {
        let mut m = Mailbox::default();
        for i in 0..4i64 {
            m.push(Envelope::new(i, 0, false));
        }
        assert_eq!(int(m.peek(1)), Some(0));
        assert!(m.skip(1));
        assert!(m.skip(1));
        assert_eq!(int(m.peek(1)), Some(2));
        let e = m.remove_peeked(1).unwrap();
        assert_eq!(e.downcast::<i64>().unwrap(), 2);
        // A removal clears the cursor: the next receive starts over.
        assert_eq!(int(m.peek(2)), Some(0));
        assert!(m.skip(2) && m.skip(2) && m.skip(2));
        assert!(m.peek(2).is_null() && !m.skip(2));
        m.push(Envelope::new(9i64, 0, false));
        assert_eq!(int(m.peek(2)), Some(9), "resumes after the rejected ones");
        assert_eq!(m.remove_peeked(2).unwrap().downcast::<i64>().unwrap(), 9);
        // The tail was removed: pushing still appends correctly.
        m.push(Envelope::new(10i64, 0, false));
        assert!(m.remove_peeked(3).is_none(), "take without a look");
        let rest: Vec<i64> = std::iter::from_fn(|| {
            m.peek(3);
            m.remove_peeked(3)
        })
        .map(|e| e.downcast::<i64>().unwrap())
        .collect();
        assert_eq!(rest, vec![0, 1, 3, 10]);
        assert_eq!(m.len(), 0);
        // A flush between the look and the take: nothing else is taken.
        for i in 0..3i64 {
            m.push(Envelope::new(i, 0, false));
        }
        assert_eq!(int(m.peek(4)), Some(0));
        assert!(m.remove_first(|h| int(h) == Some(2)).is_some());
        assert!(m.remove_peeked(4).is_none());
        assert_eq!(m.len(), 2);
    }

    /// `skip_while` is `peek` + `skip` in a loop: it stops at the first
    /// accepted message (left in place, what `peek` shows), at the end, or
    /// after `limit` rejections, and a later scan resumes after them.
    #[test]
    fn skip_while_is_peek_and_skip() {
        let mut m = Mailbox::default();
        for i in 0..10i64 {
            m.push(Envelope::new(i, 0, false));
        }
        let (h, n) = m.skip_while(1, u32::MAX, |h| int(h) == Some(3));
        assert_eq!((int(h), n), (Some(3), 3));
        assert_eq!(int(m.peek(1)), Some(3), "the accepted one stays");
        assert!(m.skip(1));
        let (h, n) = m.skip_while(1, 2, |_| false);
        assert!(h.is_null());
        assert_eq!(n, 2, "stopped by the limit");
        assert_eq!(int(m.peek(1)), Some(6));
        let (h, n) = m.skip_while(1, u32::MAX, |_| false);
        assert!(h.is_null() && m.peek(1).is_null());
        assert_eq!(n, 4, "stopped at the end");
        m.push(Envelope::new(10i64, 0, false));
        let (h, n) = m.skip_while(1, u32::MAX, |_| true);
        assert_eq!((int(h), n), (Some(10), 0), "resumes after the rejected");
        assert_eq!(m.remove_peeked(1).unwrap().downcast::<i64>().unwrap(), 10);
        // A new receive starts from the oldest.
        let (h, _) = m.skip_while(2, u32::MAX, |_| true);
        assert_eq!(int(h), Some(0));
        assert_eq!(m.len(), 10);
    }

    /// `take_all` hands over the whole chain, oldest first, and leaves an
    /// empty mailbox that works as new (no stale cursor or tail).
    #[test]
    fn take_all_leaves_an_empty_working_mailbox() {
        let mut m = Mailbox::default();
        for i in 0..3i64 {
            m.push(Envelope::new(i, 0, false));
        }
        assert!(m.take_first(1, u32::MAX, |_| false).0.is_none());
        let mut p = m.take_all();
        assert_eq!(m.len(), 0);
        assert!(m.peek(1).is_null(), "no cursor left behind");
        let mut got = vec![];
        while !p.is_null() {
            let next = unsafe { (*p).next };
            got.push(unsafe { Envelope::from_raw(p) }.downcast::<i64>().unwrap());
            p = next;
        }
        assert_eq!(got, vec![0, 1, 2]);
        m.push(Envelope::new(7i64, 0, false));
        let e = m.take_first(1, u32::MAX, |_| true).0.unwrap();
        assert_eq!(e.downcast::<i64>().unwrap(), 7);
    }

    /// A drain's run gives each node the address of the node `AHEAD`
    /// places later; the last `AHEAD` of a run, and nodes pushed alone,
    /// have none. (A wrong distance or a hint on the wrong node fails.)
    #[test]
    fn a_run_hints_the_node_ahead() {
        let mut m = Mailbox::default();
        m.push(Envelope::new(-1i64, 0, false));
        let mut run = Ahead::new();
        let n = 3 * AHEAD as i64 + 1;
        for i in 0..n {
            m.push_run(Envelope::new(i, 0, false), &mut run);
        }
        m.push(Envelope::new(-2i64, 0, false));
        let nodes = nodes(&m);
        assert_eq!(nodes.len(), n as usize + 2);
        let hint = |p: *mut Header| unsafe { (*p).ahead() };
        assert_eq!(hint(nodes[0]), 0, "pushed alone");
        assert_eq!(hint(nodes[nodes.len() - 1]), 0, "pushed alone");
        let runs = &nodes[1..nodes.len() - 1];
        for (i, &p) in runs.iter().enumerate() {
            match runs.get(i + AHEAD) {
                Some(&far) => assert_eq!(hint(p), far.addr(), "node {i}"),
                None => assert_eq!(hint(p), 0, "node {i}: nothing {AHEAD} later"),
            }
        }
    }

    /// Plain pushes inside a run (a signal's `Exit` or `Down` appended
    /// during a drain) are passed over by the trailing pointer: every hint
    /// still names a live node at least `AHEAD` places later in the list.
    #[test]
    fn plain_pushes_inside_a_run_keep_hints_forward() {
        let mut m = Mailbox::default();
        let mut run = Ahead::new();
        for i in 0..30i64 {
            m.push_run(Envelope::new(i, 0, false), &mut run);
            if i % 7 == 3 {
                m.push(Envelope::new(-i, 0, false));
            }
        }
        let nodes = nodes(&m);
        let mut hinted = 0;
        for (i, &p) in nodes.iter().enumerate() {
            let to = unsafe { (*p).ahead() };
            if to != 0 {
                let j = nodes
                    .iter()
                    .position(|q| q.addr() == to)
                    .expect("a node of the list");
                assert!(j >= i + AHEAD, "node {i} hints at {j}");
                hinted += 1;
            }
        }
        assert!(hinted >= 30 - AHEAD, "only {hinted} hints");
    }

    /// Stale hints (to nodes taken since, and freed) change nothing: the
    /// order, the matches and the drop of the rest stay right (and Miri
    /// sees no read of freed memory: a hint is only prefetched).
    #[test]
    fn stale_hints_are_harmless() {
        let mut m = Mailbox::default();
        let mut run = Ahead::new();
        for i in 0..40i64 {
            m.push_run(Envelope::new(i, 0, false), &mut run);
        }
        // Take every fourth from the back half first: earlier nodes now
        // hint at freed ones.
        for v in (20..40).step_by(4) {
            let e = m
                .take_first(v as u32 + 1, u32::MAX, |h| int(h) == Some(v))
                .0;
            assert_eq!(e.unwrap().downcast::<i64>().unwrap(), v);
        }
        let (h, rejected) = m.skip_while(100, u32::MAX, |h| int(h) == Some(33));
        assert_eq!((int(h), rejected), (Some(33), 29));
        let rest: Vec<i64> = std::iter::from_fn(|| m.take_first(101, u32::MAX, |_| true).0)
            .map(|e| e.downcast::<i64>().unwrap())
            .collect();
        let want: Vec<i64> = (0..40).filter(|v| *v < 20 || v % 4 != 0).collect();
        assert_eq!(rest, want);
    }

    proptest! {
        /// Against a Vec model: any sequence of pushes and selective takes
        /// (with and without cursor reuse) removes exactly the first match.
        #[test]
        fn matches_vec_model(ops in proptest::collection::vec((0u8..4, 0i64..6), 0..200)) {
            let mut m = Mailbox::default();
            let mut model: Vec<i64> = vec![];
            // One receive keeps one predicate; a new predicate is a new receive.
            let mut owner = 1u32;
            let mut last_v = -1;
            for (op, v) in ops {
                if v != last_v { owner += 1; last_v = v; }
                match op {
                    0 => { m.push(Envelope::new(v, 0, false)); model.push(v); }
                    // A drain's run of v + 1 nodes, with scan hints.
                    3 => {
                        let mut run = Ahead::new();
                        for _ in 0..=v { m.push_run(Envelope::new(v, 0, false), &mut run); model.push(v); }
                    }
                    1 => {
                        let got = m.take_first(owner, u32::MAX, |h| int(h) == Some(v)).0.map(|e| e.downcast::<i64>().unwrap());
                        let want = model.iter().position(|x| *x == v).map(|i| model.remove(i));
                        prop_assert_eq!(got, want);
                        if got.is_some() { owner += 1; }
                    }
                    _ => owner += 1,
                }
                prop_assert_eq!(m.len(), model.len());
            }
        }
    }
}
