//! Timers at their edges: dead targets, many timers on one process, joined
//! receive timeouts, extreme delays, names as targets, and cancelling.

mod common;

use lona_runtime::{Builder, Ctx, Down, Reason, Runtime, Timeout, INFINITY, MAX_DELAY};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

fn rt() -> Runtime {
    Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap()
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..5000 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("never: {what}");
}

#[test]
fn start_timer_to_a_dead_process_is_cancelled_at_once() {
    let rt = rt();
    let dead = rt.spawn(|_| async {}).unwrap();
    wait_until("the process ended", || rt.process_count() == 0);
    let t = rt.start_timer(Duration::from_secs(60), dead, vec![0u8; 1000]);
    assert_eq!(rt.pending_timers(), 0, "kept pending with its payload");
    assert_eq!(rt.cancel_timer(t), None);
    // Same from inside a process.
    let r = rt.block_on(move |ctx| async move {
        ctx.start_timer(Duration::from_secs(60), dead, 1u8).await;
        ctx.send_after(Duration::from_secs(60), dead, 2u8).await;
    });
    assert!(r.is_ok());
    assert_eq!(rt.pending_timers(), 0);
}

#[test]
fn many_timers_on_one_process_all_fire_and_all_cancel() {
    let rt = rt();
    const N: u32 = 20_000;
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        for i in 0..N {
            ctx.send_after(Duration::from_millis(1 + (i % 20) as u64), me, i)
                .await;
        }
        let mut sum = 0u64;
        for _ in 0..N {
            sum += ctx.receive::<u32>().await as u64;
        }
        // And as many cancelled by the target's exit.
        let (p, _) = ctx
            .spawn_monitor(|ctx| async move {
                let me = ctx.pid();
                for i in 0..N {
                    ctx.send_after(Duration::from_secs(600), me, i).await;
                }
                ctx.send_exit(me, Reason::from("done")).await;
            })
            .await
            .unwrap();
        let d: Down = ctx.receive().await;
        (sum, d.pid == p)
    });
    assert_eq!(r, Ok(((0..N as u64).sum(), true)));
    wait_until("every timer gone", || rt.pending_timers() == 0);
}

/// Polls two futures at once (a tiny join, to avoid a dependency).
struct Join<A, B>(Option<Pin<Box<A>>>, Option<Pin<Box<B>>>);
impl<A: Future, B: Future> Future for Join<A, B> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if let Some(a) = self.0.as_mut() {
            if a.as_mut().poll(cx).is_ready() {
                self.0 = None;
            }
        }
        if let Some(b) = self.1.as_mut() {
            if b.as_mut().poll(cx).is_ready() {
                self.1 = None;
            }
        }
        if self.0.is_none() && self.1.is_none() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn two_receive_timeouts_armed_at_once_are_both_cancelled_by_a_kill() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let (p, _) = ctx
            .spawn_monitor(move |ctx: Ctx| async move {
                let a = ctx.receive_timeout::<u8>(Duration::from_secs(60));
                let b = ctx.receive_timeout::<u16>(Duration::from_secs(60));
                let armed = async {
                    ctx.send(me, "armed").await;
                };
                Join(
                    Some(Box::pin(Join(Some(Box::pin(a)), Some(Box::pin(b))))),
                    Some(Box::pin(armed)),
                )
                .await;
            })
            .await
            .unwrap();
        ctx.receive::<&str>().await;
        ctx.send_exit(p, Reason::Kill).await;
        ctx.receive::<Down>().await.reason
    });
    assert_eq!(r, Ok(Reason::Killed));
    wait_until("both receive timers cancelled", || rt.pending_timers() == 0);
}

#[test]
fn extreme_delays_never_fire_and_never_wedge_the_timers() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        // Once these fired after about 2 ms (the millisecond count wrapped).
        let t_max = ctx.send_after(Duration::MAX, me, "max").await;
        let t_far = ctx
            .send_after(MAX_DELAY + Duration::from_secs(1), me, "far")
            .await;
        // The furthest delay that does fire goes into the wheel.
        let t_edge = ctx.send_after(MAX_DELAY, me, "edge").await;
        let waited = ctx.receive_timeout::<&str>(INFINITY);
        let early = ctx.receive_timeout::<&str>(Duration::from_millis(30)).await;
        drop(waited);
        // Ordinary timers still fire (the timer thread is not wedged).
        ctx.send_after(Duration::from_millis(5), me, 7u32).await;
        let normal = ctx.receive_timeout::<u32>(Duration::from_secs(10)).await;
        let left_max = ctx.cancel_timer(t_max).await;
        let left_far = ctx.cancel_timer(t_far).await;
        let left_edge = ctx.cancel_timer(t_edge).await.unwrap();
        (early, normal, left_max, left_far, left_edge)
    });
    let (early, normal, left_max, left_far, left_edge) = r.unwrap();
    assert_eq!(early, None, "an extreme delay fired early");
    assert_eq!(normal, Some(7));
    assert_eq!(left_max, Some(Duration::MAX), "infinite: never fires");
    assert_eq!(left_far, Some(Duration::MAX));
    assert!(
        left_edge > MAX_DELAY - Duration::from_secs(60),
        "{left_edge:?}"
    );
    assert_eq!(rt.pending_timers(), 0);
}

