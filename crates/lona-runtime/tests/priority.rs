//! Process priorities (`docs/design.md`, D20): max before high before
//! normal and low, low sharing time with normal one slice to eight, the
//! API (spawn options, `set_priority`, `process_info`). Every assertion is
//! about order or counts, never about time.

mod common;

use lona_runtime::{Builder, Ctx, Pid, Priority, Runtime, SpawnOpts};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

fn opts(priority: Priority) -> SpawnOpts {
    SpawnOpts::new().priority(priority)
}

/// Spawn `n` normal processes that count their slices in `slices` and
/// yield, until `stop`; each slice spins for `work` first (so a slice
/// costs something, not to measure anything).
async fn spawn_hogs(
    ctx: &Ctx,
    n: usize,
    work: Duration,
    slices: &Arc<AtomicU64>,
    stop: &Arc<AtomicBool>,
) {
    for _ in 0..n {
        let (slices, stop) = (slices.clone(), stop.clone());
        ctx.spawn(move |ctx| async move {
            while !stop.load(Relaxed) {
                slices.fetch_add(1, Relaxed);
                let t = Instant::now();
                while t.elapsed() < work {
                    std::hint::spin_loop();
                }
                ctx.yield_now().await;
            }
        })
        .await
        .unwrap();
    }
}

/// A pinger and a ponger of priority `prio` do `rounds` round trips; the
/// answer is how many hog slices ran between the first and the last.
async fn ping_pong_hog_slices(
    ctx: &Ctx,
    prio: Priority,
    rounds: u32,
    slices: &Arc<AtomicU64>,
) -> u64 {
    let me = ctx.pid();
    let pong = ctx
        .spawn_opt(opts(prio), |ctx| async move {
            loop {
                let (from, i): (Pid, u32) = ctx.receive().await;
                ctx.send(from, i + 1).await;
            }
        })
        .await
        .unwrap()
        .0;
    let slices = slices.clone();
    ctx.spawn_opt(opts(prio), move |ctx| async move {
        let me2 = ctx.pid();
        let before = slices.load(Relaxed);
        let mut i = 0u32;
        for _ in 0..rounds {
            ctx.send(pong, (me2, i)).await;
            i = ctx.receive::<u32>().await;
        }
        let after = slices.load(Relaxed);
        ctx.send(me, (i, after - before)).await;
    })
    .await
    .unwrap();
    let (i, hogged): (u32, u64) = ctx.receive().await;
    assert_eq!(i, rounds);
    ctx.send_exit(pong, lona_runtime::Reason::Kill).await;
    hogged
}

