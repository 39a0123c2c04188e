//! Erlang's rules where the runtime once differed (checked against the
//! Erlang documentation): ordering of every send path, `is_process_alive`
//! after an exit signal from the same caller, link/unlink races, names
//! released before anyone can see the process dead, every call a
//! preemption point, and a woken process not stuck behind a long step.

mod common;

use lona_runtime::{Builder, Ctx, Down, Exit, Pid, Reason, Runtime};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

fn run<T: Send + 'static, Fut: Future<Output = T> + Send + 'static>(
    workers: usize,
    f: impl FnOnce(Ctx) -> Fut,
) -> T {
    rt(workers)
        .block_on(f)
        .expect("main process ended abnormally")
}

const SAFETY_NET: Duration = Duration::from_secs(20);

/// A process that waits for `()` and ends.
async fn idle(ctx: Ctx) {
    ctx.receive::<()>().await;
}

// --- ordering on every send path --------------------------------------------

#[test]
fn send_then_handle_send_from_one_process_keep_their_order() {
    let got = run(2, |ctx| async move {
        let me = ctx.pid();
        let b = ctx
            .spawn(move |ctx| async move {
                let x: u32 = ctx.receive().await;
                let y: u32 = ctx.receive().await;
                ctx.send(me, (x, y)).await;
            })
            .await
            .unwrap();
        ctx.send(b, 1u32).await;
        ctx.handle().send(b, 2u32);
        ctx.receive::<(u32, u32)>().await
    });
    assert_eq!(got, (1, 2));
}

#[test]
fn an_info_reply_never_overtakes_an_earlier_message() {
    struct M1;
    struct Go;
    for _ in 0..20 {
        let in_order = run(2, |ctx| async move {
            let me = ctx.pid();
            let p = ctx
                .spawn(move |ctx| async move {
                    ctx.receive::<Go>().await;
                    ctx.send(me, M1).await;
                    // This drain answers the info request; the step then
                    // waits (its batched M1 would go out only now).
                    ctx.receive_timeout::<()>(Duration::from_millis(100)).await;
                })
                .await
                .unwrap();
            ctx.send(p, Go).await;
            // Usually p takes Go (and sends M1) before the request comes.
            ctx.receive_timeout::<()>(Duration::from_millis(1)).await;
            let info = ctx.process_info(p).await.expect("p is alive");
            // If p answered with Go still in its mailbox, it answered
            // before sending M1, and M1 may rightly come later (both
            // signals arrived in one drain). Otherwise M1 was sent before
            // the reply: it must already be here.
            info.message_queue_len == 1 || ctx.receive_timeout::<M1>(Duration::ZERO).await.is_some()
        });
        assert!(in_order, "the info reply overtook M1");
    }
}

// --- is_alive after an exit signal from the same caller ---------------------

#[test]
fn is_alive_after_kill_from_the_same_process_is_false() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let mut alive_after = 0;
        for _ in 0..50 {
            let p = ctx.spawn(idle).await.unwrap();
            ctx.send_exit(p, Reason::Kill).await;
            if ctx.is_alive(p).await {
                alive_after += 1;
            }
            // Another reason to an idle, non-trapping target ends it too.
            let q = ctx.spawn(idle).await.unwrap();
            ctx.send_exit(q, Reason::from("bye")).await;
            if ctx.is_alive(q).await {
                alive_after += 1;
            }
            // And one that traps exits stays alive.
            let t = ctx
                .spawn(|ctx| async move {
                    ctx.trap_exit(true).await;
                    ctx.receive::<()>().await;
                })
                .await
                .unwrap();
            ctx.process_info(t).await; // it has set the flag
            ctx.send_exit(t, Reason::from("bye")).await;
            assert!(ctx.is_alive(t).await, "a trapping process survives");
            ctx.send(t, ()).await;
        }
        alive_after
    });
    assert_eq!(r, Ok(0));
}

