//! Seeing inside a running node from outside it: `Handle::snapshot` (the
//! walk behind the shell's `(i)` and the live view) and
//! `Handle::runtime_info`. The walk must answer for every process, name
//! the ones that cannot answer, leave out the ones that end meanwhile, and
//! never stop the node.

use lona_runtime::{Builder, Handle, Pid, Status};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const PATIENCE: Duration = Duration::from_millis(300);

fn spawn_waiters(h: &Handle, n: usize) -> Vec<Pid> {
    (0..n)
        .map(|_| {
            h.spawn(|ctx| async move {
                ctx.receive::<()>().await;
            })
            .unwrap()
        })
        .collect()
}

#[test]
fn smoke_snapshot_lists_every_waiting_process_with_its_info() {
    let rt = Builder::default().workers(2).build().unwrap();
    let h = rt.handle();
    let pids = spawn_waiters(&h, 10_000);
    h.register("tenth", pids[9]).unwrap();
    for _ in 0..3 {
        h.send(pids[5], 7u32); // not received: stays in its mailbox
    }
    let snap = h.snapshot(Duration::from_secs(10));
    assert_eq!(snap.processes.len(), 10_000);
    assert!(snap.processes.iter().all(|e| e.info.is_some()));
    let find = |p: Pid| {
        snap.processes
            .iter()
            .find(|e| e.pid == p)
            .and_then(|e| e.info.clone())
            .unwrap()
    };
    let fifth = find(pids[5]);
    assert_eq!(fifth.message_queue_len, 3);
    assert_eq!(fifth.status, Status::Waiting);
    assert_eq!(find(pids[9]).registered_name.as_deref(), Some("tenth"));
    for p in &pids {
        h.send(*p, ());
    }
    rt.shutdown();
}

#[test]
fn a_process_that_never_yields_is_listed_as_busy_and_the_walk_ends() {
    let rt = Builder::default().workers(2).build().unwrap();
    let h = rt.handle();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (s, st) = (stop.clone(), started.clone());
    // A native loop that never calls the runtime: it cannot drain its
    // signals, so it cannot answer.
    let hog = h
        .spawn(move |_ctx| async move {
            st.store(true, Ordering::SeqCst);
            while !s.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
        })
        .unwrap();
    while !started.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let others = spawn_waiters(&h, 100);
    let snap = h.snapshot(PATIENCE);
    let hog_entry = snap.processes.iter().find(|e| e.pid == hog).unwrap();
    assert!(hog_entry.info.is_none(), "a busy process has no answer");
    for p in &others {
        let e = snap.processes.iter().find(|e| e.pid == *p).unwrap();
        assert!(e.info.is_some(), "the others answered on the other worker");
    }
    stop.store(true, Ordering::SeqCst);
    for p in &others {
        h.send(*p, ());
    }
    rt.shutdown();
}

#[test]
fn processes_that_end_during_the_walk_are_left_out() {
    let rt = Builder::default().workers(2).build().unwrap();
    let h = rt.handle();
    let pids = spawn_waiters(&h, 5_000);
    // End every other one, racing the walk.
    let h2 = h.clone();
    let ending: Vec<Pid> = pids.iter().copied().step_by(2).collect();
    let t = std::thread::spawn(move || {
        for p in ending {
            h2.send(p, ());
        }
    });
    let snap = h.snapshot(Duration::from_secs(10));
    t.join().unwrap();
    for e in &snap.processes {
        assert!(
            e.info.is_some(),
            "every listed process answered (the ending ones answer 'gone')"
        );
    }
    // Those never ended are all there.
    for p in pids.iter().skip(1).step_by(2) {
        assert!(snap.processes.iter().any(|e| e.pid == *p));
    }
    for p in pids.iter().skip(1).step_by(2) {
        h.send(*p, ());
    }
    rt.shutdown();
}

