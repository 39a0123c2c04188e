//! The node's Lonala sockets: a socket term is a reference, looked up in
//! one table; each record says who owns the socket and how it delivers.
//!
//! Who writes what (`Sock::state`, under its mutex): the owner's built-ins
//! (`recv*` fills and drains `inbuf`, `set-opts`, `controlling-process`),
//! any sender's `send*` (appends to `out`, sets `writer`, joins
//! `waiters`), and the socket's port process (drains `out`, wakes
//! `waiters`, fills and drains `inbuf` in active mode, `closed`).
//!
//! What a socket buffers is bounded whatever the peer does: `out` holds
//! at most [`HIGH_WATERMARK`] bytes (a larger send is taken a piece at a
//! time, its sender waiting in between: backpressure, as `gen_tcp:send`
//! blocks on a busy port), `inbuf` at most one packet of `:packet-size`
//! bytes plus one read.
//! The port process is the only one that waits for readiness in active
//! mode; in passive mode the caller of `recv*` arms a message waker.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Wake, Waker};

use lona_runtime::io::{TcpListener, TcpStream, UdpSocket};
use lona_runtime::{Handle, Pid};
use lona_term::{Fragment, Heap, Term};

use super::frame::Packet;

/// What the socket is.
pub(crate) enum Io {
    Listener(TcpListener),
    Stream(TcpStream),
    Udp(UdpSocket),
}

/// `:active`: how data reaches the owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Active {
    /// `false`: only by `recv`.
    Passive,
    /// `:once`: one message, then passive.
    Once,
    /// `n`: `n` messages, then passive (and a `[:tcp-passive s]`).
    Count(u64),
    /// `true`: every packet as a message.
    Always,
}

/// A socket's mutable state (module doc: who writes what).
pub(crate) struct State {
    /// The socket; `None` once closed (dropping it closes it, at once,
    /// whoever closes).
    pub(crate) io: Option<Io>,
    pub(crate) owner: Pid,
    pub(crate) active: Active,
    pub(crate) packet: Packet,
    pub(crate) max_packet: usize,
    /// Bytes read and not yet delivered (a partial packet).
    pub(crate) inbuf: Vec<u8>,
    /// How many bytes at the front of `inbuf` are known to hold no line
    /// end (`:packet :line` scans only what arrived since).
    pub(crate) scanned: usize,
    /// Bytes to write that did not fit the socket yet: at most
    /// [`HIGH_WATERMARK`].
    pub(crate) out: Vec<u8>,
    /// The sender whose packet is partly in `out` and partly still in its
    /// own hands; until it sends the rest, other senders wait (a packet is
    /// never interleaved with another's).
    pub(crate) writer: Option<Pid>,
    /// Senders waiting for `out` to drain (or for `writer` to finish):
    /// each gets `[:lona.io/sent s r]` once, then sends again.
    pub(crate) waiters: Vec<Pid>,
    /// Closed by `close`, the peer, an error, or the owner's end.
    pub(crate) closed: bool,
    /// The peer closed its side (after what it sent is delivered).
    pub(crate) eof: bool,
}

/// One socket.
pub(crate) struct Sock {
    pub(crate) id: u64,
    pub(crate) state: Mutex<State>,
    /// The port process (set once, right after it is spawned).
    pub(crate) port: OnceLock<Pid>,
    pub(crate) handle: Handle,
}

/// The most bytes `out` holds: a send that does not fit takes what does
/// and waits until `out` drains below `LOW_WATERMARK` (Erlang's busy
/// port; the numbers are `inet`'s defaults times eight).
pub(crate) const HIGH_WATERMARK: usize = 64 * 1024;
pub(crate) const LOW_WATERMARK: usize = 32 * 1024;

/// The open sockets by id, in shards (each id's shard by its low bits),
/// so that two workers serving different sockets seldom wait for each
/// other's lookup. Written by open and close; read by every operation.
type Shard = Mutex<HashMap<u64, Arc<Sock>, foldhash::fast::FixedState>>;
const SHARDS: usize = 16;

fn shards() -> &'static [Shard; SHARDS] {
    static T: OnceLock<[Shard; SHARDS]> = OnceLock::new();
    T.get_or_init(Default::default)
}

