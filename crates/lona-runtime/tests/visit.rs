//! Visits (`visit_all`): work run inside every process, between its
//! steps, by the worker that owns it. Every live process is visited once;
//! one that ends, panics in its visit, or belongs to a runtime that goes
//! away still lets the visit finish.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lona_runtime::{visit_all, Builder, Process, Step, StepCx};

/// What the test asks: each process of test `.0` adds its id (visits go
/// to every runtime of the OS process: the other tests' too).
struct Probe(u32, Mutex<Vec<u64>>);

struct Worker {
    test: u32,
    id: u64,
    /// Steps to run before waiting forever (a busy process first).
    busy: u32,
    /// Panic in `visit`.
    hostile: bool,
    steps: Arc<AtomicUsize>,
}

impl Process for Worker {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        self.steps.fetch_add(1, Ordering::Relaxed);
        if self.busy > 0 {
            self.busy -= 1;
            cx.charge(cx.budget());
            return Step::Yield;
        }
        Step::Wait
    }

    fn visit(&mut self, what: &dyn Any) {
        if self.hostile {
            panic!("a visit that panics");
        }
        if let Some(p) = what.downcast_ref::<Probe>() {
            if p.0 == self.test {
                p.1.lock().unwrap().push(self.id);
            }
        }
    }
}

fn probe(test: u32) -> Arc<Probe> {
    Arc::new(Probe(test, Mutex::new(Vec::new())))
}

#[test]
fn smoke_every_process_is_visited_once_waiting_or_busy() {
    let rt = Builder::default().workers(2).build().unwrap();
    let h = rt.handle();
    let steps = Arc::new(AtomicUsize::new(0));
    for id in 0..2_000u64 {
        let busy = if id % 10 == 0 { 200 } else { 0 };
        h.spawn_process(Worker {
            test: 1,
            id,
            busy,
            hostile: false,
            steps: steps.clone(),
        })
        .unwrap();
    }
    let p = probe(1);
    let v = visit_all(p.clone());
    assert!(v.processes >= 2_000);
    assert!(v.wait(Duration::from_secs(30)), "the visit never ended");
    let mut seen = p.1.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(seen, (0..2_000).collect::<Vec<u64>>());
    rt.shutdown();
}

#[test]
fn processes_that_end_or_panic_in_their_visit_do_not_hold_it_up() {
    let rt = Builder::default().workers(2).build().unwrap();
    let h = rt.handle();
    let steps = Arc::new(AtomicUsize::new(0));
    let mut pids = Vec::new();
    for id in 0..500u64 {
        pids.push(
            h.spawn_process(Worker {
                test: 2,
                id,
                busy: 0,
                hostile: id % 2 == 1,
                steps: steps.clone(),
            })
            .unwrap(),
        );
    }
    // Half of the quiet ones are killed while the visit is under way.
    let p = probe(2);
    let v = visit_all(p.clone());
    for pid in pids.iter().step_by(4) {
        h.send_exit(*pid, lona_runtime::Reason::Kill);
    }
    assert!(v.wait(Duration::from_secs(30)), "the visit never ended");
    let seen = p.1.lock().unwrap().clone();
    assert!(seen.iter().all(|id| id % 2 == 0), "{seen:?}");
    // The hostile ones are alive and still answer a second visit.
    let v2 = visit_all(probe(2));
    assert!(v2.wait(Duration::from_secs(30)));
    for pid in pids.iter().skip(1).step_by(2) {
        assert!(h.is_alive(*pid));
    }
    rt.shutdown();
}

#[test]
fn a_runtime_shut_down_meanwhile_does_not_hold_it_up() {
    let rt = Builder::default().workers(1).build().unwrap();
    let h = rt.handle();
    let steps = Arc::new(AtomicUsize::new(0));
    for id in 0..1_000u64 {
        h.spawn_process(Worker {
            test: 3,
            id,
            busy: 1_000,
            hostile: false,
            steps: steps.clone(),
        })
        .unwrap();
    }
    let v = visit_all(probe(3));
    rt.shutdown();
    drop(h);
    assert!(
        v.wait(Duration::from_secs(30)),
        "tickets of a dropped runtime"
    );
}
