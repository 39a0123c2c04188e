//! The inbox: the lock-free, multi-producer end of a process's signal queue.
//!
//! Messages and signals from every sender go through this one queue, so
//! between one sender and one receiver everything arrives in the order it
//! was sent (`docs/design.md`, D3).
//!
//! It is a Treiber stack of intrusive nodes (R. K. Treiber, "Systems
//! Programming: Coping with Parallelism", IBM RJ 5118, 1986) whose single
//! consumer takes the whole stack at once and reverses it, which restores
//! arrival order: a push is linearised at its CAS, and a take returns every
//! node pushed before it. Because the consumer never pops a single node,
//! there is no ABA problem and no memory reclamation scheme is needed.
//!
//! Why not a crate: crossbeam's `SegQueue` allocates ~500-byte blocks, too
//! much for a million mostly-empty mailboxes, and cannot be *closed*. An
//! empty inbox here is one word.
//!
//! # Closing
//!
//! An exiting process [`close`](Inbox::close)s its inbox: the head becomes a
//! sentinel and every later push fails, handing the node back to its sender.
//! This decides, by the order of operations on one atomic word, who answers a
//! link or monitor signal racing with the exit: the dying process if the push
//! came first (it finds the node in its final take), the sender otherwise.
//! Exactly one of them, never both, never neither. A slot's inbox is
//! [`reopen`](Inbox::reopen)ed when the slot is reused; a node a stale sender
//! manages to push after that carries the old generation and is answered or
//! dropped by the new owner's drain.

use crate::base::envelope::Header;
use crate::base::sync::atomic::{AtomicPtr, Ordering::*};
use std::ptr;

fn closed() -> *mut Header {
    ptr::without_provenance_mut(1)
}

pub(crate) struct Inbox {
    /// Top of the stack (most recent push). Written by producers (CAS,
    /// release: publishes the node's contents) and by the owner (swap,
    /// acquire: sees them); both SeqCst for `State::notify`'s fast path.
    head: AtomicPtr<Header>,
}

impl Inbox {
    /// A closed inbox (a free slot).
    pub(crate) fn new_closed() -> Inbox {
        Inbox {
            head: AtomicPtr::new(closed()),
        }
    }

    /// Push a node. Fails, returning it, if the inbox is closed.
    ///
    /// # Safety
    /// `node` must be an owned node (from `Envelope::into_raw`); on success
    /// ownership passes to the inbox.
    pub(crate) unsafe fn push(&self, node: *mut Header) -> Result<(), *mut Header> {
        // Relaxed: only a first guess for the CAS, which re-reads.
        let mut head = self.head.load(Relaxed);
        loop {
            if head == closed() {
                return Err(node);
            }
            // SAFETY: the node is ours until the CAS publishes it.
            unsafe { (*node).next = head };
            // SeqCst (not just Release): see `State::notify`'s fast path.
            match self.head.compare_exchange_weak(head, node, SeqCst, Relaxed) {
                Ok(_) => return Ok(()),
                Err(actual) => head = actual,
            }
        }
    }

    /// Push a chain of nodes at once, linked newest to oldest by `next`
    /// (`newest.next ... == oldest`, `oldest.next` is overwritten): one CAS
    /// for the whole batch, and arrival order within it is kept. Fails,
    /// giving the chain back, if the inbox is closed.
    ///
    /// # Safety
    /// The caller owns every node of the chain; on success ownership passes
    /// to the inbox.
    pub(crate) unsafe fn push_chain(
        &self,
        newest: *mut Header,
        oldest: *mut Header,
    ) -> Result<(), ()> {
        // Relaxed: only a first guess for the CAS, which re-reads.
        let mut head = self.head.load(Relaxed);
        loop {
            if head == closed() {
                return Err(());
            }
            // SAFETY: the chain is ours until the CAS publishes it.
            unsafe { (*oldest).next = head };
            // SeqCst: see `State::notify`'s fast path.
            match self
                .head
                .compare_exchange_weak(head, newest, SeqCst, Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(actual) => head = actual,
            }
        }
    }