#[test]
fn handle_is_alive_after_handle_exit_is_false() {
    let rt = rt(2);
    for i in 0..50 {
        let p = rt.spawn(idle).unwrap();
        let reason = if i % 2 == 0 {
            Reason::Kill
        } else {
            Reason::from("bye")
        };
        rt.send_exit(p, reason);
        assert!(!rt.is_alive(p), "run {i}");
    }
}

#[test]
fn process_info_after_kill_is_none() {
    let r = run(2, |ctx| async move {
        let mut some = 0;
        for _ in 0..50 {
            let p = ctx.spawn(idle).await.unwrap();
            ctx.send_exit(p, Reason::Kill).await;
            if ctx.process_info(p).await.is_some() {
                some += 1;
            }
        }
        some
    });
    assert_eq!(r, 0);
}

// --- link and unlink racing -------------------------------------------------

/// p and q link to each other at the same moment, then q unlinks once.
/// Both sides must agree afterwards (once the signals between them have
/// settled): either neither is linked, and p's later crash does not reach
/// q, or p linked again after seeing the unlink and both are linked, and
/// p's crash takes q down. Before the unlink handshake, q could keep p in
/// its links while p did not.
#[test]
fn link_and_unlink_racing_leave_both_sides_agreeing() {
    #[derive(Clone, Copy)]
    struct Peer(Pid);
    struct Sync(Pid);
    struct Synced;
    async fn peer(ctx: Ctx, main: Pid, unlinks: bool) {
        let Peer(other) = ctx.receive().await;
        ctx.link(other).await.unwrap();
        if unlinks {
            ctx.unlink(other).await;
            // A round trip with the other side: it has seen our unlink (and
            // answered it) before it answers this.
            ctx.send(other, Sync(ctx.pid())).await;
            ctx.receive::<Synced>().await;
        } else {
            let Sync(from) = ctx.receive().await;
            ctx.send(from, Synced).await;
        }
        let info = ctx.process_info(ctx.pid()).await.unwrap();
        ctx.send(main, (ctx.pid(), info.links)).await;
        // Wait to be crashed (p) or to be asked whether we still live (q).
        ctx.receive::<()>().await;
    }
    run(2, |ctx| async move {
        let me = ctx.pid();
        for round in 0..200 {
            let (p, _) = ctx
                .spawn_monitor(move |ctx| peer(ctx, me, false))
                .await
                .unwrap();
            let (q, _) = ctx
                .spawn_monitor(move |ctx| peer(ctx, me, true))
                .await
                .unwrap();
            ctx.send(p, Peer(q)).await;
            ctx.send(q, Peer(p)).await;
            let mut links = vec![];
            for _ in 0..2 {
                links.push(
                    ctx.receive_timeout::<(Pid, Vec<Pid>)>(SAFETY_NET)
                        .await
                        .expect("peer report"),
                );
            }
            let of = |who: Pid| links.iter().find(|(w, _)| *w == who).unwrap().1.clone();
            let (lp, lq) = (of(p), of(q));
            assert_eq!(
                (lp.contains(&q), lq.contains(&p)),
                (!lp.is_empty(), !lq.is_empty())
            );
            assert_eq!(
                lp.is_empty(),
                lq.is_empty(),
                "round {round}: the sides disagree: p {lp:?}, q {lq:?}"
            );
            let linked = !lp.is_empty();
            // p crashes; q goes down with it exactly when they are linked.
            ctx.send_exit(p, Reason::from("crash")).await;
            let d: Down = ctx.receive_where(move |d: &Down| d.pid == p).await;
            assert_eq!(d.reason, Reason::from("crash"));
            if linked {
                let d: Down = ctx.receive_where(move |d: &Down| d.pid == q).await;
                assert_eq!(d.reason, Reason::from("crash"), "round {round}");
            } else {
                assert!(ctx.is_alive(q).await, "round {round}: p's crash reached q");
                ctx.send(q, ()).await;
                ctx.receive_where(move |d: &Down| d.pid == q).await;
            }
        }
    });
}

// --- a name is free before anyone sees the process dead ---------------------

