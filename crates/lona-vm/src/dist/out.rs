//! What a connection's writer takes in its mailbox ([`Out`]), and what
//! each of those counts in the connection's [`Outq`](super::outq::Outq):
//! the busy count (a packet's bytes) and the peer's backlog of replies
//! (`outq.rs`, "The peer's own backlog"): everything the reader hands
//! the writer for the peer counts there (`reply.rs`).

use lona_runtime::io::TcpStream;
use lona_runtime::{Envelope, Pid, Ref};
use lona_term::Fragment;

use super::outq::ENVELOPE;
use super::pieces::Packet;

/// What a writer's mailbox takes.
pub(crate) enum Out {
    /// A whole packet a local process encoded: a message from `from`
    /// (`None`: not from a process, or not known).
    Message { from: Option<Pid>, packet: Packet },
    /// A whole packet of another kind: a signal a local process sent.
    Packet(Vec<u8>),
    /// A whole packet the reader composed in answer to the peer's own
    /// request (counted among the replies too: `reply.rs`).
    Reply(Vec<u8>),
    /// The peer monitors a local process: the writer's monitor `r`, which
    /// the reader makes on its behalf right after sending this
    /// (`reply.rs`), so its `Down` comes after this. When it comes, send
    /// `MONITOR_P_EXIT` naming `toproc` (the pid or name the peer used),
    /// `watcher` and `mref` (their bytes as the peer sent them).
    Monitor {
        r: Ref,
        toproc: Vec<u8>,
        watcher: Vec<u8>,
        mref: Vec<u8>,
    },
    /// The peer no longer monitors (its reference's bytes).
    Demonitor { mref: Vec<u8> },
    /// A connection the acceptor completed while this writer was still
    /// trying to reach the same node: use it (`.1`: the peer takes
    /// fragments).
    Adopt(TcpStream, bool),
    /// The peer asked us to spawn `qualified` (`ns/name`) with `args`
    /// for its process `from` (`SPAWN_REQUEST`): the writer spawns it (so
    /// a link or monitor is in place from the start) and replies.
    /// `bytes`: what it counts among the replies until done (the
    /// request's and its arguments' bytes).
    Spawn {
        bytes: usize,
        req: Vec<u8>,
        from: (u32, u32, u32),
        qualified: String,
        args: Option<Fragment>,
        link: bool,
        monitor: bool,
    },
    /// Close the connection (`disconnect-node`; a writer that is stuck
    /// writing never reads it, so `Dist::disconnect` shuts the socket down
    /// too).
    Disconnect,
    /// The reader's last word: why the connection ended.
    ReaderEnd(String),
    /// Answer on this channel once everything queued before it is
    /// written (the node is stopping: `Dist::flush`).
    Sync(std::sync::mpsc::Sender<()>),
}

/// What `out` counts among the replies while it waits for the writer:
/// its bytes and its envelope (0: not the peer's).
pub(super) fn backlog(out: &Out) -> usize {
    ENVELOPE
        + match out {
            Out::Reply(p) => p.len(),
            Out::Monitor {
                toproc,
                watcher,
                mref,
                ..
            } => toproc.len() + watcher.len() + mref.len(),
            Out::Demonitor { mref } => mref.len(),
            Out::Spawn { bytes, .. } => *bytes,
            _ => return 0,
        }
}

/// What the writer takes off its [`Outq`](super::outq::Outq) once it has written, or done,
/// what `env` holds: the bytes of a counted packet (a local process's, or
/// a reply), and what it counts among the replies.
pub(super) fn counted(env: &Envelope) -> (usize, usize) {
    match env.downcast_ref::<Out>() {
        Some(Out::Message { packet, .. }) => (packet.len(), 0),
        Some(Out::Packet(p)) => (p.len(), 0),
        Some(out @ Out::Reply(p)) => (p.len(), backlog(out)),
        Some(out) => (0, backlog(out)),
        None => (0, 0),
    }
}
