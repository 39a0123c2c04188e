//! Issue 3 conformance: one test per rule of links, monitors, exit signals,
//! registry, timers, exit reasons and process info (Erlang/OTP semantics;
//! the rules are written out in `src/links.rs`).

mod common;

use lona_runtime::{Builder, Ctx, Down, Exit, Pid, Reason, Runtime, Status, Timeout};
use std::future::Future;
use std::time::Duration;

fn run<T: Send + 'static, Fut: Future<Output = T> + Send + 'static>(
    f: impl FnOnce(Ctx) -> Fut,
) -> T {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    rt.block_on(f).expect("main process ended abnormally")
}

const SHORT: Duration = Duration::from_millis(50);

/// A process that waits for `()` forever (or until a signal ends it).
async fn idle(ctx: Ctx) {
    ctx.receive::<()>().await;
}

async fn down_of(ctx: &Ctx, pid: Pid) -> Down {
    ctx.receive_where(move |d: &Down| d.pid == pid).await
}

// --- 1. ordering ----------------------------------------------------------

#[test]
fn signals_and_messages_from_one_sender_arrive_in_order() {
    let order = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let me = ctx.pid();
        let child = ctx
            .spawn(move |ctx| async move {
                ctx.send(me, 1u32).await;
                ctx.send_exit(me, Reason::from("second")).await;
                ctx.send(me, 3u32).await;
            })
            .await
            .unwrap();
        let mut seen = vec![];
        for _ in 0..3 {
            let e = ctx.receive_any().await;
            match e.downcast::<u32>() {
                Ok(n) => seen.push(format!("msg {n}")),
                Err(e) => {
                    let x = e.downcast::<Exit>().unwrap();
                    assert_eq!(x.from, child);
                    seen.push(format!("exit {:?}", x.reason));
                }
            }
        }
        seen
    });
    assert_eq!(order, vec!["msg 1", "exit \"second\"", "msg 3"]);
}

#[test]
fn down_arrives_after_the_name_is_released() {
    let whereis_at_down = run(|ctx| async move {
        let (pid, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.register("short_lived").await.unwrap();
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        while ctx.whereis("short_lived").await.is_none() {
            ctx.yield_now().await;
        }
        ctx.send(pid, ()).await;
        down_of(&ctx, pid).await;
        ctx.whereis("short_lived").await
    });
    assert_eq!(whereis_at_down, None);
}

// --- 2. exit signals --------------------------------------------------------

#[test]
fn exit_normal_to_a_non_trapping_process_is_ignored() {
    let alive = run(|ctx| async move {
        let p = ctx.spawn(idle).await.unwrap();
        ctx.send_exit(p, Reason::Normal).await;
        ctx.receive_timeout::<()>(SHORT).await;
        ctx.is_alive(p).await
    });
    assert!(alive);
}

#[test]
fn exit_normal_to_a_trapping_process_arrives_as_an_exit_message() {
    let got = run(|ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                ctx.trap_exit(true).await;
                ctx.send(me, "ready").await;
                let e = ctx.receive::<Exit>().await;
                ctx.send(me, e).await;
            })
            .await
            .unwrap();
        ctx.receive::<&str>().await;
        ctx.send_exit(p, Reason::Normal).await;
        ctx.receive::<Exit>().await
    });
    assert_eq!(got.reason, Reason::Normal);
}

#[test]
fn exit_self_normal_ends_a_non_trapping_caller() {
    let reason = run(|ctx| async move {
        let (p, _) = ctx
            .spawn_monitor(|ctx| async move {
                let me = ctx.pid();
                ctx.send_exit(me, Reason::Normal).await;
                panic!("must not get here");
            })
            .await
            .unwrap();
        down_of(&ctx, p).await.reason
    });
    assert_eq!(reason, Reason::Normal);
}

