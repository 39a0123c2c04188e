//! The links/monitors conformance rules (`src/links.rs`, rules 1-9), run
//! through a hand-written, non-async [`Process`]: a small script
//! interpreter driven by explicit states over [`StepCx`]. The test's main
//! process (async, the *controller*) sends it [`Cmd`]s; it performs each
//! through `StepCx`, answers with an [`Out`] message, and forwards every `Exit`
//! and `Down` it receives (unless told to hold them in its mailbox); an
//! `Exit` from the runtime (shutdown) ends it, as it should a trapping
//! process.

mod common;

use lona_runtime::{
    AliveReply, Ctx, Down, Exit, InfoReply, Pid, Process, ProcessInfo, Reason, Ref, RegisterError,
    Runtime, Scan, SpawnOpts, Step, StepCx, RUNTIME_PID,
};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Safety net for every wait: tests normally take milliseconds.
const WAIT: Duration = Duration::from_secs(5);

/// What the controller asks the state machine to do.
#[derive(Debug)]
enum Cmd {
    Link(Pid),
    Unlink(Pid),
    Monitor(Pid),
    /// Demonitor each ref in turn (in one step), with or without flush.
    Demonitor(Vec<Ref>, bool),
    TrapExit(bool),
    SendExit(Pid, Reason),
    /// Spawn another state machine (same controller) running a script.
    Spawn(SpawnOpts, Vec<Cmd>),
    Register(&'static str),
    Whereis(&'static str),
    IsAlive(Pid),
    Info(Pid),
    /// Keep `Exit`/`Down` messages in the mailbox instead of forwarding.
    Hold(bool),
    /// Wait (taking nothing) until a `Down` for this monitor is queued.
    AwaitQueued(Ref),
    /// Send oneself this many `u32` messages nobody will ever receive.
    Junk(u32),
    /// Run these commands back to back, before receiving anything else.
    Seq(Vec<Cmd>),
    Report,
    Stop(Reason),
}

/// What the state machine answers (or forwards).
#[derive(Debug, PartialEq)]
enum Reply {
    Done,
    Trapping(bool),
    Linked(Result<(), Reason>),
    Monitoring(Ref),
    Demonitored(Vec<bool>),
    Spawned(Pid, Option<Ref>),
    Registered(Result<(), RegisterError>),
    Whereis(Option<Pid>),
    /// Alive, and whether the answer came as an `AliveReply` message.
    Alive(bool, bool),
    Info(Option<ProcessInfo>),
    Queued,
    /// Trap-exit flag, mailbox length, scans cut short by the budget.
    Status(bool, usize, u32),
    Exit(Exit),
    Down(Down),
}

/// A message from a state machine to its controller: sender and reply.
struct Out(Pid, Reply);

/// Where the state machine is. Each waiting state owns a receive id, so
/// a scan cut short resumes where it stopped.
#[derive(Clone, Copy)]
enum State {
    /// Run the script, else receive a command (or an event to forward).
    Ready(Option<u64>),
    /// Wait for the `AliveReply` or `InfoReply` with this tag.
    Answer(u64, Ref),
    /// Wait, taking nothing, until a `Down` of this monitor is queued.
    Queued(u64, Ref),
}

struct Interp {
    controller: Pid,
    state: State,
    script: VecDeque<Cmd>,
    holding: bool,
    out_of_budget: u32,
}

impl Interp {
    fn new(controller: Pid, script: Vec<Cmd>) -> Interp {
        let (state, script) = (State::Ready(None), script.into());
        let (holding, out_of_budget) = (false, 0);
        Interp {
            controller,
            state,
            script,
            holding,
            out_of_budget,
        }
    }

    fn reply(&self, cx: &mut StepCx<'_>, r: Reply) {
        let me = cx.pid();
        cx.send(self.controller, Out(me, r));
    }

    fn await_answer(&mut self, cx: &mut StepCx<'_>, tag: Ref) -> Option<Step> {
        self.state = State::Answer(cx.new_receive(), tag);
        None
    }

    /// Perform one command. `Some(step)` ends the step.
    fn exec(&mut self, cx: &mut StepCx<'_>, cmd: Cmd) -> Option<Step> {
        self.state = State::Ready(None);
        let r = match cmd {
            Cmd::Link(p) => Reply::Linked(cx.link(p)),
            Cmd::Unlink(p) => {
                cx.unlink(p);
                Reply::Done
            }
            Cmd::Monitor(p) => Reply::Monitoring(cx.monitor(p)),
            Cmd::Demonitor(refs, flush) => {
                Reply::Demonitored(refs.into_iter().map(|m| cx.demonitor(m, flush)).collect())
            }
            Cmd::TrapExit(on) => Reply::Trapping(cx.set_trap_exit(on)),
            Cmd::SendExit(p, reason) => {
                cx.send_exit(p, reason);
                if cx.exiting() {
                    // Sent to itself, and it took: the worker ends us.
                    return Some(Step::Yield);
                }
                Reply::Done
            }
            Cmd::Spawn(opts, script) => {
                let controller = self.controller;
                let spawned = cx.spawn(opts, move |_| Box::new(Interp::new(controller, script)));
                let (pid, mref) = spawned.expect("spawn");
                Reply::Spawned(pid, mref)
            }
            Cmd::Register(name) => {
                let me = cx.pid();
                Reply::Registered(cx.register(name, me))
            }
            Cmd::Whereis(name) => Reply::Whereis(cx.whereis(name)),
            Cmd::IsAlive(p) => match cx.request_alive(p) {
                Ok(alive) => Reply::Alive(alive, false),
                Err(tag) => return self.await_answer(cx, tag),
            },
            Cmd::Info(p) => {
                let tag = cx.request_info(p);
                return self.await_answer(cx, tag);
            }
            Cmd::Hold(on) => {
                self.holding = on;
                Reply::Done
            }
            Cmd::AwaitQueued(mref) => {
                self.state = State::Queued(cx.new_receive(), mref);
                return None;
            }
            Cmd::Junk(n) => {
                let me = cx.pid();
                for i in 0..n {
                    cx.send(me, i);
                }
                Reply::Done
            }
            Cmd::Seq(cmds) => {
                for c in cmds.into_iter().rev() {
                    self.script.push_front(c);
                }
                return None;
            }
            Cmd::Report => Reply::Status(cx.trap_exit(), cx.mailbox_len(), self.out_of_budget),
            Cmd::Stop(reason) => return Some(Step::Exit(reason)),
        };
        self.reply(cx, r);
        None
    }

    /// A scan that found nothing: wait for more, or yield if cut short.
    fn not_found(&mut self, scan: Scan) -> Step {
        match scan {
            Scan::OutOfBudget => {
                self.out_of_budget += 1;
                Step::Yield
            }
            Scan::NotFound => Step::Wait,
            Scan::Found(e) => unreachable!("unexpected {}", e.type_name()),
        }
    }

    /// Handle a message the current state accepted; `Some` ends the step.
    fn on_message(&mut self, cx: &mut StepCx<'_>, e: lona_runtime::Envelope) -> Option<Step> {
        self.state = State::Ready(None);
        let e = match e.downcast::<Cmd>() {
            Ok(cmd) => return self.exec(cx, cmd),
            Err(e) => e,
        };
        let r = match e.downcast::<Exit>() {
            // Runtime shutdown: a trapping process is asked to end.
            Ok(x) if x.from == RUNTIME_PID => return Some(Step::Exit(x.reason)),
            Ok(x) => Reply::Exit(x),
            Err(e) => match e.downcast::<Down>() {
                Ok(d) => Reply::Down(d),
                Err(e) => match e.downcast::<AliveReply>() {
                    Ok(a) => Reply::Alive(a.alive, true),
                    Err(e) => Reply::Info(e.downcast::<InfoReply>().expect("a reply").info),
                },
            },
        };
        self.reply(cx, r);
        None
    }
}

impl Process for Interp {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        loop {
            cx.drain();
            if cx.exiting() {
                // A signal ended us: the worker finishes with its reason.
                return Step::Yield;
            }
            if cx.budget() == 0 {
                return Step::Yield;
            }
            let scan = match self.state {
                State::Ready(rid) => {
                    if let Some(cmd) = self.script.pop_front() {
                        match self.exec(cx, cmd) {
                            Some(end) => return end,
                            None => continue,
                        }
                    }
                    let rid = rid.unwrap_or_else(|| cx.new_receive());
                    self.state = State::Ready(Some(rid));
                    let fwd = !self.holding;
                    cx.take_message(rid, |e| {
                        e.is::<Cmd>() || (fwd && (e.is::<Exit>() || e.is::<Down>()))
                    })
                }
                State::Answer(rid, tag) => cx.take_message(rid, |e| {
                    e.downcast_ref::<AliveReply>().is_some_and(|a| a.tag == tag)
                        || e.downcast_ref::<InfoReply>().is_some_and(|i| i.tag == tag)
                }),
                State::Queued(rid, mref) => {
                    let mut seen = false;
                    let scan = cx.take_message(rid, |e| {
                        seen |= e.downcast_ref::<Down>().is_some_and(|d| d.mref == mref);
                        false
                    });
                    if !seen {
                        return self.not_found(scan);
                    }
                    self.state = State::Ready(None);
                    self.reply(cx, Reply::Queued);
                    continue;
                }
            };
            match scan {
                Scan::Found(e) => {
                    if let Some(end) = self.on_message(cx, e) {
                        return end;
                    }
                }
                scan => return self.not_found(scan),
            }
        }
    }
}

/// A process whose first step blocks its worker until released (so it
/// drains no signal meanwhile), then waits forever.
struct Blocker {
    entered: Arc<AtomicBool>,
    release: Arc<AtomicBool>,
    blocked: bool,
}

impl Process for Blocker {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Step {
        if !self.blocked {
            self.blocked = true;
            self.entered.store(true, SeqCst);
            let deadline = Instant::now() + WAIT;
            while !self.release.load(SeqCst) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        Step::Wait
    }
}

// --- the controller's side -------------------------------------------------

fn opts(link: bool, monitor: bool) -> SpawnOpts {
    SpawnOpts::new().link(link).monitor(monitor)
}

fn run<Fut: Future<Output = ()> + Send + 'static>(f: impl FnOnce(Ctx) -> Fut) {
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap();
    if let Err(r) = rt.block_on(f) {
        panic!("controller ended abnormally: {r:?}");
    }
}

/// Start a state machine controlled by the caller.
fn start(ctx: &Ctx) -> Pid {
    let me = ctx.pid();
    ctx.handle().spawn_process(Interp::new(me, vec![])).unwrap()
}

/// The next reply or event from state machine `sm`.
async fn next(ctx: &Ctx, sm: Pid) -> Reply {
    match ctx
        .receive_where_timeout(move |o: &Out| o.0 == sm, WAIT)
        .await
    {
        Some(Out(_, r)) => r,
        None => panic!("nothing from {sm:?} within {WAIT:?}"),
    }
}

async fn call(ctx: &Ctx, sm: Pid, cmd: Cmd) -> Reply {
    ctx.send(sm, cmd).await;
    next(ctx, sm).await
}

/// `sm`'s status: it must answer (so it is alive), and nothing it
/// forwarded may come before the answer.
async fn status(ctx: &Ctx, sm: Pid) -> (bool, usize, u32) {
    match call(ctx, sm, Cmd::Report).await {
        Reply::Status(trap, len, oob) => (trap, len, oob),
        other => panic!("expected the status, got {other:?}"),
    }
}

/// Have `sm` spawn an idle state machine with `opts` and `script`.
async fn spawn_child(ctx: &Ctx, sm: Pid, opts: SpawnOpts, script: Vec<Cmd>) -> (Pid, Option<Ref>) {
    match call(ctx, sm, Cmd::Spawn(opts, script)).await {
        Reply::Spawned(pid, mref) => (pid, mref),
        other => panic!("expected a spawn, got {other:?}"),
    }
}

async fn monitor(ctx: &Ctx, sm: Pid, pid: Pid) -> Ref {
    match call(ctx, sm, Cmd::Monitor(pid)).await {
        Reply::Monitoring(m) => m,
        other => panic!("expected a monitor, got {other:?}"),
    }
}

async fn info(ctx: &Ctx, sm: Pid, pid: Pid) -> ProcessInfo {
    match call(ctx, sm, Cmd::Info(pid)).await {
        Reply::Info(Some(i)) => i,
        other => panic!("expected info, got {other:?}"),
    }
}

async fn down_of(ctx: &Ctx, pid: Pid) -> Down {
    let d = ctx.receive_where_timeout(move |d: &Down| d.pid == pid, WAIT);
    d.await.unwrap_or_else(|| panic!("no Down for {pid:?}"))
}

/// A pid that is certainly dead.
async fn dead_pid(ctx: &Ctx) -> Pid {
    let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
    down_of(ctx, p).await;
    p
}

fn boom() -> Reason {
    Reason::from("boom")
}

fn exit(from: Pid, reason: Reason) -> Reply {
    Reply::Exit(Exit { from, reason })
}

fn down(mref: Ref, pid: Pid, reason: Reason) -> Reply {
    Reply::Down(Down { mref, pid, reason })
}

// --- rules 1-4: exit signals ------------------------------------------------

#[test]
fn exit_normal_is_ignored_unless_trapping_then_it_is_an_exit_message() {
    run(|ctx| async move {
        let sm = start(&ctx);
        ctx.send_exit(sm, Reason::Normal).await;
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
        assert_eq!(
            call(&ctx, sm, Cmd::TrapExit(true)).await,
            Reply::Trapping(false)
        );
        ctx.send_exit(sm, Reason::Normal).await;
        assert_eq!(next(&ctx, sm).await, exit(ctx.pid(), Reason::Normal));
        assert_eq!(status(&ctx, sm).await, (true, 0, 0));
    });
}

#[test]
fn exit_normal_sent_to_itself_ends_a_non_trapping_state_machine() {
    run(|ctx| async move {
        let sm = start(&ctx);
        ctx.monitor(sm).await;
        ctx.send(sm, Cmd::SendExit(sm, Reason::Normal)).await;
        assert_eq!(down_of(&ctx, sm).await.reason, Reason::Normal);
        let out = ctx.receive_timeout::<Out>(Duration::ZERO).await;
        assert!(out.is_none(), "it answered instead of ending");
    });
}

#[test]
fn kill_cannot_be_trapped_and_links_see_killed() {
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let sm = start(&ctx);
        ctx.link(sm).await.unwrap();
        ctx.monitor(sm).await;
        assert_eq!(
            call(&ctx, sm, Cmd::TrapExit(true)).await,
            Reply::Trapping(false)
        );
        ctx.send_exit(sm, Reason::Kill).await;
        assert_eq!(down_of(&ctx, sm).await.reason, Reason::Killed);
        let e = ctx.receive_where_timeout(move |e: &Exit| e.from == sm, WAIT);
        assert_eq!(e.await.map(|e| e.reason), Some(Reason::Killed));
        let out = ctx.receive_timeout::<Out>(Duration::ZERO).await;
        assert!(out.is_none(), "the kill was trapped and forwarded");
    });
}

