//! Runtime lifecycle: after shutdown, no process, thread or message is left
//! allocated. Its own test binary, so that the thread count is this
//! runtime's alone.

mod common;

use lona_runtime::{Builder, Exit};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn lona_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|t| {
            let comm = std::fs::read_to_string(t.as_ref().unwrap().path().join("comm"))
                .unwrap_or_default();
            comm.starts_with("lona-")
        })
        .count()
}

#[test]
fn shutdown_stops_everything_and_frees_every_message() {
    let drops = Arc::new(AtomicUsize::new(0));
    let made = Arc::new(AtomicUsize::new(0));
    let workers = common::workers(2);
    let rt = Builder::default()
        .workers(workers)
        .shutdown_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    // Threads name themselves when they start: give them a moment.
    for _ in 0..500 {
        if lona_threads() == workers + 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        lona_threads(),
        workers + 2,
        "the workers, the timer thread and the reclaimer"
    );
    let (d, m) = (drops.clone(), made.clone());
    let mk = move || {
        m.fetch_add(1, Ordering::SeqCst);
        Counted(d.clone())
    };
    let mk2 = mk.clone();
    rt.block_on(move |ctx| async move {
        for _ in 0..500 {
            // Waits for a u8 forever, holding a Counted in its future, with
            // Counted messages it never reads in its mailbox.
            let held = mk2();
            let p = ctx
                .spawn(move |ctx| async move {
                    let _held = held;
                    ctx.receive::<u8>().await;
                })
                .await
                .unwrap();
            ctx.send(p, mk2()).await;
            ctx.send_after(Duration::from_secs(3600), p, mk2()).await;
        }
        // Ignores the shutdown signal: must be killed after the timeout.
        let stubborn_state = mk2();
        let me = ctx.pid();
        ctx.spawn(move |ctx| async move {
            let _s = stubborn_state;
            ctx.trap_exit(true).await;
            ctx.send(me, "trapping").await;
            loop {
                ctx.receive::<Exit>().await;
            }
        })
        .await
        .unwrap();
        // Shutdown must find it already trapping.
        ctx.receive::<&str>().await;
        // A receive timer pending in a waiting process.
        ctx.spawn(|ctx| async move {
            ctx.receive_timeout::<u8>(Duration::from_secs(3600)).await;
        })
        .await
        .unwrap();
    })
    .unwrap();
    // The main process may still be finishing as `block_on` returns.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rt.process_count() > 502 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(rt.process_count(), 502);
    let report = rt.shutdown();
    assert_eq!(
        report.killed, 1,
        "only the trapping process outlived the timeout"
    );
    assert_eq!(report.stuck, 0);
    assert_eq!(lona_threads(), 0, "no thread left");
    assert_eq!(
        drops.load(Ordering::SeqCst),
        made.load(Ordering::SeqCst),
        "every message, timer payload and process state was dropped"
    );
}