#[test]
fn exit_kill_cannot_be_trapped_and_links_see_killed() {
    let (down, linked_exit) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let me = ctx.pid();
        let victim = ctx
            .spawn_link(move |ctx| async move {
                ctx.trap_exit(true).await;
                ctx.send(me, "trapping").await;
                // Would get Exit messages, if kill could be trapped.
                loop {
                    ctx.receive::<Exit>().await;
                }
            })
            .await
            .unwrap();
        let mref = ctx.monitor(victim).await;
        ctx.receive::<&str>().await;
        ctx.send_exit(victim, Reason::Kill).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == mref).await;
        let e = ctx.receive_where(move |e: &Exit| e.from == victim).await;
        (d.reason, e.reason)
    });
    assert_eq!(down, Reason::Killed);
    assert_eq!(linked_exit, Reason::Killed);
}

#[test]
fn kill_through_a_link_can_be_trapped() {
    let got = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let child = ctx
            .spawn_link(|ctx| async move {
                ctx.exit(Reason::Kill).await;
            })
            .await
            .unwrap();
        let e = ctx.receive::<Exit>().await;
        assert_eq!(e.from, child);
        e.reason
    });
    assert_eq!(got, Reason::Kill);
}

#[test]
fn kill_through_a_link_ends_a_non_trapping_receiver_with_reason_kill() {
    let got = run(|ctx| async move {
        let (middle, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.spawn_link(|ctx| async move {
                    ctx.exit(Reason::Kill).await;
                })
                .await
                .unwrap();
                idle(ctx).await;
            })
            .await
            .unwrap();
        down_of(&ctx, middle).await.reason
    });
    assert_eq!(got, Reason::Kill);
}

#[test]
fn other_reason_ends_a_non_trapping_receiver_with_that_reason() {
    let got = run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(idle).await.unwrap();
        ctx.send_exit(p, Reason::from("bad")).await;
        down_of(&ctx, p).await.reason
    });
    assert_eq!(got, Reason::from("bad"));
}

#[test]
fn other_reason_reaches_a_trapping_receiver_as_exit_at_the_end_of_its_mailbox() {
    let got = run(|ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                ctx.trap_exit(true).await;
                ctx.send(me, "ready").await;
                // Wait for both, then report the mailbox order.
                ctx.receive_where(|s: &&str| *s == "go").await;
                let first = ctx.receive_any().await;
                let second = ctx.receive_any().await;
                ctx.send(
                    me,
                    (first.is::<u32>(), second.downcast::<Exit>().unwrap().reason),
                )
                .await;
            })
            .await
            .unwrap();
        ctx.receive::<&str>().await;
        ctx.send(p, 1u32).await;
        ctx.send_exit(p, Reason::from("stop")).await;
        ctx.send(p, "go").await;
        ctx.receive::<(bool, Reason)>().await
    });
    assert_eq!(got, (true, Reason::from("stop")));
}

// --- 3. links ---------------------------------------------------------------

#[test]
fn links_are_bidirectional() {
    let (a_reason, b_reason) = run(|ctx| async move {
        // Parent-to-child direction: the child's crash takes the parent.
        let (a, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.spawn_link(|ctx| async move {
                    ctx.exit(Reason::from("child")).await;
                })
                .await
                .unwrap();
                idle(ctx).await;
            })
            .await
            .unwrap();
        let ra = down_of(&ctx, a).await.reason;
        // Child-to-parent direction: the parent's crash takes the child.
        let me = ctx.pid();
        let (b, _) = ctx
            .spawn_monitor(move |ctx| async move {
                let c = ctx.spawn_link(idle).await.unwrap();
                ctx.send(me, c).await;
                ctx.receive::<&str>().await; // main monitors c first
                ctx.exit(Reason::from("parent")).await;
            })
            .await
            .unwrap();
        let c: Pid = ctx.receive().await;
        let cm = ctx.monitor(c).await;
        ctx.send(b, "monitoring").await;
        down_of(&ctx, b).await;
        let rc = ctx.receive_where(move |d: &Down| d.mref == cm).await.reason;
        (ra, rc)
    });
    assert_eq!(a_reason, Reason::from("child"));
    assert_eq!(b_reason, Reason::from("parent"));
}