/// On one worker, nothing normal runs while a high process is runnable:
/// 200 round trips of a high pair among 1,000 yielding normal hogs see
/// no hog slice at all.
#[test]
fn high_pair_runs_before_every_hog_on_one_worker() {
    let rt = rt(1);
    let hogged = rt
        .block_on(|ctx| async move {
            let slices = Arc::new(AtomicU64::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            spawn_hogs(&ctx, 1000, Duration::ZERO, &slices, &stop).await;
            // Let the hogs start (the main process is one of the queue).
            ctx.yield_now().await;
            let h = ping_pong_hog_slices(&ctx, Priority::High, 200, &slices).await;
            stop.store(true, Relaxed);
            h
        })
        .unwrap();
    assert_eq!(
        hogged, 0,
        "hog slices ran while a high process was runnable"
    );
}

/// The brief's case: a 2-worker node, 1,000 normal hogs, a high
/// pinger/ponger doing 200 round trips. Each wake-up of a high process
/// waits at most for the slices the workers are in the middle of, so the
/// hogs get a few slices per round trip (the other worker runs them while
/// one worker plays ping-pong), where a normal pair waits behind a whole
/// local queue of hogs every few round trips (tens of thousands of
/// slices). The bound is loose so a descheduled worker thread cannot make
/// it flaky.
#[test]
fn high_pair_keeps_latency_among_1000_hogs_on_two_workers() {
    // Two workers exactly (the test's subject), whatever LONA_TEST_WORKERS says.
    let rt = Builder::default().workers(2).build().unwrap();
    let hogged = rt
        .block_on(|ctx| async move {
            let slices = Arc::new(AtomicU64::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            spawn_hogs(&ctx, 1000, Duration::from_micros(20), &slices, &stop).await;
            ctx.yield_now().await;
            let h = ping_pong_hog_slices(&ctx, Priority::High, 200, &slices).await;
            stop.store(true, Relaxed);
            h
        })
        .unwrap();
    eprintln!("hog slices during 200 high round trips: {hogged}");
    assert!(
        hogged < 5_000,
        "hogs ran {hogged} slices during 200 round trips"
    );
}

/// A low process is never starved by normal ones, and gets one slice per
/// eight passes over the normal queue (Erlang's RESCHEDULE_LOW): on one
/// worker with 100 yielding normal hogs, each of its slices comes after
/// 8 × 100 hog slices.
#[test]
fn low_is_not_starved_and_runs_one_in_eight() {
    let rt = rt(1);
    let (iterations, hogged) = rt
        .block_on(|ctx| async move {
            let slices = Arc::new(AtomicU64::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let me = ctx.pid();
            let s = slices.clone();
            ctx.spawn_opt(opts(Priority::Low), move |ctx| async move {
                let first = s.load(Relaxed);
                let mut n = 0u64;
                while n < 20 {
                    n += 1;
                    ctx.yield_now().await;
                }
                ctx.send(me, (n, s.load(Relaxed) - first)).await;
            })
            .await
            .unwrap();
            spawn_hogs(&ctx, 100, Duration::ZERO, &slices, &stop).await;
            let r: (u64, u64) = ctx.receive().await;
            stop.store(true, Relaxed);
            r
        })
        .unwrap();
    assert_eq!(iterations, 20);
    // 20 yields: 20 waits of 8 passes of 100 hogs (give or take a pass).
    assert!(
        (20 * 7 * 100..=20 * 9 * 100).contains(&hogged),
        "{hogged} hog slices during 20 low slices"
    );
}

/// A low process makes progress among normal hogs on two workers too.
#[test]
fn low_makes_progress_among_hogs_on_two_workers() {
    // Two workers exactly (the test's subject), whatever LONA_TEST_WORKERS says.
    let rt = Builder::default().workers(2).build().unwrap();
    let done = rt
        .block_on(|ctx| async move {
            let slices = Arc::new(AtomicU64::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            spawn_hogs(&ctx, 200, Duration::ZERO, &slices, &stop).await;
            let me = ctx.pid();
            ctx.spawn_opt(opts(Priority::Low), move |ctx| async move {
                for _ in 0..50 {
                    ctx.yield_now().await;
                }
                ctx.send(me, "low done").await;
            })
            .await
            .unwrap();
            let r: &str = ctx.receive().await;
            stop.store(true, Relaxed);
            r
        })
        .unwrap();
    assert_eq!(done, "low done");
}

/// On one worker, processes spawned in one go first run in priority
/// order: max, high, then normal and low in queue order with the low one
/// passed over while normal work waits.
#[test]
fn first_runs_follow_priority_on_one_worker() {
    let rt = rt(1);
    let order = rt
        .block_on(|ctx| async move {
            let order = Arc::new(Mutex::new(Vec::new()));
            let me = ctx.pid();
            for (name, prio) in [
                ("normal-a", Priority::Normal),
                ("low", Priority::Low),
                ("high", Priority::High),
                ("max", Priority::Max),
                ("normal-b", Priority::Normal),
                ("high-2", Priority::High),
            ] {
                let order = order.clone();
                ctx.spawn_opt(opts(prio), move |ctx| async move {
                    order.lock().unwrap().push(name);
                    ctx.send(me, ()).await;
                })
                .await
                .unwrap();
            }
            for _ in 0..6 {
                ctx.receive::<()>().await;
            }
            let o = order.lock().unwrap().clone();
            o
        })
        .unwrap();
    assert_eq!(
        order,
        ["max", "high", "high-2", "normal-a", "normal-b", "low"]
    );
}

/// `set_priority` returns the old level; `priority` and `process_info`
/// (own and another's) report the current one.
#[test]
fn set_priority_returns_old_and_info_reports_it() {
    let rt = rt(2);
    let seen = rt
        .block_on(|ctx| async move {
            let mut seen = vec![ctx.priority()];
            seen.push(ctx.set_priority(Priority::High).await);
            seen.push(ctx.set_priority(Priority::Low).await);
            seen.push(ctx.set_priority(Priority::Max).await);
            seen.push(ctx.priority());
            seen.push(ctx.process_info(ctx.pid()).await.unwrap().priority);
            seen.push(ctx.set_priority(Priority::Normal).await);
            let me = ctx.pid();
            let child = ctx
                .spawn(move |ctx| async move {
                    ctx.set_priority(Priority::Low).await;
                    ctx.send(me, ()).await;
                    ctx.receive::<()>().await;
                })
                .await
                .unwrap();
            ctx.receive::<()>().await;
            seen.push(ctx.process_info(child).await.unwrap().priority);
            seen
        })
        .unwrap();
    use Priority::*;
    assert_eq!(seen, [Normal, Normal, High, Low, Max, Max, Max, Low]);
}

/// A max process runs, talks and waits like any other; it is chosen
/// before high ones.
#[test]
fn max_priority_process() {
    let rt = rt(2);
    let n = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let (p, _) = ctx
                .spawn_opt(opts(Priority::Max), move |ctx| async move {
                    assert_eq!(ctx.priority(), Priority::Max);
                    let mut sum = 0u64;
                    loop {
                        match ctx.receive::<u64>().await {
                            0 => break,
                            n => sum += n,
                        }
                        ctx.yield_now().await;
                    }
                    ctx.send(me, sum).await;
                })
                .await
                .unwrap();
            for i in 1..=100u64 {
                ctx.send(p, i).await;
            }
            ctx.send(p, 0u64).await;
            ctx.receive::<u64>().await
        })
        .unwrap();
    assert_eq!(n, 5050);
}

/// `spawn_opt` with a priority, together with link and monitor; the
/// default stays normal.
#[test]
fn spawn_opt_with_priority() {
    let rt = rt(2);
    let got = rt
        .block_on(|ctx| async move {
            let wait = |ctx: Ctx| async move {
                ctx.receive::<()>().await;
            };
            let mut got = vec![];
            for prio in [
                Priority::Low,
                Priority::Normal,
                Priority::High,
                Priority::Max,
            ] {
                let (pid, mref) = ctx
                    .spawn_opt(
                        SpawnOpts::new().link(true).monitor(true).priority(prio),
                        wait,
                    )
                    .await
                    .unwrap();
                assert!(mref.is_some());
                let info = ctx.process_info(pid).await.unwrap();
                assert_eq!(info.links, vec![ctx.pid()]);
                got.push(info.priority);
                ctx.send(pid, ()).await;
            }
            let plain = ctx.spawn(wait).await.unwrap();
            got.push(ctx.process_info(plain).await.unwrap().priority);
            ctx.send(plain, ()).await;
            got
        })
        .unwrap();
    use Priority::*;
    assert_eq!(got, [Low, Normal, High, Max, Normal]);
}

/// A low process keeps its priority when another worker steals it: 200
/// low processes spawned on one worker, each yielding a few times and
/// noting the workers it ran on; some run on another worker than the
/// spawner's, and every one is still low there.
#[test]
fn priority_survives_being_stolen() {
    let rt = rt(2);
    let (moved, all_low) = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let home = std::thread::current().name().map(String::from);
            for _ in 0..200 {
                ctx.spawn_opt(opts(Priority::Low), move |ctx| async move {
                    let mut threads = vec![];
                    for _ in 0..5 {
                        threads.push(std::thread::current().name().map(String::from));
                        // Some work, so the queue is long enough to steal from.
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_micros(20) {
                            std::hint::spin_loop();
                        }
                        ctx.yield_now().await;
                    }
                    let low = ctx.priority() == Priority::Low
                        && ctx.process_info(ctx.pid()).await.unwrap().priority == Priority::Low;
                    ctx.send(me, (threads, low)).await;
                })
                .await
                .unwrap();
            }
            let mut moved = 0;
            let mut all_low = true;
            for _ in 0..200 {
                let (threads, low): (Vec<Option<String>>, bool) = ctx.receive().await;
                moved += threads.iter().any(|t| *t != home) as usize;
                all_low &= low;
            }
            (moved, all_low)
        })
        .unwrap();
    assert!(all_low, "a stolen low process lost its priority");
    assert!(moved > 0, "no low process ran on the other worker");
}

/// High processes use every worker: with two workers and two high
/// processes that spin, both run at once (neither waits for the other),
/// seen as each observing the other's progress while it spins.
#[test]
fn high_processes_spread_over_workers() {
    let rt = rt(2);
    let ok = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let counters = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
            for k in 0..2usize {
                let c = counters.clone();
                ctx.spawn_opt(opts(Priority::High), move |ctx| async move {
                    // Spin (never yielding) until the other one has counted
                    // too: only possible if it runs on the other worker.
                    let mut rounds = 0u64;
                    while c[1 - k].load(Relaxed) == 0 && rounds < 2_000_000_000 {
                        c[k].fetch_add(1, Relaxed);
                        rounds += 1;
                    }
                    c[k].fetch_add(1, Relaxed);
                    ctx.send(me, c[1 - k].load(Relaxed) > 0).await;
                })
                .await
                .unwrap();
            }
            ctx.receive::<bool>().await && ctx.receive::<bool>().await
        })
        .unwrap();
    assert!(ok);
}