#[test]
fn kill_sent_by_the_state_machine_is_untrappable_and_its_link_sees_killed() {
    run(|ctx| async move {
        let sm = start(&ctx);
        call(&ctx, sm, Cmd::TrapExit(true)).await;
        let (child, _) = spawn_child(&ctx, sm, opts(true, false), vec![Cmd::TrapExit(true)]).await;
        // The child ran its script: it traps exits before the kill.
        assert_eq!(next(&ctx, child).await, Reply::Trapping(false));
        assert_eq!(
            call(&ctx, sm, Cmd::SendExit(child, Reason::Kill)).await,
            Reply::Done
        );
        assert_eq!(next(&ctx, sm).await, exit(child, Reason::Killed));
        let from_child = ctx.receive_where_timeout(move |o: &Out| o.0 == child, Duration::ZERO);
        assert!(from_child.await.is_none(), "the child trapped the kill");
    });
}

#[test]
fn exit_through_a_link_ends_a_non_trapping_state_machine_with_that_reason() {
    run(|ctx| async move {
        let sm = start(&ctx);
        ctx.monitor(sm).await;
        let (child, _) = spawn_child(&ctx, sm, opts(true, false), vec![]).await;
        ctx.send(child, Cmd::Stop(boom())).await;
        assert_eq!(down_of(&ctx, sm).await.reason, boom());
    });
}

