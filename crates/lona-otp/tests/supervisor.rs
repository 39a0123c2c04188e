//! Supervisor conformance: one test per rule of `src/supervisor/mod.rs`,
//! from the OTP design principles ("Supervisor Behaviour").

mod common;
use common::{pause, pid_of, restarted, run, worker, Log, Never};
use lona_otp::{
    ChildCounts, ChildSpec, ChildType, Restart, Shutdown, ShutdownWith, StartError, Strategy,
    Supervisor, SupervisorError, SupervisorRef,
};
use lona_runtime::{Ctx, Down, Exit, Pid, Reason};
use std::time::Duration;

/// Many restarts allowed: tests of restarts, not of intensity.
fn sup(strategy: Strategy) -> Supervisor {
    Supervisor::new(strategy).intensity(100, Duration::from_secs(5))
}

async fn crash(ctx: &Ctx, sup: &SupervisorRef, id: &str) -> Pid {
    let p = pid_of(ctx, sup, id).await.expect("child running");
    ctx.send_exit(p, Reason::from("crash")).await;
    p
}

/// Wait until the supervisor is gone; its exit reason.
async fn sup_down(ctx: &Ctx, sup: &SupervisorRef) -> Reason {
    let m = ctx.monitor(sup.pid()).await;
    ctx.receive_where(move |d: &Down| d.mref == m).await.reason
}

// --- 2, 3. start and stop order ------------------------------------------------

#[test]
fn children_start_in_spec_order_and_stop_in_reverse() {
    let log = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .children(["a", "b", "c"].map(|id| worker(id, &log)))
            .start_link(&ctx, None)
            .await
            .unwrap();
        assert_eq!(
            log.get(),
            ["start a", "start b", "start c"],
            "started before start_link returned"
        );
        s.stop(&ctx).await.unwrap();
        log.take()
    });
    assert_eq!(
        log,
        ["start a", "start b", "start c", "stop c", "stop b", "stop a"]
    );
}

#[test]
fn failed_child_start_stops_the_started_ones_and_fails_start() {
    let (r, log) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let r = sup(Strategy::OneForOne)
            .child(worker("a", &log))
            .child(worker("b", &log))
            .child(ChildSpec::new("bad", |_| {
                Box::pin(async { Err(Reason::from("no database")) })
            }))
            .child(worker("d", &log))
            .start_link(&ctx, None)
            .await;
        (r, log.take())
    });
    assert_eq!(log, ["start a", "start b", "stop b", "stop a"]);
    let expected = SupervisorError::FailedToStartChild {
        id: "bad".into(),
        reason: Reason::from("no database"),
    };
    assert_eq!(r.unwrap_err(), StartError::Init(Reason::custom(expected)));
}

