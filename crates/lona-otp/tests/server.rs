//! gen_server conformance: one test per rule of `src/server.rs`.

mod common;
use common::{pause, run, Never};
use lona_otp::{
    start, start_link, Answer, CallError, Flow, Info, ReplyTo, Server, ServerRef, StartError,
};
use lona_runtime::{Ctx, Down, Exit, Pid, Reason};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A test server: calls say what to do.
#[derive(Default)]
struct Echo {
    /// Where `terminate` reports (`terminate REASON`).
    events: Arc<Mutex<Vec<String>>>,
    held: Vec<ReplyTo<String>>,
    init: InitMode,
    infos: u32,
}

#[derive(Default, Clone, Copy)]
enum InitMode {
    #[default]
    Ok,
    Fail,
    Panic,
}

#[derive(Debug)]
enum Req {
    Echo(String),
    Sleep(u64),
    Die(Reason),
    Panic,
    Hold,
    ReleaseAll(String),
    StopWith(Reason),
    Infos,
}

impl Server for Echo {
    type Call = Req;
    type Reply = String;
    type Cast = String;
    type Info = u32;

    async fn init(&mut self, _: &Ctx) -> Result<(), Reason> {
        match self.init {
            InitMode::Ok => Ok(()),
            InitMode::Fail => Err(Reason::from("bad config")),
            InitMode::Panic => panic!("init panicked"),
        }
    }

    async fn handle_call(&mut self, ctx: &Ctx, req: Req, from: ReplyTo<String>) -> Answer<String> {
        match req {
            Req::Echo(s) => Answer::Reply(s),
            Req::Sleep(ms) => {
                pause(ctx, ms).await;
                Answer::Reply(format!("slept {ms}"))
            }
            Req::Die(r) => match ctx.exit(r).await {},
            Req::Panic => panic!("handler panicked"),
            Req::Hold => {
                self.held.push(from);
                Answer::NoReply
            }
            Req::ReleaseAll(s) => {
                for to in self.held.drain(..) {
                    to.reply(ctx, s.clone()).await;
                }
                Answer::Reply("released".into())
            }
            Req::StopWith(reason) => Answer::Stop {
                reason,
                reply: Some("bye".into()),
            },
            Req::Infos => Answer::Reply(self.infos.to_string()),
        }
    }

    async fn handle_cast(&mut self, _: &Ctx, msg: String) -> Flow {
        self.events.lock().unwrap().push(format!("cast {msg}"));
        if msg == "stop" {
            Flow::Stop(Reason::from("cast stop"))
        } else {
            Flow::Continue
        }
    }

    async fn handle_info(&mut self, _: &Ctx, msg: Info<u32>) -> Flow {
        match msg {
            Info::Message(n) => self.infos += n,
            Info::Exit(x) => self
                .events
                .lock()
                .unwrap()
                .push(format!("exit {:?}", x.reason)),
            Info::Down(d) => self
                .events
                .lock()
                .unwrap()
                .push(format!("down {:?}", d.reason)),
        }
        Flow::Continue
    }

    async fn terminate(&mut self, _: &Ctx, reason: &Reason) {
        self.events
            .lock()
            .unwrap()
            .push(format!("terminate {reason:?}"));
    }
}

async fn echo(ctx: &Ctx) -> ServerRef<Echo> {
    start(ctx, Echo::default(), None).await.unwrap()
}

// --- 1. start ---------------------------------------------------------------

#[test]
fn start_returns_after_init_and_the_server_answers() {
    let r = run(|ctx| async move {
        let s = echo(&ctx).await;
        s.call(&ctx, Req::Echo("hi".into())).await
    });
    assert_eq!(r, Ok("hi".to_string()));
}

#[test]
fn start_with_a_taken_name_fails_already_started() {
    let (r, holder, whereis) = run(|ctx| async move {
        let first = start(&ctx, Echo::default(), Some("echo")).await.unwrap();
        let r = start(&ctx, Echo::default(), Some("echo")).await;
        (r, first.pid().unwrap(), ctx.whereis("echo").await)
    });
    assert_eq!(
        r,
        Err(StartError::AlreadyStarted {
            name: "echo".into(),
            pid: holder
        })
    );
    assert_eq!(whereis, Some(holder), "the first holder keeps the name");
}