#[test]
fn linking_twice_or_to_self_does_nothing() {
    let (links, exits) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let p = ctx.spawn(idle).await.unwrap();
        ctx.link(p).await.unwrap();
        ctx.link(p).await.unwrap();
        ctx.link(ctx.pid()).await.unwrap();
        let info = ctx.process_info(ctx.pid()).await.unwrap();
        ctx.send_exit(p, Reason::from("x")).await;
        let mut exits = 0;
        while ctx.receive_timeout::<Exit>(SHORT).await.is_some() {
            exits += 1;
        }
        (info.links, exits)
    });
    assert_eq!(links.len(), 1, "one link per pair, none to self");
    assert_eq!(exits, 1, "one exit signal through the one link");
}

#[test]
fn link_to_a_dead_pid_raises_noproc_in_a_non_trapping_caller() {
    let r = run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, p).await;
        ctx.link(p).await
    });
    assert_eq!(r, Err(Reason::NoProc));
}

#[test]
fn link_to_a_dead_pid_sends_exit_noproc_to_a_trapping_caller() {
    let (r, e) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, p).await;
        let r = ctx.link(p).await;
        let e = ctx.receive::<Exit>().await;
        assert_eq!(e.from, p);
        (r, e.reason)
    });
    assert_eq!(r, Ok(()));
    assert_eq!(e, Reason::NoProc);
}

#[test]
fn link_racing_with_the_targets_exit_gets_noproc() {
    // Many tries: the target exits while the link signal is in flight.
    let noprocs_or_exits = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let mut answered = 0;
        for _ in 0..200 {
            let p = ctx.spawn(|_| async {}).await.unwrap();
            if ctx.link(p).await.is_ok() {
                let e = ctx.receive_where(move |e: &Exit| e.from == p).await;
                assert!(
                    e.reason == Reason::NoProc || e.reason == Reason::Normal,
                    "{e:?}"
                );
            }
            answered += 1;
        }
        answered
    });
    assert_eq!(noprocs_or_exits, 200);
}

#[test]
fn after_unlink_no_new_exit_signal_from_that_link_arrives() {
    let alive = run(|ctx| async move {
        let me = ctx.pid();
        let (p, _) = ctx
            .spawn_monitor(move |ctx| async move {
                ctx.receive::<Pid>().await;
                ctx.exit(Reason::from("crash")).await;
            })
            .await
            .unwrap();
        ctx.link(p).await.unwrap();
        ctx.unlink(p).await;
        ctx.send(p, me).await;
        down_of(&ctx, p).await;
        ctx.receive_timeout::<()>(SHORT).await;
        true // still here: the crash did not take us
    });
    assert!(alive);
}

#[test]
fn spawn_link_links_atomically() {
    let got = run(|ctx| async move {
        ctx.trap_exit(true).await;
        // The child dies before the parent can do anything else.
        let child = ctx
            .spawn_link(|ctx| async move {
                ctx.exit(Reason::from("instant")).await;
            })
            .await
            .unwrap();
        ctx.receive::<Exit>().await
            == Exit {
                from: child,
                reason: Reason::from("instant"),
            }
    });
    assert!(got);
}

#[test]
fn a_linked_normal_exit_is_ignored_by_a_non_trapping_partner() {
    let alive = run(|ctx| async move {
        let child = ctx.spawn_link(|_| async {}).await.unwrap();
        let m = ctx.monitor(child).await;
        ctx.receive_where(move |d: &Down| d.mref == m).await;
        ctx.receive_timeout::<()>(SHORT).await;
        true
    });
    assert!(alive);
}

// --- 4. monitors ------------------------------------------------------------

#[test]
fn monitor_fires_once_with_the_exit_reason() {
    let (d, extra) = run(|ctx| async move {
        let p = ctx
            .spawn(|ctx| async move {
                ctx.receive::<()>().await; // exits only once monitored
                ctx.exit(Reason::from("done")).await;
            })
            .await
            .unwrap();
        let m = ctx.monitor(p).await;
        ctx.send(p, ()).await;
        let d = ctx.receive::<Down>().await;
        assert_eq!(d.mref, m);
        (d, ctx.receive_timeout::<Down>(SHORT).await)
    });
    assert_eq!(d.reason, Reason::from("done"));
    assert!(extra.is_none(), "fires once");
}

