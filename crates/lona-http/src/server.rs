//! The server: an acceptor process and a process per connection.
//!
//! # Protocol
//! 1. The acceptor ([`HttpServer::serve`]) accepts, sets `TCP_NODELAY`, and
//!    spawns a process for the connection. When accepting fails (out of
//!    descriptors: `EMFILE`) or the node is at its process limit (the
//!    connection is then closed unanswered), it reports it, waits 10 ms
//!    and goes on, as Erlang's acceptors do.
//! 2. A connection process reads into its buffer and parses a request
//!    head with `httparse` from what is there; only when no whole head is
//!    buffered does it read again, so pipelined requests are answered one
//!    after the other from one read. The head may take
//!    [`HttpServer::max_header_bytes`] (more: 431, as are more than 100 header
//!    lines).
//! 3. The body ends as the head says ([`crate::body`]): nothing, a
//!    `content-length` (above [`HttpServer::max_body_bytes`]: 413 before a
//!    byte of it is read), or chunked; a `content-length` with
//!    `transfer-encoding`, a malformed length or chunk: 400; a transfer
//!    coding other than chunked: 501; `expect: 100-continue` is answered
//!    `100 Continue` before the body is read, another expectation 417.
//! 4. The handler runs in the connection's process. Its response is
//!    written in one write with its head when the body is up to 16 KiB,
//!    and kept back while more pipelined requests are already buffered
//!    (all their responses then go out in one write).
//! 5. The connection stays open for the next request under HTTP/1.1
//!    unless either side said `connection: close`, and under HTTP/1.0
//!    only if the client said `connection: keep-alive`.
//! 6. Every read and write waits at most [`HttpServer::idle_timeout`]: a
//!    connection idle between requests is closed, one stalled inside a
//!    request is answered 408 and closed.
//! 7. An error answer (400, 408, 413, 417, 431, 501) closes the
//!    connection, after reading and dropping what the client still
//!    sends for a moment (up to 4 MiB or 2 s), so that it reads the
//!    answer rather than a reset.
//! 8. A handler that panics gets its client a 500, the connection
//!    closed, and its process ended with the panic as its reason, which
//!    the runtime reports as it reports any crash; the other connections
//!    are other processes and go on.

use std::future::{poll_fn, Future};
use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Ctx, Pid, Reason, SpawnError};

use crate::body::{self, BodyError, Framing, FramingError};
use crate::handler::Handler;
use crate::headers::{Headers, Method, Version};
use crate::io::Io;
use crate::request::{split_target, Request};
use crate::response::Response;
use crate::wire::{self, ConnHeader};

/// The most header lines a request may have.
pub const MAX_HEADERS: usize = 100;
/// Default [`HttpServer::max_header_bytes`]: 64 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;
/// Default [`HttpServer::max_body_bytes`]: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 << 20;
/// Default [`HttpServer::idle_timeout`]: 60 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A body up to this size goes out in the same write as its head.
const COPY_LIMIT: usize = 16 * 1024;
/// Responses kept back for pipelined requests, at most this many bytes.
const BATCH_LIMIT: usize = 64 * 1024;

