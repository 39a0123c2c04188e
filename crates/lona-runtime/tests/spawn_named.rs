//! `StepCx::spawn_named`: the name is registered before the process runs, a
//! taken name spawns nothing; every process spawned by a process knows its
//! parent (`ProcessInfo::parent`).

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lona_runtime::{Pid, Process, Runtime, SpawnError, SpawnOpts, Step, StepCx};

#[derive(Default, Debug)]
struct Seen {
    /// The child's pid, the pid `whereis` gave it on its first step, and
    /// its parent.
    child: Option<(Pid, Option<Pid>, Option<Pid>)>,
    /// The spawner's pid and what the first and second spawns gave.
    spawner: Option<Pid>,
    first: Option<Result<Pid, SpawnError>>,
    second: Option<Result<Pid, SpawnError>>,
    /// Whether a process made by the failed spawn ever ran.
    ghost_ran: bool,
}

struct Child(Arc<Mutex<Seen>>);

impl Process for Child {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        let me = cx.pid();
        let named = cx.whereis("worker");
        let parent = cx.info().parent;
        self.0.lock().unwrap().child = Some((me, named, parent));
        Step::Wait
    }
}

struct Ghost(Arc<Mutex<Seen>>);

impl Process for Ghost {
    fn step(&mut self, _cx: &mut StepCx<'_>) -> Step {
        self.0.lock().unwrap().ghost_ran = true;
        Step::Exit(lona_runtime::Reason::Normal)
    }
}

struct Spawner(Arc<Mutex<Seen>>);

impl Process for Spawner {
    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        let s = self.0.clone();
        let first = cx
            .spawn_named("worker", SpawnOpts::default(), move |_| Box::new(Child(s)))
            .map(|(p, _)| p);
        let s = self.0.clone();
        let second = cx
            .spawn_named("worker", SpawnOpts::default(), move |_| Box::new(Ghost(s)))
            .map(|(p, _)| p);
        let mut seen = self.0.lock().unwrap();
        seen.spawner = Some(cx.pid());
        seen.first = Some(first);
        seen.second = Some(second);
        Step::Wait
    }
}

#[test]
fn spawn_named_registers_first_and_a_taken_name_spawns_nothing() {
    let rt = Runtime::builder()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let before = rt.handle().processes().len();
    let outside = rt.handle().spawn_process(Spawner(seen.clone())).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().unwrap().child.is_none() || seen.lock().unwrap().first.is_none() {
        assert!(Instant::now() < deadline, "the processes never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(20));
    let s = seen.lock().unwrap();
    let child = *s.first.as_ref().unwrap().as_ref().unwrap();
    let (me, named, parent) = s.child.unwrap();
    assert_eq!(me, child);
    assert_eq!(named, Some(child), "registered before its first step");
    assert_eq!(parent, Some(outside), "the spawner is the parent");
    assert_eq!(s.spawner, Some(outside));
    assert_eq!(
        s.second,
        Some(Err(SpawnError::NameTaken {
            name: "worker".into(),
            holder: child
        }))
    );
    assert!(!s.ghost_ran);
    // The spawner and the child: nothing else was made.
    assert_eq!(rt.handle().processes().len(), before + 2);
    assert_eq!(rt.handle().whereis("worker"), Some(child));
    drop(s);
    rt.shutdown();
}
