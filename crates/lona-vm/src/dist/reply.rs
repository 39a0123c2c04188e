//! What the reader queues for the writer on the peer's behalf: replies to
//! the peer's own requests (`Out::Reply`) and work the writer does for it
//! (`Out::Monitor`, `Out::Demonitor`, `Out::Spawn`). All of it is counted
//! among the connection's replies ([`Outq::replies`]; what each counts:
//! `out.rs`) until written or done; past the reply limit the reader
//! closes the connection (`outq.rs`, "The peer's own backlog").

use std::net::Shutdown;
use std::sync::{Arc, Mutex};

use lona_runtime::io::TcpStream;
use lona_runtime::{Ctx, Pid};

use super::out::{backlog, Out};
use super::outq::Outq;
use super::wire::{self, put, Control, Cursor, WireError};

/// The writer as the reader reaches it: its pid, its queue count, and
/// where the reader leaves why it ended.
pub(super) struct Writer {
    pub(super) pid: Pid,
    pub(super) q: Arc<Outq>,
    /// Why the reader ended, for the writer to log: set before the reader
    /// shuts the socket down, so the writer's failed write is not taken
    /// for the reason.
    pub(super) why: Arc<Mutex<Option<String>>>,
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
    /// shut down, so a writer waiting to write to a peer that does not
    /// read fails at once instead of never (its mailbox, with the
    /// reader's last word in it, waits behind that write).
    pub(super) fn ended(&self, stream: &TcpStream, why: &str) {
        *self.why.lock().unwrap_or_else(|e| e.into_inner()) = Some(why.to_string());
        let _ = stream.shutdown(Shutdown::Both);
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