/// An HTTP/1.1 server's settings; [`HttpServer::serve`] runs it.
///
/// ```
/// use lona_http::{HttpServer, Response};
/// use lona_runtime::{io::TcpListener, Runtime};
/// use std::time::Duration;
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let got = rt.block_on(|ctx| async move {
///     let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
///     let addr = listener.local_addr().unwrap();
///     HttpServer::new()
///         .idle_timeout(Duration::from_secs(5))
///         .spawn(&ctx, listener, |req: lona_http::Request| Response::text(format!("{}\n", req.path)))
///         .await
///         .unwrap();
///     let resp = lona_http::get(&ctx, &format!("http://{addr}/hi")).await.unwrap();
///     (resp.status, resp.body.into_owned())
/// });
/// assert_eq!(got.unwrap(), (200, b"/hi\n".to_vec()));
/// ```
#[derive(Clone, Debug)]
pub struct HttpServer {
    max_header_bytes: usize,
    max_body_bytes: usize,
    idle_timeout: Duration,
}

impl Default for HttpServer {
    fn default() -> HttpServer {
        HttpServer::new()
    }
}

/// What happens to a connection after a request.
enum Next {
    /// Wait for the next request.
    KeepAlive,
    /// Answered, and closing: linger, then close.
    Close,
    /// The peer is gone or the stream failed: close at once.
    Drop,
    /// The handler panicked (500 written): linger, then end the process.
    Crash(Reason),
}

impl HttpServer {
    /// The defaults: 64 KiB of headers, 8 MiB of body, 60 s idle.
    pub fn new() -> HttpServer {
        HttpServer {
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// The most bytes a request head (request line and headers) may take
    /// (at least 64); more is answered 431.
    pub fn max_header_bytes(mut self, n: usize) -> HttpServer {
        self.max_header_bytes = n.max(64);
        self
    }

    /// The most bytes a request body may have (after de-chunking); more
    /// is answered 413.
    pub fn max_body_bytes(mut self, n: usize) -> HttpServer {
        self.max_body_bytes = n;
        self
    }

    /// How long one read or write on a connection may wait: the
    /// keep-alive timeout between requests, and the stall allowed inside
    /// one.
    pub fn idle_timeout(mut self, d: Duration) -> HttpServer {
        self.idle_timeout = d;
        self
    }

    /// Accepts connections on `listener` in this process, forever,
    /// spawning a process per connection that answers its requests with
    /// `handler`. It ends only when its process is ended (the listener
    /// then closes with it); connections already accepted go on.
    pub async fn serve<H: Handler>(&self, ctx: &Ctx, listener: TcpListener, handler: H) {
        let shared = Arc::new((self.clone(), handler));
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = shared.clone();
                    let spawned = ctx
                        .spawn(move |ctx| async move {
                            let (server, handler) = &*shared;
                            server.serve_connection(&ctx, stream, handler).await
                        })
                        .await;
                    if let Err(e) = spawned {
                        report(format_args!(
                            "connection from {peer} closed unanswered: {e}"
                        ));
                        pause(ctx).await;
                    }
                }
                Err(e) => {
                    report(format_args!("accept: {e}"));
                    pause(ctx).await;
                }
            }
        }
    }

    /// [`HttpServer::serve`] in a process of its own (not linked to this
    /// one); its pid.
    pub async fn spawn<H: Handler>(
        self,
        ctx: &Ctx,
        listener: TcpListener,
        handler: H,
    ) -> Result<Pid, SpawnError> {
        ctx.spawn(move |ctx| async move { self.serve(&ctx, listener, handler).await })
            .await
    }

    /// Serves one connection in this process until it closes: for code
    /// that accepts its own connections.
    pub async fn serve_connection<H: Handler>(&self, ctx: &Ctx, stream: TcpStream, handler: &H) {
        let remote_addr = stream.peer_addr().ok();
        let mut io = Io::new(ctx, stream, self.idle_timeout);
        loop {
            match self.one(ctx, &mut io, handler, remote_addr).await {
                Next::KeepAlive => io.relax(),
                Next::Close => {
                    if io.flush().await.is_ok() {
                        io.linger().await;
                    }
                    return;
                }
                Next::Drop => return,
                Next::Crash(reason) => {
                    // The socket closes before the process ends.
                    if io.flush().await.is_ok() {
                        io.linger().await;
                    } else {
                        drop(io);
                    }
                    ctx.exit(reason).await;
                    return;
                }
            }
        }
    }

    /// Reads, answers, and says what next for one request.
    async fn one<H: Handler>(
        &self,
        ctx: &Ctx,
        io: &mut Io<'_>,
        handler: &H,
        remote_addr: Option<SocketAddr>,
    ) -> Next {
        let head = loop {
            if !io.unread().is_empty() {
                match parse_head(io.unread()) {
                    Ok(Some((_, n))) if n > self.max_header_bytes => return fail(io, 431),
                    Ok(Some((head, n))) => {
                        io.consume(n);
                        break head;
                    }
                    Ok(None) if io.unread().len() >= self.max_header_bytes => return fail(io, 431),
                    Ok(None) => {}
                    Err(status) => return fail(io, status),
                }
            }
            match io.fill(self.max_header_bytes).await {
                Ok(0) => return Next::Drop,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::TimedOut && !io.unread().is_empty() => {
                    return fail(io, 408)
                }
                Err(_) => return Next::Drop,
            }
        };
        let Head {
            method,
            path,
            query,
            version,
            headers,
        } = head;
        let keep_alive = match version {
            Version::Http11 => !headers.has_token("connection", "close"),
            Version::Http10 => headers.has_token("connection", "keep-alive"),
        };
        if version == Version::Http10 && headers.contains("transfer-encoding") {
            return fail(io, 400); // RFC 9112 §6.1: faulty framing
        }
        let framing = match body::framing(&headers, Framing::Length(0)) {
            Ok(Framing::Length(n)) if n > self.max_body_bytes as u64 => return fail(io, 413),
            Ok(f) => f,
            Err(FramingError::Malformed) => return fail(io, 400),
            Err(FramingError::Unsupported) => return fail(io, 501),
        };
        if let Some(expect) = headers.get("expect") {
            if !expect.eq_ignore_ascii_case("100-continue") {
                return fail(io, 417);
            }
            if version == Version::Http11
                && framing != Framing::Length(0)
                && io.unread().is_empty()
                && io.write(b"HTTP/1.1 100 Continue\r\n\r\n").await.is_err()
            {
                return Next::Drop;
            }
        }
        let body = match body::read_body(io, framing, self.max_body_bytes, self.max_header_bytes)
            .await
        {
            Ok(b) => b,
            Err(BodyError::TooLarge) => return fail(io, 413),
            Err(BodyError::Malformed) => return fail(io, 400),
            Err(BodyError::Io(e)) if e.kind() == io::ErrorKind::TimedOut => return fail(io, 408),
            Err(BodyError::Io(_)) => return Next::Drop,
        };
        let head_only = method == Method::Head;
        let req = Request {
            method,
            path,
            query,
            version,
            headers,
            body,
            remote_addr,
            params: Vec::new(),
        };
        let resp = match call(handler, ctx, req).await {
            Ok(r) => r,
            Err(payload) => {
                wire::error_response(&mut io.out, 500);
                return Next::Crash(lona_runtime::panic_reason(payload));
            }
        };
        let keep = keep_alive && !resp.headers.has_token("connection", "close");
        let conn = match (keep, version) {
            (false, _) => ConnHeader::Close,
            (true, Version::Http10) => ConnHeader::KeepAlive,
            (true, Version::Http11) => ConnHeader::None,
        };
        let has_body = wire::status_has_body(resp.status);
        let body_len = has_body.then_some(resp.body.len());
        if let Err(why) = wire::response_head(&mut io.out, &resp, body_len, conn) {
            report(format_args!("the handler's response was not sent: {why}"));
            return fail(io, 500);
        }
        let body: &[u8] = if has_body && !head_only {
            &resp.body
        } else {
            &[]
        };
        if body.len() <= COPY_LIMIT {
            io.out.extend_from_slice(body);
            // More requests are buffered: their answers go out together.
            if keep && !io.unread().is_empty() && io.out.len() < BATCH_LIMIT {
                return Next::KeepAlive;
            }
            if io.flush().await.is_err() {
                return Next::Drop;
            }
        } else if io.write(body).await.is_err() {
            return Next::Drop;
        }
        if keep {
            Next::KeepAlive
        } else {
            Next::Close
        }
    }
}

/// An error answer, then the connection closes.
fn fail(io: &mut Io<'_>, status: u16) -> Next {
    wire::error_response(&mut io.out, status);
    Next::Close
}

/// A parsed request head, owned.
struct Head {
    method: Method,
    path: String,
    query: Option<String>,
    version: Version,
    headers: Headers,
}

/// The request head at the front of `buf` and its length, `None` if it is
/// not all there, or the status to refuse it with.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, u16> {
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let n = match req.parse_with_uninit_headers(buf, &mut fields) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(431),
        Err(_) => return Err(400),
    };
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Err(400);
    };
    // httparse accepts only HTTP/1.0 and HTTP/1.1.
    let version = match version {
        0 => Version::Http10,
        _ => Version::Http11,
    };
    let (path, query) = split_target(target);
    Ok(Some((
        Head {
            method: Method::from_token(method),
            path: path.to_owned(),
            query: query.map(str::to_owned),
            version,
            headers: Headers::from_parsed(req.headers),
        },
        n,
    )))
}

