//! `/count` (a shared counter, one more per request) and `/slow` (2 s),
//! as an axum user would write them: the twin of `examples/service.rs`'s
//! routes, for the comparison in docs/benchmarks.md.
//!
//! Run: `cargo run --release -- [PORT]` (default 8080).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::{extract::State, routing::get, Router};

async fn count(State(n): State<Arc<AtomicU64>>) -> String {
    format!("{}\n", n.fetch_add(1, Ordering::Relaxed) + 1)
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(2)).await;
    "slow\n"
}

#[tokio::main]
async fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .map(|p| p.parse().expect("a port"))
        .unwrap_or(8080);
    let app = Router::new()
        .route("/count", get(count))
        .route("/slow", get(slow))
        .with_state(Arc::new(AtomicU64::new(0)));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    println!(
        "axum listening port={}",
        listener.local_addr().unwrap().port()
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .unwrap();
}