#[test]
fn start_fn_that_panics_is_a_failed_start_not_a_dead_node() {
    let r = run(|ctx| async move {
        ctx.trap_exit(true).await;
        sup(Strategy::OneForOne)
            .child(ChildSpec::new("boom", |_| panic!("start fn panicked")))
            .start_link(&ctx, None)
            .await
    });
    let Err(StartError::Init(reason)) = r else {
        panic!("expected a failed start, got {r:?}")
    };
    match reason.downcast_ref::<SupervisorError>() {
        Some(SupervisorError::FailedToStartChild {
            id,
            reason: Reason::Panic(p),
        }) => {
            assert_eq!(id, "boom");
            assert_eq!(p.message, "start fn panicked");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn start_fn_future_that_panics_is_a_failed_start() {
    let r = run(|ctx| async move {
        ctx.trap_exit(true).await;
        sup(Strategy::OneForOne)
            .child(ChildSpec::new("boom", |_| {
                Box::pin(async { panic!("start future panicked") })
            }))
            .start(&ctx, None)
            .await
    });
    assert!(matches!(r, Err(StartError::Init(_))), "{r:?}");
}

#[test]
fn duplicate_child_ids_are_a_clear_error() {
    let r = run(|ctx| async move {
        let log = Log::default();
        sup(Strategy::OneForOne)
            .child(worker("a", &log))
            .child(worker("a", &log))
            .start(&ctx, None)
            .await
    });
    assert_eq!(
        r.unwrap_err(),
        StartError::Init(Reason::custom(SupervisorError::DuplicateId("a".into())))
    );
}

#[test]
fn dependency_cycle_and_unknown_dependency_are_errors_at_start() {
    let (cycle, unknown, started) = run(|ctx| async move {
        let log = Log::default();
        let cycle = sup(Strategy::OneForOne)
            .child(worker("a", &log).depends_on("b"))
            .child(worker("b", &log).depends_on("a"))
            .start(&ctx, None)
            .await;
        let unknown = sup(Strategy::OneForOne)
            .child(worker("a", &log).depends_on("ghost"))
            .start(&ctx, None)
            .await;
        (cycle, unknown, log.take())
    });
    assert_eq!(
        cycle.unwrap_err(),
        StartError::Init(Reason::custom(SupervisorError::Cycle(vec![
            "a".into(),
            "b".into()
        ])))
    );
    assert_eq!(
        unknown.unwrap_err(),
        StartError::Init(Reason::custom(SupervisorError::UnknownDependency {
            child: "a".into(),
            missing: "ghost".into()
        }))
    );
    assert!(started.is_empty(), "nothing starts: {started:?}");
}

// --- 9. dependency graph ----------------------------------------------------------

#[test]
fn start_follows_dependencies_and_stop_is_the_reverse() {
    let log = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(worker("web", &log).depends_on("db").depends_on("cache"))
            .child(worker("cache", &log))
            .child(worker("db", &log).depends_on("log"))
            .child(worker("log", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let ids: Vec<String> = s
            .which_children(&ctx)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, ["cache", "log", "db", "web"]);
        s.stop(&ctx).await.unwrap();
        log.take()
    });
    assert_eq!(
        log,
        [
            "start cache",
            "start log",
            "start db",
            "start web",
            "stop web",
            "stop db",
            "stop log",
            "stop cache"
        ]
    );
}

#[test]
fn dependents_restart_with_their_dependency() {
    let log = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(worker("db", &log))
            .child(worker("other", &log))
            .child(worker("repo", &log).depends_on("db"))
            .child(worker("api", &log).depends_on("repo"))
            .start_link(&ctx, None)
            .await
            .unwrap();
        log.take();
        let old = crash(&ctx, &s, "db").await;
        restarted(&ctx, &s, "db", old).await;
        // api is started last in the restart: wait for it.
        while log.get().len() < 5 {
            pause(&ctx, 2).await;
        }
        log.take()
    });
    // The dependents are stopped (reverse order), then all start again;
    // "other" is untouched.
    assert_eq!(
        log,
        [
            "stop api",
            "stop repo",
            "start db",
            "start repo",
            "start api"
        ]
    );
}

// --- 4. restart types ---------------------------------------------------------------

/// A child that ends with the reason it is sent as a message.
fn ender(id: &str, restart: Restart, starts: &Log) -> ChildSpec {
    let (id2, starts) = (id.to_string(), starts.clone());
    ChildSpec::worker(id, move |ctx| {
        let (id, starts) = (id2.clone(), starts.clone());
        async move {
            starts.push(id);
            let r: Reason = ctx.receive().await;
            match ctx.exit(r).await {}
        }
    })
    .restart(restart)
}

/// Start a supervisor with one `ender`, make it end with `reason`, and
/// say whether it was restarted (and whether its spec remains).
fn ends_with(restart: Restart, reason: Reason) -> (bool, usize) {
    run(move |ctx| async move {
        ctx.trap_exit(true).await;
        let starts = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(ender("c", restart, &starts))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let p = pid_of(&ctx, &s, "c").await.unwrap();
        let m = ctx.monitor(p).await;
        ctx.send(p, reason).await;
        ctx.receive_where(move |d: &Down| d.mref == m).await;
        // The supervisor handles the exit before our next call? Not
        // necessarily: wait a little for a restart to show.
        let mut restarted = false;
        for _ in 0..50 {
            if starts.get().len() == 2 {
                restarted = true;
                break;
            }
            pause(&ctx, 2).await;
        }
        let specs = s.count_children(&ctx).await.unwrap().specs;
        (restarted, specs)
    })
}

#[test]
fn permanent_child_is_restarted_even_after_normal_exit() {
    assert_eq!(ends_with(Restart::Permanent, Reason::Normal), (true, 1));
    assert_eq!(
        ends_with(Restart::Permanent, Reason::from("boom")),
        (true, 1)
    );
}

#[test]
fn transient_child_is_not_restarted_after_normal_reason() {
    assert_eq!(ends_with(Restart::Transient, Reason::Normal), (false, 1));
}

