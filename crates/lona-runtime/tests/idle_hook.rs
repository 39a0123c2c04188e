//! `Builder::on_idle`: what an idle worker runs (the node gives memory
//! back there), when, and that a hook's panic is no worker's end.

use lona_runtime::Builder;
use std::time::Duration;

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
/// anew; a busy runtime never runs it.
#[test]
fn the_idle_hook_runs_once_per_idle_period() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let rt = Builder::default()
        .workers(2)
        .on_idle(Duration::from_millis(100), move || {
            r.fetch_add(1, SeqCst);
        })
        .build()
        .unwrap();
    assert!(eventually(|| runs.load(SeqCst) == 2), "each worker, once");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        runs.load(SeqCst),
        2,
        "not again while the idle period lasts"
    );
    // Busy for 400 ms with slices of a yielding process: a worker running
    // it has no idle period of 100 ms, the other may have one.
    let busy = rt.block_on(|cx| async move {
        let end = std::time::Instant::now() + Duration::from_millis(400);
        let mut n = 0u64;
        while std::time::Instant::now() < end {
            cx.yield_now().await;
            n += 1;
        }
        n
    });
    assert!(busy.unwrap() > 0);
    let during = runs.load(SeqCst);
    assert!(during <= 3, "the busy worker ran the hook: {during}");
    assert!(
        eventually(|| runs.load(SeqCst) > during),
        "idle again after running: the hook runs again"
    );
}

/// A hook that panics is logged; the workers go on running processes.
#[test]
fn a_panicking_idle_hook_leaves_the_workers_running() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
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
