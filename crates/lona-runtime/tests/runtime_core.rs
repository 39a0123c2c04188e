//! Issue 2 behaviour, black-box: scheduler, processes, mailboxes, native
//! API, lifecycle.

mod common;

use lona_runtime::{Builder, Ctx, Pid, Reason, Runtime, SpawnError};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Scaled down under Miri, which runs these end to end (slowly).
const ROUNDS: u32 = if cfg!(miri) { 20 } else { 10_000 };
const PER_SENDER: u32 = if cfg!(miri) { 150 } else { 5_000 };

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

#[test]
fn smoke_ping_pong() {
    let rt = rt(2);
    let n = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let pong = ctx
            .spawn(|ctx| async move {
                loop {
                    let (from, i): (Pid, u32) = ctx.receive().await;
                    ctx.send(from, i + 1).await;
                }
            })
            .await
            .unwrap();
        let mut i = 0u32;
        for _ in 0..ROUNDS {
            ctx.send(pong, (me, i)).await;
            i = ctx.receive::<u32>().await;
        }
        i
    });
    assert_eq!(n, Ok(ROUNDS));
}

#[test]
fn many_processes_each_report_once() {
    let rt = rt(2);
    let total = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        for i in 0..20_000u64 {
            ctx.spawn(move |ctx| async move {
                ctx.send(me, i).await;
            })
            .await
            .unwrap();
        }
        let mut sum = 0u64;
        for _ in 0..20_000 {
            sum += ctx.receive::<u64>().await;
        }
        sum
    });
    assert_eq!(total, Ok((0..20_000u64).sum()));
    // The last children may still be finishing after their send.
    let deadline = Instant::now() + Duration::from_secs(10);
    while rt.process_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(rt.process_count(), 0);
}

#[test]
fn messages_between_two_processes_stay_in_order() {
    let rt = rt(2);
    let ok = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        for s in 0..4u32 {
            ctx.spawn(move |ctx| async move {
                for i in 0..PER_SENDER {
                    ctx.send(me, (s, i)).await;
                }
            })
            .await
            .unwrap();
        }
        let mut next = [0u32; 4];
        for _ in 0..4 * PER_SENDER {
            let (s, i): (u32, u32) = ctx.receive().await;
            assert_eq!(i, next[s as usize], "sender {s} out of order");
            next[s as usize] += 1;
        }
        true
    });
    assert_eq!(ok, Ok(true));
}

#[test]
fn receive_by_type_leaves_other_types_queued() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        ctx.send(me, "first").await;
        ctx.send(me, 7u8).await;
        ctx.send(me, "second").await;
        let n: u8 = ctx.receive().await;
        let a: &str = ctx.receive().await;
        let b: &str = ctx.receive().await;
        (n, a, b)
    });
    assert_eq!(r, Ok((7, "first", "second")));
}

#[test]
fn selective_receive_removes_only_the_match_oldest_first() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        for i in 0..10u32 {
            ctx.send(me, i).await;
        }
        let odd = ctx.receive_where(|x: &u32| x % 2 == 1).await;
        let big = ctx.receive_where(|x: &u32| *x > 6).await;
        let mut rest = vec![];
        while let Some(x) = ctx.receive_timeout::<u32>(Duration::ZERO).await {
            rest.push(x);
        }
        (odd, big, rest)
    });
    assert_eq!(r, Ok((1, 7, vec![0, 2, 3, 4, 5, 6, 8, 9])));
}

#[test]
fn selective_receive_waits_for_a_later_match() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        ctx.spawn(move |ctx| async move {
            for i in 0..100u32 {
                ctx.send(me, i).await;
            }
            ctx.send(me, 1000u32).await;
        })
        .await
        .unwrap();
        let got = ctx.receive_where(|x: &u32| *x >= 1000).await;
        let mut left = 0;
        while ctx.receive_timeout::<u32>(Duration::ZERO).await.is_some() {
            left += 1;
        }
        (got, left)
    });
    assert_eq!(r, Ok((1000, 100)));
}

#[test]
fn receive_timeout_expires_and_zero_polls() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let t0 = Instant::now();
        let none = ctx.receive_timeout::<u32>(Duration::from_millis(30)).await;
        let waited = t0.elapsed();
        let polled = ctx.receive_timeout::<u32>(Duration::ZERO).await;
        let me = ctx.pid();
        ctx.send(me, 5u32).await;
        let some = ctx.receive_timeout::<u32>(Duration::from_secs(10)).await;
        (none, waited >= Duration::from_millis(30), polled, some)
    });
    assert_eq!(r, Ok((None, true, None, Some(5))));
    assert_eq!(
        rt.pending_timers(),
        0,
        "a matched receive cancels its timer"
    );
}

