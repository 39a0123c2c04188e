//! A small HTTP/1.1 client: one request per connection (`connection:
//! close`), `http://` URLs only, the whole exchange bounded by a timeout.
//!
//! The response head is parsed by `httparse`; interim responses (1xx but
//! 101) are skipped; the body is read by `content-length`, chunked, or to
//! the end of the stream, within [`Client::max_body_bytes`] (a declared
//! length is not trusted: the body grows as it arrives). A host that is
//! not an IP address is resolved on the runtime's blocking pool, so no
//! scheduler worker waits on DNS; each address it gives is tried in turn.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

use lona_runtime::io::{spawn_blocking, TcpStream};
use lona_runtime::Ctx;

use crate::body::{self, BodyError, Framing};
use crate::headers::{Headers, Method};
use crate::io::Io;
use crate::response::Response;
use crate::server::MAX_HEADERS;
use crate::wire;

/// Why a request failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The URL is not one this client can use (only `http://`).
    Url(String),
    /// The request cannot be sent: an invalid method, header or target.
    Request(String),
    /// Connecting, writing or reading failed.
    Io(io::Error),
    /// The whole exchange took longer than [`Client::timeout`].
    Timeout,
    /// The server's answer is not valid HTTP/1.x, or it closed early.
    Response(String),
    /// The response body is larger than [`Client::max_body_bytes`] (or
    /// its head than [`Client::max_header_bytes`]).
    TooLarge,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Url(why) => write!(f, "invalid URL: {why}"),
            Error::Request(why) => write!(f, "invalid request: {why}"),
            Error::Io(e) => write!(f, "{e}"),
            Error::Timeout => f.write_str("the request timed out"),
            Error::Response(why) => write!(f, "invalid response: {why}"),
            Error::TooLarge => f.write_str("the response is larger than allowed"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        match e.kind() {
            io::ErrorKind::TimedOut => Error::Timeout,
            io::ErrorKind::UnexpectedEof => {
                Error::Response("the connection closed before the response ended".into())
            }
            _ => Error::Io(e),
        }
    }
}

/// Default [`Client::timeout`]: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`Client::max_body_bytes`]: 64 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;

/// A client's settings. Requests are made from inside a process (they
/// wait as `receive` does).
#[derive(Clone, Debug)]
pub struct Client {
    timeout: Duration,
    max_header_bytes: usize,
    max_body_bytes: usize,
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

/// `GET url` with the default [`Client`].
pub async fn get(ctx: &Ctx, url: &str) -> Result<Response, Error> {
    Client::new().get(ctx, url).await
}

/// `method url` with `body`, with the default [`Client`].
pub async fn request(
    ctx: &Ctx,
    method: Method,
    url: &str,
    headers: Headers,
    body: &[u8],
) -> Result<Response, Error> {
    Client::new().request(ctx, method, url, headers, body).await
}

impl Client {
    /// 30 s for the whole exchange, 64 KiB of response head, 64 MiB of
    /// response body.
    pub fn new() -> Client {
        Client {
            timeout: DEFAULT_TIMEOUT,
            max_header_bytes: crate::server::DEFAULT_MAX_HEADER_BYTES,
            max_body_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    /// How long a whole request may take (resolving, connecting, sending,
    /// receiving); then [`Error::Timeout`].
    pub fn timeout(mut self, d: Duration) -> Client {
        self.timeout = d;
        self
    }

    /// The most bytes a response head may take (at least 64).
    pub fn max_header_bytes(mut self, n: usize) -> Client {
        self.max_header_bytes = n.max(64);
        self
    }

    /// The most bytes a response body may have.
    pub fn max_body_bytes(mut self, n: usize) -> Client {
        self.max_body_bytes = n;
        self
    }

    /// `GET url`.
    pub async fn get(&self, ctx: &Ctx, url: &str) -> Result<Response, Error> {
        self.request(ctx, Method::Get, url, Headers::new(), &[])
            .await
    }

    /// Sends `method url` with `headers` and `body` (`host`,
    /// `content-length` and `connection: close` are added; the caller's
    /// own `content-length`, `transfer-encoding` and `connection` are
    /// not sent) and reads the response. Any status is a response: a
    /// 404 or 500 is `Ok`.
    pub async fn request(
        &self,
        ctx: &Ctx,
        method: Method,
        url: &str,
        headers: Headers,
        body: &[u8],
    ) -> Result<Response, Error> {
        let url = Url::parse(url)?;
        let mut head = Vec::new();
        let send_length =
            !body.is_empty() || matches!(method, Method::Post | Method::Put | Method::Patch);
        wire::request_head(
            &mut head,
            method.as_str(),
            &url.target,
            url.authority,
            &headers,
            send_length.then_some(body.len()),
        )
        .map_err(Error::Request)?;
        let exchange = self.exchange(ctx, &url, head, body, method == Method::Head);
        match ctx.timeout(self.timeout, exchange).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout),
        }
    }