#[test]
fn transient_child_is_not_restarted_after_shutdown_reason() {
    assert_eq!(ends_with(Restart::Transient, Reason::Shutdown), (false, 1));
    assert_eq!(
        ends_with(
            Restart::Transient,
            Reason::custom(ShutdownWith("maintenance".into()))
        ),
        (false, 1)
    );
}

#[test]
fn transient_child_is_restarted_after_abnormal_reason() {
    assert_eq!(
        ends_with(Restart::Transient, Reason::from("boom")),
        (true, 1)
    );
    assert_eq!(ends_with(Restart::Transient, Reason::Killed), (true, 1));
}

#[test]
fn temporary_child_is_never_restarted_and_its_spec_is_removed() {
    assert_eq!(
        ends_with(Restart::Temporary, Reason::from("boom")),
        (false, 0)
    );
    assert_eq!(ends_with(Restart::Temporary, Reason::Normal), (false, 0));
}

// --- 5. strategies ---------------------------------------------------------------------

fn strategy_run(strategy: Strategy, crashed: &'static str) -> Vec<String> {
    run(move |ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(strategy)
            .children(["a", "b", "c", "d"].map(|id| worker(id, &log)))
            .start_link(&ctx, None)
            .await
            .unwrap();
        log.take();
        let before = s.which_children(&ctx).await.unwrap();
        let old = crash(&ctx, &s, crashed).await;
        restarted(&ctx, &s, crashed, old).await;
        // Every child of the group has a new pid, the others the old one.
        let after = s.which_children(&ctx).await.unwrap();
        for (b, a) in before.iter().zip(&after) {
            if b.pid != a.pid {
                log.push(format!("new pid {}", a.id));
            }
        }
        log.take()
    })
}

#[test]
fn one_for_one_restarts_only_the_crashed_child() {
    assert_eq!(
        strategy_run(Strategy::OneForOne, "b"),
        ["start b", "new pid b"]
    );
}

#[test]
fn one_for_all_restarts_every_child_stopping_in_reverse_order() {
    assert_eq!(
        strategy_run(Strategy::OneForAll, "b"),
        [
            "stop d",
            "stop c",
            "stop a",
            "start a",
            "start b",
            "start c",
            "start d",
            "new pid a",
            "new pid b",
            "new pid c",
            "new pid d"
        ]
    );
}

#[test]
fn rest_for_one_restarts_later_children_only() {
    assert_eq!(
        strategy_run(Strategy::RestForOne, "b"),
        [
            "stop d",
            "stop c",
            "start b",
            "start c",
            "start d",
            "new pid b",
            "new pid c",
            "new pid d"
        ]
    );
}

#[test]
fn temporary_sibling_stopped_by_a_group_restart_is_not_restarted() {
    let (log, ids) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForAll)
            .child(worker("a", &log))
            .child(worker("tmp", &log).restart(Restart::Temporary))
            .start_link(&ctx, None)
            .await
            .unwrap();
        log.take();
        let old = crash(&ctx, &s, "a").await;
        restarted(&ctx, &s, "a", old).await;
        let ids: Vec<String> = s
            .which_children(&ctx)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        (log.take(), ids)
    });
    assert_eq!(log, ["stop tmp", "start a"]);
    assert_eq!(ids, ["a"]);
}

#[test]
fn restarted_child_starts_after_old_incarnation_released_its_name() {
    // Each incarnation registers the same name; if a new one started
    // beside the old one, its registration would fail and it would crash
    // with that error instead of running.
    let (holders, failures) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let failures = Log::default();
        let f2 = failures.clone();
        let s = Supervisor::new(Strategy::OneForOne)
            .intensity(1000, Duration::from_secs(60))
            .child(ChildSpec::worker("named", move |ctx| {
                let failures = f2.clone();
                async move {
                    if let Err(e) = ctx.register("the_name").await {
                        failures.push(format!("{e}"));
                        return;
                    }
                    // Take a moment to end, so a start beside us would race.
                    ctx.trap_exit(true).await;
                    let x = ctx.receive::<Exit>().await;
                    pause(&ctx, 1).await;
                    match ctx.exit(x.reason).await {}
                }
            }))
            .start_link(&ctx, None)
            .await
            .unwrap();
        while ctx.whereis("the_name").await.is_none() {
            pause(&ctx, 1).await;
        }
        let mut holders = vec![];
        for _ in 0..20 {
            let p = ctx.whereis("the_name").await.unwrap();
            holders.push(p);
            ctx.send_exit(p, Reason::from("crash")).await;
            restarted(&ctx, &s, "named", p).await;
            while ctx.whereis("the_name").await.is_none() {
                pause(&ctx, 1).await;
            }
        }
        (holders, failures.take())
    });
    assert!(
        failures.is_empty(),
        "a restart ran beside its old incarnation: {failures:?}"
    );
    let mut unique = holders.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 20);
}

