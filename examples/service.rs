//! A small supervised service, end to end, on `lona-runtime`, `lona-otp`,
//! `lona-http` and `lona-vm`:
//!
//! - a counter, a `lona_otp::Server`, and a Lonala `lona.server` keeping
//!   the last tick, both under a `Supervisor` built with `ends_node()` (if
//!   it gives up, `main` returns an error instead of serving nothing);
//! - a native ticker process casting `[:tick n]` to the Lonala server
//!   every 100 ms (`lona_vm::otp`: no glue, no `lona-term`);
//! - an HTTP `Router`: `GET /count` calls the counter (each request adds
//!   one), `GET /ticks` calls the Lonala server, `GET /slow` waits 2 s
//!   with `ctx.sleep` (its connection's process waits; the others go on);
//! - SIGTERM or Ctrl-C (`Handle::notify_signals`): stop accepting, stop
//!   the supervision tree in order, exit with status 0.
//!
//! Run: `cargo run -p lona --example service -- [PORT]` (0: any; default
//! 8080); prints `service listening port=PORT` once it serves, then
//! `curl http://127.0.0.1:8080/count`.

use std::error::Error;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use lona_http::{HttpServer, Request, Response, Router, WithCtx};
use lona_otp::{
    Answer, ChildSpec, ReplyTo, Server, ServerRef, Strategy, Supervisor, SupervisorRef,
};
use lona_runtime::io::TcpListener;
use lona_runtime::os_signal::{OsSignal, SIGINT, SIGTERM};
use lona_runtime::{Ctx, Pid, Reason, Runtime};
use lona_vm::{eval_str, otp, Env};
use serde::Serialize;

/// Errors of the service's start, sendable out of its process.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// The counter: each call adds one and answers the new count.
pub struct Counter(u64);

impl Server for Counter {
    type Call = ();
    type Reply = u64;
    type Cast = ();
    type Info = ();

    async fn handle_call(&mut self, _: &Ctx, _: (), _: ReplyTo<u64>) -> Answer<u64> {
        self.0 += 1;
        Answer::Reply(self.0)
    }
}

/// The Lonala side: a `lona.server` holding the last tick it was sent.
const TICKS: &str = r#"
(ns ticks)
(defn init [_] [:ok 0])
(defn handle-cast [msg _] (match msg [:tick n] [:noreply n]))
(defn handle-call [msg _from n] (match msg :last [:reply n n]))
"#;

/// What Rust sends the Lonala server: `[:tick n]` and `:last`.
#[derive(Serialize)]
enum Ticks {
    Tick(u64),
    Last,
}

/// The ticker: a native process feeding the Lonala server.
async fn ticker(ctx: Ctx) {
    for n in 1.. {
        ctx.sleep(Duration::from_millis(100)).await;
        // A cast to a server being restarted is dropped, never an error.
        let _ = otp::cast(&ctx, "ticks", &Ticks::Tick(n)).await;
    }
}

async fn count(ctx: &Ctx, _: Request) -> Response {
    match ServerRef::<Counter>::named("counter").call(ctx, ()).await {
        Ok(n) => Response::text(format!("{n}\n")),
        Err(e) => Response::text(format!("{e}\n")).with_status(503),
    }
}

async fn ticks(ctx: &Ctx, _: Request) -> Response {
    match otp::call::<u64>(ctx, "ticks", &Ticks::Last).await {
        Ok(n) => Response::text(format!("{n}\n")),
        Err(e) => Response::text(format!("{e}\n")).with_status(503),
    }
}

async fn slow(ctx: &Ctx, _: Request) -> Response {
    ctx.sleep(Duration::from_secs(2)).await;
    Response::text("slow\n")
}

/// The routes.
pub fn router() -> Router {
    Router::new()
        .get("/count", WithCtx(count))
        .get("/ticks", WithCtx(ticks))
        .get("/slow", WithCtx(slow))
}

/// A node's Lonala environment with the `ticks` namespace loaded.
pub fn lonala() -> Result<Arc<Env>, BoxError> {
    let env = Env::stdout();
    eval_str(&env, "ticks.lona", TICKS)?;
    Ok(env)
}

/// Starts the supervision tree and the acceptor on `listener`: the
/// tree's handle and the acceptor's pid.
pub async fn start(
    ctx: &Ctx,
    env: &Arc<Env>,
    listener: TcpListener,
) -> Result<(SupervisorRef, Pid), BoxError> {
    let sup = Supervisor::new(Strategy::OneForOne)
        .child(ChildSpec::server("counter", Some("counter"), || Counter(0)))
        .child(otp::server_child_spec(
            "ticks",
            env,
            "ticks",
            (),
            Some("ticks"),
        )?)
        .child(ChildSpec::worker("ticker", ticker).depends_on("ticks"))
        .ends_node()
        // Not linked: its orderly stop on SIGTERM must not end this
        // process; giving up still does (`ends_node`).
        .start(ctx, None)
        .await?;
    // The acceptor is not in the tree: the listener is bound once, by
    // `main`, and is the acceptor's alone.
    let acceptor = HttpServer::new().spawn(ctx, listener, router()).await?;
    Ok((sup, acceptor))
}

fn main() -> Result<(), Box<dyn Error>> {
    let port: u16 = match std::env::args().nth(1) {
        Some(p) => p.parse()?,
        None => 8080,
    };
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    let port = listener.local_addr()?.port();
    let env = lonala().map_err(|e| e.to_string())?;
    let rt = Runtime::new()?;
    let signal = rt.block_on(move |ctx| async move {
        // Kept for the program's life: SIGTERM and SIGINT come here.
        let _signals = ctx.handle().notify_signals(&[SIGTERM, SIGINT], ctx.pid())?;
        let (sup, acceptor) = start(&ctx, &env, listener).await?;
        println!("service listening port={port}");
        std::io::stdout().flush()?;
        let signal: OsSignal = ctx.receive().await;
        // In order: no new connections, then the tree (its children
        // stopped last to first: the ticker before the server it feeds).
        ctx.send_exit(acceptor, Reason::Shutdown).await;
        sup.stop(&ctx).await?;
        Ok::<_, BoxError>(signal)
    });
    // The main process's end (a supervisor that gave up ends it), then
    // its own result.
    let signal = signal?.map_err(|e| e.to_string())?;
    println!("stopped by {}", signal.name().unwrap_or("a signal"));
    rt.shutdown();
    Ok(())
}
