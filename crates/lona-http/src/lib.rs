//! HTTP/1.1 for Lona's native Rust processes: a server with a process per
//! connection, and a small client, on [`lona_runtime::io`]'s sockets and
//! the [`httparse`](https://docs.rs/httparse) parser.
//!
//! ```
//! use lona_http::{HttpServer, Request, Response};
//! use lona_runtime::{io::TcpListener, Runtime};
//!
//! let rt = Runtime::builder().workers(2).build().unwrap();
//! let got = rt.block_on(|ctx| async move {
//!     let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
//!     let addr = listener.local_addr().unwrap();
//!     // The acceptor in a process of its own; each connection in another.
//!     HttpServer::new()
//!         .spawn(&ctx, listener, |req: Request| match req.path.as_str() {
//!             "/" => Response::text("hello\n"),
//!             "/json" => Response::json(serde_json::json!({
//!                 "hello": req.query_param("name").unwrap_or_else(|| "world".into()),
//!             })),
//!             _ => Response::not_found(),
//!         })
//!         .await
//!         .unwrap();
//!     let resp = lona_http::get(&ctx, &format!("http://{addr}/json?name=lona")).await.unwrap();
//!     (resp.status, resp.body_text().unwrap().to_owned())
//! });
//! assert_eq!(got.unwrap(), (200, r#"{"hello":"lona"}"#.to_owned()));
//! ```
//!
//! # The server
//! [`serve`] (or [`HttpServer::serve`] with limits, [`HttpServer::spawn`]
//! for an acceptor process of its own) accepts on a
//! [`TcpListener`](lona_runtime::io::TcpListener) and spawns a process per
//! connection, which reads requests, calls the [`Handler`] (any `Fn(Request)
//! -> Response`, an `async` one, one given the connection's `Ctx` with
//! [`WithCtx`], or a [`Router`] of them) and writes the responses, with
//! keep-alive, pipelining, `content-length` and chunked request bodies,
//! and limits: 64 KiB of head (431), 8 MiB of body (413), 60 s idle. A
//! malformed request is answered 400, a transfer coding other than chunked
//! 501, and the connection closes; a handler that panics answers 500 and
//! ends its connection's process only. The rules are in `server.rs`'s
//! module doc.
//!
//! A [`Request`] arrives whole (its body in memory, de-chunked); a
//! [`Response`] is a status, [`Headers`] and a body the server frames with
//! `content-length` (its head and a small body go out in one write).
//!
//! # The client
//! [`get`] and [`request`] (or a [`Client`] with a timeout and limits)
//! send one request over a fresh connection and return the [`Response`],
//! its body read by `content-length`, chunked, or to the end.
//!
//! # Files
//! - `server.rs`: [`HttpServer`], the acceptor and the connection loop;
//! - `handler.rs`: [`Handler`] and its closure forms ([`Async`],
//!   [`WithCtx`], [`boxed`]);
//! - `router.rs`: [`Router`], by method and path pattern;
//! - `client.rs`: [`Client`], [`get`], [`request`], [`Error`];
//! - `request.rs`, `response.rs`, `headers.rs`: the message types;
//! - `body.rs`: body framing and reading (by length, chunked, to the end);
//! - `wire.rs`: writing heads, header checks, the `date` header;
//! - `io.rs`: a connection's read and write buffers, with timeouts.

// No unsafe code here; should some come, each block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]
#![forbid(unsafe_code)]

mod body;
mod client;
mod handler;
mod headers;
mod io;
mod request;
mod response;
mod router;
mod server;
mod wire;

pub use client::{get, request, Client, Error, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT};
pub use handler::{boxed, Async, CtxFn, Handler, ResponseFuture, WithCtx};
pub use headers::{Headers, Method, Version};
pub use request::{form_decode, query_pairs, Request};
pub use response::{reason, Json, Response};
pub use router::Router;
/// The old name of [`HttpServer`], kept working: `lona_otp::Server` is
/// the gen_server, and two `Server`s in one program were one too many.
#[deprecated(
    since = "0.1.0",
    note = "renamed `HttpServer` (`lona_otp::Server` is the gen_server)"
)]
pub type Server = HttpServer;

pub use server::{
    serve, HttpServer, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_HEADER_BYTES,
    MAX_HEADERS,
};