#[test]
fn panic_ends_only_that_process_with_its_message() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let (_pid, mref) = ctx
            .spawn_monitor(|_ctx| async move {
                panic!("boom {}", 42);
            })
            .await
            .unwrap();
        let down: lona_runtime::Down = ctx.receive().await;
        assert_eq!(down.mref, mref);
        down.reason
    });
    match r {
        Ok(Reason::Panic(p)) => {
            assert_eq!(p.message, "boom 42");
            assert!(
                p.location.as_deref().unwrap().contains("runtime_core.rs"),
                "{p:?}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    // The workers survived: the runtime still runs processes.
    assert_eq!(rt.block_on(|_| async { 1 }), Ok(1));
}

#[test]
fn main_process_panic_is_returned_as_error() {
    let rt = rt(1);
    let r: Result<(), Reason> = rt.block_on(|_| async { panic!("main died") });
    assert!(matches!(r, Err(Reason::Panic(p)) if p.message == "main died"));
}

#[test]
fn process_limit_gives_system_limit_and_nothing_else_breaks() {
    let rt = Builder::default()
        .workers(1)
        .process_limit(10)
        .build()
        .unwrap();
    let r = rt.block_on(|ctx| async move {
        let mut pids = vec![];
        let err = loop {
            match ctx
                .spawn(|ctx| async move { ctx.receive::<()>().await })
                .await
            {
                Ok(p) => pids.push(p),
                Err(e) => break e,
            }
        };
        for p in &pids {
            ctx.send(*p, ()).await;
        }
        (pids.len(), err)
    });
    assert_eq!(
        r,
        Ok((9, SpawnError::SystemLimit { limit: 10 })),
        "main + 9 = limit"
    );
    assert!(format!("{}", SpawnError::SystemLimit { limit: 10 }).contains("system_limit"));
    // Slots come back once those processes have ended: spawning works again.
    let deadline = Instant::now() + Duration::from_secs(10);
    while rt.process_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let again = rt.block_on(|ctx| async move { ctx.spawn(|_| async {}).await.is_ok() });
    assert_eq!(again, Ok(true));
}

#[test]
fn stale_pid_never_reaches_the_slots_next_process() {
    let rt = Builder::default()
        .workers(1)
        .process_limit(2)
        .build()
        .unwrap();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let (old, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        let _: lona_runtime::Down = ctx.receive().await;
        // Limit 2: the next process must reuse the old one's slot.
        let new = ctx
            .spawn(move |ctx| async move {
                let got = ctx.receive_timeout::<&str>(Duration::from_millis(50)).await;
                ctx.send(me, got).await;
            })
            .await
            .unwrap();
        assert_eq!(new.index(), old.index(), "slot reused");
        assert_ne!(new, old);
        ctx.send(old, "for the old one").await;
        ctx.receive::<Option<&str>>().await
    });
    assert_eq!(r, Ok(None));
}

#[test]
fn yield_now_lets_others_run() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let flag = Arc::new(AtomicUsize::new(0));
        let f2 = flag.clone();
        ctx.spawn(move |_| async move {
            f2.store(1, Ordering::SeqCst);
        })
        .await
        .unwrap();
        let mut spins = 0;
        while flag.load(Ordering::SeqCst) == 0 {
            ctx.yield_now().await;
            spins += 1;
            assert!(spins < 1000);
        }
        true
    });
    assert_eq!(r, Ok(true));
}

#[test]
fn budget_preempts_a_native_loop_that_calls_the_runtime() {
    // One worker: a hog charging reductions in a loop must not starve a
    // second process.
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let flag = Arc::new(AtomicUsize::new(0));
        let f2 = flag.clone();
        ctx.spawn(move |ctx| async move {
            while f2.load(Ordering::SeqCst) == 0 {
                ctx.charge(1).await;
            }
        })
        .await
        .unwrap();
        let f3 = flag.clone();
        ctx.spawn(move |_| async move {
            f3.store(1, Ordering::SeqCst);
        })
        .await
        .unwrap();
        while flag.load(Ordering::SeqCst) == 0 {
            ctx.charge(1).await;
        }
        true
    });
    assert_eq!(r, Ok(true));
}

