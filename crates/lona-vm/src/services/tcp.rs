//! The leaf built-ins of the `tcp` namespace (`net/mod.rs` has the
//! design; `lonala/tcp.lona` the Lonala functions users call). Each does what
//! it can without waiting and answers `:wait` when it cannot, having armed
//! a waker that sends the caller `[:lona.io/ready s]`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{native_process, Pid, Ref, SpawnOpts};
use lona_term::{RawTerm, Term, View};

use super::def;
use crate::msg::term_pid;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::net::frame::{self, Packet};
use crate::net::port::{self, Cmd};
use crate::net::table::{self, Active, Io, Sock, State, HIGH_WATERMARK};
use crate::net::{error_name, stream_error_name};
use crate::var::Namespace;

pub(super) fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

pub(super) fn io_error(e: &std::io::Error) -> Raise {
    Raise::error(Term::keyword(error_name(e)))
}

pub(super) fn kw(s: &str) -> RawTerm {
    Term::keyword(s).raw()
}

pub(super) fn error_tuple(cx: &BuiltinCx<'_, '_>, reason: &str) -> RawTerm {
    cx.heap
        .vector(&[lona_term::kw!("error"), Term::keyword(reason)])
        .raw()
}

/// Socket options (`:active`, `:packet`, `:packet-size`), over `base`.
#[derive(Clone, Copy)]
pub(super) struct Opts {
    pub(super) active: Active,
    pub(super) packet: Packet,
    max: usize,
}

pub(super) const DEFAULT_OPTS: Opts = Opts {
    active: Active::Passive,
    packet: Packet::Raw,
    max: frame::DEFAULT_MAX,
};

pub(super) fn opts(
    cx: &BuiltinCx<'_, '_>,
    r: RawTerm,
    base: Opts,
) -> Result<(Opts, Option<IpAddr>), Raise> {
    let mut o = base;
    let mut ip = None;
    let m = t(cx, r);
    let View::Map(m) = m.view() else {
        return if matches!(m.view(), View::Nil) {
            Ok((o, ip))
        } else {
            Err(Raise::badarg())
        };
    };
    for (k, v) in m.iter() {
        match k.view() {
            View::Keyword(a) if a.name() == "active" => {
                o.active = match v.view() {
                    View::Bool(true) => Active::Always,
                    View::Bool(false) => Active::Passive,
                    View::Keyword(a) if a.name() == "once" => Active::Once,
                    View::Int(n) if n > 0 => Active::Count(n as u64),
                    View::Int(0) => Active::Passive,
                    _ => return Err(Raise::badarg()),
                }
            }
            View::Keyword(a) if a.name() == "packet" => {
                o.packet = match v.view() {
                    View::Keyword(a) if a.name() == "raw" => Packet::Raw,
                    View::Keyword(a) if a.name() == "line" => Packet::Line,
                    View::Keyword(a) if a.name() == "http" => Packet::Http,
                    View::Int(0) => Packet::Raw,
                    View::Int(n @ (1 | 2 | 4)) => Packet::Len(n as u8),
                    _ => return Err(Raise::badarg()),
                }
            }
            View::Keyword(a) if a.name() == "packet-size" => match v.view() {
                View::Int(n) if n > 0 => o.max = n as usize,
                _ => return Err(Raise::badarg()),
            },
            View::Keyword(a) if a.name() == "ip" => {
                ip = Some(ip_arg(cx, v)?);
            }
            _ => return Err(Raise::badarg()),
        }
    }
    Ok((o, ip))
}