#[test]
fn a_receive_with_an_infinite_timeout_arms_no_timer_and_still_receives() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                let got = ctx.receive_timeout::<u32>(INFINITY).await;
                ctx.send(me, got).await;
            })
            .await
            .unwrap();
        ctx.process_info(p).await;
        let handle = ctx.handle();
        let pending = handle.pending_timers();
        ctx.send(p, 5u32).await;
        (pending, ctx.receive::<Option<u32>>().await)
    });
    assert_eq!(r, Ok((0, Some(5))));
}

#[test]
fn timers_can_target_a_registered_name() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        ctx.register("ticker").await.unwrap();
        ctx.send_after(Duration::from_millis(2), "ticker", 1u8)
            .await;
        let t = ctx
            .start_timer(Duration::from_millis(2), "ticker", 2u8)
            .await;
        ctx.handle()
            .send_after(Duration::from_millis(2), "ticker", 3u8);
        // Nobody holds this one: dropped when it fires, as in Erlang.
        ctx.send_after(Duration::from_millis(1), "nobody", 4u8)
            .await;
        let a = ctx.receive::<u8>().await;
        let b = ctx.receive::<u8>().await;
        let to: Timeout<u8> = ctx.receive().await;
        let mut got = vec![a, b];
        got.sort();
        (got, to.tref == t && to.msg == 2)
    });
    assert_eq!(r, Ok((vec![1, 3], true)));
}

#[test]
fn handle_start_timer_and_cancel_report_time_left() {
    let rt = rt();
    let p = rt
        .spawn(|ctx| async move {
            let t: Timeout<&str> = ctx.receive().await;
            assert_eq!(t.msg, "hi");
            ctx.exit(Reason::from("got it")).await;
        })
        .unwrap();
    let long = rt.start_timer(Duration::from_secs(2), p, "never");
    std::thread::sleep(Duration::from_millis(100));
    let left = rt.cancel_timer(long).unwrap();
    assert!(
        left <= Duration::from_millis(1901),
        "{left:?} left of 2 s after 100 ms (from the clock, not the last tick)"
    );
    rt.start_timer(Duration::from_millis(1), p, "hi");
    wait_until("the target received its timeout", || !rt.is_alive(p));
}

/// Pending once, waking itself: a future that makes `Ctx::timeout` arm
/// its timer, then is done at the next poll.
fn once_pending() -> impl Future<Output = ()> {
    let mut polled = false;
    std::future::poll_fn(move |cx| {
        if polled {
            Poll::Ready(())
        } else {
            polled = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
}

/// Long timeouts (`Ctx::timeout`, step 4 of `native/timeout.rs`): a loop
/// of them done before their deadline keeps one timer, armed once and
/// taken over by each (not one timer each, nor none); a timeout that
/// reuses it still ends, never early; a short one is cancelled when
/// done; the kept timer goes with the process.
#[test]
fn a_long_timeouts_timer_is_kept_and_taken_over_by_the_next() {
    let rt = rt();
    let h = rt.handle();
    let r = rt.block_on(|ctx| async move {
        let (p, _) = ctx
            .spawn_monitor(|ctx| async move {
                for _ in 0..200 {
                    ctx.timeout(Duration::from_secs(60), once_pending())
                        .await
                        .expect("done before its deadline");
                }
                let kept = ctx.handle().pending_timers();
                assert_eq!(kept, 1, "one timer for 200 long timeouts");
                // A deadline within the kept timer's slack takes it over,
                // and still ends (the timer had not fired), not early.
                for _ in 0..3 {
                    ctx.timeout(Duration::from_secs(2), once_pending())
                        .await
                        .unwrap();
                }
                let t0 = std::time::Instant::now();
                let r = ctx
                    .timeout(Duration::from_secs(2), std::future::pending::<()>())
                    .await;
                assert!(r.is_err(), "a timeout on a taken-over timer ends");
                assert!(t0.elapsed() >= Duration::from_secs(2), "never early");
                // Short ones are cancelled when done: nothing kept.
                ctx.timeout(Duration::from_millis(500), once_pending())
                    .await
                    .unwrap();
                assert_eq!(ctx.handle().pending_timers(), 0, "a short one is not kept");
                // Kept again, for this process's end to cancel.
                ctx.timeout(Duration::from_secs(3600), once_pending())
                    .await
                    .unwrap();
                assert_eq!(ctx.handle().pending_timers(), 1);
            })
            .await
            .unwrap();
        let d: Down = ctx.receive().await;
        assert_eq!(d.pid, p);
        d.reason
    });
    assert_eq!(r, Ok(Reason::Normal));
    wait_until("the ended process's kept timer is cancelled", || {
        h.pending_timers() == 0
    });
}
