//! Ending a process with a large mailbox does not hold its worker while
//! the messages are freed (issue 17, defect 8; `reclaim`): the messages go
//! to the reclaimer thread, every one of them is dropped exactly once
//! (a panicking `Drop` among them contained), and nothing is left after
//! shutdown.

mod common;

use lona_runtime::{Builder, Reason};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// More than the runtime frees in place (`reclaim::INLINE_MAX`).
const QUEUED: usize = 10_000;

/// A bound for things that happen at once unless the runtime is broken;
/// it only keeps a failing test from hanging.
const BOUND: Duration = Duration::from_secs(20);

/// A message that counts its drop; `hostile` ones panic in `Drop`.
struct Counted {
    drops: Arc<AtomicUsize>,
    hostile: bool,
}
impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
        if self.hostile {
            panic!("a message whose destructor panics");
        }
    }
}

/// A message whose `Drop` says where it runs and then waits for the test.
struct Gate {
    entered: Sender<Option<String>>,
    release: Mutex<Receiver<()>>,
    drops: Arc<AtomicUsize>,
}
impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self
            .entered
            .send(std::thread::current().name().map(str::to_string));
        // Returns when released, or when the test's sender is gone.
        let _ = self.release.lock().unwrap().recv();
        self.drops.fetch_add(1, SeqCst);
    }
}

#[test]
fn killing_a_process_with_a_large_mailbox_frees_it_off_the_worker() {
    // One worker: if it were the one freeing the mailbox, nothing else
    // could run until the gate opens.
    let rt = Builder::default().workers(1).build().unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    for round in 0..2 {
        let victim = rt
            .spawn(|ctx| async move {
                // Waits for a message type nobody sends: the others pile up.
                let _: () = ctx.receive().await;
            })
            .unwrap();
        let (entered_tx, entered) = channel();
        let (release, release_rx) = channel();
        rt.send(
            victim,
            Gate {
                entered: entered_tx,
                release: Mutex::new(release_rx),
                drops: drops.clone(),
            },
        );
        for i in 1..QUEUED {
            let hostile = round == 0 && i == QUEUED / 2;
            let drops = drops.clone();
            rt.send(victim, Counted { drops, hostile });
        }
        rt.send_exit(victim, Reason::Kill);
        let freed_on = entered.recv_timeout(BOUND).expect("the mailbox is freed");
        assert_eq!(freed_on.as_deref(), Some("lona-reclaim"), "round {round}");
        // The gate holds the reclaimer; the worker runs other processes.
        let (ran_tx, ran) = channel();
        rt.spawn(move |_| async move { ran_tx.send(()).unwrap() })
            .unwrap();
        let ran = ran.recv_timeout(BOUND);
        release.send(()).unwrap();
        assert!(
            ran.is_ok(),
            "round {round}: the worker was held while the mailbox was freed"
        );
    }
    // Shutdown waits for the reclaimer to free what it holds.
    rt.shutdown();
    assert_eq!(drops.load(SeqCst), 2 * QUEUED, "every message dropped once");
}

/// A large mailbox that is never handed over (its process is alive at
/// shutdown) and one whose process ended just before: both freed.
#[test]
fn shutdown_frees_large_mailboxes_of_live_and_ended_processes() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut pids = vec![];
    for _ in 0..2 {
        let p = rt
            .spawn(|ctx| async move {
                let _: () = ctx.receive().await;
            })
            .unwrap();
        for _ in 0..QUEUED {
            let drops = drops.clone();
            rt.send(
                p,
                Counted {
                    drops,
                    hostile: false,
                },
            );
        }
        pids.push(p);
    }
    rt.send_exit(pids[0], Reason::from("bye"));
    let report = rt.shutdown();
    assert_eq!(report.killed, 0);
    assert_eq!(drops.load(SeqCst), 2 * QUEUED);
}
