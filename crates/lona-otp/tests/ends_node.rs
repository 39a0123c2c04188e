//! `Supervisor::ends_node` (rule 10 of `src/supervisor/mod.rs`): a top
//! supervisor that gives up ends the process that started it, so that
//! `main`'s `block_on` returns instead of waiting forever beside a
//! supervision tree that is gone.

mod common;

use common::{worker, workers, Log};
use lona_otp::{ChildSpec, Strategy, Supervisor, SupervisorGaveUp};
use lona_runtime::{Builder, Exit, Reason, Runtime};
use std::time::Duration;

fn rt() -> Runtime {
    Builder::default().workers(workers(2)).build().unwrap()
}

/// A child that fails at once, every time: its supervisor (1 restart in
/// 5 s) gives up on its second failure.
fn failing() -> ChildSpec {
    ChildSpec::worker("failing", |ctx| async move {
        ctx.exit(Reason::from("broken")).await;
    })
}

/// Wait (bounded) until the node holds no process; how many are left.
fn settle(rt: &Runtime) -> usize {
    for _ in 0..5000 {
        if rt.process_count() == 0 {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    rt.process_count()
}

#[test]
fn a_main_that_does_not_trap_exits_ends_with_the_supervisors_reason() {
    let rt = rt();
    let log = Log::default();
    let log2 = log.clone();
    let r = rt.block_on(|ctx| async move {
        let sup = Supervisor::new(Strategy::OneForOne)
            .child(worker("steady", &log2))
            .child(failing())
            .ends_node()
            .start_link(&ctx, None)
            .await;
        // `start_link` may already fail: the failing child can end (and
        // the supervisor give up) before it returns. Either way, waiting
        // here is the zombie `main` of the issue.
        let _ = sup;
        ctx.receive::<()>().await;
    });
    let reason = r.unwrap_err();
    let gave_up = reason.downcast_ref::<SupervisorGaveUp>();
    assert!(gave_up.is_some(), "ended with {reason:?}");
    assert_eq!(
        log.get(),
        ["start steady", "stop steady"],
        "its children were stopped first"
    );
    assert_eq!(settle(&rt), 0, "processes left behind");
}

#[test]
fn a_main_that_traps_exits_is_killed_after_the_exit_message() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        ctx.trap_exit(true).await;
        let _ = Supervisor::new(Strategy::OneForAll)
            .child(failing())
            .ends_node()
            .start_link(&ctx, None)
            .await;
        // A main that ignores its `Exit` messages.
        ctx.receive::<()>().await;
    });
    assert_eq!(r, Err(Reason::Killed));
    assert_eq!(settle(&rt), 0, "processes left behind");
}

/// Unlinked (`start`), the starter is ended all the same.
#[test]
fn an_unlinked_top_supervisor_ends_its_starter_too() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let _ = Supervisor::new(Strategy::OneForOne)
            .child(failing())
            .ends_node()
            .start(&ctx, None)
            .await;
        ctx.receive::<()>().await;
    });
    let reason = r.unwrap_err();
    assert!(
        reason.downcast_ref::<SupervisorGaveUp>().is_some(),
        "{reason:?}"
    );
}

/// Without the flag: the zombie of the issue, a trapping main waits on
/// (here: until its own timeout) with the supervisor gone.
#[test]
fn without_the_flag_the_main_lives_on() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        ctx.trap_exit(true).await;
        let _ = Supervisor::new(Strategy::OneForOne)
            .child(failing())
            .start_link(&ctx, None)
            .await;
        let x = ctx.receive::<Exit>().await;
        let more = ctx.receive_timeout::<()>(Duration::from_millis(50)).await;
        (x.reason, more)
    });
    let (reason, more) = r.unwrap();
    assert!(
        reason == Reason::Shutdown || reason.downcast_ref::<lona_otp::SupervisorError>().is_some(),
        "{reason:?}"
    );
    assert_eq!(more, None);
}

/// An orderly end (stopped by a call, or by its parent) does not end the
/// starter: only giving up does.
#[test]
fn an_orderly_stop_leaves_the_starter_alone() {
    let rt = rt();
    let log = Log::default();
    let log2 = log.clone();
    let r = rt.block_on(|ctx| async move {
        // Trapping: the link's own `shutdown` must not end it either.
        ctx.trap_exit(true).await;
        let sup = Supervisor::new(Strategy::OneForOne)
            .child(worker("a", &log2))
            .ends_node()
            .start_link(&ctx, None)
            .await
            .unwrap();
        sup.stop(&ctx).await.unwrap();
        // Still alive (a kill would have ended it by now: signals from
        // the supervisor come before its `Exit`), and told of the end.
        let x = ctx.receive::<Exit>().await;
        assert_eq!(x.reason, Reason::Shutdown);
        42
    });
    assert_eq!(r, Ok(42));
    assert_eq!(log.get(), ["start a", "stop a"]);
}

/// Under another supervisor, the flag is dropped: giving up ends only the
/// inner supervisor, which its parent restarts (or gives up on, by its own
/// flags).
#[test]
fn a_nested_supervisor_does_not_end_its_parent() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        ctx.trap_exit(true).await;
        let inner = Supervisor::new(Strategy::OneForOne)
            .intensity(0, Duration::from_secs(5))
            .child(ChildSpec::worker("once", |ctx| async move {
                // Fails only on a message, so its restarts are bounded.
                ctx.receive::<()>().await;
                ctx.exit(Reason::from("asked")).await;
            }))
            .ends_node();
        let top = Supervisor::new(Strategy::OneForOne)
            .intensity(10, Duration::from_secs(5))
            .child(inner.into_child_spec("inner", Some("inner")))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let first = common::pid_of(&ctx, &top, "inner").await.unwrap();
        let inner_ref = lona_otp::SupervisorRef::from_pid(first);
        let w = common::pid_of(&ctx, &inner_ref, "once").await.unwrap();
        ctx.send(w, ()).await;
        // The inner one gives up (intensity 0) and is restarted by the top.
        let mut second = first;
        for _ in 0..10_000 {
            second = common::pid_of(&ctx, &top, "inner").await.unwrap_or(first);
            if second != first {
                break;
            }
            ctx.yield_now().await;
        }
        top.stop(&ctx).await.unwrap();
        second != first
    });
    assert_eq!(r, Ok(true), "the main is alive and saw the restart");
}
