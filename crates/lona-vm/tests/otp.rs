//! `lona_vm::otp`: Lonala processes supervised by a Rust supervisor and
//! called from Rust, with real processes: replies, a timeout, no server,
//! a server that dies during the call, a reply of the wrong type, and
//! restarts after crashes.

mod common;

use std::sync::Arc;
use std::time::Duration;

use lona_otp::{Strategy, Supervisor, SupervisorRef};
use lona_runtime::{Ctx, Pid, Runtime};
use lona_vm::bridge::{from_message, from_reason, to_message, Fragment, PidTerm};
use lona_vm::otp::{self, LonaCallError};
use lona_vm::{eval_str, Env};
use serde::{Deserialize, Serialize};

/// A `lona.server`: a counter that can also hold a call unanswered,
/// answer it later, answer with text, and crash.
const COUNTER: &str = r#"
(ns t.counter (:require [lona.server]))
(defn init [n] (if (= n :fail) [:stop [:refused 1]] [:ok {:n n :held nil}]))
(defn handle-call [msg from s]
  (match msg
    :get [:reply (:n s) s]
    [:add k] (let [n (+ (:n s) k)] [:reply n (assoc s :n n)])
    :hold [:noreply (assoc s :held from)]
    :text [:reply "not a number" s]
    :crash (exit [:crashed 7])))
(defn handle-cast [msg s]
  (match msg
    :release (do (lona.server/reply (:held s) :late) [:noreply s])
    [:add k] [:noreply (assoc s :n (+ (:n s) k))]))
"#;

/// A plain Lonala function as a process: answers pings with its
/// incarnation's argument until told to die.
const WORKER: &str = r#"
(ns t.worker)
(defn run [tag]
  (receive
    [:ping from] (do (send from [:pong tag (self)]) (run tag))
    :die (exit [:died tag])))
"#;

#[derive(Serialize)]
enum Req {
    Get,
    Add(i64),
    Hold,
    Text,
    Crash,
}

#[derive(Serialize)]
enum Cast {
    Release,
    Add(i64),
}

#[derive(Serialize)]
enum Init {
    Fail,
}

#[derive(Serialize)]
enum ToWorker {
    Ping(PidTerm),
    Die,
}

#[derive(Deserialize, Debug, PartialEq)]
enum FromWorker {
    Pong(String, PidTerm),
}

fn env() -> Arc<Env> {
    let env = Env::stdout();
    eval_str(&env, "counter.lona", COUNTER).expect("the counter compiles");
    eval_str(&env, "worker.lona", WORKER).expect("the worker compiles");
    env
}

fn rt() -> Runtime {
    Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap()
}

/// A supervisor (one for one) of the counter registered as `counter`,
/// starting at `n`.
async fn supervised_counter(ctx: &Ctx, env: &Arc<Env>, n: i64) -> SupervisorRef {
    let spec = otp::server_child_spec("counter", env, "t.counter", n, Some("counter")).unwrap();
    Supervisor::new(Strategy::OneForOne)
        .child(spec)
        .start_link(ctx, None)
        .await
        .unwrap()
}

/// Pings the worker registered as `w`; its answer.
async fn ping(ctx: &Ctx) -> FromWorker {
    let me = PidTerm(ctx.pid());
    ctx.send_name("w", to_message(&ToWorker::Ping(me)).unwrap())
        .await
        .unwrap();
    let m: Fragment = ctx.receive().await;
    from_message::<FromWorker>(&m).unwrap()
}

/// Waits until `name` is held by a process other than `old`; its pid.
async fn new_holder(ctx: &Ctx, name: &str, old: Pid) -> Pid {
    loop {
        match ctx.whereis(name).await {
            Some(p) if p != old => return p,
            _ => ctx.sleep(Duration::from_millis(1)).await,
        }
    }
}

#[test]
fn calls_and_casts_reach_a_supervised_lonala_server() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            supervised_counter(&ctx, &env, 40).await;
            let a: i64 = otp::call(&ctx, "counter", &Req::Add(1)).await.unwrap();
            otp::cast(&ctx, "counter", &Cast::Add(100)).await.unwrap();
            let pid = ctx.whereis("counter").await.unwrap();
            // By pid as well as by name.
            let b: i64 = otp::call(&ctx, pid, &Req::Add(1)).await.unwrap();
            // A cast to nobody is dropped, not an error.
            otp::cast(&ctx, "nobody", &Cast::Add(1)).await.unwrap();
            // Nothing but replies was taken: the mailbox is empty.
            let left = ctx.receive_timeout::<lona_runtime::Envelope>(Duration::ZERO);
            (a, b, left.await.is_none())
        })
        .unwrap();
    assert_eq!(got, (41, 142, true));
}

#[test]
fn a_call_without_a_reply_times_out_and_a_late_reply_is_dropped() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            supervised_counter(&ctx, &env, 5).await;
            let held =
                otp::call_timeout::<String>(&ctx, "counter", &Req::Hold, Duration::from_millis(50))
                    .await;
            // The server answers the held call now; the caller gave up,
            // so that answer must never reach its mailbox. The `get`
            // reply is sent after it, so it would be there first.
            otp::cast(&ctx, "counter", &Cast::Release).await.unwrap();
            let n: i64 = otp::call(&ctx, "counter", &Req::Get).await.unwrap();
            let stray = ctx.receive_timeout::<Fragment>(Duration::ZERO).await;
            (held, n, stray.is_none())
        })
        .unwrap();
    assert_eq!(got, (Err(LonaCallError::Timeout), 5, true));
}