pub(super) fn ip_arg(_cx: &BuiltinCx<'_, '_>, v: Term<'_>) -> Result<IpAddr, Raise> {
    let s = v.as_str().ok_or_else(Raise::badarg)?;
    if s == "localhost" {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    // Names are not looked up (that would block a worker): addresses only.
    s.parse()
        .map_err(|_| Raise::error(lona_term::kw!("einval")))
}

pub(super) fn port_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<u16, Raise> {
    t(cx, r)
        .as_i64()
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(Raise::badarg)
}

/// The socket a term names; `None` if it is closed (or never was one).
pub(super) fn sock(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<Option<Arc<Sock>>, Raise> {
    match t(cx, r).view() {
        View::Ref(id) => Ok(table::get(id)),
        _ => Err(Raise::badarg()),
    }
}

/// Makes a socket owned by the caller, with its port process linked to
/// the caller, and its term.
pub(super) fn open(cx: &mut BuiltinCx<'_, '_>, io: Io, o: Opts) -> NResult {
    let rt = cx.rt()?;
    let owner = rt.pid();
    let id = Ref::new().to_bits();
    let s = Arc::new(Sock {
        id,
        state: Mutex::new(State {
            io: Some(io),
            owner,
            active: o.active,
            packet: o.packet,
            max_packet: o.max,
            inbuf: Vec::new(),
            scanned: 0,
            out: Vec::new(),
            writer: None,
            waiters: Vec::new(),
            closed: false,
            eof: false,
        }),
        port: OnceLock::new(),
        handle: rt.handle(),
    });
    table::insert(s.clone());
    let guard = port::CloseOnDrop(s.clone());
    match rt.spawn(
        SpawnOpts::new().link(true),
        native_process(move |ctx| port::run(ctx, guard)),
    ) {
        Ok((pid, _)) => {
            let _ = s.port.set(pid);
        }
        Err(_) => {
            table::remove(id);
            return Err(Raise::system_limit());
        }
    }
    Ok(cx.heap.reference(id).raw())
}

fn notify_port(cx: &mut BuiltinCx<'_, '_>, s: &Sock, cmd: Cmd) -> Result<(), Raise> {
    if let Some(p) = s.port.get() {
        cx.rt()?.send(*p, cmd);
    }
    Ok(())
}

/// `(tcp/listen* port opts)`: a listening socket, or an error raised.
fn listen(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let port = port_arg(cx, a[0])?;
    let (o, ip) = opts(cx, a[1], DEFAULT_OPTS)?;
    let addr = SocketAddr::new(ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)), port);
    let l = TcpListener::bind(addr).map_err(|e| io_error(&e))?;
    open(cx, Io::Listener(l), o)
}

/// `(tcp/accept* l)`: a connected socket (owned by the caller, with the
/// listener's options), `:wait`, or an error raised.
fn accept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(l) = sock(cx, a[0])? else {
        return Err(Raise::error(lona_term::kw!("closed")));
    };
    let me = cx.rt()?.pid();
    loop {
        let st = l.state();
        let r = match &st.io {
            Some(Io::Listener(listener)) => listener.try_accept(),
            Some(Io::Stream(_) | Io::Udp(_)) => return Err(Raise::badarg()),
            None => return Err(Raise::error(lona_term::kw!("closed"))),
        };
        match r {
            Ok((s, _)) => {
                // A listener's options are what its connections start with.
                let o = Opts {
                    active: st.active,
                    packet: st.packet,
                    max: st.max_packet,
                };
                drop(st);
                let _ = s.set_nodelay(true);
                return open(cx, Io::Stream(s), o);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if !l.arm_read(&st, me) {
                    return Ok(kw("wait"));
                }
            }
            Err(e) => return Err(io_error(&e)),
        }
    }
}

/// `(tcp/connect* host port opts)`: a socket being connected (see
/// `connected*`), or an error raised.
fn connect(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let ip = ip_arg(cx, t(cx, a[0]))?;
    let port = port_arg(cx, a[1])?;
    let (o, _) = opts(cx, a[2], DEFAULT_OPTS)?;
    let s = TcpStream::connect_nonblocking(SocketAddr::new(ip, port)).map_err(|e| io_error(&e))?;
    let _ = s.set_nodelay(true);
    open(cx, Io::Stream(s), o)
}

/// `(tcp/connected* s)`: `:ok` once connected, `:wait`, or the error
/// raised (the socket is closed).
fn connected(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Err(Raise::error(lona_term::kw!("closed")));
    };
    let me = cx.rt()?.pid();
    let r = s.poll_connected(&s.state(), me);
    match r {
        Some(Ok(())) => Ok(kw("ok")),
        None => Ok(kw("wait")),
        Some(Err(e)) => {
            notify_port(cx, &s, Cmd::Close)?;
            Err(io_error(&e))
        }
    }
}

pub(super) fn data_arg<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Result<&'a [u8], Raise> {
    match t(cx, r).view() {
        View::Binary(b) => Ok(b),
        View::Str(s) => Ok(s.as_bytes()),
        _ => Err(Raise::badarg()),
    }
}

