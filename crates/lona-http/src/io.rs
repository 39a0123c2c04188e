//! A connection's buffers: [`Io`], a `TcpStream` with a read buffer that
//! is parsed in place and a write buffer that is sent whole, every wait
//! bounded by a timeout.
//!
//! Reads and writes first try the socket once (charging the process its
//! reduction, as any socket operation does); only when that would wait do
//! they go through [`Ctx::timeout`], so the common case (the data is
//! there, the socket has room) starts no timer and allocates nothing.
//! The read buffer starts at 4 KiB, grows as a request head needs (up to
//! the caller's limit) and is given back when it grew past 16 KiB and is
//! empty again; the write buffer likewise past 64 KiB.

use std::future::poll_fn;
use std::io;
use std::net::Shutdown;
use std::task::Poll;
use std::time::{Duration, Instant};

use lona_runtime::io::TcpStream;
use lona_runtime::Ctx;

/// The read buffer's first size.
const INITIAL: usize = 4096;
/// Buffers larger than these are dropped once empty.
const KEEP_READ: usize = 16 * 1024;
const KEEP_WRITE: usize = 64 * 1024;

pub(crate) struct Io<'c> {
    ctx: &'c Ctx,
    pub(crate) stream: TcpStream,
    /// `buf[start..end]` is read and not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// What to write next ([`Io::flush`]).
    pub(crate) out: Vec<u8>,
    /// How long one read or write may wait.
    pub(crate) timeout: Duration,
}

impl<'c> Io<'c> {
    pub(crate) fn new(ctx: &'c Ctx, stream: TcpStream, timeout: Duration) -> Io<'c> {
        Io {
            ctx,
            stream,
            buf: Vec::new(),
            start: 0,
            end: 0,
            out: Vec::new(),
            timeout,
        }
    }

    /// The bytes read and not consumed.
    pub(crate) fn unread(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Marks the first `n` unread bytes consumed.
    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.end - self.start);
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads more into the buffer, making room for up to `limit` unread
    /// bytes (at least one more than now). `Ok(0)` at the end of the
    /// stream; `TimedOut` after waiting [`Io::timeout`].
    pub(crate) async fn fill(&mut self, limit: usize) -> io::Result<usize> {
        self.flush().await?;
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let len = (self.buf.len() * 2)
                    .max(INITIAL)
                    .min(limit.max(self.end + 1));
                self.buf.resize(len, 0);
            }
        }
        let n = read_some(
            self.ctx,
            &self.stream,
            &mut self.buf[self.end..],
            self.timeout,
        )
        .await?;
        self.end += n;
        Ok(n)
    }

    /// Appends exactly `n` more bytes of the stream (the unread ones
    /// first) to `out`, which grows as they come (never by more than
    /// 64 KiB ahead of them). `UnexpectedEof` if the stream ends first.
    pub(crate) async fn read_into(&mut self, mut n: usize, out: &mut Vec<u8>) -> io::Result<()> {
        self.flush().await?;
        let take = n.min(self.end - self.start);
        out.extend_from_slice(&self.buf[self.start..self.start + take]);
        self.consume(take);
        n -= take;
        while n > 0 {
            let at = out.len();
            let chunk = n.min(64 * 1024);
            out.resize(at + chunk, 0);
            let r = read_some(self.ctx, &self.stream, &mut out[at..], self.timeout).await;
            let k = *r.as_ref().unwrap_or(&0);
            out.truncate(at + k);
            match r? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                k => n -= k,
            }
        }
        Ok(())
    }

    /// Writes [`Io::out`] whole, then empties it. Reading flushes first,
    /// so nothing written is held back while waiting for the peer.
    pub(crate) async fn flush(&mut self) -> io::Result<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let r = write_all(self.ctx, &self.stream, &self.out, self.timeout).await;
        self.out.clear();
        r
    }

    /// Writes `data` whole (after anything in `out`).
    pub(crate) async fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if !self.out.is_empty() {
            self.flush().await?;
        }
        write_all(self.ctx, &self.stream, data, self.timeout).await
    }

    /// Between requests: buffers that grew large are given back.
    pub(crate) fn relax(&mut self) {
        if self.start == self.end && self.buf.len() > KEEP_READ {
            self.buf = Vec::new();
        }
        if self.out.capacity() > KEEP_WRITE {
            self.out = Vec::new();
        }
    }

    /// Closes gracefully after an answer the peer may not have finished
    /// sending for (an error, a `connection: close`): shuts the writing
    /// half (the answer goes out first), then reads and discards what the
    /// peer still sends, up to 4 MiB or 2 seconds, so that closing does
    /// not reset the connection before the peer has read the answer.
    pub(crate) async fn linger(mut self) {
        const MAX_BYTES: usize = 4 << 20;
        const MAX_TIME: Duration = Duration::from_secs(2);
        if self.stream.shutdown(Shutdown::Write).is_err() {
            return;
        }
        let started = Instant::now();
        let mut drained = 0;
        self.start = 0;
        self.end = 0;
        if self.buf.len() < INITIAL {
            self.buf.resize(INITIAL, 0);
        }
        while drained < MAX_BYTES {
            let left = MAX_TIME.saturating_sub(started.elapsed());
            if left.is_zero() {
                return;
            }
            match read_some(self.ctx, &self.stream, &mut self.buf, left).await {
                Ok(0) | Err(_) => return,
                Ok(n) => drained += n,
            }
        }
    }
}

/// One read of what is there, waiting at most `timeout` for something.
pub(crate) async fn read_some(
    ctx: &Ctx,
    s: &TcpStream,
    buf: &mut [u8],
    timeout: Duration,
) -> io::Result<usize> {
    // One try first: no timer when the data is there.
    if let Poll::Ready(r) = poll_fn(|cx| Poll::Ready(s.poll_read_buf(cx, buf))).await {
        return r;
    }
    match ctx.timeout(timeout, s.read(buf)).await {
        Ok(r) => r,
        Err(_) => Err(io::ErrorKind::TimedOut.into()),
    }
}

/// Writes all of `data`, each wait for room bounded by `timeout`.
pub(crate) async fn write_all(
    ctx: &Ctx,
    s: &TcpStream,
    mut data: &[u8],
    timeout: Duration,
) -> io::Result<()> {
    while !data.is_empty() {
        let n = match poll_fn(|cx| Poll::Ready(s.poll_write_buf(cx, data))).await {
            Poll::Ready(r) => r?,
            Poll::Pending => match ctx.timeout(timeout, s.write(data)).await {
                Ok(r) => r?,
                Err(_) => return Err(io::ErrorKind::TimedOut.into()),
            },
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        data = &data[n..];
    }
    Ok(())
}
