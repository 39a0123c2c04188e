//! An HTTP server on `lona-http`: "hello" at `/`, a JSON document at
//! `/json` (with a `name` query parameter), 404 elsewhere; the Rust twin
//! of `examples/http.lona`, answering the same bytes. Each connection is
//! a process of its own, and so is the acceptor.
//!
//! Run: `cargo run -p lona --example http -- [PORT]` (0: any; default
//! 8080); prints `http listening port=PORT`, then serves until killed:
//! `curl http://127.0.0.1:8080/json?name=lona`.

use lona_http::{Request, Response};
use lona_runtime::io::TcpListener;
use lona_runtime::{Ctx, Runtime};
use std::io::Write;
use std::net::SocketAddr;

/// The routes.
pub fn handler(req: Request) -> Response {
    match req.path.as_str() {
        "/" => Response::new(200)
            .with_header("content-type", "text/plain")
            .with_body(&b"hello\n"[..]),
        "/json" => {
            let name = req.query_param("name").unwrap_or_else(|| "world".into());
            // A JSON string literal for any name (quotes, backslashes and
            // control characters escaped).
            let name = serde_json::Value::String(name).to_string();
            let method = req.method.as_str().to_ascii_lowercase();
            Response::new(200)
                .with_header("content-type", "application/json")
                .with_body(
                    format!("{{\"hello\": {name}, \"method\": \"{method}\"}}\n").into_bytes(),
                )
        }
        _ => Response::new(404).with_body(&b"not found\n"[..]),
    }
}

/// Serves [`handler`] on `listener` in this process, forever.
pub async fn serve(ctx: &Ctx, listener: TcpListener) {
    lona_http::serve(ctx, listener, handler).await
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args().nth(1) {
        Some(p) => p.parse()?,
        None => 8080,
    };
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    println!("http listening port={}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let rt = Runtime::new()?;
    rt.block_on(move |ctx| async move { serve(&ctx, listener).await })
        .map_err(|r| format!("the acceptor ended: {r}"))?;
    Ok(())
}