/// `(tcp/send* s data)`, `(tcp/send* s data n)`: sends `data` (a binary
/// or a string) from its `n`th byte on (counting a length header that
/// `:packet` 1, 2 or 4 puts before it). Answers `:ok` when all of it is
/// written or queued, `[:error reason]`, or, when the socket's queue is
/// full (`HIGH_WATERMARK`), how many bytes it has taken so far: the
/// caller then waits for `[:lona.io/sent s r]` and, if `r` is `:ok`,
/// calls again with that count. The bytes not yet taken stay in the
/// caller's hands (a large binary is written from where it lies, never
/// copied whole), so a peer that does not read holds at most the queue.
fn send(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let data = data_arg(cx, a[1])?;
    let off = match a.get(2) {
        None => 0,
        Some(&n) => t(cx, n)
            .as_i64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(Raise::badarg)?,
    };
    let me = cx.rt()?.pid();
    let mut st = s.state();
    if st.closed {
        return Ok(error_tuple(cx, "closed"));
    }
    if st.stream().is_none() {
        return Err(Raise::badarg());
    }
    let header_bytes;
    let header: &[u8] = match st.packet {
        Packet::Len(k) => {
            header_bytes = frame::header(k, data.len()).ok_or_else(Raise::badarg)?;
            &header_bytes[..usize::from(k)]
        }
        _ => &[],
    };
    let total = header.len() + data.len();
    if off > total {
        return Err(Raise::badarg());
    }
    match st.writer {
        // Another sender's packet is half out: wait for it to finish.
        Some(w) if w != me && s.handle.is_alive_now(w) => {
            if !st.waiters.contains(&me) {
                st.waiters.push(me);
            }
            drop(st);
            notify_port(cx, &s, Cmd::Flush)?;
            return Ok(cx.heap.int(off as i64).raw());
        }
        _ => st.writer = None,
    }
    // The bytes from `at` on, as at most two slices.
    let rest = |at: usize| -> [&[u8]; 2] {
        if at < header.len() {
            [&header[at..], data]
        } else {
            [&[], &data[at - header.len()..]]
        }
    };
    let mut at = off;
    let mut written = 0;
    if st.out.is_empty() {
        while at < total {
            let Some(stream) = st.stream() else { break };
            let [h, d] = rest(at);
            let r = if h.is_empty() {
                stream.try_write(d)
            } else {
                stream.try_write_vectored(&[std::io::IoSlice::new(h), std::io::IoSlice::new(d)])
            };
            match r {
                Ok(n) => {
                    at += n;
                    written += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    st.close();
                    return Ok(error_tuple(cx, stream_error_name(&e)));
                }
            }
        }
    }
    // What is left goes to the queue, as much as fits under the high
    // watermark (all of it when it is small: a small send never waits).
    let room = HIGH_WATERMARK.saturating_sub(st.out.len());
    let take = (total - at).min(room);
    let [h, d] = rest(at);
    let from_h = take.min(h.len());
    st.out.extend_from_slice(&h[..from_h]);
    st.out.extend_from_slice(&d[..take - from_h]);
    at += take;
    cx.charge((written + take) / 4096);
    let queued = !st.out.is_empty();
    let r = if at == total {
        // Done: a sender waiting for this one's packet to finish goes on.
        if !st.waiters.is_empty() && !queued {
            st.wake_senders(&s);
        }
        kw("ok")
    } else {
        st.writer = Some(me);
        if !st.waiters.contains(&me) {
            st.waiters.push(me);
        }
        cx.heap.int(at as i64).raw()
    };
    drop(st);
    if queued {
        notify_port(cx, &s, Cmd::Flush)?;
    }
    Ok(r)
}

/// `(tcp/send-abort* s)`: the caller gave up waiting to send (a timeout):
/// it no longer waits for `[:lona.io/sent s r]`, and no message for it is
/// sent after this returns (one sent before is in its mailbox).
fn send_abort(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(s) = sock(cx, a[0])? {
        let me = cx.rt()?.pid();
        s.state().forget_sender(me);
    }
    Ok(Term::NIL.raw())
}

