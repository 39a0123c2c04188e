//! A socket's port process: the native process that owns a Lonala socket
//! for as long as it is open (Erlang's port).
//!
//! 1. It is spawned linked to the socket's owner and traps exits: when
//!    the owner ends, for any reason (even `:normal`, as an Erlang port),
//!    an `Exit` from the owner of record reaches it and it closes the
//!    socket. `controlling-process` links the new owner and unlinks the
//!    old one (a `Cmd::Transfer`).
//! 2. In active mode it waits for the socket to be readable, reads,
//!    frames, and sends each packet to the owner as `[:tcp s data]`
//!    (`[:tcp-closed s]` at the end, `[:tcp-error s reason]` on an error),
//!    counting `:once` and `n` down to passive. A UDP socket's datagrams
//!    go one by one as `[:udp s [host port] data]`, each read only when
//!    the active mode allows one more (the rest wait in the kernel's
//!    buffer, which drops what overflows it, as UDP may).
//! 3. Bytes `send` could not write at once wait in the socket's `out`
//!    (at most `HIGH_WATERMARK` of them); it writes them when the socket
//!    has room, and when `out` is below `LOW_WATERMARK` answers the
//!    senders that waited (`[:lona.io/sent s r]`), which then hand over
//!    the next piece of what they send.
//! 4. `close` (a `Cmd::Close`) or the owner's end: the socket leaves the
//!    table, waiting senders hear `[:error :closed]`, and the socket is
//!    dropped, so closed.

use std::future::{poll_fn, Future};
use std::sync::Arc;
use std::task::Poll;

use lona_runtime::{Ctx, Envelope, Exit, Pid};
use lona_term::{Fragment, Heap, Term};

use super::frame;
use super::table::{self, Active, Sock, LOW_WATERMARK};

/// What a socket's built-ins tell its port process.
pub(crate) enum Cmd {
    /// Options changed (active mode): look again.
    Opts,
    /// Bytes are waiting in `out`.
    Flush,
    /// `controlling-process`: link `to`, unlink `from`.
    Transfer { from: Pid, to: Pid },
    /// `close`.
    Close,
}

enum Event {
    Msg(Envelope),
    Readable,
    Writable,
}

/// The port process's body. `guard` is made when the process is spawned,
/// outside this future: however the process ends, even killed by its
/// owner's crash before its first step (when this future is dropped
/// without ever running), the socket closes.
pub(crate) async fn run(ctx: Ctx, guard: CloseOnDrop) {
    let sock = guard.0.clone();
    ctx.trap_exit(true).await;
    // An owner that ended before exits were trapped sent a signal this
    // process ignored (a `:normal` one): ask.
    let owner = sock.state().owner;
    if !ctx.is_alive(owner).await {
        return;
    }
    let mut recv = Box::pin(ctx.receive_any());
    loop {
        let ev = poll_fn(|cx| {
            if let Poll::Ready(e) = recv.as_mut().poll(cx) {
                return Poll::Ready(Event::Msg(e));
            }
            let st = sock.state();
            let reading = st.active != Active::Passive && !st.closed && !st.eof;
            let writing = !st.out.is_empty() && !st.closed;
            match &st.io {
                Some(table::Io::Stream(s)) => {
                    if reading && s.poll_read_ready(cx).is_ready() {
                        return Poll::Ready(Event::Readable);
                    }
                    if writing && s.poll_write_ready(cx).is_ready() {
                        return Poll::Ready(Event::Writable);
                    }
                }
                Some(table::Io::Udp(u)) if reading && u.poll_recv_ready(cx).is_ready() => {
                    return Poll::Ready(Event::Readable);
                }
                _ => {}
            }
            Poll::Pending
        })
        .await;
        match ev {
            Event::Msg(e) => {
                recv = Box::pin(ctx.receive_any());
                if let Some(x) = e.downcast_ref::<Exit>() {
                    if x.from == sock.state().owner {
                        break;
                    }
                } else if let Ok(cmd) = e.downcast::<Cmd>() {
                    match cmd {
                        Cmd::Opts | Cmd::Flush => {}
                        Cmd::Transfer { from, to } => {
                            // A new owner already gone: its Exit (noproc)
                            // comes back at once and closes the socket.
                            let _ = ctx.link(to).await;
                            if from != to {
                                ctx.unlink(from).await;
                            }
                        }
                        Cmd::Close => break,
                    }
                }
                // Anything else sent to a port is dropped.
            }
            Event::Readable => read_active(&sock),
            Event::Writable => flush(&sock),
        }
        ctx.charge(1).await;
    }
}

/// Step 4 when the port process ends, whichever way.
pub(crate) struct CloseOnDrop(pub(crate) Arc<Sock>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        close(&self.0);
    }
}

