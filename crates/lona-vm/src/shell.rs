//! The shell process of `lona repl`, as Erlang's: each input is evaluated
//! in a Lonala process, so `(self)` is that process and messages to it wait
//! for `receive` or `(flush)`.
//!
//! # Protocol
//! 1. The REPL (a thread outside the runtime) sends the shell process a
//!    [`ShellInput`] holding complete source text.
//! 2. The shell takes it (selectively: other messages stay for the user's
//!    `receive`), evaluates its forms, prints the last value, and reports
//!    [`ShellEvent::Done`] on the [`Console`].
//! 3. An uncaught exception ends the shell process with its reason (the
//!    error and its Lonala trace are printed first), as does an exit
//!    signal (a linked process dying, Ctrl-C's kill): [`Process::close`]
//!    reports [`ShellEvent::Ended`], and the REPL starts a new shell.
//!    Definitions live in the node's vars, so they survive; the new shell
//!    starts in the namespace the old one was in.

use crate::NodeEnv;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use lona_runtime::{Process, Reason, Scan, Step, StepCx};

use crate::env::Env;
use crate::eval::{EvalError, Evaluator, Progress};
use lona_reader::Source;

/// Source text for the shell process to evaluate (a runtime message).
pub struct ShellInput(pub String);

/// What the shell tells the REPL.
#[derive(Clone, Debug, PartialEq)]
pub enum ShellEvent {
    /// The input was evaluated (its value, or its error, is printed).
    Done,
    /// The shell process ended with this reason (printed).
    Ended(String),
}

/// Where the shell reports to the REPL thread, and the namespace it is in.
#[derive(Default)]
pub struct Console {
    event: Mutex<Option<ShellEvent>>,
    cond: Condvar,
    ns: Mutex<Option<String>>,
}

impl Console {
    fn post(&self, e: ShellEvent) {
        let mut g = self.event.lock().unwrap_or_else(|e| e.into_inner());
        // An end wins over a pending "done" (both may come from one step).
        if !matches!(*g, Some(ShellEvent::Ended(_))) {
            *g = Some(e);
        }
        self.cond.notify_all();
    }

    /// Waits up to `d` for the shell's next event (and takes it).
    pub fn wait(&self, d: Duration) -> Option<ShellEvent> {
        let g = self.event.lock().unwrap_or_else(|e| e.into_inner());
        let (mut g, _) = self
            .cond
            .wait_timeout_while(g, d, |e| e.is_none())
            .unwrap_or_else(|e| e.into_inner());
        g.take()
    }

    /// The namespace the shell is in (`user` at first).
    pub fn ns(&self) -> String {
        self.ns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "user".to_string())
    }

    fn set_ns(&self, ns: &str) {
        *self.ns.lock().unwrap_or_else(|e| e.into_inner()) = Some(ns.to_string());
    }
}

/// The shell process.
pub struct Shell {
    ev: Evaluator,
    console: Arc<Console>,
    env: Arc<Env>,
    /// Evaluating an input (else waiting for one).
    busy: bool,
    /// The receive id of the wait for input.
    recv: u64,
}

impl Shell {
    /// A shell process reporting to `console`, in the namespace the
    /// console last saw.
    pub fn new(env: Arc<Env>, console: Arc<Console>) -> Shell {
        let mut ev = Evaluator::new(env.clone());
        ev.vm.heap.set_max_heap_size(env.max_heap_size());
        ev.ns = env.namespaces.get_or_create(&console.ns());
        ev.print_last_value(true);
        Shell {
            ev,
            console,
            env,
            busy: false,
            recv: 0,
        }
    }
}

impl Process for Shell {
    fn visit(&mut self, what: &dyn std::any::Any) {
        if let Some(s) = what.downcast_ref::<lona_compiler::area::Sweep>() {
            self.ev.vm.report_code(s);
        }
    }

    fn init(&mut self, _cx: &mut StepCx<'_>) {
        // Now a process's, visited by the code collector (`purge`).
        self.ev.vm.adopt();
    }

    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        loop {
            if !self.busy {
                if self.recv == 0 {
                    self.recv = cx.new_receive();
                }
                match cx.take_message(self.recv, |e| e.is::<ShellInput>()) {
                    Scan::Found(e) => {
                        self.recv = 0;
                        let Ok(ShellInput(text)) = e.downcast::<ShellInput>() else {
                            continue;
                        };
                        match self.ev.push_source(&Source::new("<repl>", text)) {
                            Ok(()) => self.busy = true,
                            Err(e) => {
                                eprintln!("{e}");
                                self.console.post(ShellEvent::Done);
                            }
                        }
                    }
                    Scan::NotFound => return Step::Wait,
                    Scan::OutOfBudget => return Step::Yield,
                }
                continue;
            }
            let budget = i32::try_from(cx.budget().max(1)).unwrap_or(i32::MAX);
            let before = self.ev.vm.reductions;
            // Past its memory limit, or the node's memory: as any process.
            let p = match crate::process::catch_heap_error(|| {
                self.ev.step_in(budget, Some(&mut *cx))
            }) {
                Ok(p) => p,
                Err(e) => Progress::HeapLimit(e),
            };
            let spent = (self.ev.vm.reductions - before).min(u32::MAX as u64) as u32;
            cx.charge(spent.min(cx.budget()));
            match p {
                Progress::Yield => return Step::Yield,
                Progress::Wait => return Step::Wait,
                Progress::Done => {
                    self.busy = false;
                    self.env.flush_out();
                    self.console.set_ns(&self.ev.ns.name);
                    self.console.post(ShellEvent::Done);
                    if cx.budget() == 0 {
                        return Step::Yield;
                    }
                }
                Progress::Halt(n) => {
                    self.env.flush_out();
                    self.env
                        .node()
                        .ending()
                        .set(crate::process::Ending::Halt(n));
                    return Step::Exit(Reason::Shutdown);
                }
                Progress::HeapLimit(e) => return crate::process::heap_limit(cx, e),
                Progress::Failed(e) => {
                    self.env.flush_out();
                    self.console.set_ns(&self.ev.ns.name);
                    let reason = match &e {
                        EvalError::Uncaught {
                            exit_reason,
                            trace,
                            exit,
                            ..
                        } => {
                            eprintln!("** exception: {exit_reason}");
                            eprint!("{trace}");
                            exit.clone()
                        }
                        other => {
                            // A compile error is the input's fault, not a
                            // crash: the shell lives on.
                            eprintln!("{other}");
                            self.busy = false;
                            self.console.post(ShellEvent::Done);
                            continue;
                        }
                    };
                    // Reported here, with the trace: no second report.
                    cx.suppress_crash_report();
                    return Step::Exit(reason);
                }
            }
        }
    }

    fn current_function(&self) -> Option<String> {
        if self.busy {
            self.ev.vm.current_function()
        } else {
            Some("lona.shell/read-eval".to_string())
        }
    }

    fn heap_words(&self) -> Option<usize> {
        Some(self.ev.vm.memory_words())
    }

    fn close(&mut self, reason: &Reason) {
        self.console
            .post(ShellEvent::Ended(crate::msg::reason_text(reason)));
    }
}