#[test]
fn noproc_is_never_seen_while_the_name_still_resolves() {
    let r = run(2, |ctx| async move {
        let mut noprocs = 0;
        for round in 0..300 {
            let name = format!("ending-{round}");
            let n2 = name.clone();
            let me = ctx.pid();
            let t = ctx
                .spawn(move |ctx| async move {
                    ctx.register(&n2).await.unwrap();
                    ctx.send(me, "registered").await;
                    ctx.receive::<()>().await;
                })
                .await
                .unwrap();
            ctx.receive::<&str>().await;
            ctx.send(t, ()).await;
            let m = ctx.monitor(t).await;
            let d: Down = ctx.receive_where(move |d: &Down| d.mref == m).await;
            if d.reason == Reason::NoProc {
                noprocs += 1;
                assert_eq!(
                    ctx.whereis(&name).await,
                    None,
                    "round {round}: noproc while the name still resolved"
                );
            }
        }
        noprocs
    });
    assert!(r <= 300);
}

// --- every runtime call is a preemption point --------------------------------

/// One worker; a process loops on a call that once never yielded, while a
/// second process needs the worker to answer. Every call must let it.
#[test]
fn loops_of_any_runtime_call_cannot_starve_others() {
    type Call = fn(&Ctx, Pid) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + '_>>;
    let calls: Vec<(&str, Call)> = vec![
        ("process_info(self)", |c, _| {
            Box::pin(async move {
                c.process_info(c.pid()).await;
            })
        }),
        ("is_alive", |c, p| {
            Box::pin(async move {
                c.is_alive(p).await;
            })
        }),
        ("whereis", |c, _| {
            Box::pin(async move {
                c.whereis("nobody").await;
            })
        }),
        ("register/unregister", |c, _| {
            Box::pin(async move {
                let _ = c.register("hog").await;
                c.unregister("hog").await;
            })
        }),
        ("send_after/cancel_timer", |c, _| {
            Box::pin(async move {
                let t = c.send_after(Duration::from_secs(60), c.pid(), 0u8).await;
                c.cancel_timer(t).await;
            })
        }),
        ("start_timer/cancel_timer", |c, _| {
            Box::pin(async move {
                let t = c.start_timer(Duration::from_secs(60), c.pid(), 0u8).await;
                c.cancel_timer(t).await;
            })
        }),
        ("trap_exit", |c, _| {
            Box::pin(async move {
                c.trap_exit(false).await;
            })
        }),
    ];
    let rt = rt(1);
    for (name, call) in calls {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let answered = rt.block_on(move |ctx| async move {
            let me = ctx.pid();
            let hog = ctx
                .spawn(move |ctx| async move {
                    while !s2.load(Ordering::Relaxed) {
                        call(&ctx, me).await;
                    }
                })
                .await
                .unwrap();
            let echo = ctx
                .spawn(move |ctx| async move {
                    let from: Pid = ctx.receive().await;
                    ctx.send(from, "pong").await;
                })
                .await
                .unwrap();
            ctx.send(echo, me).await;
            let got = ctx.receive_timeout::<&str>(SAFETY_NET).await;
            let _ = hog;
            got
        });
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            answered,
            Ok(Some("pong")),
            "a loop of {name} starved the worker"
        );
    }
}

/// A selective receive over many non-matching messages is charged per
/// message scanned (and so can be preempted mid-scan).
#[test]
fn a_long_selective_scan_is_charged_per_message() {
    struct Junk;
    let r = run(1, |ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                ctx.receive::<()>().await;
                // 100,000 junk messages queued; nothing matches.
                let none = ctx.receive_timeout::<u64>(Duration::from_millis(1)).await;
                let r = ctx.process_info(ctx.pid()).await.unwrap().reductions;
                ctx.send(me, (none.is_none(), r)).await;
            })
            .await
            .unwrap();
        for _ in 0..100_000 {
            ctx.send(p, Junk).await;
        }
        ctx.send(p, ()).await;
        ctx.receive::<(bool, u64)>().await
    });
    assert!(r.0);
    assert!(
        r.1 >= 100_000,
        "charged {} reductions for scanning 100,000",
        r.1
    );
}

// --- a woken process is not stuck behind a long step --------------------------