/// `(tcp/recv* s n)`: `[:ok data]`, `[:error reason]`, or `:wait`.
fn recv(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let want = t(cx, a[1])
        .as_i64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(Raise::badarg)?;
    let me = cx.rt()?.pid();
    let mut st = s.state();
    if matches!(st.io, Some(Io::Listener(_) | Io::Udp(_))) {
        return Err(Raise::badarg());
    }
    if st.active != Active::Passive {
        return Ok(error_tuple(cx, "einval"));
    }
    loop {
        let (packet, max) = (st.packet, st.max_packet);
        if want > max {
            return Ok(error_tuple(cx, "emsgsize"));
        }
        if packet == Packet::Http {
            match crate::net::http::parse(cx.heap, &st.inbuf) {
                crate::net::http::Head::Request(_, n) if n > max => {
                    return Ok(error_tuple(cx, "emsgsize"));
                }
                crate::net::http::Head::Request(m, n) => {
                    st.inbuf.drain(..n);
                    st.scanned = 0;
                    return Ok(cx.heap.vector(&[lona_term::kw!("ok"), m]).raw());
                }
                crate::net::http::Head::Error(e) => return Ok(error_tuple(cx, e)),
                crate::net::http::Head::Partial if st.inbuf.len() >= max => {
                    return Ok(error_tuple(cx, "emsgsize"));
                }
                crate::net::http::Head::Partial => {}
            }
        } else {
            let fields = &mut *st;
            match frame::take(packet, &mut fields.inbuf, &mut fields.scanned, want, max) {
                Ok(Some(p)) => {
                    cx.charge(p.len() / 4096);
                    let d = cx.heap.binary(&p);
                    return Ok(cx.heap.vector(&[lona_term::kw!("ok"), d]).raw());
                }
                Err(frame::TooLong) => return Ok(error_tuple(cx, "emsgsize")),
                Ok(None) => {}
            }
        }
        if st.closed || st.eof {
            return Ok(error_tuple(cx, "closed"));
        }
        let fields = &mut *st;
        let Some(Io::Stream(stream)) = &fields.io else {
            return Ok(error_tuple(cx, "closed"));
        };
        let inbuf = &mut fields.inbuf;
        let r = crate::net::with_read_buf(|buf| {
            let r = stream.try_read(buf);
            if let Ok(n) = r {
                inbuf.extend_from_slice(&buf[..n]);
            }
            r
        });
        match r {
            Ok(0) => st.eof = true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if !s.arm_read(&st, me) {
                    return Ok(kw("wait"));
                }
            }
            Err(e) => {
                st.close();
                return Ok(error_tuple(cx, stream_error_name(&e)));
            }
        }
    }
}

/// `(tcp/disarm* s)`: forget an armed wait (it timed out).
fn disarm(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(s) = sock(cx, a[0])? {
        s.disarm(&s.state());
    }
    Ok(Term::NIL.raw())
}

/// `(tcp/close s)`: `:ok` (also for a socket already closed).
pub(super) fn close(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(s) = sock(cx, a[0])? {
        let me = cx.rt()?.pid();
        table::remove(s.id);
        {
            let mut st = s.state();
            st.forget_sender(me);
            st.close();
        }
        notify_port(cx, &s, Cmd::Close)?;
    }
    Ok(kw("ok"))
}

/// `(tcp/controlling-process s pid)`: `:ok`, or `[:error :not-owner]`
/// when the caller does not own `s`.
pub(super) fn controlling_process(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let to: Pid = term_pid(t(cx, a[1])).ok_or_else(Raise::badarg)?;
    let me = cx.rt()?.pid();
    {
        let mut st = s.state();
        if st.owner != me {
            return Ok(error_tuple(cx, "not-owner"));
        }
        st.owner = to;
    }
    notify_port(cx, &s, Cmd::Transfer { from: me, to })?;
    Ok(kw("ok"))
}

/// `(tcp/set-opts s opts)`: `:ok`; active data already read is delivered.
pub(super) fn set_opts(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let mut st = s.state();
    let base = Opts {
        active: st.active,
        packet: st.packet,
        max: st.max_packet,
    };
    let (o, _) = opts(cx, a[1], base)?;
    st.active = o.active;
    st.packet = o.packet;
    st.max_packet = o.max;
    if let Some(Io::Stream(_)) = st.io {
        port::deliver(&s, &mut st);
    }
    drop(st);
    notify_port(cx, &s, Cmd::Opts)?;
    Ok(kw("ok"))
}

/// `(tcp/port s)`: the local port number.
pub(super) fn local_port(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let addr = match &s.state().io {
        Some(Io::Listener(l)) => l.local_addr(),
        Some(Io::Stream(st)) => st.local_addr(),
        Some(Io::Udp(u)) => u.local_addr(),
        None => return Ok(error_tuple(cx, "closed")),
    };
    let port = addr.map_err(|e| io_error(&e))?.port();
    Ok(cx.heap.int(port as i64).raw())
}

