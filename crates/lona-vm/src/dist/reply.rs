//! What the reader queues for the writer on the peer's behalf: replies to
//! the peer's own requests (`Out::Reply`) and work the writer does for it
//! (`Out::Monitor`, `Out::Demonitor`, `Out::Spawn`, `Out::LinkLocal`,
//! `Out::Deliver`). All of it is counted among the connection's replies
//! ([`Outq::replies`]; what each counts: `out.rs`) until written or done;
//! past the reply limit the reader closes the connection (`outq.rs`, "The
//! peer's own backlog").
//!
//! # Links and monitors the peer makes, and a writer that is stuck
//!
//! Some of the peer's requests need the writer to act on a local process
//! `P` before the peer's next signals to `P` take effect: a `LINK` (the
//! writer links to `P`, so that `P`'s end reaches it as an `Exit` with
//! `P`'s reason and goes to the peer as `EXIT`), a `SPAWN_REPLY` with the
//! link flag (the writer links to the requester), a `MONITOR_P` (the
//! writer monitors `P`). Erlang keeps the signals between two processes
//! in order: a message the peer's process sends `P` after its `LINK`
//! finds the link in place, so if the message makes `P` end, the peer
//! gets `EXIT` with `P`'s reason, not `noproc`. And ERTS sets a link up
//! as the `LINK` comes, before the packets after it, so in practice a
//! signal that reaches `P` through a third process finds it too (the
//! peer links, then asks a local process to stop `P`: `links_cross_both_
//! ways_and_a_killed_node_cuts_them` in `tests/dist.rs`).
//!
//! So after a `LINK` the reader waits for the writer's answer ([`Done`],
//! with the id it handed the link with) before it reads on: the link is
//! in place before anything after it acts, as in Erlang. But the writer
//! may be stuck writing to a peer that does not read (a large message of
//! a local process), and a reader that waited without end stopped
//! reading everything else the peer sent (messages to other processes,
//! ticks); two nodes sending heavily both ways could deadlock, each
//! reader waiting for its writer, each writer for the other node's
//! reader. So the reader waits at most the net tick time (the node's
//! `tick_time`, what the node gives any peer to show it is alive), and
//! not at all while the writer is still behind with a link it waited for
//! in vain: then it goes on ([`Behind`]). Until the writer answers, what
//! the peer sends `P` (messages, exit signals, `DOWN`s, a spawn's reply)
//! is handed to the writer too (`Out::Deliver`), which delivers it after
//! it has linked: the order between the peer's processes and `P` is
//! kept, which is all Erlang promises, and only what is for `P` waits
//! for the writer. A signal that reaches `P` through a third process may
//! then come before the link (and the peer's `EXIT` say `noproc`), but
//! only behind a writer stuck for a whole tick time. A late answer is
//! known by its id and only ends the wait of the signals behind it.
//!
//! A `MONITOR_P` is not waited for (a `gen_server:call` from an Erlang
//! node brings one with each call, and would wait for the writer each
//! time), but what the peer sends the process next follows it through
//! the writer in the same way, until the writer has monitored: before,
//! a call's request could reach the process, and end it, before the
//! monitor was made, and the peer was told `noproc`.
//!
//! What the peer sends `P` meanwhile counts among its replies until
//! delivered (a peer that links and floods a process while it does not
//! read is closed, as for its other requests).
//!
//! The link table (`Dist::add_link`, `remove_link`) is still written by
//! the reader as each packet comes, so a connection that ends gives `P`
//! its `noconnection` even if the writer never got to link. That a later
//! `UNLINK_ID` or link `EXIT` from the peer takes the link out of the
//! table before what came earlier for `P` is delivered changes nothing
//! the peer can see: if what came earlier then makes `P` end, no `EXIT`
//! goes back, and the peer's process would not have acted on one: it has
//! unlinked (it acts on no exit signal from `P` any more) or is gone.
//!
//! What if `P` ends before the writer links? Only on its own, or through
//! a third process, not from anything the peer sent it after the `LINK`
//! (that waits behind the link): then the writer's `link` finds it gone,
//! and, as the writer traps exits, the runtime gives it `Exit { from: P,
//! reason: noproc }` (a live `P`'s end gives its reason later the same
//! way): the writer sends the peer `EXIT` `noproc` for the link the node
//! recorded, exactly what Erlang sends when a `LINK` reaches a process
//! that is gone. The peer gets its `EXIT` either way. The same holds for
//! a monitor (`DOWN` `noproc`).
//!
//! When the connection ends, the writer delivers what it still holds for
//! local processes before they hear of the end (`noconnection`), as Erlang
//! delivers what came before a connection went.

