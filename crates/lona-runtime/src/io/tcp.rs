//! TCP for processes: [`TcpListener`] and [`TcpStream`].

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::sched::reactor::{Direction, Evented};

/// A TCP socket listening for connections, owned by the process that
/// holds it (it closes when dropped, so when that process ends).
///
/// ```
/// use lona_runtime::{io::{TcpListener, TcpStream}, Runtime};
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let echoed = rt.block_on(|ctx| async move {
///     let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
///     let addr = listener.local_addr().unwrap();
///     ctx.spawn(move |_| async move {
///         let (conn, _) = listener.accept().await.unwrap();
///         let mut buf = [0; 5];
///         conn.read_exact(&mut buf).await.unwrap();
///         conn.write_all(&buf).await.unwrap();
///     }).await.unwrap();
///     let client = TcpStream::connect(addr).await.unwrap();
///     client.write_all(b"hello").await.unwrap();
///     let mut buf = [0; 5];
///     client.read_exact(&mut buf).await.unwrap();
///     buf
/// });
/// assert_eq!(&echoed.unwrap(), b"hello");
/// ```
pub struct TcpListener {
    io: Evented<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds to `addr` (port 0: one the system picks; see
    /// [`TcpListener::local_addr`]). `SO_REUSEADDR` is set, as Erlang's
    /// `gen_tcp:listen` with `{reuseaddr, true}` and most servers do, and
    /// the queue of connections not yet accepted holds
    /// [`TcpListener::DEFAULT_BACKLOG`] (the system may cap it:
    /// `net.core.somaxconn`).
    pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
        TcpListener::bind_with_backlog(addr, TcpListener::DEFAULT_BACKLOG)
    }

    /// The backlog of [`TcpListener::bind`]: 4,096, as Go's (from
    /// `somaxconn`) and Erlang's benchmarks' servers; the standard
    /// library's 128 makes a burst of a thousand connections wait for the
    /// clients' SYN retries.
    pub const DEFAULT_BACKLOG: i32 = 4096;

    /// [`TcpListener::bind`] with a backlog of `backlog` connections not
    /// yet accepted.
    pub fn bind_with_backlog(addr: SocketAddr, backlog: i32) -> io::Result<TcpListener> {
        use socket2::{Domain, Protocol, Socket, Type};
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_address(true)?;
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        socket.listen(backlog)?;
        let l: std::net::TcpListener = socket.into();
        let io = Evented::new(mio::net::TcpListener::from_std(l))?;
        Ok(TcpListener { io })
    }

    /// A listener of a standard one (made non-blocking here).
    pub fn from_std(l: std::net::TcpListener) -> io::Result<TcpListener> {
        l.set_nonblocking(true)?;
        let io = Evented::new(mio::net::TcpListener::from_std(l))?;
        Ok(TcpListener { io })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.source.local_addr()
    }

    /// Waits for a connection. Errors are the system's: out of file
    /// descriptors is `EMFILE` (`raw_os_error() == Some(24)`), after which
    /// the listener keeps working once descriptors are freed.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// [`TcpListener::accept`] as a poll function.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        match self
            .io
            .reg
            .poll_io(cx, Direction::Read, || self.io.source.accept())
        {
            Poll::Ready(Ok((s, addr))) => Poll::Ready(TcpStream::new(s).map(|s| (s, addr))),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl TcpListener {
    /// One non-blocking try of `accept`: `WouldBlock` if no connection is
    /// waiting. With [`TcpListener::poll_accept_ready`], for code that
    /// waits its own way (the Lonala built-ins do: a waker that sends a
    /// message).
    pub fn try_accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let (s, addr) = self
            .io
            .reg
            .try_io(Direction::Read, || self.io.source.accept())?;
        Ok((TcpStream::new(s)?, addr))
    }

    /// Ready when a connection may be waiting; otherwise `cx`'s waker is
    /// kept and woken when one comes (the last waker given wins).
    pub fn poll_accept_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.io.reg.poll_ready(cx, Direction::Read).map(|_| ())
    }
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpListener")
            .field("local_addr", &self.io.source.local_addr().ok())
            .finish()
    }
}

/// A TCP connection, owned by the process that holds it (closed when
/// dropped). Reads and writes wait as `receive` does: the process sleeps
/// until the socket is ready, and each operation costs a reduction.
///
/// It implements `futures-io`'s `AsyncRead` and `AsyncWrite` (and, with
/// the `tokio` feature, tokio's), so protocol crates written against those
/// traits run on it; `&TcpStream` does too, to read and write from two
/// places (one reader and one writer at a time: a second reader waiting
/// at once replaces the first one's wake-up, as in tokio).
pub struct TcpStream {
    io: Evented<mio::net::TcpStream>,
}

impl TcpStream {
    fn new(inner: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: Evented::new(inner)?,
        })
    }

    /// Connects to `addr`, waiting (as in `receive`) until the connection
    /// is made or refused.
    pub async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
        let s = TcpStream::connect_nonblocking(addr)?;
        poll_fn(|cx| s.poll_connected(cx)).await?;
        Ok(s)
    }

    /// Starts connecting to `addr` and returns at once; the stream is
    /// usable once [`TcpStream::poll_connected`] is ready with `Ok`.
    pub fn connect_nonblocking(addr: SocketAddr) -> io::Result<TcpStream> {
        TcpStream::new(mio::net::TcpStream::connect(addr)?)
    }

    /// Ready with `Ok` once a connection started by
    /// [`TcpStream::connect_nonblocking`] is made, with the error if it
    /// failed; otherwise `cx`'s waker is kept.
    pub fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let seen = match self.io.reg.poll_ready(cx, Direction::Write) {
                Poll::Ready(w) => w,
                Poll::Pending => return Poll::Pending,
            };
            if let Some(e) = self.io.source.take_error()? {
                return Poll::Ready(Err(e));
            }
            match self.io.source.peer_addr() {
                Ok(_) => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                    self.io.reg.clear(seen, Direction::Write)
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// A stream of a connected standard one (made non-blocking here).
    pub fn from_std(s: std::net::TcpStream) -> io::Result<TcpStream> {
        s.set_nonblocking(true)?;
        TcpStream::new(mio::net::TcpStream::from_std(s))
    }

    /// Reads what is there (at least one byte, waiting until there is);
    /// `Ok(0)` at the end of the stream.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_read_buf(cx, buf)).await
    }

    /// Reads exactly `buf.len()` bytes; `UnexpectedEof` if the stream ends
    /// first.
    pub async fn read_exact(&self, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read(buf).await? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => buf = &mut buf[n..],
            }
        }
        Ok(())
    }

    /// Writes some of `buf` (waiting for room), returning how much.
    pub async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.poll_write_buf(cx, buf)).await
    }

    /// Writes all of `buf`.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write(buf).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => buf = &buf[n..],
            }
        }
        Ok(())
    }

    /// Writes some of `bufs`, in order, in one system call (waiting for
    /// room), returning how much.
    pub async fn write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let len = bufs.iter().map(|b| b.len()).sum();
        poll_fn(|cx| {
            self.io.reg.poll_stream_io(cx, Direction::Write, len, || {
                (&self.io.source).write_vectored(bufs)
            })
        })
        .await
    }

    /// Writes all of `bufs`, in order, with as few system calls as the
    /// socket's room allows.
    pub async fn write_all_vectored(&self, mut bufs: &mut [io::IoSlice<'_>]) -> io::Result<()> {
        io::IoSlice::advance_slices(&mut bufs, 0);
        while !bufs.is_empty() {
            match self.write_vectored(bufs).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => io::IoSlice::advance_slices(&mut bufs, n),
            }
        }
        Ok(())
    }

    /// Reads as a poll function.
    pub fn poll_read_buf(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        self.io
            .reg
            .poll_stream_io(cx, Direction::Read, buf.len(), || {
                (&self.io.source).read(buf)
            })
    }

    /// Writes as a poll function.
    pub fn poll_write_buf(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.io
            .reg
            .poll_stream_io(cx, Direction::Write, buf.len(), || {
                (&self.io.source).write(buf)
            })
    }

    /// One non-blocking read: `WouldBlock` if nothing is there (see
    /// [`TcpStream::poll_read_ready`] to wait for it).
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .reg
            .try_stream_io(Direction::Read, buf.len(), || (&self.io.source).read(buf))
    }

    /// One non-blocking write: `WouldBlock` if there is no room.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .reg
            .try_stream_io(Direction::Write, buf.len(), || (&self.io.source).write(buf))
    }

    /// One non-blocking gathering write (`writev`) of `bufs` in order:
    /// `WouldBlock` if there is no room.
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.io.reg.try_stream_io(Direction::Write, len, || {
            (&self.io.source).write_vectored(bufs)
        })
    }

    /// Ready when a read may succeed (or report the end or an error);
    /// otherwise `cx`'s waker is kept and woken when it may (the last
    /// waker given wins).
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.io.reg.poll_ready(cx, Direction::Read).map(|_| ())
    }

    /// As [`TcpStream::poll_read_ready`], for writing.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        self.io.reg.poll_ready(cx, Direction::Write).map(|_| ())
    }

    /// Shuts down the reading, writing, or both halves.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.source.shutdown(how)
    }

    /// The address of the other end.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.source.peer_addr()
    }

    /// The address of this end.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.source.local_addr()
    }

    /// Sets `TCP_NODELAY` (no Nagle delay for small writes).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        self.io.source.set_nodelay(on)
    }
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.io.source.local_addr().ok())
            .field("peer_addr", &self.io.source.peer_addr().ok())
            .finish()
    }
}

macro_rules! async_io_traits {
    ($t:ty) => {
        impl futures_io::AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.poll_read_buf(cx, buf)
            }
        }

        impl futures_io::AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.poll_write_buf(cx, buf)
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // nothing is buffered here
            }
            fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(Shutdown::Write))
            }
        }

        #[cfg(feature = "tokio")]
        impl tokio::io::AsyncRead for $t {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                let n = std::task::ready!(self.poll_read_buf(cx, buf.initialize_unfilled()))?;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
        }

        #[cfg(feature = "tokio")]
        impl tokio::io::AsyncWrite for $t {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.poll_write_buf(cx, buf)
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown(Shutdown::Write))
            }
        }
    };
}

async_io_traits!(TcpStream);
async_io_traits!(&TcpStream);
