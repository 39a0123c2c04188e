//! UDP for processes: [`UdpSocket`].

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use crate::sched::reactor::{Direction, Evented};

/// A UDP socket, owned by the process that holds it (closed when
/// dropped). Sends and receives wait as `receive` does, and each costs a
/// reduction.
pub struct UdpSocket {
    io: Evented<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds to `addr` (port 0: one the system picks).
    pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
        let io = Evented::new(mio::net::UdpSocket::bind(addr)?)?;
        Ok(UdpSocket { io })
    }

    /// The address it is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.source.local_addr()
    }

    /// Sets the only peer [`UdpSocket::send`] sends to and
    /// [`UdpSocket::recv`] receives from.
    pub fn connect(&self, addr: SocketAddr) -> io::Result<()> {
        self.io.source.connect(addr)
    }

    /// Sends one datagram to `addr`; the bytes sent.
    pub async fn send_to(&self, buf: &[u8], addr: SocketAddr) -> io::Result<usize> {
        poll_fn(|cx| self.poll_send_to(cx, buf, addr)).await
    }

    /// Receives one datagram (the part of it that fits `buf`) and its
    /// sender.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| self.poll_recv_from(cx, buf)).await
    }

    /// Sends one datagram to the connected peer.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| {
            self.io
                .reg
                .poll_io(cx, Direction::Write, || self.io.source.send(buf))
        })
        .await
    }

    /// Receives one datagram from the connected peer.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| {
            self.io
                .reg
                .poll_io(cx, Direction::Read, || self.io.source.recv(buf))
        })
        .await
    }

    /// One non-blocking `send_to`: `WouldBlock` if there is no room.
    pub fn try_send_to(&self, buf: &[u8], addr: SocketAddr) -> io::Result<usize> {
        self.io
            .reg
            .try_io(Direction::Write, || self.io.source.send_to(buf, addr))
    }

    /// One non-blocking `recv_from`: `WouldBlock` if no datagram waits.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .reg
            .try_io(Direction::Read, || self.io.source.recv_from(buf))
    }

    /// Ready when a datagram may be waiting; otherwise `cx`'s waker is
    /// kept and woken when one may be (the last waker given wins).
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.io.reg.poll_ready(cx, Direction::Read).map(|_| ())
    }

    /// [`UdpSocket::send_to`] as a poll function.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        addr: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .reg
            .poll_io(cx, Direction::Write, || self.io.source.send_to(buf, addr))
    }

    /// [`UdpSocket::recv_from`] as a poll function.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .reg
            .poll_io(cx, Direction::Read, || self.io.source.recv_from(buf))
    }
}

impl std::fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.io.source.local_addr().ok())
            .finish()
    }
}
