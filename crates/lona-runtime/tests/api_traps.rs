//! The Rust API does what it says wherever it is called (issue 17, defect
//! 9, and the shutdown exit's sender of defect 10):
//! - a `Ctx` operation takes effect when called, awaited or not;
//! - `Handle::is_alive` keeps its guarantee from outside and refuses
//!   inside a process, where it cannot give it;
//! - `SpawnOpts` is built by methods;
//! - any value, an `io::Error` included, can be an exit reason;
//! - runtime shutdown's exit comes from `RUNTIME_PID`, `<0.0.0>`.

// `let _ = ctx.op(..)` without `.await` is the very mistake under test.
#![allow(clippy::let_underscore_future)]

mod common;

use lona_runtime::{Builder, Down, Exit, Pid, Priority, Reason, Runtime, SpawnOpts, RUNTIME_PID};
use std::time::Duration;

/// A bound that only keeps a failing test from hanging: what is waited
/// for arrives at once unless the operation never happened.
const BOUND: Duration = Duration::from_secs(20);

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

/// `let _ = ctx.op(..)` does the operation: every `Ctx` operation of that
/// shape, one after another, never awaited.
#[test]
fn operations_take_effect_when_called_without_await() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let _ = ctx.trap_exit(true);
        // send, send_after, send_name, register, send_alias, alias.
        let _ = ctx.send(me, 1u32);
        let _ = ctx.send_after(Duration::ZERO, me, 2u32);
        let _ = ctx.register("api-traps-main");
        let _ = ctx.send_name("api-traps-main", 3u32);
        let alias = lona_runtime::Ref::new();
        let _ = ctx.alias(alias);
        let _ = ctx.send_alias(me, alias, 4u32);
        let mut got = vec![];
        for _ in 0..4 {
            got.push(ctx.receive_timeout::<u32>(BOUND).await.expect("sent"));
        }
        got.sort();
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert_eq!(ctx.whereis("api-traps-main").await, Some(me));
        let _ = ctx.unregister("api-traps-main");
        assert_eq!(ctx.whereis("api-traps-main").await, None, "unregistered");
        let _ = ctx.unalias(alias);
        assert!(!ctx.unalias(alias).await, "already deactivated");
        // set_priority.
        let _ = ctx.set_priority(Priority::High);
        assert_eq!(ctx.priority(), Priority::High);
        let _ = ctx.set_priority(Priority::Normal);
        // cancel_timer.
        let t = ctx.send_after(Duration::from_secs(3600), me, 5u32).await;
        let _ = ctx.cancel_timer(t);
        assert_eq!(ctx.cancel_timer(t).await, None, "already cancelled");
        // spawn: the child runs and reports.
        let _ = ctx.spawn(move |c| async move { c.send(me, 'c').await });
        assert_eq!(ctx.receive_timeout::<char>(BOUND).await, Some('c'));
        // link and monitor: the child's end arrives as Exit and Down.
        let child = ctx
            .spawn(|c| async move {
                let _: u8 = c.receive().await;
                panic!("child ends");
            })
            .await
            .unwrap();
        let _ = ctx.link(child);
        let m = ctx.monitor(child).await;
        let m2 = ctx.monitor(child).await;
        let _ = ctx.demonitor(m2);
        assert!(!ctx.demonitor(m2).await, "already demonitored");
        ctx.send(child, 0u8).await;
        let exit = ctx.receive_timeout::<Exit>(BOUND).await.expect("linked");
        assert_eq!(exit.from, child);
        let down = ctx.receive_timeout::<Down>(BOUND).await.expect("monitored");
        assert_eq!(down.mref, m);
        // unlink: the child's end arrives as Down only.
        let child = ctx
            .spawn(|c| async move {
                let _: u8 = c.receive().await;
            })
            .await
            .unwrap();
        ctx.link(child).await.unwrap();
        let _ = ctx.unlink(child);
        let m = ctx.monitor(child).await;
        // send_exit: the child ends (a link's Exit, had the unlink not
        // happened, would come before the Down: links are told first).
        let _ = ctx.send_exit(child, Reason::from("stop"));
        let down = ctx.receive_timeout::<Down>(BOUND).await.expect("ended");
        assert_eq!((down.mref, down.reason), (m, Reason::from("stop")));
        assert!(ctx.receive_timeout::<Exit>(Duration::ZERO).await.is_none());
        // exit: the process ends with the reason at its next suspension.
        let (_, m) = ctx
            .spawn_monitor(|c| async move {
                let _ = c.exit(Reason::from("bye"));
                let _: u8 = c.receive().await;
                unreachable!("ended by its exit");
            })
            .await
            .unwrap();
        let down = ctx.receive_timeout::<Down>(BOUND).await.expect("ended");
        assert_eq!((down.mref, down.reason), (m, Reason::from("bye")));
        // send_exit to oneself, not awaited: the process ends there too.
        let (_, m) = ctx
            .spawn_monitor(|c| async move {
                let _ = c.send_exit(c.pid(), Reason::from("self"));
                let _: u8 = c.receive().await;
            })
            .await
            .unwrap();
        let down = ctx.receive_timeout::<Down>(BOUND).await.expect("ended");
        assert_eq!((down.mref, down.reason), (m, Reason::from("self")));
    });
    assert_eq!(r, Ok(()));
}