#[test]
fn exit_through_a_link_reaches_a_trapping_state_machine_as_an_exit_message() {
    run(|ctx| async move {
        let sm = start(&ctx);
        call(&ctx, sm, Cmd::TrapExit(true)).await;
        let (child, _) = spawn_child(&ctx, sm, opts(true, false), vec![]).await;
        ctx.send(child, Cmd::Stop(boom())).await;
        assert_eq!(next(&ctx, sm).await, exit(child, boom()));
        // The link went with the signal (rule 3).
        let me = info(&ctx, sm, sm).await;
        assert!(me.links.is_empty() && me.trap_exit, "{me:?}");
    });
}

// --- rules 5-6: links ---------------------------------------------------------

#[test]
fn unlink_stops_exit_signals_from_that_link() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let (child, _) = spawn_child(&ctx, sm, opts(true, false), vec![]).await;
        assert_eq!(info(&ctx, sm, child).await.links, vec![sm]);
        assert_eq!(call(&ctx, sm, Cmd::Unlink(child)).await, Reply::Done);
        // The unlink reached the child before the info request did.
        assert_eq!(info(&ctx, sm, child).await.links, vec![]);
        ctx.monitor(child).await;
        ctx.send(child, Cmd::Stop(boom())).await;
        assert_eq!(down_of(&ctx, child).await.reason, boom());
        // Any exit signal from the child reached sm before this command.
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
        assert_eq!(info(&ctx, sm, sm).await.links, vec![]);
    });
}