/// Runs the handler, catching a panic in it (or in its future).
async fn call<H: Handler>(
    handler: &H,
    ctx: &Ctx,
    req: Request,
) -> Result<Response, Box<dyn std::any::Any + Send>> {
    let fut = catch_unwind(AssertUnwindSafe(|| handler.call(ctx, req)))?;
    let mut fut = pin!(fut);
    poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(r)) => Poll::Ready(Ok(r)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        },
    )
    .await
}

/// Serves HTTP on `listener` with the default [`HttpServer`] settings, in this
/// process, forever (see [`HttpServer::serve`]).
pub async fn serve<H: Handler>(ctx: &Ctx, listener: TcpListener, handler: H) {
    HttpServer::new().serve(ctx, listener, handler).await
}

/// Waits 10 ms (after a failed accept or spawn).
async fn pause(ctx: &Ctx) {
    ctx.sleep(Duration::from_millis(10)).await;
}

/// Reports a server error: through `log` (target `lona::http`) when a
/// logger is installed, else on standard error, so it is never lost.
pub(crate) fn report(what: std::fmt::Arguments<'_>) {
    if log::max_level() == log::LevelFilter::Off {
        eprintln!("lona-http: {what}");
    } else {
        log::error!(target: "lona::http", "{what}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let (h, n) = parse_head(b"GET /a?b=c HTTP/1.1\r\nHost: x\r\nX-Y:  z \r\n\r\nrest")
            .unwrap()
            .unwrap();
        assert_eq!(n, 42);
        assert_eq!((h.method, h.path.as_str()), (Method::Get, "/a"));
        assert_eq!(
            (h.query.as_deref(), h.version),
            (Some("b=c"), Version::Http11)
        );
        assert_eq!(h.headers.get("x-y"), Some("z"));
        assert_eq!(h.headers.iter().next(), Some(("host", "x")));
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost:").unwrap().is_none());
        assert!(matches!(parse_head(b"\x00\x01garbage\r\n\r\n"), Err(400)));
        assert!(matches!(parse_head(b"GET / HTTP/2.0\r\n\r\n"), Err(400)));
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "a: b\r\n".repeat(MAX_HEADERS + 1)
        );
        assert!(matches!(parse_head(many.as_bytes()), Err(431)));
    }
}