#[test]
fn repeated_monitors_are_independent() {
    let refs = run(|ctx| async move {
        let p = ctx.spawn(idle).await.unwrap();
        let m1 = ctx.monitor(p).await;
        let m2 = ctx.monitor(p).await;
        assert_ne!(m1, m2);
        ctx.demonitor(m1).await;
        ctx.send(p, ()).await;
        let d = ctx.receive::<Down>().await;
        let none = ctx.receive_timeout::<Down>(SHORT).await;
        (d.mref == m2, none.is_none())
    });
    assert_eq!(refs, (true, true));
}

#[test]
fn monitoring_a_dead_pid_delivers_down_noproc() {
    let d = run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, p).await;
        let m = ctx.monitor(p).await;
        let d = ctx.receive::<Down>().await;
        assert_eq!((d.mref, d.pid), (m, p));
        d.reason
    });
    assert_eq!(d, Reason::NoProc);
}

#[test]
fn after_demonitor_no_new_down_arrives() {
    let none = run(|ctx| async move {
        let p = ctx.spawn(idle).await.unwrap();
        let m = ctx.monitor(p).await;
        assert!(ctx.demonitor(m).await);
        assert!(!ctx.demonitor(m).await, "second demonitor: not active");
        ctx.send(p, ()).await;
        ctx.receive_timeout::<Down>(SHORT).await
    });
    assert!(none.is_none());
}

#[test]
fn demonitor_flush_removes_a_down_already_queued() {
    let none = run(|ctx| async move {
        let (p, m) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        // Make sure the Down is in our mailbox (another message after it).
        let me = ctx.pid();
        while ctx.is_alive(p).await {
            ctx.yield_now().await;
        }
        ctx.send(me, "marker").await;
        ctx.receive::<&str>().await;
        ctx.demonitor_flush(m).await;
        ctx.receive_timeout::<Down>(Duration::ZERO).await
    });
    assert!(none.is_none());
}

#[test]
fn spawn_monitor_monitors_atomically() {
    let d = run(|ctx| async move {
        let (p, m) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.exit(Reason::from("at once")).await;
            })
            .await
            .unwrap();
        let d = ctx.receive::<Down>().await;
        assert_eq!((d.pid, d.mref), (p, m));
        d.reason
    });
    assert_eq!(d, Reason::from("at once"));
}

// --- 5. registry --------------------------------------------------------------

#[test]
fn register_whereis_and_send_to_a_name() {
    let got = run(|ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                let n: u32 = ctx.receive().await;
                ctx.send(me, n + 1).await;
            })
            .await
            .unwrap();
        ctx.register_pid("adder", p).await.unwrap();
        assert_eq!(ctx.whereis("adder").await, Some(p));
        ctx.send_name("adder", 41u32).await.unwrap();
        ctx.receive::<u32>().await
    });
    assert_eq!(got, 42);
}

#[test]
fn register_fails_clearly_when_taken_already_named_or_dead() {
    use lona_runtime::RegisterError;
    run(|ctx| async move {
        let a = ctx.spawn(idle).await.unwrap();
        let b = ctx.spawn(idle).await.unwrap();
        ctx.register_pid("a", a).await.unwrap();
        assert_eq!(
            ctx.register_pid("a", b).await,
            Err(RegisterError::NameTaken {
                name: "a".into(),
                holder: a
            })
        );
        assert_eq!(
            ctx.register_pid("other", a).await,
            Err(RegisterError::AlreadyRegistered {
                pid: a,
                name: "a".into()
            })
        );
        let (dead, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, dead).await;
        let e = ctx.register_pid("d", dead).await.unwrap_err();
        assert_eq!(e, RegisterError::NoProc(dead));
        assert!(e.to_string().contains("noproc"));
        assert!(ctx.unregister("a").await);
        assert!(!ctx.unregister("a").await);
        assert_eq!(ctx.whereis("a").await, None);
        ctx.register_pid("a", b).await.unwrap();
    });
}

#[test]
fn a_name_is_freed_when_its_process_exits() {
    let free = run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(idle).await.unwrap();
        ctx.register_pid("worker", p).await.unwrap();
        ctx.send(p, ()).await;
        down_of(&ctx, p).await;
        let q = ctx.spawn(idle).await.unwrap();
        (
            ctx.whereis("worker").await,
            ctx.register_pid("worker", q).await,
        )
    });
    assert_eq!(free, (None, Ok(())));
}

