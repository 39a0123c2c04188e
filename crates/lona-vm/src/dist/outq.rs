//! A connection's output queue: how a packet gets from the process that
//! sent it to the socket, in order, usually without a process hop.
//!
//! 1. A sender encodes its packet and calls [`Outq::push`]. Under the
//!    queue's lock, when the connection is up, nothing is queued and the
//!    writer is not writing, it writes the packet itself (one
//!    non-blocking `write`): a message reaches the wire from the sender's
//!    own slice, as BEAM's schedulers flush distribution output.
//! 2. Otherwise (the connection still being made, a write in progress,
//!    bytes already waiting, or the socket full) the packet's bytes are
//!    appended to `pending`, and the writer is sent a `Flush` unless one
//!    is on its way.
//! 3. The writer takes all of `pending` at once and writes it (waiting
//!    for room as long as it takes), then looks again; it marks itself
//!    `writing` meanwhile, so no sender writes between its bytes.
//!
//! The lock makes the order of packets the order of `push` calls, so two
//! processes' messages keep Erlang's per-pair order. After the connection
//! ends the queue is closed and what is pushed is dropped (a new
//! connection gets a new queue).

use std::io;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use lona_runtime::io::TcpStream;
use lona_runtime::{Handle, Pid};

use super::conn::Out;

/// The queue of one connection. Shared by every sender (push), the
/// writer (flush, ticks) and the reader (replies).
pub(crate) struct Outq {
    /// The socket, set once by the writer when the handshake is done.
    stream: OnceLock<Arc<TcpStream>>,
    /// The writer process, set once when it is spawned.
    writer: OnceLock<Pid>,
    handle: Handle,
    state: Mutex<State>,
}

struct State {
    /// Bytes accepted but not yet written, in order.
    pending: Vec<u8>,
    /// The writer is writing bytes it took from `pending`.
    writing: bool,
    /// A `Flush` is on its way to the writer, or it will look again.
    notified: bool,
    /// The connection ended: drop what comes.
    closed: bool,
    /// When bytes last went out (for ticks).
    last_write: Instant,
}

impl Outq {
    pub(crate) fn new(handle: Handle) -> Arc<Outq> {
        Arc::new(Outq {
            stream: OnceLock::new(),
            writer: OnceLock::new(),
            handle,
            state: Mutex::new(State {
                pending: Vec::new(),
                writing: false,
                notified: false,
                closed: false,
                last_write: Instant::now(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_writer(&self, p: Pid) {
        let _ = self.writer.set(p);
    }

    /// The connection is up: senders may write to `s` (the writer flushes
    /// what waited for the handshake next).
    pub(crate) fn set_stream(&self, s: Arc<TcpStream>) {
        let _ = self.stream.set(s);
    }

    /// Queues (or writes) one packet (steps 1 and 2).
    pub(crate) fn push(&self, p: &[u8]) {
        let mut st = self.lock();
        if st.closed {
            return;
        }
        let mut rest = p;
        if !st.writing && st.pending.is_empty() {
            if let Some(s) = self.stream.get() {
                match s.try_write(p) {
                    Ok(n) => {
                        st.last_write = Instant::now();
                        if n == p.len() {
                            return;
                        }
                        rest = &p[n..];
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // The writer's next write sees the error too and ends
                    // the connection.
                    Err(_) => {}
                }
            }
        }
        st.pending.extend_from_slice(rest);
        let notify = !st.notified && self.stream.get().is_some();
        if notify {
            st.notified = true;
        }
        drop(st);
        if notify {
            if let Some(w) = self.writer.get() {
                self.handle.send(*w, Out::Flush);
            }
        }
    }

    /// The writer's step 3: the bytes to write now (marking the queue
    /// `writing`), or `None` when nothing is left.
    pub(crate) fn take(&self) -> Option<Vec<u8>> {
        let mut st = self.lock();
        if st.pending.is_empty() {
            st.writing = false;
            st.notified = false;
            return None;
        }
        st.writing = true;
        st.notified = true;
        let cap = st.pending.capacity().min(1 << 20);
        Some(std::mem::replace(&mut st.pending, Vec::with_capacity(cap)))
    }

    /// Notes a write by the writer.
    pub(crate) fn wrote(&self) {
        self.lock().last_write = Instant::now();
    }

    /// When bytes last went out.
    pub(crate) fn last_write(&self) -> Instant {
        self.lock().last_write
    }

    /// The connection ended: drop what is queued and what comes.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.pending = Vec::new();
    }
}
