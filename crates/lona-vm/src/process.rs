//! A Lonala program as a process of the runtime: the [`Evaluator`] run in
//! slices of the process's reduction budget.
//!
//! This is the main process of `lona run` and `lona eval`. Lonala's own
//! process functions (spawn, send, receive) come with the process issue;
//! the shape is already the one they need: the interpreter returns to the
//! scheduler after any slice and resumes where it stopped.

use std::sync::{Arc, Condvar, Mutex};

use lona_runtime::{Cx, Process, Reason, Step};

use crate::eval::{EvalError, Evaluator, Progress};

/// How a program ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// Every form (and `-main`) ran: exit status 0.
    Normal,
    /// `(halt n)`.
    Halt(i32),
    /// An error ended it: exit status 1.
    Failed(EvalError),
}

impl Ending {
    /// The process exit status `lona run` uses.
    pub fn status(&self) -> i32 {
        match self {
            Ending::Normal => 0,
            Ending::Halt(n) => *n,
            Ending::Failed(_) => 1,
        }
    }
}

/// Where the main process reports its ending (and the thread that
/// started it waits).
#[derive(Default)]
pub struct EndSignal {
    ending: Mutex<Option<Ending>>,
    cond: Condvar,
}

impl EndSignal {
    /// Records the ending and wakes the waiter.
    pub fn set(&self, e: Ending) {
        let mut g = self.ending.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
        self.cond.notify_all();
    }

    /// Waits for the ending.
    pub fn wait(&self) -> Ending {
        let mut g = self.ending.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(e) = g.clone() {
                return e;
            }
            g = self.cond.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The main process of a program.
pub struct MainProcess {
    ev: Evaluator,
    end: Arc<EndSignal>,
}

impl MainProcess {
    /// A process that runs `ev` and reports to `end`.
    pub fn new(ev: Evaluator, end: Arc<EndSignal>) -> MainProcess {
        MainProcess { ev, end }
    }
}

impl Process for MainProcess {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        let budget = cx.budget().max(1);
        let before = self.ev.vm.reductions;
        let p = self.ev.step(i32::try_from(budget).unwrap_or(i32::MAX));
        let spent = (self.ev.vm.reductions - before).min(u32::MAX as u64) as u32;
        cx.charge(spent.min(cx.budget()));
        match p {
            Progress::Yield => Step::Yield,
            Progress::Done => {
                self.end.set(Ending::Normal);
                Step::Exit(Reason::Normal)
            }
            Progress::Halt(n) => {
                self.end.set(Ending::Halt(n));
                Step::Exit(Reason::Normal)
            }
            Progress::Failed(e) => {
                let reason = match &e {
                    EvalError::Uncaught { exit_reason, .. } => exit_reason.clone(),
                    other => other.to_string(),
                };
                self.end.set(Ending::Failed(e));
                // The program's runner prints the reason with the Lonala
                // stack trace; `Shutdown` keeps the runtime from printing
                // a second, poorer crash report of the same ending.
                let _ = reason;
                Step::Exit(Reason::Shutdown)
            }
        }
    }

    fn close(&mut self, reason: &Reason) {
        // Killed from outside (or panicked): still report an ending.
        self.end.set(Ending::Failed(EvalError::Load(format!(
            "main process ended: {reason:?}"
        ))));
    }
}