/// A process wakes another (which lands in the waker's LIFO slot), then
/// goes on with a long step. The idle second worker must get to run the
/// woken one while the step is still going on.
#[test]
fn a_woken_process_runs_elsewhere_while_its_waker_runs_on() {
    let r = run(2, |ctx| async move {
        let ran = Arc::new(AtomicBool::new(false));
        let r2 = ran.clone();
        let b = ctx
            .spawn(move |ctx| async move {
                ctx.receive::<()>().await;
                r2.store(true, Ordering::SeqCst);
            })
            .await
            .unwrap();
        let c = ctx
            .spawn(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        // Let b and c reach their receives, then start a fresh slice.
        ctx.process_info(b).await;
        ctx.process_info(c).await;
        ctx.yield_now().await;
        // Sends are batched per receiver until the step ends or the
        // receiver changes: the send to c pushes b's and wakes b (into
        // this worker's LIFO slot); c's waits for the end of the step.
        ctx.send(b, ()).await;
        ctx.send(c, ()).await;
        let seen_at = Arc::new(AtomicU32::new(u32::MAX));
        for i in 0..1500u32 {
            let t = Instant::now();
            while t.elapsed() < Duration::from_micros(20) {
                std::hint::spin_loop();
            }
            if ran.load(Ordering::SeqCst) {
                seen_at.store(i, Ordering::SeqCst);
                break;
            }
            ctx.charge(1).await;
        }
        seen_at.load(Ordering::SeqCst)
    });
    assert!(
        r < 1500,
        "the woken process waited for its waker's whole step"
    );
}

/// A ping-pong pair wakes each other through the LIFO slot. The LIFO runs
/// in a row may spend one slice's reductions (each run counted as at least
/// 8), then the queue gets its turn: on one worker, a hog queued behind the
/// pair gets a slice at least every 250 LIFO runs (125 round trips), and
/// the pair is not cut off after a few runs either (it used to be cut
/// after 3, putting a hog's whole slice into most round trips).
#[test]
fn lifo_streak_is_bounded_by_reductions_not_runs() {
    use std::sync::atomic::AtomicU64;
    let (most_between, rounds) = run(1, |ctx| async move {
        let hog_slices = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (hs, st) = (hog_slices.clone(), stop.clone());
        ctx.spawn(move |ctx| async move {
            while !st.load(Ordering::SeqCst) {
                hs.fetch_add(1, Ordering::SeqCst);
                // A whole slice's budget, then back of the queue.
                ctx.charge(lona_runtime::SLICE_REDUCTIONS).await;
            }
        })
        .await
        .unwrap();
        let me = ctx.pid();
        let pong = ctx
            .spawn(move |ctx| async move {
                while let Some(n) = ctx.receive_timeout::<u32>(Duration::from_secs(5)).await {
                    ctx.send(me, n).await;
                }
            })
            .await
            .unwrap();
        let rounds = 5_000u32;
        let mut most_between = 0u32;
        let mut since = 0u32;
        let mut last = hog_slices.load(Ordering::SeqCst);
        for i in 0..rounds {
            ctx.send(pong, i).await;
            let _: u32 = ctx.receive().await;
            let now = hog_slices.load(Ordering::SeqCst);
            if now == last {
                since += 1;
                most_between = most_between.max(since);
            } else {
                since = 0;
                last = now;
            }
        }
        stop.store(true, Ordering::SeqCst);
        (most_between, rounds)
    });
    assert!(
        most_between <= 130,
        "the hog waited {most_between} round trips (bound: 125)"
    );
    assert!(
        most_between >= 20,
        "the pair was cut off after {most_between} round trips of {rounds}"
    );
}

#[test]
fn exit_messages_carry_who_and_why() {
    // The Exit a trapping process gets for the kill of a linked process.
    let e = run(2, |ctx| async move {
        ctx.trap_exit(true).await;
        let c = ctx
            .spawn_link(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        ctx.send_exit(c, Reason::Kill).await;
        let e: Exit = ctx.receive().await;
        (e.from == c, e.reason)
    });
    assert_eq!(e, (true, Reason::Killed));
}