// --- 6. intensity ------------------------------------------------------------------------

#[test]
fn restarts_within_the_intensity_are_allowed() {
    let alive = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        // The default: 1 restart in 5 seconds.
        let s = Supervisor::new(Strategy::OneForOne)
            .child(worker("a", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let old = crash(&ctx, &s, "a").await;
        restarted(&ctx, &s, "a", old).await;
        ctx.is_alive(s.pid()).await
    });
    assert!(alive);
}

#[test]
fn intensity_exceeded_shuts_children_down_and_exits_shutdown() {
    let (log, reason) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = Supervisor::new(Strategy::OneForOne)
            .intensity(2, Duration::from_secs(60))
            .child(worker("a", &log))
            .child(worker("b", &log))
            .child(worker("c", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        log.take();
        for _ in 0..2 {
            let old = crash(&ctx, &s, "b").await;
            restarted(&ctx, &s, "b", old).await;
        }
        let m = ctx.monitor(s.pid()).await;
        crash(&ctx, &s, "b").await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        // The linked parent gets the exit too.
        let x = ctx
            .receive_where(|x: &Exit| x.reason == Reason::Shutdown)
            .await;
        assert_eq!(x.from, s.pid());
        (log.take(), d.reason)
    });
    assert_eq!(log, ["start b", "start b", "stop c", "stop a"]);
    assert_eq!(reason, Reason::Shutdown);
}

#[test]
fn zero_intensity_gives_up_at_the_first_crash() {
    let reason = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = Supervisor::new(Strategy::OneForOne)
            .intensity(0, Duration::from_secs(5))
            .child(worker("a", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let m = ctx.monitor(s.pid()).await;
        crash(&ctx, &s, "a").await;
        ctx.receive_where(move |d: &Down| d.mref == m).await.reason
    });
    assert_eq!(reason, Reason::Shutdown);
}

#[test]
fn failing_restarts_count_towards_the_intensity() {
    let reason = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let fail = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f2 = fail.clone();
        let s = Supervisor::new(Strategy::OneForOne)
            .intensity(5, Duration::from_secs(60))
            .child(ChildSpec::new("flaky", move |ctx| {
                let fail = f2.load(std::sync::atomic::Ordering::SeqCst);
                Box::pin(async move {
                    if fail {
                        return Err(Reason::from("cannot start"));
                    }
                    ctx.spawn_link(|c| async move {
                        c.receive::<Never>().await;
                    })
                    .await
                    .map_err(Reason::custom)
                })
            }))
            .start_link(&ctx, None)
            .await
            .unwrap();
        fail.store(true, std::sync::atomic::Ordering::SeqCst);
        crash(&ctx, &s, "flaky").await;
        sup_down(&ctx, &s).await
    });
    assert_eq!(reason, Reason::Shutdown);
}

// --- 3. shutdown ------------------------------------------------------------------------------

/// A child that traps exits and ignores them all.
fn stubborn(id: &str, shutdown: Shutdown) -> ChildSpec {
    ChildSpec::worker(id, |ctx| async move {
        ctx.trap_exit(true).await;
        loop {
            ctx.receive::<Exit>().await;
        }
    })
    .shutdown(shutdown)
}

#[test]
fn child_that_ignores_shutdown_is_killed_after_the_timeout() {
    let (r, reason) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = sup(Strategy::OneForOne)
            .child(stubborn(
                "deaf",
                Shutdown::Timeout(Duration::from_millis(30)),
            ))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let p = pid_of(&ctx, &s, "deaf").await.unwrap();
        // Its start returns once it is spawned; wait until it traps exits
        // (else the shutdown ends it before it can ignore it).
        while !ctx.process_info(p).await.is_some_and(|i| i.trap_exit) {
            ctx.yield_now().await;
        }
        let m = ctx.monitor(p).await;
        let r = s.terminate_child(&ctx, "deaf").await;
        (
            r,
            ctx.receive_where(move |d: &Down| d.mref == m).await.reason,
        )
    });
    assert_eq!(r, Ok(()));
    assert_eq!(reason, Reason::Killed);
}

