//! Stress (ignored by default; run in release):
//! `cargo test -p lona-otp --release --test stress -- --ignored --nocapture`.

mod common;
use common::{pause, Never};
use lona_otp::{ChildSpec, Strategy, Supervisor, SupervisorRef};
use lona_runtime::{Builder, Pid, Reason};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

const SUPS: usize = 10;
const EACH: usize = 1000;
const CRASHES: usize = 1000;

/// A tree of 10 one-for-one supervisors of 1,000 workers each; 1,000
/// random workers crash at once. None of the others is touched, and the
/// tree ends with all 10,000 running.
#[test]
#[ignore]
fn ten_thousand_workers_survive_a_thousand_random_crashes() {
    let rt = Builder::default().build().unwrap();
    let t0 = Instant::now();
    let r = rt.block_on(|ctx| async move {
        ctx.trap_exit(true).await;
        let mut top = Supervisor::new(Strategy::OneForOne);
        for s in 0..SUPS {
            let mut sup =
                Supervisor::new(Strategy::OneForOne).intensity(10_000, Duration::from_secs(60));
            for w in 0..EACH {
                sup = sup.child(ChildSpec::worker(format!("w{w}"), |ctx| async move {
                    ctx.receive::<Never>().await;
                }));
            }
            top = top.child(sup.into_child_spec(format!("s{s}"), None));
        }
        let top = top.start_link(&ctx, None).await.unwrap();
        let started = t0.elapsed();
        let subs: Vec<SupervisorRef> = top
            .which_children(&ctx)
            .await
            .unwrap()
            .into_iter()
            .map(|c| SupervisorRef::from_pid(c.pid.unwrap()))
            .collect();
        // (sup, id) -> pid
        let mut before: HashMap<(usize, String), Pid> = HashMap::new();
        for (i, s) in subs.iter().enumerate() {
            for c in s.which_children(&ctx).await.unwrap() {
                before.insert((i, c.id), c.pid.unwrap());
            }
        }
        assert_eq!(before.len(), SUPS * EACH);
        let mut keys: Vec<_> = before.keys().cloned().collect();
        keys.sort();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut crashed = HashSet::new();
        while crashed.len() < CRASHES {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            crashed.insert(keys[(x % keys.len() as u64) as usize].clone());
        }
        let t1 = Instant::now();
        for k in &crashed {
            ctx.send_exit(before[k], Reason::from("random crash")).await;
        }
        // Wait until every crashed child runs again.
        let after = loop {
            let mut after: HashMap<(usize, String), Pid> = HashMap::new();
            for (i, s) in subs.iter().enumerate() {
                for c in s.which_children(&ctx).await.unwrap() {
                    if let Some(p) = c.pid {
                        after.insert((i, c.id), p);
                    }
                }
            }
            let done = after.len() == SUPS * EACH
                && crashed
                    .iter()
                    .all(|k| after.get(k).is_some_and(|p| *p != before[k]));
            if done {
                break after;
            }
            pause(&ctx, 5).await;
        };
        let recovered = t1.elapsed();
        for (k, p) in &before {
            if !crashed.contains(k) {
                assert_eq!(after[k], *p, "{k:?} was touched");
            }
        }
        let mut alive = 0;
        for p in after.values() {
            alive += ctx.is_alive(*p).await as usize;
        }
        top.stop(&ctx).await.unwrap();
        (started, recovered, alive)
    });
    let (started, recovered, alive) = r.unwrap();
    println!(
        "stress: {} workers started in {:?}; {CRASHES} crashes recovered in {:?}; {alive} running",
        SUPS * EACH,
        started,
        recovered
    );
    assert_eq!(alive, SUPS * EACH);
}
