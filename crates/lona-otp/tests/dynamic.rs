//! Dynamic supervisor (simple_one_for_one) conformance: the rules of
//! `src/dynamic.rs`.

mod common;
use common::{pause, run};
use lona_otp::{DynamicSupervisor, Restart, Shutdown, SupervisorError};
use lona_runtime::{Ctx, Down, Exit, Pid, Reason};
use std::time::Duration;

/// Children that wait for a `Reason` to end with; the argument is sent
/// back as a `(Pid, u32)` to `report` when each incarnation starts.
fn waiting(report: Pid) -> DynamicSupervisor<u32> {
    DynamicSupervisor::worker(move |ctx: Ctx, n: u32| async move {
        ctx.send(report, (ctx.pid(), n)).await;
        let r: Reason = ctx.receive().await;
        match ctx.exit(r).await {}
    })
    .intensity(100, Duration::from_secs(5))
}

#[test]
fn start_child_starts_one_child_per_call_with_its_argument() {
    let (got, count) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = waiting(ctx.pid()).start_link(&ctx, None).await.unwrap();
        let mut pids = vec![];
        for n in 0..5u32 {
            pids.push((s.start_child(&ctx, n).await.unwrap(), n));
        }
        let mut got = vec![];
        for _ in 0..5 {
            got.push(ctx.receive::<(Pid, u32)>().await);
        }
        got.sort_by_key(|x| x.1);
        assert_eq!(got, pids);
        let mut which = s.which_children(&ctx).await.unwrap();
        which.sort();
        let mut expected: Vec<Pid> = pids.iter().map(|p| p.0).collect();
        expected.sort();
        assert_eq!(which, expected);
        (got.len(), s.count_children(&ctx).await.unwrap().active)
    });
    assert_eq!((got, count), (5, 5));
}

#[test]
fn crashed_child_is_restarted_with_the_same_argument_as_a_new_pid() {
    let (old, new) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = waiting(ctx.pid()).start_link(&ctx, None).await.unwrap();
        s.start_child(&ctx, 7).await.unwrap();
        let (old, n) = ctx.receive::<(Pid, u32)>().await;
        assert_eq!(n, 7);
        ctx.send_exit(old, Reason::from("crash")).await;
        let (new, n) = ctx.receive::<(Pid, u32)>().await;
        assert_eq!(n, 7);
        (old, new)
    });
    assert_ne!(old, new);
}

#[test]
fn temporary_and_transient_children_follow_their_restart_type() {
    for (restart, reason, expect_restart) in [
        (Restart::Temporary, Reason::from("crash"), false),
        (Restart::Transient, Reason::Shutdown, false),
        (Restart::Transient, Reason::from("crash"), true),
        (Restart::Permanent, Reason::Normal, true),
    ] {
        let r2 = reason.clone();
        let restarted = run(move |ctx| async move {
            ctx.trap_exit(true).await;
            let s = waiting(ctx.pid())
                .restart(restart)
                .start_link(&ctx, None)
                .await
                .unwrap();
            s.start_child(&ctx, 1).await.unwrap();
            let (p, _) = ctx.receive::<(Pid, u32)>().await;
            ctx.send(p, r2).await;
            ctx.receive_timeout::<(Pid, u32)>(Duration::from_millis(100))
                .await
                .is_some()
        });
        assert_eq!(restarted, expect_restart, "{restart:?} {reason:?}");
    }
}

#[test]
fn terminate_child_stops_it_by_pid_and_forgets_it() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = waiting(ctx.pid()).start_link(&ctx, None).await.unwrap();
        let p = s.start_child(&ctx, 1).await.unwrap();
        let m = ctx.monitor(p).await;
        s.terminate_child(&ctx, p).await.unwrap();
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        assert_eq!(d.reason, Reason::Shutdown);
        assert_eq!(s.which_children(&ctx).await.unwrap(), vec![]);
        assert_eq!(
            s.terminate_child(&ctx, p).await,
            Err(SupervisorError::NotFound(format!("{p:?}")))
        );
    });
}

#[test]
fn failed_start_child_answers_the_error_and_keeps_nothing() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = DynamicSupervisor::<u32>::new(|_, n| {
            Box::pin(async move {
                if n == 0 {
                    panic!("zero");
                }
                Err(Reason::from("refused"))
            })
        })
        .start_link(&ctx, None)
        .await
        .unwrap();
        let r = s.start_child(&ctx, 1).await;
        assert_eq!(
            r,
            Err(SupervisorError::FailedToStartChild {
                id: String::new(),
                reason: Reason::from("refused")
            })
        );
        assert!(matches!(
            s.start_child(&ctx, 0).await,
            Err(SupervisorError::FailedToStartChild {
                reason: Reason::Panic(_),
                ..
            })
        ));
        assert_eq!(s.count_children(&ctx).await.unwrap().active, 0);
    });
}

#[test]
fn dynamic_intensity_exceeded_stops_all_children_and_exits_shutdown() {
    let (reasons, sup_reason) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = waiting(ctx.pid())
            .intensity(1, Duration::from_secs(60))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let mut mons = vec![];
        for n in 0..3 {
            let p = s.start_child(&ctx, n).await.unwrap();
            mons.push(ctx.monitor(p).await);
        }
        let sm = ctx.monitor(s.pid()).await;
        let victim = s.which_children(&ctx).await.unwrap()[0];
        ctx.send_exit(victim, Reason::from("crash")).await; // restart 1: allowed
        let (p, _) = loop {
            let (p, n) = ctx.receive::<(Pid, u32)>().await;
            if !s.which_children(&ctx).await.unwrap().contains(&victim) && p != victim {
                break (p, n);
            }
        };
        ctx.send_exit(p, Reason::from("crash")).await; // restart 2: too many
        let d = ctx.receive_where(move |d: &Down| d.mref == sm).await;
        let mut reasons = vec![];
        for m in mons {
            reasons.push(ctx.receive_where(move |d: &Down| d.mref == m).await.reason);
        }
        (reasons, d.reason)
    });
    assert_eq!(sup_reason, Reason::Shutdown);
    assert_eq!(reasons.len(), 3);
    assert!(reasons.contains(&Reason::Shutdown), "{reasons:?}");
}

#[test]
fn stopping_stops_all_children_at_once_killing_the_deaf_after_the_timeout() {
    let reasons = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = DynamicSupervisor::worker(|ctx: Ctx, deaf: bool| async move {
            ctx.trap_exit(true).await;
            loop {
                let x = ctx.receive::<Exit>().await;
                if !deaf {
                    match ctx.exit(x.reason).await {}
                }
            }
        })
        .shutdown(Shutdown::Timeout(Duration::from_millis(30)))
        .start_link(&ctx, None)
        .await
        .unwrap();
        let mut mons = vec![];
        for deaf in [false, true, false, true] {
            let p = s.start_child(&ctx, deaf).await.unwrap();
            mons.push(ctx.monitor(p).await);
        }
        pause(&ctx, 10).await; // let them trap exits
        s.stop(&ctx).await.unwrap();
        let mut reasons = vec![];
        for m in mons {
            // Already ended when stop returned.
            let d = ctx
                .receive_where_timeout(move |d: &Down| d.mref == m, Duration::ZERO)
                .await
                .expect("ended before stop returned");
            reasons.push(d.reason);
        }
        reasons
    });
    assert_eq!(
        reasons,
        [
            Reason::Shutdown,
            Reason::Killed,
            Reason::Shutdown,
            Reason::Killed
        ]
    );
}