#[test]
fn foreign_waker_wakes_the_process() {
    // A future that completes when another thread flips a flag and wakes.
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;
    use std::task::{Context, Poll, Waker};
    struct Shared {
        done: bool,
        waker: Option<Waker>,
    }
    struct Wait(Arc<Mutex<Shared>>);
    impl Future for Wait {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let mut s = self.0.lock().unwrap();
            if s.done {
                Poll::Ready(())
            } else {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
    let rt = rt(1);
    let state = Arc::new(Mutex::new(Shared {
        done: false,
        waker: None,
    }));
    let s2 = state.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let mut s = s2.lock().unwrap();
        s.done = true;
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    });
    let r = rt.block_on(move |_| async move {
        Wait(state).await;
        "woken"
    });
    assert_eq!(r, Ok("woken"));
}

/// The owned waker a process hands out is one waker for the process's
/// life: clones taken in different polls are the same waker (`will_wake`),
/// each wakes the process, and one kept after the process ended (or after
/// the runtime shut down) wakes nothing and breaks nothing.
#[test]
fn clones_of_a_processs_waker_are_one_waker_for_its_life() {
    use std::future::poll_fn;
    use std::sync::Mutex;
    use std::task::{Poll, Waker};
    const WAITS: usize = if cfg!(miri) { 4 } else { 100 };
    let kept: Arc<Mutex<Vec<Waker>>> = Arc::default();
    let rt = rt(2);
    let k = kept.clone();
    let woken = rt.block_on(move |ctx| async move {
        let (p, _) = ctx
            .spawn_monitor(move |_| async move {
                // WAITS waits, each woken by another thread through the
                // clone it was given.
                for _ in 0..WAITS {
                    let mut asked = false;
                    poll_fn(|cx| {
                        if asked {
                            return Poll::Ready(());
                        }
                        asked = true;
                        let w = cx.waker().clone();
                        k.lock().unwrap().push(w.clone());
                        std::thread::spawn(move || w.wake());
                        Poll::Pending
                    })
                    .await;
                }
            })
            .await
            .unwrap();
        ctx.receive::<lona_runtime::Down>().await.pid == p
    });
    assert_eq!(woken, Ok(true));
    let kept = kept.lock().unwrap();
    assert_eq!(kept.len(), WAITS);
    assert!(
        kept.iter().all(|w| w.will_wake(&kept[0])),
        "every clone, from every poll, is the process's one waker"
    );
    // The process has ended: its waker wakes nobody, and neither does it
    // once the runtime is gone.
    kept[0].wake_by_ref();
    drop(rt);
    kept[1].wake_by_ref();
    let last = kept[2].clone();
    drop(kept);
    last.wake();
}

/// A `Ctx` cannot be cloned, so a child cannot capture its parent's; one
/// moved into another process anyway (here, inside a message) panics with a
/// clear message when used there, ending that process only.
#[test]
fn ctx_moved_into_another_process_panics_clearly() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let (b, _) = ctx
            .spawn_monitor(|ctx| async move {
                let theirs: Ctx = ctx.receive().await;
                theirs.send(ctx.pid(), 1u8).await;
            })
            .await
            .unwrap();
        ctx.spawn(move |ctx| async move {
            let h = ctx.handle();
            h.send(b, ctx);
        })
        .await
        .unwrap();
        ctx.receive::<lona_runtime::Down>().await.reason
    });
    match r {
        Ok(Reason::Panic(p)) => {
            assert!(
                p.message.contains("outside its own process"),
                "{}",
                p.message
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_starvation_hogs_and_a_ping_pong_pair_all_progress() {
    // One worker, three processes that never wait (they only charge
    // reductions), and a ping-pong pair: the pair finishes and every hog
    // runs, because a process that spent its slice goes to the back, and
    // a chain of woken receivers (the pair, in the LIFO slot) yields to
    // the queue after one slice's worth of runs (1,000 round trips are
    // several such chains).
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let counters: Arc<Vec<AtomicUsize>> =
            Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
        let mut hogs = vec![];
        for i in 0..3 {
            let c = counters.clone();
            hogs.push(
                ctx.spawn(move |ctx| async move {
                    loop {
                        c[i].fetch_add(1, Ordering::Relaxed);
                        ctx.charge(1).await;
                    }
                })
                .await
                .unwrap(),
            );
        }
        let me = ctx.pid();
        let pong = ctx
            .spawn(move |ctx| async move {
                loop {
                    let n: u32 = ctx.receive().await;
                    ctx.send(me, n).await;
                }
            })
            .await
            .unwrap();
        for i in 0..1000u32 {
            ctx.send(pong, i).await;
            assert_eq!(ctx.receive::<u32>().await, i);
        }
        for h in hogs {
            ctx.send_exit(h, Reason::Kill).await;
        }
        counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .min()
            .unwrap()
    });
    assert!(r.unwrap() > 0, "every hog got turns");
}
