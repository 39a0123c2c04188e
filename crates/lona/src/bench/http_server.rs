//! `lona bench http-server PORT`: the HTTP/1.1 "hello" server of
//! `bench/erlang/http.erl` and `bench/go/http_server.go` on the native Rust
//! API (`lona-http`): a process per connection, keep-alive, every request
//! answered `200` with `Content-Type: text/plain` and `Hello, world!`, as
//! the two anchors answer. Listens on 127.0.0.1 as they do; prints `http
//! listening port=PORT` once it accepts, then serves until killed. Load it
//! with `wrk` (`scripts/bench-http.sh`).

use lona_http::{Request, Response};
use lona_runtime::io::TcpListener;
use lona_runtime::Runtime;
use std::io::Write;
use std::net::SocketAddr;

/// The anchors' body.
pub const BODY: &[u8] = b"Hello, world!";

pub fn run(rt: &Runtime, port: u16) -> Result<(), String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("http listening port={port}");
    let _ = std::io::stdout().flush();
    rt.block_on(move |ctx| async move { lona_http::serve(&ctx, listener, hello).await })
        .map_err(|r| format!("the acceptor ended: {r:?}"))
}

fn hello(_: Request) -> Response {
    Response::new(200)
        .with_header("Content-Type", "text/plain")
        .with_body(BODY)
}