#[test]
fn link_to_a_dead_pid_is_a_noproc_error_unless_trapping_then_an_exit_noproc() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let dead = dead_pid(&ctx).await;
        let r = call(&ctx, sm, Cmd::Link(dead)).await;
        assert_eq!(r, Reply::Linked(Err(Reason::NoProc)));
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
        call(&ctx, sm, Cmd::TrapExit(true)).await;
        assert_eq!(call(&ctx, sm, Cmd::Link(dead)).await, Reply::Linked(Ok(())));
        assert_eq!(next(&ctx, sm).await, exit(dead, Reason::NoProc));
    });
}

// --- rules 7-8: monitors ------------------------------------------------------

#[test]
fn monitor_delivers_one_down_with_the_exit_reason() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let (child, _) = spawn_child(&ctx, sm, opts(false, false), vec![]).await;
        let m = monitor(&ctx, sm, child).await;
        ctx.send(child, Cmd::Stop(Reason::from("done"))).await;
        assert_eq!(next(&ctx, sm).await, down(m, child, Reason::from("done")));
        // A second Down would have been forwarded before this answer.
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
    });
}

#[test]
fn monitor_of_a_dead_pid_delivers_down_noproc() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let dead = dead_pid(&ctx).await;
        let m = monitor(&ctx, sm, dead).await;
        assert_eq!(next(&ctx, sm).await, down(m, dead, Reason::NoProc));
    });
}

