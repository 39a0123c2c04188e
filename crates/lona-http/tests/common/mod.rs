//! What the tests share: a server on 127.0.0.1 in a runtime of its own,
//! the handler they serve, and a raw blocking client that writes bytes
//! and parses what comes back (with `httparse`, independently of the
//! server's own writing).

#![allow(dead_code)]

use lona_http::{Handler, HttpServer, Request, Response};
use lona_runtime::io::TcpListener;
use lona_runtime::{Builder, Runtime};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A server running in a runtime of its own; stops with it.
pub struct Running {
    pub rt: Runtime,
    pub addr: SocketAddr,
}

pub fn start(server: HttpServer, handler: impl Handler) -> Running {
    let rt = Builder::default().workers(2).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.handle()
        .spawn(move |ctx| async move { server.serve(&ctx, listener, handler).await })
        .unwrap();
    Running { rt, addr }
}

/// The default server with [`handler`], bounded waits (so a test that
/// goes wrong ends).
pub fn start_default() -> Running {
    start(
        HttpServer::new().idle_timeout(Duration::from_secs(10)),
        handler,
    )
}

/// The tests' handler:
/// - `/echo`: the body back, the method in `x-method`;
/// - `/panic`: panics;
/// - `/bad-header`: a header value with CR LF in it;
/// - `/close`: answers with `connection: close`;
/// - `/big`: 100,000 bytes of `x`;
/// - `/empty`: 204;
/// - anything else: `METHOD PATH QUERY\n`.
pub fn handler(req: Request) -> Response {
    match req.path.as_str() {
        "/echo" => Response::bytes(req.body).with_header("x-method", req.method.to_string()),
        "/panic" => panic!("the handler was asked to panic"),
        "/bad-header" => Response::text("x").with_header("x-bad", "a\r\nx-injected: yes"),
        "/close" => Response::text("bye\n").with_header("connection", "close"),
        "/big" => Response::bytes(vec![b'x'; 100_000]),
        "/empty" => Response::new(204),
        path => Response::text(format!(
            "{} {} {}\n",
            req.method,
            path,
            req.query.as_deref().unwrap_or("-")
        )),
    }
}

/// A response as the raw client read it.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// A blocking client that writes raw bytes and reads responses, keeping
/// what it read past one (pipelining).
pub struct Raw {
    pub s: TcpStream,
    buf: Vec<u8>,
}

/// A response head: status, headers, length of the head.
type Head = (u16, Vec<(String, String)>, usize);

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s, buf: Vec::new() }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    /// `GET path` (HTTP/1.1) and its response.
    pub fn get(&mut self, path: &str) -> Resp {
        self.send(format!("GET {path} HTTP/1.1\r\nhost: t\r\n\r\n").as_bytes());
        self.response()
    }

    /// Reads more; false at the end of the stream (or a reset).
    fn more(&mut self) -> bool {
        let mut b = [0; 8192];
        match self.s.read(&mut b) {
            Ok(0) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&b[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => false,
            Err(e) => panic!("read: {e}"),
        }
    }

    fn head(&mut self) -> Option<Head> {
        loop {
            let mut fields = [httparse::EMPTY_HEADER; 64];
            let mut r = httparse::Response::new(&mut fields);
            match r.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let headers = r
                        .headers
                        .iter()
                        .map(|h| {
                            let v = String::from_utf8(h.value.to_vec()).unwrap();
                            (h.name.to_string(), v)
                        })
                        .collect();
                    return Some((r.code.unwrap(), headers, n));
                }
                Ok(httparse::Status::Partial) => {
                    if !self.more() {
                        assert!(self.buf.is_empty(), "closed mid-response: {:?}", self.buf);
                        return None;
                    }
                }
                Err(e) => panic!(
                    "not a response ({e}): {:?}",
                    String::from_utf8_lossy(&self.buf)
                ),
            }
        }
    }

    /// The next response, or `None` if the server closed before it.
    pub fn try_response(&mut self, head_request: bool) -> Option<Resp> {
        let (status, headers, n) = self.head()?;
        self.buf.drain(..n);
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        assert!(
            !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding")),
            "the server only sends content-length bodies"
        );
        let len = if head_request { 0 } else { len };
        while self.buf.len() < len {
            assert!(self.more(), "closed mid-body");
        }
        let body = self.buf.drain(..len).collect();
        Some(Resp {
            status,
            headers,
            body,
        })
    }

    pub fn response(&mut self) -> Resp {
        self.try_response(false).expect("closed before a response")
    }

    /// Whether the server closed the connection (with nothing more sent).
    pub fn closed(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        !self.more()
    }
}
