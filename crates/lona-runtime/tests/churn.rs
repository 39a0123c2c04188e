//! Churn under a small process limit: spawning short-lived processes in a
//! loop, from inside and from outside, never fails while few live. (Freed
//! slots were once never reused: with the default limit the 16,513th spawn
//! from outside failed with `system_limit` while 19 processes lived, and
//! rounds of 900 children under a limit of 1,000 failed in round 15.) The
//! ten-million-spawn version is in `stress.rs`.

mod common;

use lona_runtime::{Builder, Down, SpawnError};
use std::time::Duration;

fn wait_empty(rt: &lona_runtime::Runtime) {
    for _ in 0..10_000 {
        if rt.process_count() == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("{} processes never ended", rt.process_count());
}

#[test]
fn rounds_of_children_from_inside_never_hit_the_limit() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .process_limit(1000)
        .build()
        .unwrap();
    let rounds = 40; // failed in round 15 before the fix
    let r = rt.block_on(move |ctx| async move {
        for round in 0..rounds {
            for _ in 0..900 {
                if let Err(e) = ctx.spawn_monitor(|_| async {}).await {
                    return Err(format!("round {round}: {e}"));
                }
            }
            for _ in 0..900 {
                ctx.receive::<Down>().await;
            }
        }
        Ok(())
    });
    assert_eq!(r, Ok(Ok(())));
}

#[test]
fn spawns_from_outside_never_hit_the_limit() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .process_limit(1000)
        .build()
        .unwrap();
    let mut spawned = 0u32;
    for round in 0..40 {
        for _ in 0..900 {
            rt.spawn(|_| async {})
                .unwrap_or_else(|e| panic!("spawn {spawned} (round {round}): {e}"));
            spawned += 1;
        }
        wait_empty(&rt);
    }
    assert_eq!(spawned, 36_000);
}

#[test]
fn the_limit_still_holds_and_says_system_limit() {
    let rt = Builder::default()
        .workers(1)
        .process_limit(10)
        .build()
        .unwrap();
    for round in 0..50 {
        let pids: Vec<_> = (0..10)
            .map(|_| {
                rt.spawn(|ctx| async move {
                    ctx.receive::<()>().await;
                })
                .unwrap_or_else(|e| panic!("round {round}: {e}"))
            })
            .collect();
        let e = rt.spawn(|_| async {}).unwrap_err();
        assert_eq!(e, SpawnError::SystemLimit { limit: 10 });
        assert!(e.to_string().contains("system_limit"));
        for p in pids {
            rt.send(p, ());
        }
        wait_empty(&rt);
    }
}

#[test]
fn extreme_limits_saturate() {
    let rt = Builder::default()
        .workers(1)
        .process_limit(usize::MAX)
        .build()
        .unwrap();
    for _ in 0..20_000 {
        rt.spawn(|_| async {}).unwrap();
    }
    wait_empty(&rt);
    let r = rt.block_on(|_ctx| async { 1 });
    assert_eq!(r, Ok(1));
}