/// Have `sm` monitor three children; the first two die `boom` and their
/// Downs are held in `sm`'s mailbox, the third lives.
async fn two_queued_downs(ctx: &Ctx, sm: Pid) -> [(Pid, Ref); 3] {
    assert_eq!(call(ctx, sm, Cmd::Hold(true)).await, Reply::Done);
    let mut out = vec![];
    for _ in 0..3 {
        let (c, _) = spawn_child(ctx, sm, opts(false, false), vec![]).await;
        out.push((c, monitor(ctx, sm, c).await));
    }
    for &(c, m) in &out[..2] {
        ctx.send(c, Cmd::Stop(boom())).await;
        assert_eq!(call(ctx, sm, Cmd::AwaitQueued(m)).await, Reply::Queued);
    }
    assert_eq!(status(ctx, sm).await.1, 2, "both Downs queued");
    out.try_into().unwrap()
}

#[test]
fn demonitor_with_flush_removes_a_queued_down_and_only_that_one() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let [(_, m1), (c2, m2), _] = two_queued_downs(&ctx, sm).await;
        // m1 already fired, so it was no longer active.
        let r = call(&ctx, sm, Cmd::Demonitor(vec![m1], true)).await;
        assert_eq!(r, Reply::Demonitored(vec![false]));
        assert_eq!(call(&ctx, sm, Cmd::Hold(false)).await, Reply::Done);
        assert_eq!(next(&ctx, sm).await, down(m2, c2, boom()));
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
    });
}