#[test]
fn runtime_info_counts_and_measures_load() {
    let rt = Builder::default()
        .workers(2)
        .process_limit(5_000)
        .build()
        .unwrap();
    let h = rt.handle();
    let pids = spawn_waiters(&h, 1_000);
    h.register("one", pids[0]).unwrap();
    let a = h.runtime_info();
    assert_eq!(a.workers.len(), 2);
    assert_eq!(a.process_count, 1_000);
    assert_eq!(a.process_limit, 5_000);
    assert_eq!(a.registered, 1);
    assert!(a.table_bytes > 0);
    // Keep one worker busy for a while: its busy time grows.
    let spins = Arc::new(AtomicU64::new(0));
    let sp = spins.clone();
    h.spawn(move |ctx| async move {
        for _ in 0..200_000u32 {
            sp.fetch_add(1, Ordering::Relaxed);
            ctx.yield_now().await;
        }
    })
    .unwrap();
    while spins.load(Ordering::Relaxed) < 200_000 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let b = h.runtime_info();
    let busy_a: Duration = a.workers.iter().map(|w| w.busy).sum();
    let busy_b: Duration = b.workers.iter().map(|w| w.busy).sum();
    assert!(busy_b > busy_a, "busy time grew while a process ran");
    let u = b.utilisation_since(&a);
    assert!(u.iter().all(|x| (0.0..=1.0).contains(x)), "{u:?}");
    assert!(u.iter().any(|x| *x > 0.0), "{u:?}");
    // An idle node: busy time stops growing (within the moments the
    // workers spend parking).
    std::thread::sleep(Duration::from_millis(50));
    let c = h.runtime_info();
    std::thread::sleep(Duration::from_millis(200));
    let d = h.runtime_info();
    let idle_grew: Duration = d
        .workers
        .iter()
        .zip(&c.workers)
        .map(|(d, c)| d.idle - c.idle)
        .sum();
    assert!(
        idle_grew > Duration::from_millis(200),
        "parked workers count as idle while parked: {idle_grew:?}"
    );
    for p in &pids {
        h.send(*p, ());
    }
    rt.shutdown();
}

/// `Handle::snapshot` means one thing wherever it is called: inside a
/// process, where it cannot wait for answers, it refuses (a panic that
/// ends only that process, naming what to do instead) rather than
/// quietly returning a list without info (issue 17, defect 9).
#[test]
fn snapshot_from_inside_a_process_refuses() {
    let rt = Builder::default().workers(1).build().unwrap();
    let r = rt.block_on(|ctx| async move {
        let _ = ctx.handle().snapshot(Duration::from_secs(60));
    });
    match r {
        Err(lona_runtime::Reason::Panic(p)) => {
            assert!(p.message.contains("Handle::snapshot"), "{}", p.message)
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // The node lives on, and from outside the same call answers.
    let p = rt
        .spawn(|ctx| async move { ctx.receive::<()>().await })
        .unwrap();
    let snap = rt.snapshot(Duration::from_secs(10));
    let entry = snap.processes.iter().find(|e| e.pid == p).expect("listed");
    assert!(entry.info.is_some(), "answered from outside");
    rt.send(p, ());
}

/// `(i)` with a million processes (run by hand:
/// `cargo test --release -p lona-runtime --test introspect -- --ignored`).
#[test]
#[ignore]
fn stress_snapshot_of_a_million_processes() {
    let rt = Builder::default().build().unwrap();
    let h = rt.handle();
    let pids = spawn_waiters(&h, 1_000_000);
    let t0 = std::time::Instant::now();
    let snap = h.snapshot(Duration::from_secs(5));
    let dt = t0.elapsed();
    assert_eq!(snap.processes.len(), 1_000_000);
    assert!(snap.processes.iter().all(|e| e.info.is_some()));
    println!("snapshot of 1,000,000 processes: {dt:?}");
    for p in &pids {
        h.send(*p, ());
    }
    rt.shutdown();
}