#[test]
fn sending_to_an_unregistered_name_is_an_error() {
    let e = run(|ctx| async move { ctx.send_name("nobody", 1u8).await });
    assert_eq!(e, Err(lona_runtime::SendError::NoName("nobody".into())));
}

#[test]
fn sending_to_a_dead_pid_silently_succeeds() {
    let r = run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, p).await;
        ctx.send(p, 1u8).await;
        ctx.receive_timeout::<u8>(Duration::ZERO).await
    });
    assert_eq!(r, None, "the sender goes on; nothing comes back");
}

// --- 6. timers --------------------------------------------------------------

#[test]
fn send_after_delivers_later() {
    let (early, late) = run(|ctx| async move {
        ctx.send_after(Duration::from_millis(40), ctx.pid(), "tick")
            .await;
        let early = ctx.receive_timeout::<&str>(Duration::from_millis(5)).await;
        let late = ctx.receive_timeout::<&str>(Duration::from_secs(5)).await;
        (early, late)
    });
    assert_eq!((early, late), (None, Some("tick")));
}

#[test]
fn start_timer_delivers_timeout_with_its_reference() {
    let ok = run(|ctx| async move {
        let t = ctx
            .start_timer(Duration::from_millis(10), ctx.pid(), 7u32)
            .await;
        let m = ctx.receive::<Timeout<u32>>().await;
        m.tref == t && m.msg == 7
    });
    assert!(ok);
}

#[test]
fn cancel_timer_says_whether_it_had_fired() {
    let (pending, fired) = run(|ctx| async move {
        let t1 = ctx
            .send_after(Duration::from_secs(60), ctx.pid(), 1u8)
            .await;
        let left = ctx.cancel_timer(t1).await;
        let t2 = ctx
            .send_after(Duration::from_millis(1), ctx.pid(), 2u8)
            .await;
        ctx.receive::<u8>().await;
        (left, ctx.cancel_timer(t2).await)
    });
    assert!(
        matches!(pending, Some(d) if d > Duration::from_secs(50)),
        "{pending:?}"
    );
    assert_eq!(fired, None);
}

#[test]
fn a_timer_whose_target_exits_is_cancelled() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let h = rt.handle();
    rt.block_on(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(idle).await.unwrap();
        for i in 0..100u32 {
            ctx.send_after(Duration::from_secs(3600), p, i).await;
        }
        ctx.send(p, ()).await;
        down_of(&ctx, p).await;
    })
    .unwrap();
    assert_eq!(h.pending_timers(), 0);
}

// --- 7. exit reasons ----------------------------------------------------------

#[test]
fn exit_reasons_carry_any_data() {
    #[derive(Debug, PartialEq)]
    struct Oops {
        code: i32,
        why: String,
    }
    let (via_link, via_monitor) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let p = ctx
            .spawn_link(|ctx| async move {
                ctx.exit(Reason::custom(Oops {
                    code: 3,
                    why: "disk".into(),
                }))
                .await;
            })
            .await
            .unwrap();
        let m = ctx.monitor(p).await;
        let e = ctx.receive::<Exit>().await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        (e.reason, d.reason)
    });
    let want = Oops {
        code: 3,
        why: "disk".into(),
    };
    assert_eq!(via_link.downcast_ref::<Oops>(), Some(&want));
    // Monitoring after death gives noproc; monitoring before gives the reason.
    assert!(via_monitor == Reason::NoProc || via_monitor.downcast_ref::<Oops>() == Some(&want));
}

// --- 8. process info ----------------------------------------------------------

