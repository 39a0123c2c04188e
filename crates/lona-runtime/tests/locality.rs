//! Where processes run on two workers (`worker.rs`, step 5: a worker's
//! local queue is opened to thieves only when its backlog is old): a
//! conversation that keeps its worker's queue short stays on that worker,
//! and a backlog that lasts is shared. Two workers exactly (not
//! `LONA_TEST_WORKERS`): the point is one placement.

use lona_runtime::{Builder, Ctx, Pid};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

fn two_workers() -> lona_runtime::Runtime {
    Builder::default().workers(2).build().unwrap()
}

struct Start(Pid);
struct Started;

/// `supstart`'s shape: a caller asks a server for a child, the server
/// spawns it (into its worker's LIFO slot) and answers (the caller takes
/// the slot, the child goes to the local queue), and the child runs once
/// and waits. The worker keeps up with its queue in short slices, so the
/// idle second worker must not take the children: each would move its
/// queue entry, its slot and its first heap across cores. (Before the
/// queue was opened by backlog alone, the spinning second worker stole
/// most of them.)
#[test]
fn children_started_in_short_slices_stay_on_their_worker() {
    const N: usize = 3000;
    let local = Arc::new(AtomicUsize::new(0));
    let total = Arc::new(AtomicUsize::new(0));
    let (l2, t2) = (local.clone(), total.clone());
    let ran = two_workers()
        .block_on(move |ctx: Ctx| async move {
            let server = ctx
                .spawn(move |ctx: Ctx| async move {
                    loop {
                        let Start(from) = ctx.receive::<Start>().await;
                        let here = std::thread::current().id();
                        let (l3, t3) = (l2.clone(), t2.clone());
                        ctx.spawn(move |c: Ctx| async move {
                            if std::thread::current().id() == here {
                                l3.fetch_add(1, Ordering::Relaxed);
                            }
                            t3.fetch_add(1, Ordering::Release);
                            c.receive::<()>().await;
                        })
                        .await
                        .unwrap();
                        ctx.send(from, Started).await;
                    }
                })
                .await
                .unwrap();
            for _ in 0..N {
                ctx.send(server, Start(ctx.pid())).await;
                ctx.receive::<Started>().await;
            }
            // The last children may still be queued: wait until every one
            // has run.
            while total.load(Ordering::Acquire) < N {
                let _ = ctx.receive_timeout::<()>(Duration::from_millis(1)).await;
            }
            N
        })
        .unwrap();
    let local = local.load(Ordering::Relaxed);
    assert!(
        local * 100 >= ran * 95,
        "{local} of {ran} children ran on their server's worker"
    );
}

struct Ball(Pid, u32);

/// Many pairs passing messages keep a worker's queue from ever emptying:
/// the backlog grows old, the queue opens, and the second worker takes
/// part of the work (both threads run pair processes).
#[test]
fn a_lasting_backlog_is_shared() {
    const PAIRS: usize = 64;
    const ROUNDS: u32 = 2000;
    let threads = Arc::new(Mutex::new(HashSet::<ThreadId>::new()));
    let t2 = threads.clone();
    two_workers()
        .block_on(move |ctx: Ctx| async move {
            let me = ctx.pid();
            for _ in 0..PAIRS {
                let t3 = t2.clone();
                let t4 = t2.clone();
                let echo = ctx
                    .spawn(move |c: Ctx| async move {
                        loop {
                            let Ball(from, n) = c.receive::<Ball>().await;
                            t3.lock().unwrap().insert(std::thread::current().id());
                            c.send(from, Ball(c.pid(), n)).await;
                        }
                    })
                    .await
                    .unwrap();
                ctx.spawn(move |c: Ctx| async move {
                    for n in 0..ROUNDS {
                        c.send(echo, Ball(c.pid(), n)).await;
                        let Ball(_, m) = c.receive::<Ball>().await;
                        assert_eq!(m, n);
                    }
                    t4.lock().unwrap().insert(std::thread::current().id());
                    c.send(me, ()).await;
                })
                .await
                .unwrap();
            }
            for _ in 0..PAIRS {
                ctx.receive::<()>().await;
            }
        })
        .unwrap();
    let n = threads.lock().unwrap().len();
    assert_eq!(n, 2, "pair processes ran on {n} worker thread(s)");
}