use std::collections::HashMap;
use std::net::Shutdown;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lona_runtime::io::TcpStream;
use lona_runtime::{Ctx, Pid};

use super::out::{backlog, Out};
use super::outq::Outq;
use super::wire::{self, put, Control, Cursor, WireError};
use super::Dist;

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
    /// `Out::Demonitor`, `Out::Spawn`, `Out::LinkLocal`, `Out::Deliver`):
    /// counted among the replies until the writer has done it.
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

/// The writer's answer to the reader: it has done what the reader handed
/// it with this id (`Out::LinkLocal`, `Out::Monitor`, `Out::Deliver`), and
/// so everything handed before it (it does them in order).
pub(super) struct Done(pub(super) u64);

/// What the reader has handed the writer for local processes and not yet
/// heard is done (see the module documentation): while a process has
/// something there, what the peer sends it goes there too, behind it.
#[derive(Default)]
pub(super) struct Behind {
    /// The last id given.
    last_id: u64,
    /// Local process → the id of the last thing handed for it.
    waiting: HashMap<Pid, u64>,
    /// The id of a link the reader waited for in vain, until the writer
    /// answers it: the writer is stuck, and later links are not waited
    /// for.
    stuck: Option<u64>,
}

impl Behind {
    /// Takes the writer's answers that came: the processes whose last
    /// hand-off they cover are not behind any more. Called before each
    /// control message the reader acts on; costs nothing while nothing
    /// is behind (no answer is owed then).
    pub(super) async fn catch_up(&mut self, ctx: &Ctx) {
        if self.waiting.is_empty() {
            return;
        }
        let mut done = None;
        while let Some(Done(id)) = ctx.receive_timeout::<Done>(Duration::ZERO).await {
            done = Some(id);
        }
        if let Some(id) = done {
            self.done(id);
        }
    }

    /// The writer has done everything up to `id`.
    fn done(&mut self, id: u64) {
        self.waiting.retain(|_, last| *last > id);
        if self.stuck.is_some_and(|s| s <= id) {
            self.stuck = None;
        }
    }

    /// Hands the writer the link of local process `pid` to the peer's
    /// (recorded in the link table already) and waits until it is made,
    /// at most `patience`, and not at all while the writer is stuck (see
    /// the module documentation). If it is not made by then, what the
    /// peer sends `pid` goes through the writer, behind the link.
    pub(super) async fn link(&mut self, ctx: &Ctx, writer: &Writer, pid: Pid, patience: Duration) {
        let id = self.id_for(pid);
        writer.hand(ctx, Out::LinkLocal { pid, id }).await;
        if self.stuck.is_some() {
            return;
        }
        // The writer answers in order: earlier answers (for monitors)
        // first, then this link's.
        let until = Instant::now() + patience;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match ctx.receive_timeout::<Done>(left).await {
                Some(Done(n)) => {
                    self.done(n);
                    if n >= id {
                        return;
                    }
                }
                None => {
                    self.stuck = Some(id);
                    return;
                }
            }
        }
    }

    /// A new id for something handed the writer for `p`, which is behind
    /// it from now on.
    pub(super) fn id_for(&mut self, p: Pid) -> u64 {
        self.last_id += 1;
        self.waiting.insert(p, self.last_id);
        self.last_id
    }

    /// Delivers to local process `to` (`act`, about `bytes` large): at
    /// once, or, while the writer has something for `to` still to do,
    /// through the writer, after it.
    pub(super) async fn deliver(
        &mut self,
        ctx: &Ctx,
        d: &Dist,
        writer: &Writer,
        to: Pid,
        bytes: usize,
        act: impl FnOnce(&Dist) + Send + 'static,
    ) {
        if !self.waiting.contains_key(&to) {
            act(d);
            return;
        }
        let id = self.id_for(to);
        let out = Out::Deliver {
            id,
            bytes,
            act: Box::new(act),
        };
        writer.hand(ctx, out).await;
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
