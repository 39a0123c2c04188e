//! A chat server on Lona's native Rust API: a process per client and one
//! room process that broadcasts; the Rust twin of `examples/chat.lona`,
//! with the same lines. The first line a client sends is its name; each
//! further line goes to everyone else as `name: line`.
//!
//! A client's process waits on two things at once, its socket and its
//! mailbox (lines the room sends it), in one future: whichever is ready
//! first is handled (`next_event`). The room monitors each client, so a
//! client that leaves in any way (it closes, its process crashes or is
//! killed) is announced.
//!
//! Run: `cargo run -p lona --example chat -- [PORT]` (0: any; default
//! 7070); prints `chat listening port=PORT`, then serves until killed:
//! `nc 127.0.0.1 7070`.

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::{Ctx, Down, Pid, Runtime};
use std::future::{poll_fn, Future};
use std::io::Write;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

/// What a client tells the room.
enum ToRoom {
    Join(Pid, String),
    Say(Pid, String),
}

/// A line the room sends a client, to write to its socket.
struct Line(String);

/// The longest line a client may send.
const MAX_LINE: usize = 64 * 1024;

/// Accepts on `listener` in this process, forever: starts the room, then
/// a process per client.
pub async fn serve(ctx: &Ctx, listener: TcpListener) {
    let room = ctx
        .spawn(|ctx| async move { room(ctx).await })
        .await
        .expect("the room process");
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let _ = ctx.spawn(move |ctx| client(ctx, room, stream)).await;
            }
            Err(e) => {
                eprintln!("accept: {e}");
                ctx.sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// The room: who is in (in order of joining), and what to send whom.
async fn room(ctx: Ctx) {
    let mut members: Vec<(Pid, String)> = Vec::new();
    loop {
        let msg = ctx.receive_any().await;
        let msg = match msg.downcast::<ToRoom>() {
            Ok(m) => m,
            Err(other) => {
                if let Ok(down) = other.downcast::<Down>() {
                    // A client left, however it left.
                    if let Some(i) = members.iter().position(|(p, _)| *p == down.pid) {
                        let (_, name) = members.remove(i);
                        for (p, _) in &members {
                            ctx.send(*p, Line(format!("* {name} left\n"))).await;
                        }
                    }
                }
                continue;
            }
        };
        match msg {
            ToRoom::Join(pid, name) => {
                ctx.monitor(pid).await;
                for (p, _) in &members {
                    ctx.send(*p, Line(format!("* {name} joined\n"))).await;
                }
                let others = members.len();
                ctx.send(
                    pid,
                    Line(format!("* welcome {name}, {others} others here\n")),
                )
                .await;
                members.push((pid, name));
            }
            ToRoom::Say(pid, text) => {
                let Some((_, name)) = members.iter().find(|(p, _)| *p == pid) else {
                    continue;
                };
                let line = format!("{name}: {text}");
                for (p, _) in members.iter().filter(|(p, _)| *p != pid) {
                    ctx.send(*p, Line(line.clone())).await;
                }
            }
        }
    }
}

/// What a client's process woke up for.
enum Event {
    /// Bytes from the socket (0: it closed), or its error.
    Read(std::io::Result<usize>),
    /// A line from the room.
    Room(Line),
}

/// Waits for the socket or the mailbox, whichever has something first
/// (a message taken is handled; a read not done is simply not done).
async fn next_event(ctx: &Ctx, stream: &TcpStream, buf: &mut [u8]) -> Event {
    let mut from_room = pin!(ctx.receive::<Line>());
    let mut read = pin!(stream.read(buf));
    poll_fn(|cx| {
        if let Poll::Ready(line) = from_room.as_mut().poll(cx) {
            return Poll::Ready(Event::Room(line));
        }
        if let Poll::Ready(r) = read.as_mut().poll(cx) {
            return Poll::Ready(Event::Read(r));
        }
        Poll::Pending
    })
    .await
}

/// Takes the first whole line out of `pending`, if there is one.
fn take_line(pending: &mut Vec<u8>) -> Option<String> {
    let end = pending.iter().position(|&b| b == b'\n')? + 1;
    let line: Vec<u8> = pending.drain(..end).collect();
    Some(String::from_utf8_lossy(&line).into_owned())
}

/// One client: its name first (within a minute), then its lines to the
/// room and the room's lines to it, until it leaves.
async fn client(ctx: Ctx, room: Pid, stream: TcpStream) {
    let mut buf = vec![0u8; 4096];
    let mut pending = Vec::new();
    if stream.write_all(b"name? ").await.is_err() {
        return;
    }
    let name = loop {
        if let Some(line) = take_line(&mut pending) {
            break line.trim().to_owned();
        }
        match ctx
            .timeout(Duration::from_secs(60), stream.read(&mut buf))
            .await
        {
            Ok(Ok(n)) if n > 0 && pending.len() + n <= MAX_LINE => {
                pending.extend_from_slice(&buf[..n])
            }
            _ => return, // closed, failed, too long, or silent
        }
    };
    ctx.send(room, ToRoom::Join(ctx.pid(), name)).await;
    loop {
        while let Some(line) = take_line(&mut pending) {
            ctx.send(room, ToRoom::Say(ctx.pid(), line)).await;
        }
        match next_event(&ctx, &stream, &mut buf).await {
            Event::Room(Line(text)) => {
                if stream.write_all(text.as_bytes()).await.is_err() {
                    return;
                }
            }
            Event::Read(Ok(n)) if n > 0 && pending.len() + n <= MAX_LINE => {
                pending.extend_from_slice(&buf[..n])
            }
            // Closed, failed, or a line too long: the process ends, the
            // socket closes, and the room hears of it from its monitor.
            Event::Read(_) => return,
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = match std::env::args().nth(1) {
        Some(p) => p.parse()?,
        None => 7070,
    };
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    println!("chat listening port={}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let rt = Runtime::new()?;
    rt.block_on(move |ctx| async move { serve(&ctx, listener).await })
        .map_err(|r| format!("the acceptor ended: {r}"))?;
    Ok(())
}
