//! What the reader queues for the writer on the peer's behalf: replies to
//! the peer's own requests (`Out::Reply`) and work the writer does for it
//! (`Out::Monitor`, `Out::Demonitor`, `Out::Spawn`). All of it is counted
//! among the connection's replies ([`Outq::replies`]; what each counts:
//! `out.rs`) until written or done; past the reply limit the reader closes
//! the connection (`outq.rs`, "The peer's own backlog").
//!
//! # The peer's signals keep their order
//!
//! Erlang keeps the signals between two processes in order, across nodes
//! too: a message the peer's process sends local process `P` after a
//! `MONITOR_P` or `LINK` finds the monitor or link in place, so if the
//! message makes `P` end, the peer gets `DOWN` or `EXIT` with `P`'s
//! reason, not `noproc`. And ERTS acts on each control message as it is
//! read, before the packets after it, so in practice a signal that reaches
//! `P` through a third process finds it too (the peer monitors `P`, then
//! asks a local process to stop it: the `DOWN` says `killed`, not
//! `noproc`).
//!
//! So the reader sends every signal of the peer itself, as the packets
//! come: messages, exit signals, and the links and monitors too. These are
//! the writer's (its monitor's `Down`, or its link's `Exit`, with `P`'s
//! reason, goes to the peer as `MONITOR_P_EXIT` or `EXIT`), so the reader
//! makes them *on the writer's behalf* (`Handle::monitor_for`,
//! `Handle::link_for`; the runtime's links rule 13): the writer records
//! the monitor or link when it next drains its inbox, before anything `P`
//! can send it, and `P` gets the `Monitor` or `Link` in order with what
//! the reader sends it next. The reader never waits for the writer, which
//! may be stuck writing to a peer that does not read (a large message of
//! a local process): it reads on whatever the writer does. (Before, the
//! writer made them, and what the peer sent `P` meanwhile had to wait
//! behind, through the writer; a signal through a third process still
//! overtook a monitor, every time.)
//!
//! For a monitor, the reader first hands the writer `Out::Monitor` (what
//! the `MONITOR_P_EXIT` must name: the peer's bytes), then makes the
//! monitor, so the writer has the first before the `Down` can come. A `P`
//! that is gone gives the writer a `Down` `noproc`, and a link to it an
//! `Exit` `noproc` (the writer traps exits): the peer gets `noproc`, as
//! Erlang answers a `MONITOR_P` or `LINK` for a process that is gone. A
//! `SPAWN_REPLY` with the link flag links the requester the same way.
//!
//! The link table (`Dist::add_link`, `remove_link`) is written by the
//! reader too, as each packet comes, so a connection that ends gives `P`
//! its `noconnection`.

use std::net::Shutdown;
use std::sync::{Arc, Mutex};

use lona_runtime::io::TcpStream;
use lona_runtime::{Ctx, Pid};

use super::out::{backlog, Out};
use super::outq::Outq;
use super::wire::{self, put, Control, Cursor, WireError};

/// The writer as the reader reaches it: its pid, its queue count, and
/// the connection's socket.
pub(super) struct Writer {
    pub(super) pid: Pid,
    pub(super) q: Arc<Outq>,
    pub(super) closer: Arc<Closer>,
}

/// A connection's socket, as those who can end the connection hold it:
/// the reader (when it ends), the node table (`Dist::disconnect`), and the
/// writer, which learns from it why the connection ended.
pub(super) struct Closer {
    stream: Arc<TcpStream>,
    /// Why the connection ends, when the reader or `disconnect` ended it:
    /// set before the socket is shut down, so the writer's failed write
    /// is not taken for the reason.
    why: Mutex<Option<String>>,
}

impl Closer {
    pub(super) fn new(stream: Arc<TcpStream>) -> Arc<Closer> {
        Arc::new(Closer {
            stream,
            why: Mutex::new(None),
        })
    }

    /// Ends the connection for `why` (the first reason given is the one
    /// kept): the socket is shut down, so a writer waiting to write to a
    /// peer that does not read fails at once instead of never (its
    /// mailbox, with a `Disconnect` or the reader's last word in it,
    /// waits behind that write), and the reader's read ends.
    pub(super) fn close(&self, why: &str) {
        self.why
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| why.to_string());
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Why the connection was ended, if `close` ended it.
    pub(super) fn why(&self) -> Option<String> {
        self.why.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Writer {
    /// Queues reply packet `out` to the peer: counted in the queue (so it
    /// makes senders wait) and among the replies. Never waited for: the
    /// reader does not stop reading because the peer does not read
    /// (Erlang's node does not either); past the reply limit it closes the
    /// connection ([`Writer::overrun`]).
    pub(super) async fn reply(&self, ctx: &Ctx, out: Vec<u8>) {
        self.q.add(out.len());
        let out = Out::Reply(out);
        self.q.add_replies(backlog(&out));
        ctx.send(self.pid, out).await;
    }

    /// Hands the writer work the peer asked for (`Out::Monitor`,
    /// `Out::Demonitor`, `Out::Spawn`): counted among the replies until
    /// the writer has done it.
    pub(super) async fn hand(&self, ctx: &Ctx, out: Out) {
        self.q.add_replies(backlog(&out));
        ctx.send(self.pid, out).await;
    }

    /// Why the connection must close, once the peer's backlog is past the
    /// reply limit: it does not read what it asked for.
    pub(super) fn overrun(&self) -> Option<String> {
        let (n, limit) = (self.q.replies(), self.q.reply_limit());
        (n > limit).then(|| {
            format!(
                "not responding: it left {n} bytes of replies to its own requests unread \
                 (the reply limit is {limit})"
            )
        })
    }

    /// The reader ended, for `why`: the writer is told, and the socket
    /// shut down ([`Closer::close`]).
    pub(super) fn ended(&self, why: &str) {
        self.closer.close(why);
    }
}

/// `net_kernel`'s one call a peer makes on connecting (`net_adm:ping`):
/// `{'$gen_call', {From, Tag}, {is_auth, Node}}`, answered `{Tag, yes}`.
pub(super) async fn net_kernel(ctx: &Ctx, msg: &[u8], writer: &Writer) -> Result<(), WireError> {
    let mut c = Cursor::new(msg);
    if c.tuple()? != 3 || c.atom()? != "$gen_call" || c.tuple()? != 2 {
        return Ok(());
    }
    let caller = c.pid()?;
    let tag = c.skip()?;
    let mut req = Cursor::new(c.rest());
    if req.tuple()? != 2 || req.atom()? != "is_auth" {
        return Ok(());
    }
    // {Tag, yes} to the caller.
    let mut reply = Vec::new();
    put::tuple(&mut reply, 2);
    reply.extend_from_slice(tag);
    put::atom(&mut reply, "yes");
    let mut out = Vec::new();
    Control::Send {
        sender: false,
        from: wire::UNUSED,
        to: caller,
        msg: &reply,
    }
    .write(&mut out);
    writer.reply(ctx, out).await;
    Ok(())
}
