//! A real protocol crate over the sockets' traits: hyper 1.x, its HTTP/1.1
//! server and client, inside Lona processes, on `lona_runtime::io`'s
//! `TcpStream` through hyper-util's `TokioIo` (tokio's `AsyncRead` and
//! `AsyncWrite`, the `tokio` feature; enabled for these tests by the
//! crate's dev-dependency on itself). No tokio runtime runs: hyper's
//! futures are polled by the processes, woken by the reactor and by each
//! other. On 127.0.0.1 only.

mod common;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Builder, Ctx, Runtime};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

fn rt() -> Runtime {
    Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap()
}

/// The hyper service: echoes the body, says what it got in headers;
/// `/missing` is a 404.
async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().to_string();
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let test = req
        .headers()
        .get("x-test")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = req.into_body().collect().await?.to_bytes();
    let status = if path == "/missing" { 404 } else { 200 };
    Ok(Response::builder()
        .status(status)
        .header("x-method", method)
        .header("x-path", path)
        .header("x-query", query)
        .header("x-test", test)
        .body(Full::new(body))
        .unwrap())
}

/// hyper's HTTP/1.1 server: this process accepts `conns` connections and
/// serves each in a process of its own.
async fn hyper_server(ctx: &Ctx, listener: TcpListener, conns: usize) {
    for _ in 0..conns {
        let (stream, _) = listener.accept().await.unwrap();
        ctx.spawn(move |_| async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), hyper::service::service_fn(handle));
            conn.await.unwrap();
        })
        .await
        .unwrap();
    }
}

/// Starts the server in a process of `rt`; its address.
fn start(rt: &Runtime, conns: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.handle()
        .spawn(move |ctx| async move { hyper_server(&ctx, listener, conns).await })
        .unwrap();
    addr
}

#[test]
fn hyper_client_and_server_in_processes() {
    let rt = rt();
    let addr = start(&rt, 1);
    let done = rt
        .block_on(move |ctx| async move {
            let stream = TcpStream::connect(addr).await.unwrap();
            let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .unwrap();
            // The connection is driven by a process of its own; this one
            // sends. They wake each other through hyper's channels.
            ctx.spawn(move |_| async move { conn.await.unwrap() })
                .await
                .unwrap();
            let mut seen = 0;
            // Keep-alive: every request on the one connection.
            for i in 0..10usize {
                // Bodies up to 1 MiB: many reads and writes each way.
                let body: Vec<u8> = (0..i * 100_000 + 1).map(|k| (k * 7 + i) as u8).collect();
                let req = Request::builder()
                    .method(if i % 2 == 0 { "POST" } else { "PUT" })
                    .uri(format!("/item/{i}?q={i}"))
                    .header("host", addr.to_string())
                    .header("x-test", format!("value {i}"))
                    .body(Full::new(Bytes::from(body.clone())))
                    .unwrap();
                let resp = sender.send_request(req).await.unwrap();
                assert_eq!(resp.status(), 200);
                let h = resp.headers();
                assert_eq!(h["x-method"], if i % 2 == 0 { "POST" } else { "PUT" });
                assert_eq!(h["x-path"], format!("/item/{i}"));
                assert_eq!(h["x-query"], format!("q={i}"));
                assert_eq!(h["x-test"], format!("value {i}"));
                let back = resp.into_body().collect().await.unwrap().to_bytes();
                assert_eq!(back.as_ref(), &body[..], "request {i}");
                seen += 1;
            }
            let req = Request::get("/missing")
                .header("host", addr.to_string())
                .body(Full::new(Bytes::new()))
                .unwrap();
            assert_eq!(sender.send_request(req).await.unwrap().status(), 404);
            seen
        })
        .unwrap();
    assert_eq!(done, 10);
}

#[test]
fn raw_bytes_to_the_hyper_server() {
    let rt = rt();
    let addr = start(&rt, 1);
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // A chunked request and a pipelined one behind it, in one write.
    s.write_all(
        b"POST /raw?a=b HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n\
          5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n\
          GET /second HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
    )
    .unwrap();
    let mut got = String::new();
    s.read_to_string(&mut got).unwrap();
    let first = got.find("HTTP/1.1 200 OK\r\n").unwrap();
    let second = got.rfind("HTTP/1.1 200 OK\r\n").unwrap();
    assert!(first < second, "two responses: {got}");
    let (one, two) = got.split_at(second);
    assert!(one.contains("x-method: POST\r\n"), "{one}");
    assert!(one.contains("x-path: /raw\r\n"), "{one}");
    assert!(one.contains("x-query: a=b\r\n"), "{one}");
    assert!(one.ends_with("\r\n\r\nhello world"), "{one}");
    assert!(two.contains("x-path: /second\r\n"), "{two}");
    assert!(two.ends_with("\r\n\r\n"), "{two}");
}