#[test]
fn init_error_fails_start_and_the_process_is_gone_with_its_name() {
    let (r, whereis) = run(|ctx| async move {
        let s = Echo {
            init: InitMode::Fail,
            ..Echo::default()
        };
        let r = start(&ctx, s, Some("failing")).await;
        (r, ctx.whereis("failing").await)
    });
    assert_eq!(r, Err(StartError::Init(Reason::from("bad config"))));
    assert_eq!(whereis, None);
}

#[test]
fn init_panic_fails_start_with_the_panic() {
    let r = run(|ctx| async move {
        let s = Echo {
            init: InitMode::Panic,
            ..Echo::default()
        };
        start(&ctx, s, None).await
    });
    match r {
        Err(StartError::Init(Reason::Panic(p))) => assert_eq!(p.message, "init panicked"),
        other => panic!("expected an init panic, got {other:?}"),
    }
}

#[test]
fn start_link_init_failure_reaches_a_trapping_caller_as_exit() {
    let (r, exit) = run(|ctx| async move {
        ctx.trap_exit(true).await;
        let s = Echo {
            init: InitMode::Fail,
            ..Echo::default()
        };
        let r = start_link(&ctx, s, None).await;
        let x = ctx.receive::<Exit>().await;
        (r, x.reason)
    });
    assert_eq!(r, Err(StartError::Init(Reason::from("bad config"))));
    assert_eq!(exit, Reason::from("bad config"));
}

// --- 2. messages --------------------------------------------------------------

#[test]
fn casts_and_calls_are_handled_in_arrival_order() {
    let events = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(
            &ctx,
            Echo {
                events: ev.clone(),
                ..Echo::default()
            },
            None,
        )
        .await
        .unwrap();
        for i in 0..10 {
            s.cast(&ctx, i.to_string()).await;
        }
        s.call(&ctx, Req::Echo("sync".into())).await.unwrap();
        let v = ev.lock().unwrap().clone();
        v
    });
    assert_eq!(
        events,
        (0..10).map(|i| format!("cast {i}")).collect::<Vec<_>>()
    );
}

#[test]
fn info_messages_of_the_info_type_reach_handle_info_and_others_are_dropped() {
    let n = run(|ctx| async move {
        let s = echo(&ctx).await;
        let pid = s.pid().unwrap();
        ctx.send(pid, 5u32).await;
        ctx.send(pid, "not an info type").await;
        s.info(&ctx, 7).await;
        s.call(&ctx, Req::Infos).await.unwrap()
    });
    assert_eq!(n, "12");
}

#[test]
fn down_of_a_monitor_reaches_handle_info() {
    // A server that monitors a process it is told about.
    struct Watcher(Vec<Down>);
    impl Server for Watcher {
        type Call = Option<Pid>;
        type Reply = usize;
        type Cast = ();
        type Info = ();
        async fn handle_call(
            &mut self,
            ctx: &Ctx,
            p: Option<Pid>,
            _: ReplyTo<usize>,
        ) -> Answer<usize> {
            if let Some(p) = p {
                ctx.monitor(p).await;
            }
            Answer::Reply(self.0.len())
        }
        async fn handle_info(&mut self, _: &Ctx, msg: Info<()>) -> Flow {
            if let Info::Down(d) = msg {
                self.0.push(d);
            }
            Flow::Continue
        }
    }
    let n = run(|ctx| async move {
        let s = start(&ctx, Watcher(vec![]), None).await.unwrap();
        let (victim, _) = ctx
            .spawn_monitor(|c| async move {
                c.receive::<()>().await;
            })
            .await
            .unwrap();
        s.call(&ctx, Some(victim)).await.unwrap();
        ctx.send(victim, ()).await;
        ctx.receive::<Down>().await;
        let mut n = 0;
        for _ in 0..1000 {
            n = s.call(&ctx, None).await.unwrap();
            if n == 1 {
                break;
            }
            pause(&ctx, 2).await;
        }
        n
    });
    assert_eq!(n, 1);
}

