//! A connection's output bound: Erlang's `dist_buf_busy_limit`.
//!
//! What local processes send to another node is encoded at once and
//! queued in the connection's writer's mailbox; the writer writes it as
//! the peer reads. A peer that reads slowly, or not at all, would let that
//! queue grow until the node's memory is gone. So each connection counts
//! the bytes queued for it and not yet written ([`Outq`]). Once they reach
//! the limit (default [`DEFAULT_BUSY_LIMIT`], 1 MB, as Erlang's; the
//! node's [`Config::busy_limit`](super::Config::busy_limit), `lona run
//! --dist-buf-busy-limit KB` as `erl +zdbbl KB`) the connection is *busy*:
//!
//! - a Lonala process that sends a message to that node (`send`, an
//!   `exit` signal, `link`, `monitor`, `spawn-request*`) waits, as an
//!   Erlang process is suspended on a busy distribution port: the
//!   built-in hands the call to the prelude (`send-busy*` and friends),
//!   which arms a wake-up here ([`Outq::wait`]) and waits in `receive`
//!   for `[:lona.dist/ready ref]`, then tries again. No worker thread
//!   blocks, and the process's messages keep their order (it sends
//!   nothing else while it waits);
//! - a native Rust sender ([`Dist::send_value`](super::Dist::send_value)
//!   and the rest) is refused with
//!   [`RemoteSendError::Busy`](super::RemoteSendError::Busy)
//!   (Erlang's `erlang:send(Dest, Msg, [nosuspend])` answers `nosuspend`):
//!   nothing is queued; a native process awaits
//!   [`Dist::until_ready`](super::Dist::until_ready) and sends again.
//!
//! When the writer has written enough that less than half the limit is
//! queued (Erlang's own rule for distribution controllers) the connection
//! is no longer busy and every waiting sender is woken; when the
//! connection ends they are woken too (what they send next goes to a new
//! connection, or is dropped with it as Erlang drops it).
//!
//! Never made to wait: the replies the reader composes for the peer (to
//! its `LINK`, `MONITOR_P`, `UNLINK_ID`, `net_kernel`): counted like the
//! rest, so they make senders wait, but the reader does not stop reading
//! because the peer does not read, as Erlang's node does not. What the
//! writer writes itself (ticks, `EXIT` and `MONITOR_P_EXIT` for local
//! processes that ended, `SPAWN_REPLY`) never queues. A sender that
//! passed the check before the limit was reached queues its one message:
//! the queue can go past the limit by one message per thread that was
//! sending at that moment.
//!
//! The check on the send path is one relaxed load of [`Outq::busy`];
//! counting is one atomic add per message and one subtraction per batch
//! written.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Mutex;

use lona_runtime::{Handle, Pid, Ref};
use lona_term::Fragment;

/// The default limit of a connection's queue: 1 MB (Erlang's
/// `dist_buf_busy_limit` default, `+zdbbl 1024`).
pub const DEFAULT_BUSY_LIMIT: usize = 1024 * 1024;

/// The smallest limit a node takes (Erlang's `+zdbbl` takes at least 1 KB).
pub const MIN_BUSY_LIMIT: usize = 1024;

/// What a native process that awaits a busy connection is sent when it
/// is not busy any more: the reference `Outq::wait` gave.
#[derive(Debug)]
pub struct DistReady(pub u64);

#[derive(Default)]
struct Waiting {
    /// The connection ended: nobody waits for it any more.
    closed: bool,
    /// The processes that wait for the connection to drain: the reference
    /// of their wake-up, and whether they are Lonala processes (woken by
    /// `[:lona.dist/ready ref]`) or native ones ([`DistReady`]). One entry
    /// per process: arming again replaces the entry.
    list: HashMap<Pid, (u64, bool)>,
}

/// One connection's queue count and busy state (see the module
/// documentation).
pub(crate) struct Outq {
    /// Bytes of packets queued for the writer and not yet written.
    bytes: AtomicUsize,
    /// Set when `bytes` reaches `limit`, cleared (with every waiter woken)
    /// when it falls below half of it, or the connection ends. Changed only
    /// under `waiting`'s lock.
    busy: AtomicBool,
    limit: usize,
    waiting: Mutex<Waiting>,
    handle: Handle,
}

impl Outq {
    pub(crate) fn new(handle: &Handle, limit: usize) -> Outq {
        Outq {
            bytes: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            limit: limit.max(MIN_BUSY_LIMIT),
            waiting: Mutex::new(Waiting::default()),
            handle: handle.clone(),
        }
    }

    /// Whether senders must wait (the hot path's check).
    #[inline]
    pub(crate) fn busy(&self) -> bool {
        // Relaxed: a sender that misses a change by a moment queues one
        // message more, or waits and is woken (`wait` looks again under
        // the lock).
        self.busy.load(Relaxed)
    }

    /// Bytes queued and not yet written.
    pub(crate) fn queued(&self) -> usize {
        self.bytes.load(Relaxed)
    }

    /// `n` bytes were queued.
    #[inline]
    pub(crate) fn add(&self, n: usize) {
        let now = self.bytes.fetch_add(n, SeqCst) + n;
        if now >= self.limit && !self.busy.load(Relaxed) {
            self.set_busy();
        }
    }

    #[cold]
    fn set_busy(&self) {
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if w.closed {
            return;
        }
        self.busy.store(true, SeqCst);
        // The writer may have drained the queue since `add` looked, and
        // seen `busy` still clear: look again now that it is set.
        if self.bytes.load(SeqCst) < self.limit / 2 {
            self.busy.store(false, SeqCst);
            self.wake(&mut w);
        }
    }

    /// `n` bytes were written (or dropped by the writer).
    #[inline]
    pub(crate) fn written(&self, n: usize) {
        if n == 0 {
            return;
        }
        let before = self.bytes.fetch_sub(n, SeqCst);
        debug_assert!(before >= n, "{before} bytes queued, {n} written");
        if before.saturating_sub(n) < self.limit / 2 && self.busy.load(SeqCst) {
            self.drained();
        }
    }

    #[cold]
    fn drained(&self) {
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if self.busy.load(SeqCst) && self.bytes.load(SeqCst) < self.limit / 2 {
            self.busy.store(false, SeqCst);
            self.wake(&mut w);
        }
    }

    /// Arms a wake-up for process `pid` (a Lonala one, or native): the
    /// reference its message will carry, or `None` when the connection is
    /// not busy (any more): send now.
    pub(crate) fn wait(&self, pid: Pid, lonala: bool) -> Option<u64> {
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if w.closed || !self.busy.load(SeqCst) {
            return None;
        }
        let r = Ref::new().to_bits();
        w.list.insert(pid, (r, lonala));
        Some(r)
    }

    /// The connection ended: not busy any more, ever; every waiter woken.
    pub(crate) fn close(&self) {
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        w.closed = true;
        self.busy.store(false, SeqCst);
        self.wake(&mut w);
    }

    fn wake(&self, w: &mut Waiting) {
        for (p, (r, lonala)) in w.list.drain() {
            if lonala {
                let heap = lona_term::Heap::new();
                let msg = heap.vector(&[lona_term::kw!("lona.dist/ready"), heap.reference(r)]);
                self.handle.send(p, Fragment::new(msg));
            } else {
                self.handle.send(p, DistReady(r));
            }
        }
    }
}
