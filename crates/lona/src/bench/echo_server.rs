//! `lona bench echo-server PORT`: the echo server of `bench/erlang/echo.erl`
//! on the native Rust API: a process per connection, reading what comes
//! and writing it back. Prints `echo listening port=PORT` once it accepts,
//! then serves until killed. Drive it with `bench/loadgen.go`.

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Ctx, Runtime};
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

pub fn run(rt: &Runtime, port: u16) -> Result<(), String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("echo listening port={port}");
    let _ = std::io::stdout().flush();
    rt.block_on(move |ctx| async move { accept_loop(&ctx, listener).await })
        .map_err(|r| format!("the acceptor ended: {r:?}"))
}

async fn accept_loop(ctx: &Ctx, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((s, _)) => {
                let _ = s.set_nodelay(true);
                if ctx.spawn(move |_| connection(s)).await.is_err() {
                    // At the process limit: the connection is dropped.
                }
            }
            Err(e) => {
                // Out of descriptors (EMFILE) and the like: wait a little,
                // as Erlang's acceptors do, and go on.
                eprintln!("accept: {e}");
                let _ = ctx
                    .timeout(Duration::from_millis(10), std::future::pending::<()>())
                    .await;
            }
        }
    }
}

async fn connection(s: TcpStream) {
    // 2 KB: an idle connection's buffer is most of what it costs.
    let mut buf = vec![0u8; 2048];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if s.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}