    async fn exchange(
        &self,
        ctx: &Ctx,
        url: &Url<'_>,
        head: Vec<u8>,
        body: &[u8],
        head_only: bool,
    ) -> Result<Response, Error> {
        let stream = connect(url).await?;
        let _ = stream.set_nodelay(true);
        let mut io = Io::new(ctx, stream, self.timeout);
        io.out = head;
        if body.len() <= 16 * 1024 {
            io.out.extend_from_slice(body);
            io.flush().await?;
        } else {
            io.write(body).await?;
        }
        let (status, headers) = loop {
            let (status, headers, n) = match parse_head(io.unread())? {
                Some(h) => h,
                None if io.unread().len() >= self.max_header_bytes => return Err(Error::TooLarge),
                None => {
                    if io.fill(self.max_header_bytes).await? == 0 {
                        return Err(Error::Response(
                            "the connection closed before a response".into(),
                        ));
                    }
                    continue;
                }
            };
            io.consume(n);
            if (100..200).contains(&status) && status != 101 {
                continue; // an interim response: the real one follows
            }
            break (status, headers);
        };
        let framing = if head_only || !wire::status_has_body(status) {
            Framing::Length(0)
        } else {
            body::framing(&headers, Framing::ToEof).map_err(|_| {
                Error::Response("invalid content-length or transfer-encoding".into())
            })?
        };
        let body = body::read_body(&mut io, framing, self.max_body_bytes, self.max_header_bytes)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge => Error::TooLarge,
                BodyError::Malformed => Error::Response("malformed chunked body".into()),
                BodyError::Io(e) => e.into(),
            })?;
        Ok(Response {
            status,
            headers,
            body: Cow::Owned(body),
        })
    }
}

/// The response head at the front of `buf`: status, headers, length.
fn parse_head(buf: &[u8]) -> Result<Option<(u16, Headers, usize)>, Error> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut fields);
    match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => Ok(Some((
            resp.code.unwrap_or(0),
            Headers::from_parsed(resp.headers),
            n,
        ))),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(Error::Response(e.to_string())),
    }
}

/// Connects to the first address of `url`'s host that answers.
async fn connect(url: &Url<'_>) -> Result<TcpStream, Error> {
    let addrs: Vec<SocketAddr> = match url.host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, url.port)],
        Err(_) => {
            let target = (url.host.to_owned(), url.port);
            spawn_blocking(move || target.to_socket_addrs().map(Vec::from_iter)).await??
        }
    };
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the host has no address");
    for a in addrs {
        match TcpStream::connect(a).await {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(Error::Io(last))
}

/// The parts of an `http://` URL a request needs.
#[derive(Debug, PartialEq, Eq)]
struct Url<'a> {
    /// `host:port` as written (the `host` header).
    authority: &'a str,
    /// The host, without brackets around an IPv6 address.
    host: &'a str,
    port: u16,
    /// The path and query (`/` when empty), without a fragment.
    target: Cow<'a, str>,
}

impl<'a> Url<'a> {
    fn parse(url: &'a str) -> Result<Url<'a>, Error> {
        let bad = |why: &str| Error::Url(format!("{why}: {url:?}"));
        let rest = match url.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => return Err(bad(&format!("unsupported scheme {scheme:?}"))),
            None => return Err(bad("no http:// scheme")),
        };
        let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(end);
        if authority.contains('@') {
            return Err(bad("user information is not supported"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
            match after {
                "" => (h, None),
                p => (h, Some(p.strip_prefix(':').ok_or_else(|| bad("bad port"))?)),
            }
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None | Some("") => 80,
            Some(p) => p.parse().map_err(|_| bad("bad port"))?,
        };
        let target = match target {
            "" => Cow::Borrowed("/"),
            t if t.starts_with('?') => Cow::Owned(format!("/{t}")),
            t => Cow::Borrowed(t),
        };
        Ok(Url {
            authority,
            host,
            port,
            target,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("http://127.0.0.1:8080/a/b?c=d#frag").unwrap();
        assert_eq!(
            u,
            Url {
                authority: "127.0.0.1:8080",
                host: "127.0.0.1",
                port: 8080,
                target: "/a/b?c=d".into()
            }
        );
        let u = Url::parse("HTTP://example.org").unwrap();
        assert_eq!((u.host, u.port, &*u.target), ("example.org", 80, "/"));
        assert_eq!(Url::parse("http://h?q").unwrap().target, "/?q");
        let u = Url::parse("http://[::1]:81/x").unwrap();
        assert_eq!((u.host, u.port, u.authority), ("::1", 81, "[::1]:81"));
        let u = Url::parse("http://[::1]/").unwrap();
        assert_eq!((u.host, u.port), ("::1", 80));
        for bad in [
            "https://x/",
            "x/y",
            "http://",
            "http://:80/",
            "http://h:99999/",
            "http://h:x/",
            "http://u@h/",
            "http://[::1/",
        ] {
            assert!(matches!(Url::parse(bad), Err(Error::Url(_))), "{bad}");
        }
    }

    #[test]
    fn response_heads() {
        let (s, h, n) = parse_head(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc")
            .unwrap()
            .unwrap();
        assert_eq!((s, h.get("content-length"), n), (404, Some("3"), 45));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n").unwrap().is_none());
        assert!(parse_head(b"garbage\r\n\r\n").is_err());
    }
}
