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
//! because the peer does not read, as Erlang's node does not; they have a
//! bound of their own, past which the connection is closed (below). Nor
//! does the reader wait without end for the writer to link a local
//! process for the peer (it waits at most the net tick time: the writer
//! may be waiting to write), nor at all for a monitor: the peer's later
//! signals to that process follow through the writer instead (`reply.rs`,
//! "Links and monitors the peer makes, and a writer that is stuck").
//! What the writer writes itself (ticks, `EXIT` and `MONITOR_P_EXIT` for local
//! processes that ended, `SPAWN_REPLY`) never queues. A sender that
//! passed the check before the limit was reached queues its one message:
//! the queue can go past the limit by one message per thread that was
//! sending at that moment.
//!
//! # The peer's own backlog: the reply limit
//!
//! A peer that sends requests the reader answers (`LINK` to a process
//! that is gone, `MONITOR_P` of one, `UNLINK_ID`, `is_auth`) and never
//! reads would make those replies queue without end: nothing waits for
//! them. So they are counted a second time, apart ([`Outq::replies`]): the
//! bytes of replies queued and not yet written, and of the work the
//! reader handed the writer for the peer and the writer has not done yet
//! (`MONITOR_P` and `DEMONITOR_P` of a live process, `SPAWN_REQUEST` with
//! its arguments: `reply.rs`), each with [`ENVELOPE`] bytes more for its
//! envelope.
//! Once that passes the node's reply limit
//! ([`Config::reply_limit`](super::Config::reply_limit), default
//! [`default_reply_limit`]: 16 times the busy limit, at least 16 MB; `lona
//! run --dist-reply-limit KB`) the reader closes the connection, as
//! Erlang closes one to a node that does not respond (`** Node ... not
//! responding **`; Erlang itself has no such bound and queues the
//! replies). One line is logged; links and monitors across the connection
//! fire `noconnection`, as for any connection that goes. The reader shuts
//! the socket down as it ends, so a writer waiting to write to the peer
//! fails at once. What local processes send never counts there,
//! however large: a 20 MB message to a peer that reads slowly goes whole
//! (a cap on the whole queue, tried first, closed the connection under
//! it).
//!
//! Why 16 times the busy limit: a reply is about the size of the request
//! it answers (an `EXIT` for a `LINK`, `MONITOR_P_EXIT` for `MONITOR_P`,
//! `UNLINK_ID_ACK` for `UNLINK_ID`, `{Tag, yes}` for `is_auth`), and it is
//! written as fast as the peer reads, behind at most what local processes
//! have queued (the busy limit). A peer that reads what it is sent keeps
//! its backlog near what it sends while one busy limit drains; 16 times
//! that, 16 MB by default (some 75,000 unanswered `MONITOR_P`s), is a
//! peer that has stopped reading, not one that is slow. It is also what
//! such a peer can cost the node, per connection.
//!
//! Why close, not stop reading (TCP backpressure): the reader carries
//! everything the peer sends, not only requests: messages to local
//! processes, exit signals, `MONITOR_P_EXIT`s and `SPAWN_REPLY`s our own
//! processes wait for, ticks. A reader that stopped until the peer read
//! would hold all of them up, and between two nodes that each flood the
//! other with requests it deadlocks: each one's reader waits for its
//! writer to drain, each writer waits for the other node's reader, and
//! nothing moves (neither reads the other's ticks) until the net tick
//! time ends the connection anyway, every signal in between held up.
//! Erlang never stops a connection's
//! reader either; it closes the connection of a peer that does not
//! respond. Closing costs a peer that has stopped reading nothing it was
//! still getting.
//!
//! The check on the send path is one relaxed load of [`Outq::busy`];
//! counting is one atomic add per message and one subtraction per batch
//! written (a reply: two of each).

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

/// The default reply limit (see the module documentation) for a node
/// whose busy limit is `busy_limit`: 16 times it, at least 16 MB.
pub fn default_reply_limit(busy_limit: usize) -> usize {
    busy_limit.saturating_mul(16).max(16 << 20)
}

/// The smallest reply limit a node takes: 64 KB.
pub const MIN_REPLY_LIMIT: usize = 64 << 10;

/// What a reply, or a piece of work the reader hands the writer for the
/// peer, counts among the replies besides its own bytes: its envelope in
/// the writer's mailbox, roughly.
pub const ENVELOPE: usize = 128;

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
    /// Bytes of the peer's backlog: replies to its requests queued and not
    /// yet written, and work for it handed to the writer and not yet done
    /// (see the module documentation). Added by the reader, subtracted by
    /// the writer.
    replies: AtomicUsize,
    /// Past it, the reader closes the connection.
    reply_limit: usize,
    waiting: Mutex<Waiting>,
    handle: Handle,
}

impl Outq {
    pub(crate) fn new(handle: &Handle, limit: usize, reply_limit: usize) -> Outq {
        Outq {
            bytes: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            limit: limit.max(MIN_BUSY_LIMIT),
            replies: AtomicUsize::new(0),
            reply_limit: reply_limit.max(MIN_REPLY_LIMIT),
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

    /// Bytes of the peer's backlog: replies queued and not yet written,
    /// work handed to the writer and not yet done.
    pub(crate) fn replies(&self) -> usize {
        self.replies.load(Relaxed)
    }

    /// The reply limit.
    pub(crate) fn reply_limit(&self) -> usize {
        self.reply_limit
    }

    /// `n` bytes of the peer's backlog were queued (by the reader, which
    /// looks at [`Outq::replies`] after each packet).
    #[inline]
    pub(crate) fn add_replies(&self, n: usize) {
        // Relaxed: one counter, read against a fixed limit by the thread
        // that adds to it.
        self.replies.fetch_add(n, Relaxed);
    }

    /// `n` bytes of the peer's backlog were written or done (by the
    /// writer).
    #[inline]
    pub(crate) fn replies_done(&self, n: usize) {
        if n > 0 {
            let before = self.replies.fetch_sub(n, Relaxed);
            debug_assert!(before >= n, "{before} bytes of replies, {n} done");
        }
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