#[test]
fn process_info_describes_a_live_process_and_nothing_for_a_dead_one() {
    let (info, me, dead) = run(|ctx| async move {
        let me = ctx.pid();
        let p = ctx
            .spawn(move |ctx| async move {
                ctx.trap_exit(true).await;
                ctx.link(me).await.unwrap();
                ctx.register("inspected").await.unwrap();
                ctx.send(me, "ready").await;
                ctx.receive::<()>().await;
            })
            .await
            .unwrap();
        let _m = ctx.monitor(p).await;
        ctx.receive::<&str>().await;
        ctx.send(p, 1u64).await;
        ctx.send(p, 2u64).await;
        ctx.receive_timeout::<()>(Duration::from_millis(20)).await;
        let info = ctx.process_info(p).await.unwrap();
        ctx.unlink(p).await;
        let (gone, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, gone).await;
        (info, me, ctx.process_info(gone).await)
    });
    assert_eq!(info.status, Status::Waiting);
    assert_eq!(info.message_queue_len, 2);
    assert!(info.reductions > 0);
    assert!(info.memory > 0);
    assert_eq!(info.links, vec![me]);
    assert_eq!(info.monitored_by, vec![me]);
    assert_eq!(info.registered_name.as_deref(), Some("inspected"));
    assert!(info.trap_exit);
    assert_eq!(dead, None);
}

#[test]
fn runtime_exit_and_shutdown_reach_trapping_processes_as_exit_messages() {
    let rt: Runtime = Builder::default().workers(1).build().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(move |ctx| async move {
        ctx.trap_exit(true).await;
        let e = ctx.receive::<Exit>().await;
        tx.send(e).unwrap();
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let report = rt.shutdown();
    assert_eq!(report.killed, 0);
    let e = rx.recv().unwrap();
    assert_eq!(
        (e.from, e.reason),
        (lona_runtime::RUNTIME_PID, Reason::Shutdown)
    );
}

#[test]
fn a_timer_for_an_already_dead_target_is_cancelled_at_once() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let h = rt.handle();
    let (t, left) = rt
        .block_on(|ctx| async move {
            let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
            down_of(&ctx, p).await;
            let t = ctx.send_after(Duration::from_secs(3600), p, 1u8).await;
            (t, ctx.cancel_timer(t).await)
        })
        .unwrap();
    let _ = t;
    assert_eq!(left, None, "already cancelled");
    assert_eq!(h.pending_timers(), 0);
}

#[test]
fn a_process_killed_in_a_receive_with_timeout_leaves_no_timer() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let h = rt.handle();
    rt.block_on(|ctx| async move {
        let (p, _) = ctx
            .spawn_monitor(|ctx| async move {
                ctx.receive_timeout::<u8>(Duration::from_secs(3600)).await;
            })
            .await
            .unwrap();
        while ctx.handle().pending_timers() == 0 {
            ctx.yield_now().await;
        }
        ctx.send_exit(p, Reason::Kill).await;
        down_of(&ctx, p).await;
    })
    .unwrap();
    assert_eq!(h.pending_timers(), 0);
}

#[test]
fn messages_sent_before_an_exit_arrive_before_its_exit_signal() {
    // Batched messages must not be overtaken by the link's exit signal.
    let order = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let me = ctx.pid();
        ctx.spawn_link(move |ctx| async move {
            for i in 0..300u32 {
                ctx.send(me, i).await;
            }
            ctx.exit(Reason::from("done")).await;
        })
        .await
        .unwrap();
        let mut seen = 0u32;
        loop {
            let e = ctx.receive_any().await;
            match e.downcast::<u32>() {
                Ok(i) => {
                    assert_eq!(i, seen, "messages in order");
                    seen += 1;
                }
                Err(e) => {
                    assert!(e.is::<Exit>());
                    return seen;
                }
            }
        }
    });
    assert_eq!(order, 300, "all messages before the exit signal");
}

// --- 12. exit signals from outside the runtime ------------------------------

#[test]
fn a_foreign_exit_follows_the_exit_rules_and_names_its_origin() {
    let seen = run(|ctx| async move {
        let h = ctx.handle();
        let origin: lona_runtime::Origin = std::sync::Arc::new("remote-pid");
        // Trapping: a message naming the origin, for every reason.
        ctx.trap_exit(true).await;
        h.send_foreign_exit(ctx.pid(), origin.clone(), Reason::Normal, true);
        let e = ctx.receive::<lona_runtime::ForeignExit>().await;
        assert_eq!(e.from.downcast_ref::<&str>(), Some(&"remote-pid"));
        assert_eq!(e.reason, Reason::Normal);
        // Not trapping: normal is ignored, another reason ends the process
        // with that reason, kill not through a link ends it killed.
        let mut out = vec![];
        for (reason, link) in [
            (Reason::Normal, true),
            (Reason::from("boom"), true),
            (Reason::Kill, false),
            (Reason::Kill, true),
        ] {
            let child = ctx.spawn(idle).await.unwrap();
            let mref = ctx.monitor(child).await;
            h.send_foreign_exit(child, origin.clone(), reason, link);
            match ctx
                .receive_where_timeout(move |d: &Down| d.mref == mref, SHORT)
                .await
            {
                Some(d) => out.push(format!("{:?}", d.reason)),
                None => {
                    out.push("alive".to_string());
                    ctx.send_exit(child, Reason::Kill).await;
                }
            }
        }
        out
    });
    assert_eq!(seen, vec!["alive", "\"boom\"", "killed", "kill"]);
}