/// Step 2: one read, and the packets it completes sent to the owner.
fn read_active(sock: &Sock) {
    let mut st = sock.state();
    if let Some(table::Io::Udp(_)) = &st.io {
        return read_datagrams(sock, &mut st);
    }
    let fields = &mut *st;
    let Some(table::Io::Stream(s)) = &fields.io else {
        return;
    };
    let inbuf = &mut fields.inbuf;
    let r = super::with_read_buf(|buf| {
        let r = s.try_read(buf);
        if let Ok(n) = r {
            inbuf.extend_from_slice(&buf[..n]);
        }
        r
    });
    match r {
        Ok(0) => st.eof = true,
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
        Err(e) => match super::stream_error_name(&e) {
            // A reset is the end of the stream, as Erlang's default.
            "closed" => st.eof = true,
            reason => return fail(sock, &mut st, reason),
        },
    }
    deliver(sock, &mut st);
}

/// The most datagrams read for one readiness event (then the port looks
/// at its messages, and is charged, before reading on).
const DATAGRAMS_PER_EVENT: usize = 64;

/// Step 2 for UDP: datagrams, each sent to the owner as `[:udp s [host
/// port] data]`, while the active mode allows one more.
fn read_datagrams(sock: &Sock, st: &mut table::State) {
    let owner = st.owner;
    for _ in 0..DATAGRAMS_PER_EVENT {
        if st.active == Active::Passive {
            return;
        }
        let Some(table::Io::Udp(u)) = &st.io else {
            return;
        };
        let r = super::with_read_buf(|buf| {
            u.try_recv_from(buf).map(|(n, from)| {
                let h = Heap::new();
                let addr = h.vector(&[
                    h.string(&from.ip().to_string()),
                    h.int(i64::from(from.port())),
                ]);
                let data = h.binary(&buf[..n]);
                let msg =
                    Fragment::vector(&[lona_term::kw!("udp"), h.reference(sock.id), addr, data]);
                sock.handle.send(owner, msg);
            })
        });
        match r {
            Ok(()) => spend_active(sock, st, lona_term::kw!("udp-passive")),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            // An error a datagram socket reports (an ICMP message about an
            // earlier send) concerns no datagram: read on.
            Err(_) => {}
        }
    }
}

/// One message was delivered in active mode: `:once` and a count running
/// out turn the socket passive, the latter telling the owner `[passive s]`
/// (`:tcp-passive`, `:udp-passive`), as Erlang's `{tcp_passive, S}`.
fn spend_active(sock: &Sock, st: &mut table::State, passive: Term<'static>) {
    match st.active {
        Active::Once => st.active = Active::Passive,
        Active::Count(1) => {
            st.active = Active::Passive;
            table::send_tagged(&sock.handle, st.owner, passive, sock.id, None);
        }
        Active::Count(n) => st.active = Active::Count(n - 1),
        Active::Always | Active::Passive => {}
    }
}

/// The socket fails: closed, and the owner told `[:tcp-error s reason]`,
/// then `[:tcp-closed s]`.
fn fail(sock: &Sock, st: &mut table::State, reason: &'static str) {
    st.close();
    let owner = st.owner;
    let reason = Term::keyword(reason);
    table::send_tagged(
        &sock.handle,
        owner,
        lona_term::kw!("tcp-error"),
        sock.id,
        Some(&|_| reason),
    );
    table::send_tagged(
        &sock.handle,
        owner,
        lona_term::kw!("tcp-closed"),
        sock.id,
        None,
    );
}

/// Sends the owner every complete packet its active mode allows.
pub(crate) fn deliver(sock: &Sock, st: &mut table::State) {
    let owner = st.owner;
    while st.active != Active::Passive {
        let (packet, max) = (st.packet, st.max_packet);
        let fields = &mut *st;
        match frame::take(packet, &mut fields.inbuf, &mut fields.scanned, 0, max) {
            Ok(Some(p)) => {
                table::send_tagged(
                    &sock.handle,
                    owner,
                    lona_term::kw!("tcp"),
                    sock.id,
                    Some(&|h| h.binary(&p)),
                );
                spend_active(sock, st, lona_term::kw!("tcp-passive"));
            }
            Ok(None) => break,
            Err(frame::TooLong) => return fail(sock, st, "emsgsize"),
        }
    }
    if st.eof && st.active != Active::Passive && !st.closed {
        // What was left is delivered; then the end, once.
        st.closed = true;
        table::send_tagged(
            &sock.handle,
            owner,
            lona_term::kw!("tcp-closed"),
            sock.id,
            None,
        );
    }
}

/// Step 3: writes what waits in `out`; once it is below the low
/// watermark, the waiting senders go on.
fn flush(sock: &Sock) {
    let mut st = sock.state();
    while !st.out.is_empty() {
        let Some(s) = st.stream() else { break };
        match s.try_write(&st.out) {
            Ok(n) => {
                st.out.drain(..n);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(_) => {
                st.out = Vec::new();
                st.close();
            }
        }
    }
    if st.out.is_empty() && st.out.capacity() > LOW_WATERMARK {
        // An idle connection keeps no large buffer.
        st.out = Vec::new();
    }
    if st.out.len() <= LOW_WATERMARK || st.closed {
        st.wake_senders(sock);
    }
}

/// Step 4.
fn close(sock: &Arc<Sock>) {
    table::remove(sock.id);
    let mut st = sock.state();
    st.close();
    st.out = Vec::new();
    st.inbuf = Vec::new();
    st.scanned = 0;
    st.wake_senders(sock);
}