// --- 3. calls -------------------------------------------------------------------

#[test]
fn call_to_a_dead_pid_fails_noproc() {
    let r = run(|ctx| async move {
        let s = echo(&ctx).await;
        s.stop(&ctx, Reason::Normal).await.unwrap();
        s.call(&ctx, Req::Echo("x".into())).await
    });
    assert_eq!(r, Err(CallError::NoProc));
}

#[test]
fn call_to_an_unregistered_name_fails_noproc() {
    let r = run(|ctx| async move {
        ServerRef::<Echo>::named("nobody")
            .call(&ctx, Req::Echo("x".into()))
            .await
    });
    assert_eq!(r, Err(CallError::NoProc));
    assert_eq!(CallError::NoProc.reason(), Reason::NoProc);
}

#[test]
fn call_by_name_reaches_the_holder() {
    let r = run(|ctx| async move {
        start(&ctx, Echo::default(), Some("named")).await.unwrap();
        ServerRef::<Echo>::named("named")
            .call(&ctx, Req::Echo("by name".into()))
            .await
    });
    assert_eq!(r, Ok("by name".into()));
}

#[test]
fn call_to_server_dying_mid_call_fails_with_its_reason() {
    let r = run(|ctx| async move {
        let s = echo(&ctx).await;
        s.call(&ctx, Req::Die(Reason::from("crashed"))).await
    });
    assert_eq!(r, Err(CallError::Exit(Reason::from("crashed"))));
}

#[test]
fn handler_panic_ends_the_server_and_the_caller_gets_the_panic() {
    let (r, alive) = run(|ctx| async move {
        let s = echo(&ctx).await;
        let r = s.call(&ctx, Req::Panic).await;
        (r, ctx.is_alive(s.pid().unwrap()).await)
    });
    match r {
        Err(CallError::Exit(Reason::Panic(p))) => assert_eq!(p.message, "handler panicked"),
        other => panic!("expected the panic, got {other:?}"),
    }
    assert!(!alive);
}

#[test]
fn handler_panic_runs_terminate_with_the_panic_as_reason() {
    let ev = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(
            &ctx,
            Echo {
                events: ev.clone(),
                ..Echo::default()
            },
            None,
        )
        .await
        .unwrap();
        let r = s.call(&ctx, Req::Panic).await;
        let v = ev.lock().unwrap().clone();
        (r, v)
    });
    let (r, ev) = ev;
    let Err(CallError::Exit(Reason::Panic(p))) = r else {
        panic!("expected the panic, got {r:?}")
    };
    assert!(
        p.location.as_deref().unwrap_or("").contains("server.rs"),
        "{p:?}"
    );
    assert_eq!(ev.len(), 1);
    assert!(
        ev[0].starts_with("terminate panic \"handler panicked\""),
        "{ev:?}"
    );
}

#[test]
fn call_times_out_with_a_timeout_error_and_the_server_lives_on() {
    let (r, after) = run(|ctx| async move {
        let s = echo(&ctx).await;
        let r = s
            .call_timeout(&ctx, Req::Sleep(200), Duration::from_millis(10))
            .await;
        let after = s.call(&ctx, Req::Echo("still here".into())).await;
        (r, after)
    });
    assert_eq!(r, Err(CallError::Timeout));
    assert_eq!(after, Ok("still here".into()));
}

#[test]
fn late_reply_after_timeout_never_reaches_mailbox() {
    let (r, len, leftover) = run(|ctx| async move {
        let s = echo(&ctx).await;
        let r = s
            .call_timeout(&ctx, Req::Sleep(50), Duration::from_millis(5))
            .await;
        // The reply is sent about 45 ms after we gave up; a later call's
        // answer comes after it (same sender, in order), so by then the
        // late reply has arrived, and been dropped.
        assert_eq!(
            s.call(&ctx, Req::Echo("next".into())).await,
            Ok("next".into())
        );
        pause(&ctx, 20).await;
        let len = ctx.process_info(ctx.pid()).await.unwrap().message_queue_len;
        let leftover = ctx
            .receive_timeout::<lona_runtime::Envelope>(Duration::ZERO)
            .await;
        (r, len, leftover.map(|e| e.type_name()))
    });
    assert_eq!(r, Err(CallError::Timeout));
    assert_eq!(leftover, None, "garbage in the mailbox");
    assert_eq!(len, 0);
}