#[test]
fn demonitor_with_flush_right_after_a_flush_that_found_nothing_removes_a_queued_down() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let [(_, m1), (c2, m2), (_, live)] = two_queued_downs(&ctx, sm).await;
        // Two flushes in one step; the first finds no Down (`live` lives).
        let r = call(&ctx, sm, Cmd::Demonitor(vec![live, m1], true)).await;
        assert_eq!(r, Reply::Demonitored(vec![true, false]));
        call(&ctx, sm, Cmd::Hold(false)).await;
        let got = next(&ctx, sm).await;
        assert_eq!(got, down(m2, c2, boom()), "m1's Down survived its flush");
        assert_eq!(status(&ctx, sm).await, (false, 0, 0));
    });
}

#[test]
fn spawn_with_link_and_monitor_is_atomic() {
    run(|ctx| async move {
        let sm = start(&ctx);
        call(&ctx, sm, Cmd::TrapExit(true)).await;
        let script = vec![Cmd::Stop(Reason::from("instant"))];
        let (child, m) = spawn_child(&ctx, sm, opts(true, true), script).await;
        let m = m.expect("a monitor");
        let (a, b) = (next(&ctx, sm).await, next(&ctx, sm).await);
        let x = exit(child, Reason::from("instant"));
        let d = down(m, child, Reason::from("instant"));
        assert!((a == x && b == d) || (a == d && b == x), "{a:?} {b:?}");
    });
}

// --- asking another process ---------------------------------------------------

#[test]
fn request_alive_after_a_kill_answers_false_by_an_alive_reply() {
    run(|ctx| async move {
        let sm = start(&ctx);
        let entered = Arc::new(AtomicBool::new(false));
        let release = Arc::new(AtomicBool::new(false));
        let (e, r) = (entered.clone(), release.clone());
        let blocker = Blocker {
            entered: e,
            release: r,
            blocked: false,
        };
        let victim = ctx.handle().spawn_process(blocker).unwrap();
        ctx.monitor(victim).await;
        // The victim is stuck in a step: it drains no signal until released.
        let deadline = Instant::now() + WAIT;
        while !entered.load(SeqCst) {
            assert!(Instant::now() < deadline, "the blocker never ran");
            ctx.yield_now().await;
        }
        let seq = vec![Cmd::SendExit(victim, Reason::Kill), Cmd::IsAlive(victim)];
        assert_eq!(call(&ctx, sm, Cmd::Seq(seq)).await, Reply::Done);
        release.store(true, SeqCst);
        assert_eq!(next(&ctx, sm).await, Reply::Alive(false, true));
        assert_eq!(down_of(&ctx, victim).await.reason, Reason::Killed);
    });
}

// --- rule 9: ending -----------------------------------------------------------

#[test]
fn a_registered_name_is_freed_when_the_state_machine_ends() {
    run(|ctx| async move {
        let sm = start(&ctx);
        ctx.monitor(sm).await;
        let r = call(&ctx, sm, Cmd::Register("sm")).await;
        assert_eq!(r, Reply::Registered(Ok(())));
        assert_eq!(
            call(&ctx, sm, Cmd::Whereis("sm")).await,
            Reply::Whereis(Some(sm))
        );
        assert_eq!(ctx.whereis("sm").await, Some(sm));
        ctx.send(sm, Cmd::Stop(Reason::from("bye"))).await;
        assert_eq!(down_of(&ctx, sm).await.reason, Reason::from("bye"));
        assert_eq!(ctx.whereis("sm").await, None);
        assert_eq!(ctx.register("sm").await, Ok(()));
    });
}

// --- StepCx: budget and selective receive -----------------------------------------

#[test]
fn a_long_selective_receive_runs_out_of_budget_and_resumes_where_it_stopped() {
    run(|ctx| async move {
        let sm = start(&ctx);
        // 3,000 messages it never takes, then a command behind them: more
        // than a slice's reductions to scan past. Restarting from the
        // oldest each slice would never reach the command.
        assert_eq!(call(&ctx, sm, Cmd::Junk(3000)).await, Reply::Done);
        let (_, queued, out_of_budget) = status(&ctx, sm).await;
        assert_eq!(queued, 3000);
        assert!(out_of_budget >= 1, "the scan was never cut short");
    });
}
