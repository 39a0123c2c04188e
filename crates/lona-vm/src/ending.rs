//! How a program ended, and where its ending is reported: set by its
//! main process or by `(halt n)` in any process, waited for by the thread
//! that started it (`node::run_main`).

use std::sync::{Condvar, Mutex};

use crate::error::EvalError;

/// How a program ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// Every form (and `-main`) ran: exit status 0.
    Normal,
    /// `(halt n)`, in any process.
    Halt(i32),
    /// An error ended it: exit status 1.
    Failed(EvalError),
    /// The main process was ended from outside (an exit signal, a heap
    /// limit): exit status 1.
    Killed(String),
}

/// Where the program's ending is reported (and the thread that started it
/// waits). The first ending set wins.
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

    /// The ending, if there is one yet.
    pub fn try_get(&self) -> Option<Ending> {
        self.ending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
