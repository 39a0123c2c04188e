//! The leaf built-ins of the `udp` namespace (Erlang's `gen_udp`): a
//! socket owned by its caller (closed when the caller ends, by its port
//! process, as a TCP socket), datagrams sent and received: by `recv` in
//! passive mode, or, in active mode, read by the port process and sent
//! to the owner as `[:udp s [host port] data]` (`net/port.rs`). The
//! waiting half of `recv` is in `lonala/tcp.lona` (`udp/recv`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use lona_runtime::io::UdpSocket;
use lona_term::RawTerm;

use super::def;
use super::tcp::{
    data_arg, error_tuple, io_error, ip_arg, kw, open, opts, port_arg, sock, t, DEFAULT_OPTS,
};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::net::error_name;
use crate::net::frame::Packet;
use crate::net::table::{Active, Io, State};
use crate::var::Namespace;

/// The largest datagram (IPv4's limit).
const MAX_DATAGRAM: usize = 65_535;

/// `(udp/open* port opts)`: a socket bound to `port` (0: any) on `:ip`
/// (default: all interfaces), owned by the caller, `:active` as a TCP
/// socket's (`:packet` does not apply: a datagram is a packet); an error
/// is raised.
fn open_udp(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let port = port_arg(cx, a[0])?;
    let (o, ip) = opts(cx, a[1], DEFAULT_OPTS)?;
    if o.packet != Packet::Raw {
        return Err(Raise::badarg());
    }
    let ip = ip.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let u = UdpSocket::bind(SocketAddr::new(ip, port)).map_err(|e| io_error(&e))?;
    open(cx, Io::Udp(u), o)
}

/// `(udp/send s host port data)`: `:ok` or `[:error reason]` (a full
/// send buffer drops the datagram, as UDP may: `[:error :eagain]`).
fn send(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let to = SocketAddr::new(ip_arg(cx, t(cx, a[1]))?, port_arg(cx, a[2])?);
    let data = data_arg(cx, a[3])?;
    if data.len() > MAX_DATAGRAM {
        return Ok(error_tuple(cx, "emsgsize"));
    }
    let st = s.state();
    let Some(u) = udp(&st)? else {
        return Ok(error_tuple(cx, "closed"));
    };
    match u.try_send_to(data, to) {
        Ok(_) => Ok(kw("ok")),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(error_tuple(cx, "eagain")),
        Err(e) => Ok(error_tuple(cx, error_name(&e))),
    }
}

/// `(udp/recv* s)`: `[:ok [host port data]]`, `[:error reason]`
/// (`[:error :einval]` in active mode), or `:wait` (a ready message is
/// armed).
fn recv(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(s) = sock(cx, a[0])? else {
        return Ok(error_tuple(cx, "closed"));
    };
    let me = cx.rt()?.pid();
    let st = s.state();
    if udp(&st)?.is_some() && st.active != Active::Passive {
        return Ok(error_tuple(cx, "einval"));
    }
    loop {
        let Some(u) = udp(&st)? else {
            return Ok(error_tuple(cx, "closed"));
        };
        // The thread's read buffer holds the largest datagram (64 KB).
        let r = crate::net::with_read_buf(|buf| {
            u.try_recv_from(buf).map(|(n, from)| {
                let h = cx.heap;
                let host = h.string(&from.ip().to_string());
                let d = h.binary(&buf[..n]);
                let v = h.vector(&[host, h.int(from.port() as i64), d]);
                h.vector(&[lona_term::kw!("ok"), v]).raw()
            })
        });
        match r {
            Ok(v) => return Ok(v),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if !s.arm_read(&st, me) {
                    return Ok(kw("wait"));
                }
            }
            Err(e) => return Ok(error_tuple(cx, error_name(&e))),
        }
    }
}

/// The UDP socket of a socket's state: `None` once closed, `:badarg` for
/// a TCP one.
fn udp(st: &State) -> Result<Option<&UdpSocket>, Raise> {
    match &st.io {
        Some(Io::Udp(u)) => Ok(Some(u)),
        None => Ok(None),
        Some(_) => Err(Raise::badarg()),
    }
}

pub(super) fn install(udp: &'static Namespace) {
    def(udp, "open*", 2, 2, open_udp);
    def(udp, "send", 4, 4, send);
    def(udp, "recv*", 1, 1, recv);
    // A socket's own functions, shared with `tcp`.
    def(udp, "set-opts", 2, 2, super::tcp::set_opts);
    def(udp, "close", 1, 1, super::tcp::close);
    def(udp, "port", 1, 1, super::tcp::local_port);
    def(
        udp,
        "controlling-process",
        2,
        2,
        super::tcp::controlling_process,
    );
}
