//! Hostile user values: messages, timer payloads and exit reasons whose
//! `Drop` or `Debug` panic, and spawn closures that panic. The runtime drops
//! and formats user data on its own threads (workers, the timer thread); a
//! panic there once killed the thread, leaving zombies, dead links and a
//! hung node. Each test does the hostile thing on a one-worker node and
//! then checks that the node still works: its worker runs, timers fire,
//! links and monitors are told, and the process count comes back.

use lona_runtime::{Builder, Down, Exit, Reason, Runtime};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Panics when dropped (and counts the drop).
struct PanicsOnDrop(Arc<AtomicUsize>);
impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("hostile drop");
    }
}

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// An exit reason whose `Debug` and `Drop` both panic.
#[derive(PartialEq)]
struct HostileReason;
impl fmt::Debug for HostileReason {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("hostile debug")
    }
}
impl Drop for HostileReason {
    fn drop(&mut self) {
        panic!("hostile reason drop")
    }
}

fn one_worker() -> Runtime {
    Builder::default()
        .workers(1)
        .shutdown_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// The node still works: its one worker runs a process whose receive
/// timeout fires (the timer thread is alive) and the count comes back.
fn assert_node_works(rt: &Runtime) {
    assert_eq!(rt.running_workers(), 1, "the worker thread died");
    let r =
        rt.block_on(|ctx| async move { ctx.receive_timeout::<u8>(Duration::from_millis(5)).await });
    assert_eq!(r, Ok(None), "a receive timeout must fire");
    for _ in 0..2000 {
        if rt.process_count() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(rt.process_count(), 0, "a process never finished");
}

#[test]
fn message_to_a_dead_pid_whose_drop_panics() {
    let rt = one_worker();
    let drops = Arc::new(AtomicUsize::new(0));
    let dead = rt.spawn(|_| async {}).unwrap();
    while rt.process_count() > 0 {
        std::thread::yield_now();
    }
    // From outside, and from inside a process (through the worker's outbox,
    // dropped at the end of the step).
    rt.send(dead, PanicsOnDrop(drops.clone()));
    let d2 = drops.clone();
    let r = rt.block_on(move |ctx| async move {
        ctx.send(dead, PanicsOnDrop(d2.clone())).await;
        ctx.send(dead, PanicsOnDrop(d2)).await;
        "sent"
    });
    assert_eq!(r, Ok("sent"));
    assert_node_works(&rt);
    // (The main process's batched sends go out at the end of its step,
    // after `block_on` has its result: counted once it has finished.)
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn mailbox_of_a_dying_process_with_a_panicking_message_frees_the_rest() {
    let rt = one_worker();
    let drops = Arc::new(AtomicUsize::new(0));
    let d2 = drops.clone();
    let reason = rt.block_on(move |ctx| async move {
        let (victim, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        ctx.send(victim, Counted(d2.clone())).await;
        ctx.send(victim, PanicsOnDrop(d2.clone())).await;
        for _ in 0..3 {
            ctx.send(victim, Counted(d2.clone())).await;
        }
        ctx.send_exit(victim, Reason::Kill).await;
        ctx.receive::<Down>().await.reason
    });
    assert_eq!(reason, Ok(Reason::Killed), "the monitor was told");
    assert_eq!(
        drops.load(Ordering::SeqCst),
        5,
        "every message after the panicking one was dropped too"
    );
    assert_node_works(&rt);
}

#[test]
fn timer_payloads_whose_drop_panics() {
    let rt = one_worker();
    let drops = Arc::new(AtomicUsize::new(0));
    let d2 = drops.clone();
    let r = rt.block_on(move |ctx| async move {
        // Cancelled when its target ends (dropped by the exit path).
        let (short, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        ctx.send_after(Duration::from_secs(60), short, PanicsOnDrop(d2.clone()))
            .await;
        ctx.send(short, ()).await;
        ctx.receive::<Down>().await;
        // Cancelled by the user.
        let t = ctx
            .send_after(Duration::from_secs(60), ctx.pid(), PanicsOnDrop(d2.clone()))
            .await;
        assert!(ctx.cancel_timer(t).await.is_some());
        // Fired by the timer thread at a target that has gone.
        let (gone, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        ctx.receive::<Down>().await;
        ctx.send_after(Duration::from_millis(1), gone, PanicsOnDrop(d2.clone()))
            .await;
        // Delivered, then dropped by its receiver's exit (mailbox).
        let (keeper, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        let _t = ctx
            .start_timer(Duration::from_millis(1), keeper, PanicsOnDrop(d2))
            .await;
        ctx.receive_timeout::<u8>(Duration::from_millis(20)).await;
        ctx.send_exit(keeper, Reason::Kill).await;
        ctx.receive::<Down>().await.reason
    });
    assert_eq!(r, Ok(Reason::Killed));
    assert_eq!(drops.load(Ordering::SeqCst), 4, "every payload dropped");
    assert_eq!(rt.pending_timers(), 0);
    assert_node_works(&rt);
}

#[test]
fn exit_reason_whose_debug_and_drop_panic() {
    let rt = one_worker();
    let r = rt.block_on(|ctx| async move {
        // Unwatched: crash-reported (Debug) and dropped on the worker.
        ctx.spawn(|ctx| async move {
            ctx.exit(Reason::custom(HostileReason)).await;
        })
        .await
        .unwrap();
        // Watched through a link and a monitor: the reason travels.
        ctx.trap_exit(true).await;
        let child = ctx
            .spawn_link(|ctx| async move {
                ctx.exit(Reason::custom(HostileReason)).await;
            })
            .await
            .unwrap();
        let exit: Exit = ctx.receive().await;
        (
            exit.from == child,
            exit.reason == Reason::custom(HostileReason),
        )
    });
    assert_eq!(r, Ok((true, true)));
    assert_node_works(&rt);
}

#[test]
fn a_process_whose_future_drop_panics_still_notifies_its_links() {
    let rt = one_worker();
    let drops = Arc::new(AtomicUsize::new(0));
    let d2 = drops.clone();
    let r = rt.block_on(move |ctx| async move {
        let parent = ctx.pid();
        let (p, _) = ctx
            .spawn_monitor(move |ctx| async move {
                let _held = PanicsOnDrop(d2);
                ctx.send(parent, "holding").await;
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        ctx.receive::<&str>().await;
        ctx.send_exit(p, Reason::from("stop")).await;
        ctx.receive::<Down>().await.reason
    });
    assert_eq!(r, Ok(Reason::from("stop")));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_node_works(&rt);
}

#[test]
fn a_panicking_spawn_closure_frees_its_slot() {
    let rt = one_worker();
    // From outside: the panic reaches the caller, the slot is freed.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.spawn(|_ctx| -> std::future::Ready<()> { panic!("spawn closure panics") })
    }));
    assert!(r.is_err());
    assert_eq!(
        rt.process_count(),
        0,
        "the slot of a process that never existed"
    );
    // From inside: the spawner panics (and ends); nothing else leaks.
    let r = rt.block_on(|ctx| async move {
        let (p, _) = ctx
            .spawn_monitor(|ctx| async move {
                let _ = ctx
                    .spawn(|_ctx| -> std::future::Ready<()> { panic!("inner closure panics") })
                    .await;
            })
            .await
            .unwrap();
        let d: Down = ctx.receive().await;
        (d.pid == p, matches!(d.reason, Reason::Panic(_)))
    });
    assert_eq!(r, Ok((true, true)));
    assert_node_works(&rt);
    let report = rt.shutdown();
    assert_eq!(
        report,
        lona_runtime::ShutdownReport::default(),
        "no phantom process"
    );
}

#[test]
fn block_on_inside_a_process_panics_clearly() {
    let rt = Arc::new(Builder::default().workers(2).build().unwrap());
    let rt2 = rt.clone();
    let r = rt.block_on(move |_ctx| async move {
        let _ = rt2.block_on(|_ctx| async {});
    });
    match r {
        Err(Reason::Panic(p)) => assert!(
            p.message
                .contains("block_on called from inside a Lona process"),
            "{}",
            p.message
        ),
        other => panic!("{other:?}"),
    }
}
