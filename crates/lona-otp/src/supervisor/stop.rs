//! Stopping children (OTP's `supervisor:shutdown/2`): the supervisor
//! monitors the child and unlinks it (an `Exit` already queued means it
//! had ended by itself: its reason is the answer), then
//! - `BrutalKill`: `exit(child, kill)`;
//! - `Timeout(t)`: `exit(child, shutdown)`, and `kill` if it has not ended
//!   after `t`;
//! - `Infinity`: `exit(child, shutdown)`;
//!
//! and waits for the monitor's `Down`: the child has then fully ended (its
//! name released). The stop succeeded if the child ended with `shutdown`
//! (`killed` for `BrutalKill`); otherwise the reason is reported.

use super::spec::{is_orderly, Shutdown};
use lona_runtime::{Ctx, Down, Exit, Pid, Reason, Ref};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Stop one child; `Err` with its reason if it did not end as asked.
pub(crate) async fn stop_child(ctx: &Ctx, pid: Pid, how: Shutdown) -> Result<(), Reason> {
    let mref = ctx.monitor(pid).await;
    ctx.unlink(pid).await;
    if let Some(x) = ctx
        .receive_where_timeout(move |x: &Exit| x.from == pid, Duration::ZERO)
        .await
    {
        ctx.receive_where(move |d: &Down| d.mref == mref).await;
        return if is_orderly(&x.reason) {
            Ok(())
        } else {
            Err(x.reason)
        };
    }
    let down = move |d: &Down| d.mref == mref;
    let (expected, d) = match how {
        Shutdown::BrutalKill => {
            ctx.send_exit(pid, Reason::Kill).await;
            (Reason::Killed, ctx.receive_where(down).await)
        }
        Shutdown::Infinity => {
            ctx.send_exit(pid, Reason::Shutdown).await;
            (Reason::Shutdown, ctx.receive_where(down).await)
        }
        Shutdown::Timeout(t) => {
            ctx.send_exit(pid, Reason::Shutdown).await;
            match ctx.receive_where_timeout(down, t).await {
                Some(d) => (Reason::Shutdown, d),
                None => {
                    ctx.send_exit(pid, Reason::Kill).await;
                    (Reason::Shutdown, ctx.receive_where(down).await)
                }
            }
        }
    };
    if d.reason == expected || d.reason == Reason::NoProc {
        Ok(())
    } else {
        Err(d.reason)
    }
}

/// Stop many children at once (a dynamic supervisor's way): all are told
/// together, and those still running when the shutdown time is up are
/// killed. Returns the children that did not end as asked, with their
/// reasons.
pub(crate) async fn stop_all(ctx: &Ctx, pids: &[Pid], how: Shutdown) -> Vec<(Pid, Reason)> {
    let mut failed = Vec::new();
    let mut pending: HashMap<Ref, Pid> = HashMap::with_capacity(pids.len());
    let mut by_pid: HashMap<Pid, Ref> = HashMap::with_capacity(pids.len());
    for &pid in pids {
        let mref = ctx.monitor(pid).await;
        ctx.unlink(pid).await;
        pending.insert(mref, pid);
        by_pid.insert(pid, mref);
    }
    // Those that had ended by themselves.
    while let Some(x) = ctx
        .receive_where_timeout(|x: &Exit| by_pid.contains_key(&x.from), Duration::ZERO)
        .await
    {
        if !is_orderly(&x.reason) {
            failed.push((x.from, x.reason));
        }
        if let Some(mref) = by_pid.remove(&x.from) {
            pending.remove(&mref);
            ctx.receive_where(move |d: &Down| d.mref == mref).await;
        }
    }
    let expected = match how {
        Shutdown::BrutalKill => Reason::Killed,
        _ => Reason::Shutdown,
    };
    let first = match how {
        Shutdown::BrutalKill => Reason::Kill,
        _ => Reason::Shutdown,
    };
    for &pid in pending.values() {
        ctx.send_exit(pid, first.clone()).await;
    }
    let deadline = match how {
        Shutdown::Timeout(t) => Instant::now().checked_add(t),
        _ => None,
    };
    let mut killed = false;
    while !pending.is_empty() {
        let wait = match deadline {
            Some(d) if !killed => d.saturating_duration_since(Instant::now()),
            _ => lona_runtime::INFINITY,
        };
        let got = ctx
            .receive_where_timeout(|d: &Down| pending.contains_key(&d.mref), wait)
            .await;
        match got {
            Some(d) => {
                pending.remove(&d.mref);
                if d.reason != expected && d.reason != Reason::NoProc {
                    failed.push((d.pid, d.reason));
                }
            }
            None => {
                killed = true;
                for &pid in pending.values() {
                    ctx.send_exit(pid, Reason::Kill).await;
                }
            }
        }
    }
    failed
}