fn table(id: u64) -> MutexGuard<'static, HashMap<u64, Arc<Sock>, foldhash::fast::FixedState>> {
    // Refs count up: the low bits spread consecutive sockets.
    shards()[(id as usize) % SHARDS]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl Sock {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn notify(&self, to: Pid) -> Waker {
        Waker::from(Arc::new(Notify {
            handle: self.handle.clone(),
            to,
            id: self.id,
        }))
    }

    /// Arms a waker that sends `[:lona.io/ready s]` to `to` when the
    /// socket may read (or accept); true if it is ready already (the
    /// caller tries again at once, and no message comes).
    pub(crate) fn arm_read(&self, st: &State, to: Pid) -> bool {
        let w = self.notify(to);
        let mut cx = Context::from_waker(&w);
        match &st.io {
            Some(Io::Listener(l)) => l.poll_accept_ready(&mut cx).is_ready(),
            Some(Io::Stream(s)) => s.poll_read_ready(&mut cx).is_ready(),
            Some(Io::Udp(u)) => u.poll_recv_ready(&mut cx).is_ready(),
            None => true,
        }
    }

    /// Whether a connection being made is made (`Some(Ok)`), failed, or
    /// not yet (`None`: a waker is armed that sends `to` the ready
    /// message).
    pub(crate) fn poll_connected(&self, st: &State, to: Pid) -> Option<std::io::Result<()>> {
        let w = self.notify(to);
        match &st.io {
            Some(Io::Stream(s)) => match s.poll_connected(&mut Context::from_waker(&w)) {
                std::task::Poll::Ready(r) => Some(r),
                std::task::Poll::Pending => None,
            },
            Some(Io::Listener(_) | Io::Udp(_)) => Some(Ok(())),
            None => Some(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }

    /// Replaces an armed message waker by one that does nothing (a wait
    /// that timed out).
    pub(crate) fn disarm(&self, st: &State) {
        let mut cx = Context::from_waker(Waker::noop());
        match &st.io {
            Some(Io::Listener(l)) => {
                let _ = l.poll_accept_ready(&mut cx);
            }
            Some(Io::Stream(s)) => {
                let _ = s.poll_read_ready(&mut cx);
                let _ = s.poll_write_ready(&mut cx);
            }
            Some(Io::Udp(u)) => {
                let _ = u.poll_recv_ready(&mut cx);
            }
            None => {}
        }
    }
}

impl State {
    pub(crate) fn stream(&self) -> Option<&TcpStream> {
        match &self.io {
            Some(Io::Stream(s)) => Some(s),
            _ => None,
        }
    }

    /// Closes the socket now (its descriptor is freed here).
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.io = None;
    }

    /// Tells waiting senders `[:lona.io/sent s r]`: `r` is `:ok` when
    /// `out` has room again (only the `writer`, if it waits: the rest of
    /// its packet goes first), `[:error :closed]` to every one once the
    /// socket is closed. Sent under the socket's lock, so that a sender
    /// that takes itself off the list (`forget_sender`) afterwards finds
    /// any message already in its mailbox.
    pub(crate) fn wake_senders(&mut self, sock: &Sock) {
        if self.waiters.is_empty() {
            return;
        }
        let ok = !self.closed;
        if matches!(self.writer, Some(w) if !sock.handle.is_alive_now(w)) {
            // It died with its packet half out: the others go on.
            self.writer = None;
        }
        let woken: Vec<Pid> = match self.writer {
            Some(w) if ok && self.waiters.contains(&w) => {
                self.waiters.retain(|p| *p != w);
                vec![w]
            }
            _ => std::mem::take(&mut self.waiters),
        };
        for p in woken {
            send_tagged(
                &sock.handle,
                p,
                lona_term::kw!("lona.io/sent"),
                sock.id,
                Some(&move |h| {
                    if ok {
                        lona_term::kw!("ok")
                    } else {
                        h.vector(&[lona_term::kw!("error"), lona_term::kw!("closed")])
                    }
                }),
            );
        }
    }

    /// `p` gave up sending (it timed out or closed the socket): no longer
    /// waiting, nor the writer.
    pub(crate) fn forget_sender(&mut self, p: Pid) {
        self.waiters.retain(|w| *w != p);
        if self.writer == Some(p) {
            self.writer = None;
        }
    }
}

/// Adds `s` to the table.
pub(crate) fn insert(s: Arc<Sock>) {
    table(s.id).insert(s.id, s);
}

/// The socket `id`, if it is open.
pub(crate) fn get(id: u64) -> Option<Arc<Sock>> {
    table(id).get(&id).cloned()
}

/// Takes `id` out of the table (it is closing).
pub(crate) fn remove(id: u64) -> Option<Arc<Sock>> {
    table(id).remove(&id)
}

/// How many sockets are open (tests).
pub(crate) fn count() -> usize {
    shards()
        .iter()
        .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).len())
        .sum()
}

/// A waker that tells a Lonala process its socket is ready:
/// `[:lona.io/ready s]`.
struct Notify {
    handle: Handle,
    to: Pid,
    id: u64,
}

impl Wake for Notify {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref()
    }
    fn wake_by_ref(self: &Arc<Self>) {
        send_tagged(
            &self.handle,
            self.to,
            lona_term::kw!("lona.io/ready"),
            self.id,
            None,
        );
    }
}

/// Sends `[tag s]` (`tag` a keyword), or `[tag s x]` with `x` made on a
/// scratch heap.
pub(crate) fn send_tagged(
    handle: &Handle,
    to: Pid,
    tag: Term<'static>,
    id: u64,
    x: Option<&dyn Fn(&Heap) -> Term<'_>>,
) {
    let h = Heap::new();
    let s = h.reference(id);
    let frag = match x {
        None => Fragment::vector(&[tag, s]),
        Some(f) => Fragment::vector(&[tag, s, f(&h)]),
    };
    handle.send(to, frag);
}