// --- 13. links and monitors made on another process's behalf ----------------

/// A process that ends with reason "done" on its first `()`.
async fn ends_on_unit(ctx: Ctx) {
    ctx.receive::<()>().await;
    ctx.exit(Reason::from("done")).await;
}

/// A helper monitors (or links) `P` on the test process's behalf and at
/// once sends `P` what ends it: the monitor or link is in place before
/// that, every time (the `Monitor`/`Link` reaches `P` in order with the
/// helper's message), and the test process gets the `Down` or `Exit` with
/// `P`'s reason, as if it had made it itself. 100 rounds each.
#[test]
fn a_monitor_made_on_anothers_behalf_is_its_own_and_keeps_the_makers_order() {
    let reasons = run(|ctx| async move {
        let me = ctx.pid();
        let mut reasons = Vec::new();
        for _ in 0..100 {
            let p = ctx.spawn(ends_on_unit).await.unwrap();
            let r = lona_runtime::Ref::new();
            ctx.spawn(move |ctx| async move {
                ctx.handle().monitor_for(me, p, r);
                ctx.send(p, ()).await;
            })
            .await
            .unwrap();
            let d = down_of(&ctx, p).await;
            assert_eq!(d.mref, r);
            reasons.push(d.reason);
        }
        reasons
    });
    assert!(
        reasons.iter().all(|r| *r == Reason::from("done")),
        "{reasons:?}"
    );
}

#[test]
fn a_link_made_on_anothers_behalf_is_its_own_and_keeps_the_makers_order() {
    let reasons = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let me = ctx.pid();
        let mut reasons = Vec::new();
        for _ in 0..100 {
            let p = ctx.spawn(ends_on_unit).await.unwrap();
            ctx.spawn(move |ctx| async move {
                ctx.handle().link_for(me, p);
                ctx.send(p, ()).await;
            })
            .await
            .unwrap();
            let e = ctx.receive_where(move |e: &Exit| e.from == p).await;
            reasons.push(e.reason);
        }
        reasons
    });
    assert!(
        reasons.iter().all(|r| *r == Reason::from("done")),
        "{reasons:?}"
    );
}

/// Made for a process that is gone: `Down` `noproc`, and an exit signal
/// `noproc` through the link, as for the owner's own `monitor`/`link`; a
/// monitor made for the caller can be taken back by it (no `Down` comes).
#[test]
fn on_anothers_behalf_to_a_dead_process_is_noproc_and_demonitor_works() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let me = ctx.pid();
        let (gone, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        down_of(&ctx, gone).await;
        let r = lona_runtime::Ref::new();
        ctx.handle().monitor_for(me, gone, r);
        let d = down_of(&ctx, gone).await;
        assert_eq!((d.mref, d.reason), (r, Reason::NoProc));
        ctx.handle().link_for(me, gone);
        let e = ctx.receive_where(move |e: &Exit| e.from == gone).await;
        assert_eq!(e.reason, Reason::NoProc);

        let p = ctx.spawn(ends_on_unit).await.unwrap();
        let r = lona_runtime::Ref::new();
        ctx.handle().monitor_for(me, p, r);
        // The monitor is recorded as the caller drains its inbox (here,
        // receiving a message sent after it).
        ctx.send(me, "marker").await;
        ctx.receive::<&str>().await;
        assert!(ctx.demonitor(r).await, "the caller's own monitor");
        ctx.send(p, ()).await;
        assert!(ctx.receive_timeout::<Down>(SHORT).await.is_none());
    });
}
