//! `Ctx::sleep`: the mailbox is left alone, zero and infinite delays,
//! cancelling by drop and by the process being killed.

mod common;

use lona_runtime::{Builder, Down, Elapsed, Reason, Runtime, INFINITY};
use std::time::{Duration, Instant};

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

/// Messages sent before and during a sleep are all still there after it,
/// in their order; their arrival wakes the process but does not end the
/// sleep before its delay (the one timing claim: never early).
#[test]
fn sleep_leaves_the_mailbox_alone_and_never_ends_early() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let sleeper = ctx
            .spawn(move |ctx| async move {
                let own = ctx.pid();
                for i in 0..3u32 {
                    ctx.send(own, i).await;
                }
                ctx.send(me, "sleeping").await;
                let start = Instant::now();
                ctx.sleep(Duration::from_millis(100)).await;
                let slept = start.elapsed();
                let mut got = Vec::new();
                for _ in 0..1000 {
                    got.push(ctx.receive::<u32>().await);
                }
                let stray = ctx.receive_timeout::<u32>(Duration::ZERO).await;
                ctx.send(me, (slept, got, stray)).await;
            })
            .await
            .unwrap();
        assert_eq!(ctx.receive::<&str>().await, "sleeping");
        for i in 3..1000u32 {
            ctx.send(sleeper, i).await;
        }
        ctx.receive::<(Duration, Vec<u32>, Option<u32>)>().await
    });
    let (slept, got, stray) = r.unwrap();
    assert!(
        slept >= Duration::from_millis(100),
        "ended early: {slept:?}"
    );
    assert_eq!(
        got,
        (0..1000).collect::<Vec<_>>(),
        "messages lost or reordered"
    );
    assert_eq!(stray, None);
}

/// `sleep(ZERO)` holds no timer and leaves the mailbox alone; a loop of
/// them is still preempted: on one worker, another process runs during it.
#[test]
fn sleep_zero_completes_and_is_preemptible() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        ctx.send(me, 7u64).await;
        ctx.sleep(Duration::ZERO).await;
        let timers = ctx.handle().pending_timers();
        ctx.spawn(move |ctx| async move { ctx.send(me, "ran").await })
            .await
            .unwrap();
        let mut rounds = 0u32;
        let other_ran = loop {
            ctx.sleep(Duration::ZERO).await;
            rounds += 1;
            if rounds.is_multiple_of(64)
                && ctx.receive_timeout::<&str>(Duration::ZERO).await.is_some()
            {
                break true;
            }
            if rounds == 1_000_000 {
                break false;
            }
        };
        let kept = ctx.receive_timeout::<u64>(Duration::ZERO).await;
        (timers, other_ran, kept)
    });
    assert_eq!(r, Ok((0, true, Some(7))));
}

/// A sleep of `Duration::MAX` (or `INFINITY`) neither panics nor ends, and
/// holds no timer; the process is killed out of it.
#[test]
fn sleep_max_never_ends_and_is_killable() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let (p, mref) = ctx
            .spawn_monitor(move |ctx| async move {
                ctx.send(me, "sleeping").await;
                ctx.sleep(Duration::MAX).await;
                ctx.send(me, "woke").await;
            })
            .await
            .unwrap();
        assert_eq!(ctx.receive::<&str>().await, "sleeping");
        // Still asleep after a while (and holding no timer).
        let early = ctx
            .timeout(Duration::from_millis(20), ctx.receive::<&str>())
            .await;
        let timers = ctx.handle().pending_timers();
        ctx.send_exit(p, Reason::Kill).await;
        let down = ctx.receive_where(move |d: &Down| d.mref == mref).await;
        let late = ctx.receive_timeout::<&str>(Duration::ZERO).await;
        (early, timers, down.pid == p, down.reason, late)
    });
    assert_eq!(r, Ok((Err(Elapsed), 0, true, Reason::Killed, None)));
}

/// Killed while sleeping on a finite delay: the process ends at once and
/// its timer is cancelled with it.
#[test]
fn a_killed_sleeper_leaves_no_timer() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let (p, mref) = ctx
            .spawn_monitor(move |ctx| async move {
                ctx.sleep(Duration::from_secs(3600)).await;
                ctx.send(me, "woke").await;
            })
            .await
            .unwrap();
        let h = ctx.handle();
        let mut armed = false;
        for _ in 0..100_000 {
            if h.pending_timers() == 1 {
                armed = true;
                break;
            }
            ctx.yield_now().await;
        }
        ctx.send_exit(p, Reason::Kill).await;
        let down = ctx.receive_where(move |d: &Down| d.mref == mref).await;
        let mut left = h.pending_timers();
        for _ in 0..100_000 {
            if left == 0 {
                break;
            }
            ctx.yield_now().await;
            left = h.pending_timers();
        }
        (armed, down.reason, left)
    });
    assert_eq!(r, Ok((true, Reason::Killed, 0)));
}

/// A sleep dropped before its end (here by `Ctx::timeout`) cancels its
/// timer; an infinite one is dropped the same way; a short one inside an
/// infinite deadline completes.
#[test]
fn a_dropped_sleep_cancels_its_timer() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let long = ctx
            .timeout(
                Duration::from_millis(5),
                ctx.sleep(Duration::from_secs(3600)),
            )
            .await;
        let after_long = ctx.handle().pending_timers();
        let inf = ctx
            .timeout(Duration::from_millis(5), ctx.sleep(INFINITY))
            .await;
        let short = ctx
            .timeout(Duration::MAX, ctx.sleep(Duration::from_millis(2)))
            .await;
        let after_all = ctx.handle().pending_timers();
        (long, after_long, inf, short, after_all)
    });
    assert_eq!(r, Ok((Err(Elapsed), 0, Err(Elapsed), Ok(()), 0)));
}

/// Many processes sleeping at once, each on its own timer, all wake.
#[test]
fn many_sleepers_all_wake() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        const N: u32 = 2_000;
        for i in 0..N {
            ctx.spawn(move |ctx| async move {
                ctx.sleep(Duration::from_millis(1 + (i % 17) as u64)).await;
                ctx.send(me, i).await;
            })
            .await
            .unwrap();
        }
        let mut seen = vec![false; N as usize];
        for _ in 0..N {
            seen[ctx.receive::<u32>().await as usize] = true;
        }
        seen.iter().all(|s| *s)
    });
    assert_eq!(r, Ok(true));
}