    /// Whether anything is waiting (a hint; the owner's take is exact).
    pub(crate) fn is_empty(&self) -> bool {
        // SeqCst: the owner's "nothing there" must take part in the SeqCst
        // order of `State::notify`'s fast path (a plain load on x86).
        let h = self.head.load(SeqCst);
        h.is_null() || h == closed()
    }

    /// Owner only: take everything pushed so far, oldest first, as a chain
    /// `(first, last)` linked by `next`. Null if empty.
    pub(crate) fn take(&self) -> (*mut Header, *mut Header) {
        // SeqCst: see `State::notify`'s fast path.
        if self.head.load(SeqCst).is_null() {
            return (ptr::null_mut(), ptr::null_mut());
        }
        // SeqCst: see `State::notify`'s fast path.
        let top = self.head.swap(ptr::null_mut(), SeqCst);
        debug_assert!(top != closed(), "take on a closed inbox");
        // SAFETY: the chain is now exclusively ours.
        if unsafe { (*top).next }.is_null() {
            // One node (a reply, a token): nothing to reverse, and the
            // reversal's loop stays out of line.
            return (top, top);
        }
        // SAFETY: as above.
        unsafe { reverse(top) }
    }

    /// Owner only, at exit: close the inbox and take what it held, oldest
    /// first.
    pub(crate) fn close(&self) -> (*mut Header, *mut Header) {
        // Acquire: sees the contents of every node pushed (release CAS)
        // before the close; nothing is published by closing.
        let top = self.head.swap(closed(), Acquire);
        if top == closed() {
            return (ptr::null_mut(), ptr::null_mut());
        }
        // SAFETY: the chain is now exclusively ours.
        unsafe { reverse(top) }
    }

    /// Reopen a closed inbox for a new process in the slot.
    pub(crate) fn reopen(&self) {
        // AcqRel: release publishes the new process's setup to a producer
        // whose push sees the open inbox; acquire pairs with the close.
        let prev = self.head.swap(ptr::null_mut(), AcqRel);
        debug_assert!(prev == closed(), "reopen of an open inbox");
    }
}