#[test]
fn brutal_kill_kills_at_once() {
    let reason = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = sup(Strategy::OneForOne)
            .child(stubborn("deaf", Shutdown::BrutalKill))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let p = pid_of(&ctx, &s, "deaf").await.unwrap();
        let m = ctx.monitor(p).await;
        s.terminate_child(&ctx, "deaf").await.unwrap();
        ctx.receive_where(move |d: &Down| d.mref == m).await.reason
    });
    assert_eq!(reason, Reason::Killed);
}

#[test]
fn infinite_shutdown_waits_for_a_slow_child() {
    for shutdown in [Shutdown::Infinity, Shutdown::Timeout(Duration::MAX)] {
        let reason = run(move |ctx| async move {
            ctx.trap_exit(true).await;
            let s = sup(Strategy::OneForOne)
                .child(
                    ChildSpec::worker("slow", |ctx| async move {
                        ctx.trap_exit(true).await;
                        let x = ctx.receive::<Exit>().await;
                        pause(&ctx, 50).await;
                        match ctx.exit(x.reason).await {}
                    })
                    .shutdown(shutdown),
                )
                .start_link(&ctx, None)
                .await
                .unwrap();
            let p = pid_of(&ctx, &s, "slow").await.unwrap();
            let m = ctx.monitor(p).await;
            s.terminate_child(&ctx, "slow").await.unwrap();
            // terminate_child returned: the child had ended already.
            ctx.receive_where_timeout(move |d: &Down| d.mref == m, Duration::ZERO)
                .await
                .map(|d| d.reason)
        });
        assert_eq!(reason, Some(Reason::Shutdown), "{shutdown:?}");
    }
}

#[test]
fn default_shutdowns_are_otp_s() {
    let w = ChildSpec::worker("w", |_| async {});
    assert_eq!(w.shutdown, Shutdown::Timeout(Duration::from_millis(5000)));
    assert_eq!(w.restart, Restart::Permanent);
    assert_eq!(w.kind, ChildType::Worker);
    let s = Supervisor::new(Strategy::OneForOne).into_child_spec("s", None);
    assert_eq!(s.shutdown, Shutdown::Infinity);
    assert_eq!(s.kind, ChildType::Supervisor);
}

#[test]
fn parent_exit_stops_the_tree_in_order() {
    let (log, reason) = run(|ctx| async move {
        let log = Log::default();
        let me = ctx.pid();
        let l2 = log.clone();
        let parent = ctx
            .spawn(move |c| async move {
                let inner = sup(Strategy::OneForOne)
                    .child(worker("x", &l2))
                    .child(worker("y", &l2));
                let s = sup(Strategy::OneForOne)
                    .child(worker("a", &l2))
                    .child(inner.into_child_spec("inner", None))
                    .child(worker("b", &l2))
                    .start_link(&c, None)
                    .await
                    .unwrap();
                c.send(me, s.pid()).await;
                c.receive::<Never>().await;
            })
            .await
            .unwrap();
        let sup_pid: Pid = ctx.receive().await;
        let m = ctx.monitor(sup_pid).await;
        log.take();
        ctx.send_exit(parent, Reason::Shutdown).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        (log.take(), d.reason)
    });
    assert_eq!(log, ["stop b", "stop y", "stop x", "stop a"]);
    assert_eq!(reason, Reason::Shutdown);
}

// --- 7. calls -----------------------------------------------------------------------------------

#[test]
fn which_and_count_children_describe_the_children() {
    let (which, count) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(worker("a", &log))
            .child(Supervisor::new(Strategy::OneForOne).into_child_spec("sub", None))
            .child(worker("t", &log).restart(Restart::Transient))
            .start_link(&ctx, None)
            .await
            .unwrap();
        s.terminate_child(&ctx, "t").await.unwrap();
        (
            s.which_children(&ctx).await.unwrap(),
            s.count_children(&ctx).await.unwrap(),
        )
    });
    let ids: Vec<_> = which
        .iter()
        .map(|c| (c.id.as_str(), c.pid.is_some(), c.kind, c.restart))
        .collect();
    assert_eq!(
        ids,
        [
            ("a", true, ChildType::Worker, Restart::Permanent),
            ("sub", true, ChildType::Supervisor, Restart::Permanent),
            ("t", false, ChildType::Worker, Restart::Transient)
        ]
    );
    assert_eq!(
        count,
        ChildCounts {
            specs: 3,
            active: 2,
            supervisors: 1,
            workers: 2
        }
    );
}