/// A loop of operations is still preempted at its awaits: a process that
/// only sends never keeps its worker from another process for long.
#[test]
fn operations_still_yield_when_the_slice_is_spent() {
    let rt = rt(1);
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let hog = ctx
            .spawn(move |c| async move {
                let sink = c.spawn(|_| async {}).await.unwrap();
                loop {
                    c.send(sink, 0u8).await;
                }
            })
            .await
            .unwrap();
        // This process runs again while the hog loops on one worker.
        ctx.send(me, ()).await;
        let got = ctx.receive_timeout::<()>(BOUND).await;
        ctx.send_exit(hog, Reason::Kill).await;
        got
    });
    assert_eq!(r, Ok(Some(())));
}

/// `Handle::is_alive` from outside: Erlang's guarantee after an exit
/// signal sent through a handle. From inside a process: refused (a panic
/// that ends that process only, naming what to use instead), never a
/// different meaning.
#[test]
fn handle_is_alive_means_one_thing_or_refuses() {
    let rt = rt(2);
    let p = rt
        .spawn(|ctx| async move {
            let _: () = ctx.receive().await;
        })
        .unwrap();
    assert!(rt.is_alive(p));
    rt.send_exit(p, Reason::Kill);
    assert!(!rt.is_alive(p), "outside: the kill has taken effect");
    let q = rt
        .spawn(|ctx| async move {
            let _: () = ctx.receive().await;
        })
        .unwrap();
    let r = rt.block_on(move |ctx| async move { ctx.handle().is_alive(q) });
    match r {
        Err(Reason::Panic(info)) => {
            assert!(
                info.message.contains("Handle::is_alive"),
                "{}",
                info.message
            );
            assert!(info.message.contains("Ctx::is_alive"), "{}", info.message);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(rt.is_alive(q), "the node and the other process live on");
    rt.send(q, ());
}

/// `SpawnOpts` is built by methods, so options can be added without
/// breaking callers; each option does what it says.
#[test]
fn spawn_opts_builder() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let _ = ctx.trap_exit(true);
        let opts = SpawnOpts::new()
            .link(true)
            .monitor(true)
            .priority(Priority::High);
        assert!(opts.is_link() && opts.is_monitor());
        assert_eq!(opts.get_priority(), Priority::High);
        let (pid, mref) = ctx
            .spawn_opt(opts, |c| async move {
                let _: () = c.receive().await;
            })
            .await
            .unwrap();
        let info = ctx.process_info(pid).await.expect("alive");
        assert_eq!(info.priority, Priority::High);
        assert_eq!(info.links, vec![ctx.pid()]);
        ctx.send_exit(pid, Reason::from("done")).await;
        let exit = ctx.receive::<Exit>().await;
        let down = ctx.receive::<Down>().await;
        (exit.from == pid, Some(down.mref) == mref)
    });
    assert_eq!(r, Ok((true, true)));
    // The defaults: no link, no monitor, normal priority.
    let d = SpawnOpts::new();
    assert!(!d.is_link() && !d.is_monitor());
    assert_eq!(d.get_priority(), Priority::Normal);
}

/// An `io::Error` ends a process as its reason, without a wrapper, and its
/// links and monitors see that very error.
#[test]
fn an_io_error_is_an_exit_reason() {
    let rt = rt(2);
    let r = rt.block_on(|ctx| async move {
        let (_, m) = ctx
            .spawn_monitor(|c| async move {
                let e = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "peer left");
                c.exit(Reason::from(e)).await;
            })
            .await
            .unwrap();
        let down = ctx.receive::<Down>().await;
        assert_eq!(down.mref, m);
        let e = down
            .reason
            .downcast_ref::<std::io::Error>()
            .expect("the io::Error itself");
        (e.kind(), e.to_string(), down.reason.clone() == down.reason)
    });
    assert_eq!(
        r,
        Ok((
            std::io::ErrorKind::BrokenPipe,
            "peer left".to_string(),
            true
        ))
    );
}

/// Shutdown's exit signal, as a trapping process sees it, comes from the
/// runtime's own pid `<0.0.0>` (Erlang's `init`), which names no process:
/// not a placeholder that prints as `<0.4294967295.4294967295>`.
#[test]
fn shutdown_exit_comes_from_the_runtime_pid() {
    assert_eq!(format!("{RUNTIME_PID}"), "<0.0.0>");
    let rt = rt(1);
    let (tx, rx) = std::sync::mpsc::channel();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let p = rt
        .spawn(move |ctx| async move {
            ctx.trap_exit(true).await;
            ready_tx.send(()).unwrap();
            let e = ctx.receive::<Exit>().await;
            tx.send(e).unwrap();
        })
        .unwrap();
    ready.recv().unwrap();
    assert_ne!(p, RUNTIME_PID);
    assert!(!rt.processes().contains(&RUNTIME_PID), "names no process");
    assert!(!rt.is_alive(RUNTIME_PID));
    // Spawning many never hands out its slot.
    let pids: Vec<Pid> = (0..100).map(|_| rt.spawn(|_| async {}).unwrap()).collect();
    assert!(pids.iter().all(|p| p.index() != 0));
    let report = rt.shutdown();
    assert_eq!(report.killed, 0);
    let e = rx.recv().unwrap();
    assert_eq!((e.from, e.reason), (RUNTIME_PID, Reason::Shutdown));
    assert_eq!(format!("{}", e.from), "<0.0.0>");
}
