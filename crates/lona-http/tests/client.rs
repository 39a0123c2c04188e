//! The client: against the server, and against scripted servers (plain
//! threads on 127.0.0.1) for what the server never sends: chunked and
//! read-to-the-end bodies, interim responses, garbage, silence.

mod common;

use common::start_default;
use lona_http::{Client, Error, Headers, Method};
use lona_runtime::{Builder, Runtime};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc;
use std::time::Duration;

fn rt() -> Runtime {
    Builder::default().workers(2).build().unwrap()
}

#[test]
fn the_client_against_the_server() {
    let srv = start_default();
    let base = format!("http://{}", srv.addr);
    srv.rt
        .block_on(move |ctx| async move {
            let r = lona_http::get(&ctx, &format!("{base}/a?b=c"))
                .await
                .unwrap();
            assert_eq!((r.status, r.body_text().unwrap()), (200, "GET /a b=c\n"));
            assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
            // A body both ways, larger than a socket buffer.
            let body: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
            let r = lona_http::request(
                &ctx,
                Method::Post,
                &format!("{base}/echo"),
                Headers::new(),
                &body,
            )
            .await
            .unwrap();
            assert_eq!(r.body.as_ref(), &body[..]);
            assert_eq!(r.header("x-method"), Some("POST"));
            let r = Client::new()
                .request(
                    &ctx,
                    Method::Head,
                    &format!("{base}/big"),
                    Headers::new(),
                    &[],
                )
                .await
                .unwrap();
            assert_eq!((r.status, r.body.len()), (200, 0));
            assert_eq!(r.header("content-length"), Some("100000"));
            let r = lona_http::get(&ctx, &format!("{base}/big")).await.unwrap();
            assert_eq!(r.body.len(), 100_000);
            let r = lona_http::get(&ctx, &format!("{base}/empty"))
                .await
                .unwrap();
            assert_eq!((r.status, r.body.len()), (204, 0));
            // An error status is a response.
            let r = lona_http::get(&ctx, &format!("{base}/panic"))
                .await
                .unwrap();
            assert_eq!(r.status, 500);
            // A host name, resolved off the workers.
            let port = base.rsplit(':').next().unwrap();
            let r = lona_http::get(&ctx, &format!("http://localhost:{port}/named"))
                .await
                .unwrap();
            assert_eq!(r.body_text().unwrap(), "GET /named -\n");
            // Limits.
            let small = Client::new().max_body_bytes(1000);
            let e = small.get(&ctx, &format!("{base}/big")).await.unwrap_err();
            assert!(matches!(e, Error::TooLarge), "{e}");
        })
        .unwrap();
}

/// A server that answers one connection with `answer` after reading the
/// request head (and `content-length` body); the request it read comes
/// back through the channel.
fn scripted(answer: &'static [u8]) -> (SocketAddr, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut got = Vec::new();
        let mut buf = [0; 4096];
        let complete = |got: &[u8]| {
            let text = String::from_utf8_lossy(got);
            let Some(end) = text.find("\r\n\r\n") else {
                return false;
            };
            let len: usize = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map_or(0, |v| v.trim().parse().unwrap());
            got.len() >= end + 4 + len
        };
        while !complete(&got) {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&got).into_owned());
        if !answer.is_empty() {
            let _ = s.write_all(answer);
        } else {
            // Silence: hold the connection until the client gives up.
            let _ = s.read(&mut buf);
        }
    });
    (addr, rx)
}

#[test]
fn what_the_client_sends() {
    let (addr, rx) = scripted(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok");
    let r = rt()
        .block_on(move |ctx| async move {
            let headers = Headers::from([("x-token", "abc"), ("Content-Length", "999")]);
            lona_http::request(
                &ctx,
                Method::Put,
                &format!("http://{addr}/p?q=1"),
                headers,
                b"data",
            )
            .await
        })
        .unwrap()
        .unwrap();
    assert_eq!((r.status, r.body.as_ref()), (201, &b"ok"[..]));
    let req = rx.recv().unwrap();
    assert!(req.starts_with("PUT /p?q=1 HTTP/1.1\r\n"), "{req}");
    assert!(req.contains(&format!("host: {addr}\r\n")), "{req}");
    assert!(req.contains("x-token: abc\r\n"), "{req}");
    assert!(req.contains("content-length: 4\r\n"), "{req}");
    assert!(
        !req.contains("999"),
        "the caller's content-length is not sent: {req}"
    );
    assert!(req.contains("connection: close\r\n"), "{req}");
    assert!(req.ends_with("\r\n\r\ndata"), "{req}");
}

/// The client's answer from a server that sends `answer`.
fn against(answer: &'static [u8], client: Client) -> Result<lona_http::Response, Error> {
    let (addr, _rx) = scripted(answer);
    rt().block_on(move |ctx| async move { client.get(&ctx, &format!("http://{addr}/")).await })
        .unwrap()
}

#[test]
fn response_bodies_by_each_framing() {
    let r = against(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n7\r\n, world\r\n0\r\nt: v\r\n\r\n",
        Client::new(),
    )
    .unwrap();
    assert_eq!(r.body.as_ref(), b"hello, world");
    let r = against(
        b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nall of it, to the end",
        Client::new(),
    )
    .unwrap();
    assert_eq!(
        (r.body.as_ref(), r.header("server")),
        (&b"all of it, to the end"[..], Some("old"))
    );
    let r = against(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nyes",
        Client::new(),
    )
    .unwrap();
    assert_eq!((r.status, r.body.as_ref()), (200, &b"yes"[..]));
    let r = against(
        b"HTTP/1.1 304 Not Modified\r\ncontent-length: 50\r\n\r\n",
        Client::new(),
    )
    .unwrap();
    assert_eq!((r.status, r.body.len()), (304, 0));
}

#[test]
fn every_failure_is_an_error() {
    let e = against(b"this is not http\r\n\r\n", Client::new()).unwrap_err();
    assert!(matches!(e, Error::Response(_)), "{e}");
    let e = against(
        b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort",
        Client::new(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Response(_)), "{e}");
    let e = against(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nxyz\r\n",
        Client::new(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Response(_)), "{e}");
    let e = against(
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: br\r\n\r\n",
        Client::new(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::Response(_)), "{e}");
    let e = against(
        b"HTTP/1.1 200 OK\r\ncontent-length: 99999999999\r\n\r\n",
        Client::new().max_body_bytes(1 << 20),
    )
    .unwrap_err();
    assert!(matches!(e, Error::TooLarge), "{e}");
    let e = against(
        b"HTTP/1.1 200 OK\r\nx: y\r\n",
        Client::new().max_header_bytes(16),
    )
    .unwrap_err();
    assert!(matches!(e, Error::TooLarge | Error::Response(_)), "{e}");
    // Silence: the timeout.
    let e = against(b"", Client::new().timeout(Duration::from_millis(300))).unwrap_err();
    assert!(matches!(e, Error::Timeout), "{e}");
    // Nobody listening.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = rt()
        .block_on(move |ctx| async move {
            lona_http::get(&ctx, &format!("http://127.0.0.1:{port}/")).await
        })
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e}");
    // Not a URL this client takes, or not a request it can send.
    let e = rt()
        .block_on(|ctx| async move { lona_http::get(&ctx, "https://127.0.0.1/").await })
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::Url(_)), "{e}");
    let e = rt()
        .block_on(|ctx| async move {
            let h = Headers::from([("x", "a\r\nb")]);
            lona_http::request(&ctx, Method::Get, "http://127.0.0.1:1/", h, &[]).await
        })
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, Error::Request(_)), "{e}");
}