#[test]
fn a_call_to_no_server_is_noproc() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            let by_name = otp::call::<i64>(&ctx, "nobody", &Req::Get).await;
            // A pid that was a server and is gone.
            let spec = otp::child_spec("w", &env, "t.worker/run", ("x",), None).unwrap();
            let sup = Supervisor::new(Strategy::OneForOne)
                .child(spec.restart(lona_otp::Restart::Temporary))
                .start_link(&ctx, None)
                .await
                .unwrap();
            let pid = sup.which_children(&ctx).await.unwrap()[0].pid.unwrap();
            let mref = ctx.monitor(pid).await;
            ctx.send(pid, to_message(&ToWorker::Die).unwrap()).await;
            let down: lona_runtime::Down = ctx
                .receive_where(move |d: &lona_runtime::Down| d.mref == mref)
                .await;
            let by_pid = otp::call::<i64>(&ctx, pid, &Req::Get).await;
            (
                by_name,
                by_pid,
                from_reason::<(String, String)>(&down.reason).unwrap(),
            )
        })
        .unwrap();
    assert_eq!(got.0, Err(LonaCallError::NoProc));
    assert_eq!(got.1, Err(LonaCallError::NoProc));
    assert_eq!(got.2, ("died".to_string(), "x".to_string()));
}

#[test]
fn a_server_that_crashes_during_the_call_gives_its_reason_and_is_restarted() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            supervised_counter(&ctx, &env, 10).await;
            let _: i64 = otp::call(&ctx, "counter", &Req::Add(5)).await.unwrap();
            let old = ctx.whereis("counter").await.unwrap();
            let crash = otp::call::<i64>(&ctx, "counter", &Req::Crash).await;
            let reason = match &crash {
                Err(LonaCallError::Exit(r)) => from_reason::<(String, i64)>(r).unwrap(),
                other => panic!("not an exit: {other:?}"),
            };
            // Restarted by the supervisor, from its initial state.
            let new = new_holder(&ctx, "counter", old).await;
            let n: i64 = otp::call(&ctx, "counter", &Req::Get).await.unwrap();
            (reason, new != old, n)
        })
        .unwrap();
    assert_eq!(got, (("crashed".to_string(), 7), true, 10));
}

#[test]
fn a_reply_of_another_type_is_an_error_not_a_panic() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            supervised_counter(&ctx, &env, 1).await;
            let wrong = otp::call::<i64>(&ctx, "counter", &Req::Text).await;
            let right = otp::call::<String>(&ctx, "counter", &Req::Text).await;
            // The server is fine, and nothing is left behind.
            let n: i64 = otp::call(&ctx, "counter", &Req::Get).await.unwrap();
            let stray = ctx.receive_timeout::<Fragment>(Duration::ZERO).await;
            (wrong, right, n, stray.is_none())
        })
        .unwrap();
    assert!(matches!(got.0, Err(LonaCallError::Reply(_))), "{:?}", got.0);
    assert_eq!(got.1, Ok("not a number".to_string()));
    assert_eq!((got.2, got.3), (1, true));
}

#[test]
fn a_supervised_lonala_function_is_restarted_after_a_crash() {
    let env = env();
    let got = rt()
        .block_on(move |ctx| async move {
            let spec = otp::child_spec("w", &env, "t.worker/run", ("first",), Some("w")).unwrap();
            Supervisor::new(Strategy::OneForOne)
                .child(spec)
                .start_link(&ctx, None)
                .await
                .unwrap();
            let FromWorker::Pong(tag1, pid1) = ping(&ctx).await;
            ctx.send_name("w", to_message(&ToWorker::Die).unwrap())
                .await
                .unwrap();
            new_holder(&ctx, "w", pid1.0).await;
            let FromWorker::Pong(tag2, pid2) = ping(&ctx).await;
            (tag1, tag2, pid1 != pid2)
        })
        .unwrap();
    assert_eq!(got, ("first".into(), "first".into(), true));
}

#[test]
fn specs_for_what_is_not_there_are_errors_and_a_failing_init_fails_the_start() {
    let env = env();
    assert!(otp::child_spec("w", &env, "t.worker/nope", (), None).is_err());
    assert!(otp::child_spec("w", &env, "unqualified", (), None).is_err());
    assert!(otp::server_child_spec("s", &env, "t.nowhere", 1, None).is_err());
    let got = rt()
        .block_on(move |ctx| async move {
            let spec = otp::server_child_spec("s", &env, "t.counter", Init::Fail, None).unwrap();
            let r = Supervisor::new(Strategy::OneForOne)
                .child(spec)
                .start(&ctx, None)
                .await;
            // The supervisor failed to start: its start error holds the
            // child's reason.
            format!("{:?}", r.unwrap_err())
        })
        .unwrap();
    assert!(got.contains("refused"), "{got}");
}