/// `(tcp/open-count)`: how many sockets of the node are open (tests).
fn open_count(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    Ok(cx.heap.int(table::count() as i64).raw())
}

/// `(tcp/http-response status headers body close?)`: an HTTP/1.1
/// response's bytes, head and body in one binary (`:packet :http`'s other
/// half; `lona.http` writes every response with it): the status line with
/// its reason phrase, `headers` (a map of names, strings or keywords, to
/// values written as `str` writes them) but `content-length` and
/// `connection`, which it writes itself, then `body` (a binary, a string,
/// nil, or anything else as `str` writes it). Raises
/// `[:bad-response :status]` for a status outside 100-999 and
/// `[:bad-response :header]` for a header holding CR or LF.
fn http_response(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    thread_local! {
        // One buffer per worker thread, reused (one response at a time).
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let status = t(cx, a[0]).as_i64().ok_or_else(Raise::badarg)?;
    let headers = t(cx, a[1]);
    let body = t(cx, a[2]);
    let close = crate::tag::truthy(a[3].bits());
    let shown;
    let body: &[u8] = match body.view() {
        View::Binary(b) => b,
        View::Str(s) => s.as_bytes(),
        View::Nil => &[],
        _ => {
            let mut s = String::new();
            crate::print::display_into(&mut s, body);
            shown = s;
            shown.as_bytes()
        }
    };
    BUF.with(|b| {
        let mut out = b.borrow_mut();
        out.clear();
        crate::net::http::encode_response(&mut out, status, headers, body, close)
            .map_err(|e| bad_response(cx, e))?;
        cx.charge(out.len() / 64);
        let r = cx.heap.binary(&out).raw();
        if out.capacity() > 1 << 16 {
            *out = Vec::new(); // a big body: not kept per thread
        }
        Ok(r)
    })
}

/// The error `http-response` and `http-head` raise for a response they
/// refuse.
fn bad_response(cx: &BuiltinCx<'_, '_>, e: crate::net::http::EncodeError) -> Raise {
    let what = match e {
        crate::net::http::EncodeError::Status => "status",
        crate::net::http::EncodeError::Header => "header",
    };
    let r = cx
        .heap
        .vector(&[lona_term::kw!("bad-response"), Term::keyword(what)]);
    Raise::error(r)
}

/// `(tcp/http-head status headers body close?)`: the head alone of the
/// response `http-response` would make (`body` a binary or a string,
/// counted, not copied), for a large body sent after it with its own
/// `send`: it is then written from where it lies. Raises as
/// `http-response` does.
fn http_head(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let status = t(cx, a[0]).as_i64().ok_or_else(Raise::badarg)?;
    let headers = t(cx, a[1]);
    let len = data_arg(cx, a[2])?.len();
    let close = crate::tag::truthy(a[3].bits());
    let head = crate::net::http::encode_head(status, headers, len, close)
        .map_err(|e| bad_response(cx, e))?;
    Ok(cx.heap.binary(head.as_bytes()).raw())
}

/// `(http-reason status)`: HTTP's reason phrase for `status` (`"Status"`
/// for one not known).
fn http_reason(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let status = t(cx, a[0]).as_i64().ok_or_else(Raise::badarg)?;
    Ok(cx.heap.string(crate::net::http::reason(status)).raw())
}

pub(super) fn install(tcp: &'static Namespace) {
    def(tcp, "http-response", 4, 4, http_response);
    def(tcp, "http-reason", 1, 1, http_reason);
    def(tcp, "http-head", 4, 4, http_head);
    def(tcp, "listen*", 2, 2, listen);
    def(tcp, "accept*", 1, 1, accept);
    def(tcp, "connect*", 3, 3, connect);
    def(tcp, "connected*", 1, 1, connected);
    def(tcp, "send*", 2, 3, send);
    def(tcp, "send-abort*", 1, 1, send_abort);
    def(tcp, "recv*", 2, 2, recv);
    def(tcp, "disarm*", 1, 1, disarm);
    def(tcp, "close", 1, 1, close);
    def(tcp, "controlling-process", 2, 2, controlling_process);
    def(tcp, "set-opts", 2, 2, set_opts);
    def(tcp, "port", 1, 1, local_port);
    def(tcp, "open-count", 0, 0, open_count);
}
