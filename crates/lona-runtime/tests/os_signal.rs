//! Unix signals as messages (`Handle::notify_signals`): raised at this
//! very test process, they reach the chosen process, by pid or by name;
//! uncatchable ones are refused; one nobody is there to receive does what
//! it does by default (checked in a child process, which it ends).
//!
//! Each test uses signals of its own: the handlers are process-wide and
//! the tests run in parallel.
#![cfg(unix)]

mod common;

use lona_runtime::os_signal::{OsSignal, SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use lona_runtime::{Builder, Runtime};
use signal_hook::low_level::raise;
use std::time::Duration;

fn rt() -> Runtime {
    Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap()
}

/// Long enough never to be reached when things work; bounds a failure.
const PATIENCE: Duration = Duration::from_secs(20);

#[test]
fn sigterm_raised_at_the_process_reaches_the_chosen_process() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let fwd = ctx.handle().notify_signals(&[SIGTERM], ctx.pid()).unwrap();
        // Nothing before the signal.
        let before = ctx.receive_timeout::<OsSignal>(Duration::ZERO).await;
        raise(SIGTERM).unwrap();
        let got = ctx.receive_timeout::<OsSignal>(PATIENCE).await;
        drop(fwd);
        (before, got)
    });
    let (before, got) = r.unwrap();
    assert_eq!(before, None);
    assert_eq!(got, Some(OsSignal { signo: SIGTERM }));
    assert_eq!(got.unwrap().name(), Some("SIGTERM"));
}

/// By name: looked up at each signal, so the process holding the name
/// when the signal comes is the one told; two signals, one forwarder.
#[test]
fn signals_reach_a_registered_name() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let fwd = ctx
            .handle()
            .notify_signals(&[SIGINT, SIGHUP], "stopper")
            .unwrap();
        let stopper = ctx
            .spawn(move |ctx| async move {
                for _ in 0..2 {
                    let s: OsSignal = ctx.receive().await;
                    ctx.send(me, s).await;
                }
            })
            .await
            .unwrap();
        ctx.register_pid("stopper", stopper).await.unwrap();
        raise(SIGINT).unwrap();
        let a = ctx.receive_timeout::<OsSignal>(PATIENCE).await;
        raise(SIGHUP).unwrap();
        let b = ctx.receive_timeout::<OsSignal>(PATIENCE).await;
        drop(fwd);
        (a.map(|s| s.signo), b.map(|s| s.signo))
    });
    assert_eq!(r, Ok((Some(SIGINT), Some(SIGHUP))));
}

#[test]
fn uncatchable_signals_are_refused() {
    let rt = rt();
    assert!(rt
        .notify_signals(&[signal_hook::consts::SIGKILL], "x")
        .is_err());
    assert!(rt
        .notify_signals(&[signal_hook::consts::SIGSEGV], "x")
        .is_err());
}

/// After the forwarder is dropped, the signal is ignored (documented:
/// signal-hook does not give the default action back). SIGUSR2 would end
/// this test process by default.
#[test]
fn a_dropped_forwarder_stops_forwarding() {
    let rt = rt();
    let r = rt.block_on(|ctx| async move {
        let fwd = ctx.handle().notify_signals(&[SIGUSR2], ctx.pid()).unwrap();
        raise(SIGUSR2).unwrap();
        let first = ctx.receive_timeout::<OsSignal>(PATIENCE).await;
        drop(fwd);
        raise(SIGUSR2).unwrap();
        let second = ctx
            .receive_timeout::<OsSignal>(Duration::from_millis(50))
            .await;
        (first.map(|s| s.signo), second)
    });
    assert_eq!(r, Ok((Some(SIGUSR2), None)));
}

const CHILD: &str = "LONA_OS_SIGNAL_CHILD";

/// Run only as the child of the next test (does nothing otherwise): a
/// forwarder to a name nobody holds, then SIGUSR1 raised: its default
/// action ends this process, so returning is the failure.
#[test]
fn child_signal_with_no_receiver() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let rt = rt();
    let _fwd = rt.notify_signals(&[SIGUSR1], "nobody").unwrap();
    raise(SIGUSR1).unwrap();
    std::thread::sleep(PATIENCE);
}

#[test]
fn a_signal_nobody_receives_takes_its_default_action() {
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_signal_with_no_receiver",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(SIGUSR1), "{status:?}");
}
