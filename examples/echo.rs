//! An echo server on Lona's native Rust API: an acceptor process, and a
//! process per connection that writes back whatever it reads. A
//! connection's socket belongs to its process: when the client leaves,
//! the process ends; when the process ends, however it ends, the socket
//! closes.
//!
//! Run: `cargo run -p lona --example echo -- [PORT]` (0: any; default
//! 7000); prints `echo listening port=PORT`, then serves until killed:
//! `nc 127.0.0.1 7000`.

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Ctx, Runtime};
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// Accepts on `listener` in this process, forever, echoing each
/// connection in a process of its own.
pub async fn serve(ctx: &Ctx, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                // At the process limit the closure is dropped, and the
                // connection with it.
                let _ = ctx.spawn(move |_| echo(stream)).await;
            }
            Err(e) => {
                // Out of descriptors (EMFILE) and the like: wait a
                // little, as Erlang's acceptors do, and go on.
                eprintln!("accept: {e}");
                ctx.sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// One connection: read what comes, write it back, until the end.
async fn echo(stream: TcpStream) {
    let mut buf = vec![0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if stream.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args().nth(1) {
        Some(p) => p.parse()?,
        None => 7000,
    };
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    println!("echo listening port={}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let rt = Runtime::new()?;
    rt.block_on(move |ctx| async move { serve(&ctx, listener).await })
        .map_err(|r| format!("the acceptor ended: {r}"))?;
    Ok(())
}
