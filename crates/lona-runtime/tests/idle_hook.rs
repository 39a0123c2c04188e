//! `Builder::on_idle`: what an idle worker runs (the node gives memory
//! back there), when, and that a hook's panic is no worker's end.

use lona_runtime::{Builder, Runtime};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// A runtime of `workers` whose idle hook, after `after_ms`, counts its
/// runs.
fn counting(workers: usize, after_ms: u64) -> (Runtime, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let rt = Builder::default()
        .workers(workers)
        .on_idle(Duration::from_millis(after_ms), move || {
            r.fetch_add(1, SeqCst);
        })
        .build()
        .unwrap();
    (rt, runs)
}

/// Waits (up to 10 s) for `f` to hold.
fn eventually(f: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

/// `Builder::on_idle`: each worker runs the hook once when it has had no
/// work for the delay, not again until it has run a process and idled
/// anew; a busy worker never runs it.
#[test]
fn the_idle_hook_runs_once_per_idle_period() {
    let (rt, runs) = counting(2, 100);
    assert!(eventually(|| runs.load(SeqCst) == 2), "each worker, once");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        runs.load(SeqCst),
        2,
        "not again while the idle period lasts"
    );
    drop(rt);
}

/// One worker, busy for 400 ms with slices of a yielding process: it has
/// no idle period, so no hook; idle again afterwards, it runs it again.
#[test]
fn a_busy_worker_does_not_run_the_idle_hook() {
    let (rt, runs) = counting(1, 100);
    assert!(eventually(|| runs.load(SeqCst) == 1));
    let (before, during) = rt
        .block_on(|cx| async move {
            let before = runs.load(SeqCst);
            let end = std::time::Instant::now() + Duration::from_millis(400);
            while std::time::Instant::now() < end {
                cx.yield_now().await;
            }
            (before, runs.load(SeqCst))
        })
        .unwrap();
    assert_eq!(before, during, "the busy worker ran the hook");
}

/// The hook runs again once a worker that ran a process idles anew.
#[test]
fn the_idle_hook_runs_again_after_work() {
    let (rt, runs) = counting(1, 50);
    for k in 1..4 {
        assert!(eventually(|| runs.load(SeqCst) == k), "idle period {k}");
        assert_eq!(rt.block_on(|_| async { 1 }), Ok(1));
    }
}

/// A hook that panics is logged; the workers go on running processes.
#[test]
fn a_panicking_idle_hook_leaves_the_workers_running() {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let rt = Builder::default()
        .workers(1)
        .on_idle(Duration::from_millis(20), move || {
            r.fetch_add(1, SeqCst);
            panic!("a hook that panics");
        })
        .build()
        .unwrap();
    for k in 0..3 {
        assert!(eventually(|| runs.load(SeqCst) > k));
        assert_eq!(rt.block_on(move |_| async move { k * 2 }), Ok(k * 2));
    }
}