/// Reverse a stack chain in place; returns (first, last) in arrival order.
///
/// The walk is a pointer chase over nodes that may be cold or written on
/// another core, but a chain's nodes often lie at a constant stride: a
/// batch from one sender's outbox was allocated in one run (`fanin`), and
/// the messages one worker sends to one receiver among many interleave
/// regularly (`mesh`). So each step prefetches where the node 8 steps on
/// would be if the last step's stride held. A wrong guess is a wasted
/// hint, never a fault. (`mesh`, two workers: 10-25% faster in
/// alternating runs; every other workload equal.)
///
/// # Safety
/// The caller owns every node of the chain.
#[inline(never)]
unsafe fn reverse(top: *mut Header) -> (*mut Header, *mut Header) {
    let last = top;
    let mut prev = ptr::null_mut();
    let mut cur = top;
    while !cur.is_null() {
        // SAFETY: owned node.
        let next = unsafe { (*cur).next };
        if !next.is_null() {
            // An address only (no provenance): it is never read through.
            let step = next.addr().wrapping_sub(cur.addr());
            let guess = next.addr().wrapping_add(step.wrapping_mul(8));
            crate::base::mailbox::prefetch(ptr::without_provenance(guess));
        }
        // SAFETY: `cur` is a node of the chain this drain took: ours alone.
        unsafe { (*cur).next = prev };
        prev = cur;
        cur = next;
    }
    (prev, last)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::base::envelope::{drop_chain, Envelope};

    fn values(mut p: *mut Header) -> Vec<u32> {
        let mut out = vec![];
        while !p.is_null() {
            let next = unsafe { (*p).next };
            unsafe { (*p).next = ptr::null_mut() };
            out.push(unsafe { Envelope::from_raw(p) }.downcast::<u32>().unwrap());
            p = next;
        }
        out
    }

    /// One node takes the short path (no reversal), two or more the
    /// reversal; both give first and last right and a terminated chain,
    /// whatever the strides between the nodes (the reversal guesses them).
    #[test]
    fn one_node_and_scattered_chains() {
        let inbox = Inbox::new_closed();
        inbox.reopen();
        unsafe { inbox.push(Envelope::new(9u32, 0, false).into_raw()) }.unwrap();
        let (first, last) = inbox.take();
        assert_eq!(first, last);
        assert_eq!(unsafe { (*last).next }, ptr::null_mut());
        assert_eq!(values(first), vec![9]);
        // Nodes of the same size kept aside between them, so the strides
        // between the chain's nodes vary.
        let mut gaps = vec![];
        for i in 0..20u32 {
            gaps.extend((0..i % 3).map(|_| Envelope::new(0u32, 0, false)));
            unsafe { inbox.push(Envelope::new(i, 0, false).into_raw()) }.unwrap();
        }
        let (first, last) = inbox.take();
        assert_eq!(unsafe { (*last).next }, ptr::null_mut());
        assert_eq!(values(first), (0..20).collect::<Vec<u32>>());
        drop(gaps);
    }

    #[test]
    fn smoke_fifo_order() {
        let inbox = Inbox::new_closed();
        inbox.reopen();
        assert!(inbox.is_empty());
        for i in 0..5u32 {
            unsafe { inbox.push(Envelope::new(i, 0, false).into_raw()) }.unwrap();
        }
        let (first, last) = inbox.take();
        assert_eq!(unsafe { (*last).next }, ptr::null_mut());
        assert_eq!(values(first), vec![0, 1, 2, 3, 4]);
        assert_eq!(inbox.take().0, ptr::null_mut());
    }

    #[test]
    fn chains_keep_their_order_among_single_pushes() {
        let inbox = Inbox::new_closed();
        inbox.reopen();
        unsafe { inbox.push(Envelope::new(0u32, 0, false).into_raw()) }.unwrap();
        // Chain 1, 2, 3: linked newest to oldest.
        let n1 = Envelope::new(1u32, 0, false).into_raw();
        let n2 = Envelope::new(2u32, 0, false).into_raw();
        let n3 = Envelope::new(3u32, 0, false).into_raw();
        unsafe {
            (*n3).next = n2;
            (*n2).next = n1;
            inbox.push_chain(n3, n1).unwrap();
            inbox
                .push(Envelope::new(4u32, 0, false).into_raw())
                .unwrap();
        }
        assert_eq!(values(inbox.take().0), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn closed_refuses_and_returns_node() {
        let inbox = Inbox::new_closed();
        inbox.reopen();
        unsafe { inbox.push(Envelope::new(1u32, 0, false).into_raw()) }.unwrap();
        let (first, _) = inbox.close();
        assert_eq!(values(first), vec![1]);
        let refused = unsafe { inbox.push(Envelope::new(2u32, 0, false).into_raw()) }.unwrap_err();
        assert_eq!(
            unsafe { Envelope::from_raw(refused) }
                .downcast::<u32>()
                .unwrap(),
            2
        );
        inbox.reopen();
        unsafe { inbox.push(Envelope::new(3u32, 0, false).into_raw()) }.unwrap();
        let (first, _) = inbox.close();
        unsafe { drop_chain(first) };
    }

    #[test]
    fn stampede_per_producer_order() {
        let inbox = std::sync::Arc::new(Inbox::new_closed());
        inbox.reopen();
        let per = if cfg!(miri) { 50 } else { 20_000 };
        let producers: Vec<_> = (0..4u32)
            .map(|t| {
                let inbox = inbox.clone();
                std::thread::spawn(move || {
                    for i in 0..per {
                        unsafe { inbox.push(Envelope::new(t << 24 | i, 0, false).into_raw()) }
                            .unwrap();
                    }
                })
            })
            .collect();
        let mut last = [None::<u32>; 4];
        let mut total = 0;
        loop {
            let done = producers.iter().all(|p| p.is_finished());
            for v in values(inbox.take().0) {
                let (t, i) = ((v >> 24) as usize, v & 0xff_ffff);
                assert!(last[t].is_none_or(|l| l < i), "producer {t} reordered");
                last[t] = Some(i);
                total += 1;
            }
            if done && inbox.is_empty() {
                break;
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        total += values(inbox.take().0).len();
        assert_eq!(total, 4 * per as usize);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::base::envelope::Envelope;
    use loom::sync::Arc;

    fn count(mut p: *mut Header) -> Vec<u32> {
        let mut v = vec![];
        while !p.is_null() {
            let next = unsafe { (*p).next };
            v.push(unsafe { Envelope::from_raw(p) }.downcast::<u32>().unwrap());
            p = next;
        }
        v
    }

    /// Two producers, one consumer taking twice: every node arrives exactly
    /// once, each producer's nodes in order.
    #[test]
    fn loom_push_take_ordered_exactly_once() {
        loom::model(|| {
            let inbox = Arc::new(Inbox::new_closed());
            inbox.reopen();
            let hs: Vec<_> = (0..2u32)
                .map(|t| {
                    let inbox = inbox.clone();
                    loom::thread::spawn(move || {
                        for i in 0..2u32 {
                            unsafe { inbox.push(Envelope::new(t * 10 + i, 0, false).into_raw()) }
                                .unwrap();
                        }
                    })
                })
                .collect();
            let mut got = count(inbox.take().0);
            for h in hs {
                h.join().unwrap();
            }
            got.extend(count(inbox.take().0));
            assert_eq!(got.len(), 4);
            for t in 0..2 {
                let mine: Vec<_> = got.iter().filter(|v| **v / 10 == t).collect();
                assert_eq!(mine, vec![&(t * 10), &(t * 10 + 1)]);
            }
        });
    }

    /// A chain push racing a single push and the owner's takes: every node
    /// arrives once, the chain's nodes together and in order.
    #[test]
    fn loom_chain_push_keeps_order() {
        loom::model(|| {
            let inbox = Arc::new(Inbox::new_closed());
            inbox.reopen();
            let i1 = inbox.clone();
            let chain = loom::thread::spawn(move || {
                let a = Envelope::new(1u32, 0, false).into_raw();
                let b = Envelope::new(2u32, 0, false).into_raw();
                unsafe {
                    (*b).next = a;
                    i1.push_chain(b, a).unwrap();
                }
            });
            let i2 = inbox.clone();
            let single = loom::thread::spawn(move || {
                unsafe { i2.push(Envelope::new(9u32, 0, false).into_raw()) }.unwrap();
            });
            let mut got = count(inbox.take().0);
            chain.join().unwrap();
            single.join().unwrap();
            got.extend(count(inbox.take().0));
            assert_eq!(got.len(), 3);
            let mine: Vec<_> = got.iter().filter(|v| **v != 9).collect();
            assert_eq!(mine, vec![&1, &2]);
        });
    }

    /// A push racing with close: the node is either in the closing take or
    /// handed back to its sender. Exactly one.
    #[test]
    fn loom_push_vs_close_exactly_one_owner() {
        loom::model(|| {
            let inbox = Arc::new(Inbox::new_closed());
            inbox.reopen();
            let i2 = inbox.clone();
            let sender = loom::thread::spawn(move || {
                match unsafe { i2.push(Envelope::new(7u32, 0, false).into_raw()) } {
                    Ok(()) => 0,
                    Err(p) => {
                        drop(unsafe { Envelope::from_raw(p) });
                        1
                    }
                }
            });
            let closed = count(inbox.close().0).len();
            let refused = sender.join().unwrap();
            assert_eq!(closed + refused, 1);
        });
    }
}