#[test]
fn call_with_an_infinite_timeout_waits_for_the_reply() {
    let r = run(|ctx| async move {
        let s = echo(&ctx).await;
        s.call_timeout(&ctx, Req::Sleep(30), Duration::MAX).await
    });
    assert_eq!(r, Ok("slept 30".into()));
}

#[test]
fn call_with_zero_timeout_to_a_busy_server_times_out_cleanly() {
    let (r, leftover) = run(|ctx| async move {
        let s = echo(&ctx).await;
        let r = s
            .call_timeout(&ctx, Req::Echo("x".into()), Duration::ZERO)
            .await;
        s.call(&ctx, Req::Sleep(10)).await.unwrap();
        let leftover = ctx
            .receive_timeout::<lona_runtime::Envelope>(Duration::ZERO)
            .await
            .map(|e| e.type_name());
        (r, leftover)
    });
    // Either the reply was already there (then it is the answer) or the
    // call timed out; never a stray message afterwards.
    assert!(matches!(r, Ok(_) | Err(CallError::Timeout)), "{r:?}");
    assert_eq!(leftover, None);
}

// --- 4. replies -------------------------------------------------------------------

#[test]
fn noreply_callers_are_answered_later_through_reply_to() {
    let got = run(|ctx| async move {
        let s = echo(&ctx).await;
        let me = ctx.pid();
        for _ in 0..3 {
            let s = s.clone();
            ctx.spawn(move |c| async move {
                let r = s.call(&c, Req::Hold).await;
                c.send(me, r).await;
            })
            .await
            .unwrap();
        }
        // Let the three calls arrive first.
        pause(&ctx, 20).await;
        s.call(&ctx, Req::ReleaseAll("later".into())).await.unwrap();
        let mut v = vec![];
        for _ in 0..3 {
            v.push(ctx.receive::<Result<String, CallError>>().await);
        }
        v
    });
    assert_eq!(got, vec![Ok("later".to_string()); 3]);
}

#[test]
fn answer_stop_replies_after_terminate_and_ends_with_the_reason() {
    let (r, ev, down) = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(
            &ctx,
            Echo {
                events: ev.clone(),
                ..Echo::default()
            },
            None,
        )
        .await
        .unwrap();
        let m = ctx.monitor(s.pid().unwrap()).await;
        let r = s.call(&ctx, Req::StopWith(Reason::from("done"))).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        let v = ev.lock().unwrap().clone();
        (r, v, d.reason)
    });
    assert_eq!(r, Ok("bye".into()));
    assert_eq!(ev, vec!["terminate \"done\"".to_string()]);
    assert_eq!(down, Reason::from("done"));
}

// --- 5. casts -----------------------------------------------------------------------

#[test]
fn cast_to_a_missing_server_never_fails() {
    run(|ctx| async move {
        ServerRef::<Echo>::named("ghost")
            .cast(&ctx, "x".into())
            .await;
        let s = echo(&ctx).await;
        s.stop(&ctx, Reason::Normal).await.unwrap();
        s.cast(&ctx, "y".into()).await;
    });
}

// --- 6. ending -----------------------------------------------------------------------

#[test]
fn flow_stop_runs_terminate_and_ends_with_the_reason() {
    let (ev, reason) = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(
            &ctx,
            Echo {
                events: ev.clone(),
                ..Echo::default()
            },
            None,
        )
        .await
        .unwrap();
        let m = ctx.monitor(s.pid().unwrap()).await;
        s.cast(&ctx, "stop".into()).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        let v = ev.lock().unwrap().clone();
        (v, d.reason)
    });
    assert_eq!(ev, vec!["cast stop", "terminate \"cast stop\""]);
    assert_eq!(reason, Reason::from("cast stop"));
}

