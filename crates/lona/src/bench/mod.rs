//! The benchmark workloads of `bench/README.md`, written against
//! the native Rust API. Each prints exactly one line
//! `<workload> key=value ...`, with the same parameters as the Erlang
//! versions in `bench/erlang/anchors.erl` (`bench/erlang/otp.erl`, with
//! real `gen_server` and `supervisor`, for `call`, `supstart` and
//! `suprestart`).

mod call;
mod echo_server;
mod fair;
mod fanin;
mod gc;
mod http_server;
mod mesh;
mod pairs;
mod pingpong;
mod restart;
mod ring;
mod selective;
mod skynet;
mod spawn;
mod suprestart;
mod supstart;
mod xcore;

use lona_runtime::{Builder, Runtime};

/// Servers: run until killed, on the port given after the name
/// (`lona bench echo-server 7000`, `lona bench http-server 8080`); not
/// part of `all`.
pub const SERVERS: &[&str] = &["echo-server", "http-server"];

/// The runtime a workload runs on: `workers` worker threads (default: one
/// per core), pinned to cores when `pin`.
fn runtime(workers: Option<usize>, pin: bool) -> Result<Runtime, String> {
    let mut b = Builder::default().process_limit(4 << 20).pin_workers(pin);
    if let Some(w) = workers {
        b = b.workers(w);
    }
    b.build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// Runs the server `name` on `port` (0: one the system picks).
pub fn serve(name: &str, port: u16, workers: Option<usize>, pin: bool) -> Result<(), String> {
    let rt = runtime(workers, pin)?;
    match name {
        "echo-server" => echo_server::run(&rt, port),
        "http-server" => http_server::run(&rt, port),
        other => Err(format!("unknown server {other:?}; one of {SERVERS:?}")),
    }
}

/// Workload names, in the order `all` runs them.
pub const NAMES: &[&str] = &[
    "spawn",
    "skynet",
    "ring",
    "pingpong",
    "fanin",
    "fair",
    "selective",
    "restart",
    "gc",
    "call",
    "supstart",
    "suprestart",
    "pairs",
    "mesh",
];

pub fn run(name: &str, workers: Option<usize>, pin: bool) -> Result<(), String> {
    if name == "all" {
        for n in NAMES {
            run(n, workers, pin)?;
        }
        return Ok(());
    }
    let make = || runtime(workers, pin);
    match name {
        "spawn" => spawn::run(&make()?),
        "skynet" => skynet::run(&make()?),
        "ring" => ring::run(&make()?),
        "pingpong" => pingpong::run(&make()?),
        "fanin" => fanin::run(&make()?),
        "fair" => fair::run(&make()?),
        "selective" => selective::run(&make()?),
        "restart" => restart::run(&make()?),
        "call" => call::run(&make()?),
        "supstart" => supstart::run(&make()?),
        "suprestart" => suprestart::run(&make()?),
        "pairs" => pairs::run(&make()?),
        "mesh" => mesh::run(&make()?),
        "gc" => {
            gc::run();
            Ok(())
        }
        // Not in `NAMES` (nor `all`): a figure of the host, not of Lona.
        "xcore" => xcore::run(),
        other => Err(format!(
            "unknown workload {other:?}; one of {NAMES:?} or all"
        )),
    }
}

/// Resident set size of this program in bytes.
pub fn rss_bytes() -> u64 {
    lona_vm::introspect::resident_bytes() as u64
}

/// Milliseconds with one decimal, as the Erlang anchors print them.
pub fn ms(d: std::time::Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// Turn a main process's failure into the command's error.
pub fn main_failed(r: lona_runtime::Reason) -> String {
    format!("the benchmark's main process failed: {r}")
}