#[test]
fn terminate_restart_and_delete_child() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(worker("a", &log))
            .child(worker("b", &log).depends_on("a"))
            .start_link(&ctx, None)
            .await
            .unwrap();
        assert_eq!(
            s.restart_child(&ctx, "a").await,
            Err(SupervisorError::Running("a".into()))
        );
        assert_eq!(
            s.delete_child(&ctx, "a").await,
            Err(SupervisorError::Running("a".into()))
        );
        assert_eq!(
            s.terminate_child(&ctx, "zz").await,
            Err(SupervisorError::NotFound("zz".into()))
        );
        s.terminate_child(&ctx, "a").await.unwrap();
        assert_eq!(pid_of(&ctx, &s, "a").await, None);
        assert_eq!(
            s.delete_child(&ctx, "a").await,
            Err(SupervisorError::HasDependents {
                id: "a".into(),
                dependents: vec!["b".into()]
            })
        );
        let p = s.restart_child(&ctx, "a").await.unwrap();
        assert_eq!(pid_of(&ctx, &s, "a").await, Some(p));
        s.terminate_child(&ctx, "b").await.unwrap();
        s.delete_child(&ctx, "b").await.unwrap();
        assert_eq!(s.count_children(&ctx).await.unwrap().specs, 1);
        assert_eq!(
            s.restart_child(&ctx, "b").await,
            Err(SupervisorError::NotFound("b".into()))
        );
    });
}

#[test]
fn start_child_adds_a_spec_to_a_running_supervisor() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = sup(Strategy::OneForOne)
            .child(worker("a", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let p = s
            .start_child(&ctx, worker("b", &log).depends_on("a"))
            .await
            .unwrap();
        assert_eq!(pid_of(&ctx, &s, "b").await, Some(p));
        assert_eq!(
            s.start_child(&ctx, worker("b", &log)).await,
            Err(SupervisorError::AlreadyPresent("b".into()))
        );
        assert_eq!(
            s.start_child(&ctx, worker("c", &log).depends_on("ghost"))
                .await,
            Err(SupervisorError::UnknownDependency {
                child: "c".into(),
                missing: "ghost".into()
            })
        );
        let bad = ChildSpec::new("bad", |_| Box::pin(async { Err(Reason::from("nope")) }));
        assert_eq!(
            s.start_child(&ctx, bad).await,
            Err(SupervisorError::FailedToStartChild {
                id: "bad".into(),
                reason: Reason::from("nope")
            })
        );
        assert_eq!(s.count_children(&ctx).await.unwrap().specs, 2);
        // The added child is supervised like the others.
        let old = crash(&ctx, &s, "b").await;
        restarted(&ctx, &s, "b", old).await;
    });
}

#[test]
fn calls_to_a_missing_supervisor_fail_noproc() {
    let r = run(|ctx| async move { SupervisorRef::named("nobody").which_children(&ctx).await });
    assert_eq!(r, Err(SupervisorError::Call(lona_otp::CallError::NoProc)));
}

#[test]
fn server_children_keep_their_name_across_restarts() {
    use lona_otp::{Answer, ReplyTo, Server, ServerRef};
    #[derive(Default)]
    struct Count(u32);
    impl Server for Count {
        type Call = bool; // crash?
        type Reply = u32;
        type Cast = ();
        type Info = ();
        async fn handle_call(&mut self, ctx: &Ctx, crash: bool, _: ReplyTo<u32>) -> Answer<u32> {
            if crash {
                match ctx.exit(Reason::from("asked")).await {}
            }
            self.0 += 1;
            Answer::Reply(self.0)
        }
    }
    let r = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = sup(Strategy::OneForOne)
            .child(ChildSpec::server("count", Some("count"), Count::default))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let c = ServerRef::<Count>::named("count");
        assert_eq!(c.call(&ctx, false).await, Ok(1));
        let old = ctx.whereis("count").await.unwrap();
        assert!(c.call(&ctx, true).await.is_err());
        restarted(&ctx, &s, "count", old).await;
        c.call(&ctx, false).await
    });
    assert_eq!(r, Ok(1), "a fresh state after the restart");
}