#[test]
fn stop_runs_terminate_and_waits_for_the_end() {
    let (r, ev, alive) = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(
            &ctx,
            Echo {
                events: ev.clone(),
                ..Echo::default()
            },
            Some("stopping"),
        )
        .await
        .unwrap();
        let r = s.stop(&ctx, Reason::Shutdown).await;
        let v = ev.lock().unwrap().clone();
        (r, v, ctx.whereis("stopping").await)
    });
    assert_eq!(r, Ok(()));
    assert_eq!(ev, vec!["terminate shutdown"]);
    assert_eq!(alive, None);
}

#[test]
fn stop_of_a_missing_server_fails_noproc() {
    let r = run(|ctx| async move {
        ServerRef::<Echo>::named("ghost")
            .stop(&ctx, Reason::Normal)
            .await
    });
    assert_eq!(r, Err(CallError::NoProc));
}

#[test]
fn parent_exit_stops_a_trapping_server_through_terminate() {
    struct Trapper(Arc<Mutex<Vec<String>>>);
    impl Server for Trapper {
        type Call = ();
        type Reply = ();
        type Cast = ();
        type Info = ();
        async fn init(&mut self, ctx: &Ctx) -> Result<(), Reason> {
            ctx.trap_exit(true).await;
            Ok(())
        }
        async fn handle_call(&mut self, _: &Ctx, _: (), _: ReplyTo<()>) -> Answer<()> {
            Answer::Reply(())
        }
        async fn terminate(&mut self, _: &Ctx, reason: &Reason) {
            self.0.lock().unwrap().push(format!("terminate {reason:?}"));
        }
    }
    let (ev, reason) = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let me = ctx.pid();
        let ev2 = ev.clone();
        let parent = ctx
            .spawn(move |c| async move {
                let s = start_link(&c, Trapper(ev2), None).await.unwrap();
                c.send(me, s.pid().unwrap()).await;
                c.receive::<Never>().await;
            })
            .await
            .unwrap();
        let server: Pid = ctx.receive().await;
        let m = ctx.monitor(server).await;
        ctx.send_exit(parent, Reason::from("parent died")).await;
        let d = ctx.receive_where(move |d: &Down| d.mref == m).await;
        let v = ev.lock().unwrap().clone();
        (v, d.reason)
    });
    assert_eq!(ev, vec!["terminate \"parent died\""]);
    assert_eq!(reason, Reason::from("parent died"));
}

#[test]
fn exit_of_a_linked_non_parent_reaches_handle_info_when_trapping() {
    struct Trapper(Arc<Mutex<Vec<String>>>);
    impl Server for Trapper {
        type Call = Pid;
        type Reply = ();
        type Cast = ();
        type Info = ();
        async fn init(&mut self, ctx: &Ctx) -> Result<(), Reason> {
            ctx.trap_exit(true).await;
            Ok(())
        }
        async fn handle_call(&mut self, ctx: &Ctx, p: Pid, _: ReplyTo<()>) -> Answer<()> {
            ctx.link(p).await.unwrap();
            Answer::Reply(())
        }
        async fn handle_info(&mut self, _: &Ctx, msg: Info<()>) -> Flow {
            if let Info::Exit(x) = msg {
                self.0.lock().unwrap().push(format!("exit {:?}", x.reason));
            }
            Flow::Continue
        }
    }
    let ev = run(|ctx| async move {
        let ev = Arc::new(Mutex::new(vec![]));
        let s = start(&ctx, Trapper(ev.clone()), None).await.unwrap();
        let p = ctx
            .spawn(|c| async move {
                c.receive::<()>().await;
                match c.exit(Reason::from("linked died")).await {}
            })
            .await
            .unwrap();
        s.call(&ctx, p).await.unwrap();
        ctx.send(p, ()).await;
        for _ in 0..1000 {
            if !ev.lock().unwrap().is_empty() {
                break;
            }
            pause(&ctx, 2).await;
        }
        let v = ev.lock().unwrap().clone();
        v
    });
    assert_eq!(ev, vec!["exit \"linked died\""]);
}
