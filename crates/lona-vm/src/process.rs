//! Lonala processes: the interpreter as a [`Process`] of `lona-runtime`.
//!
//! Each Lonala process owns an interpreter (the crate's private `Vm`): its
//! heap (young/old; a spawned process's starts at 34 words, 272 bytes, see
//! [`spawned_heap`]; `:min-heap-size` and `:max-heap-size` from
//! `spawn-opt`), its register stack and its frames. The runtime knows nothing of terms or
//! bytecode: it calls [`Process::step`] with the slice's reductions, and
//! the VM uses the runtime only through [`StepCx`], the API every kind of
//! process uses.
//!
//! # A step
//! 1. On its first step a spawned process attaches the fragment it was
//!    spawned with (`[f & args]`, copied by the parent) to its heap and
//!    starts the call.
//! 2. The VM runs until the budget is spent (`Step::Yield`), a `receive`
//!    finds nothing to take (`Step::Wait`; stepped again when anything
//!    arrives or the timeout fires), or the call ends.
//! 3. Ending: a normal return is reason `:normal`. An uncaught exception
//!    ends the process with `[:error e]`, `[:error [:nocatch v]]` or the
//!    `exit` reason (lonala.md, "Errors"); the reason carries the Lonala
//!    stack trace to the runtime's crash report. `(halt n)` stops the
//!    node.
//!
//! # Memory
//!
//! A process's memory is its heap, register stack, frames and handlers;
//! `:max-heap-size` (words; `spawn-opt`, `(process-flag :max-heap-size
//! n)`, or the node's default, [`Env::max_heap_size`], `lona run
//! --max-heap`) limits them together (`vm/memory.rs`). Both ways a
//! process can outgrow what it may have end only that process, never the
//! node, and cannot be caught by its own `try`:
//!
//! * past its limit (checked at each collection and whenever the stack,
//!   frames or an overflow chunk grow) it is killed with reason
//!   `:killed`, as Erlang kills it, and an error report says why;
//! * when the allocator cannot back a growth of its heap or stack (the
//!   node is out of memory), it ends with reason
//!   `[:system-limit :out-of-memory]`, also reported.
//!
//! Both arrive as a [`HeapError`]: from a collection as
//! `Outcome::HeapLimit`, from an allocation as a panic payload (an
//! allocation cannot return an error), which [`Process::step`] catches
//! here (`catch_heap_error`). Its links and monitors get the reason as
//! for any other end.
//!
//! The main process of `lona run` is the same with an [`Evaluator`] (a
//! program's forms, then `-main`) instead of a single call.

use crate::NodeEnv;
use std::sync::Arc;

use lona_runtime::{Process, Reason, Step, StepCx};
use lona_term::{Fragment, Heap, HeapConfig, HeapError, RawTerm, View};

use crate::env::Env;
use crate::eval::{EvalError, Evaluator, Progress};
use crate::native::Class;
use crate::vm::{Outcome, Vm};

pub use crate::ending::{EndSignal, Ending};

pub use crate::msg::exit_term;

/// A spawned process's heap: as small as the growth sequence allows (34
/// words, 272 bytes; it grows at its first collections), so a million idle
/// processes cost little (`docs/design.md`, D19), limited by the node's
/// default `:max-heap-size` ([`Env::max_heap_size`]). `spawn-opt`'s
/// `:min-heap-size` asks for more, its `:max-heap-size` replaces the limit.
pub fn spawned_heap(env: &Env) -> HeapConfig {
    HeapConfig {
        min_heap_size: lona_term::SMALLEST_HEAP_WORDS,
        max_heap_size: env.max_heap_size(),
        ..HeapConfig::default()
    }
}

/// Runs `f` (a step of a process's VM), catching the [`HeapError`] an
/// allocation unwinds with when the process outgrows its limit or the
/// node's memory (module documentation). Any other panic goes on
/// unwinding, to the runtime.
pub(crate) fn catch_heap_error<R>(f: impl FnOnce() -> R) -> Result<R, HeapError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => Ok(r),
        Err(payload) => match payload.downcast::<HeapError>() {
            Ok(e) => Err(*e),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

/// A Lonala process.
pub struct LonaProcess {
    body: Body,
}

// The spawned kind is the one there are millions of: kept inline (a box
// would cost every process another allocation); the one main process
// holds a box.
#[allow(clippy::large_enum_variant)]
enum Body {
    /// A spawned function call; `start` until the first step.
    Call { vm: Vm, start: Option<Fragment> },
    /// The main process of a program.
    Main {
        ev: Box<Evaluator>,
        end: Arc<EndSignal>,
    },
}

impl LonaProcess {
    // `spawned` and `call`, which start the node first if it has not
    // started, are in `boot.rs`, above the node's built-ins.

    /// [`LonaProcess::spawned`] on a heap already made (`spawn` makes it
    /// fallibly, in the spawner, so that a `:min-heap-size` the node
    /// cannot back fails the spawn).
    pub(crate) fn spawned_on(env: Arc<Env>, start: Fragment, heap: Heap) -> LonaProcess {
        LonaProcess {
            body: Body::Call {
                // SAFETY: the process starts only its start fragment's
                // function and arguments, adopted onto this heap.
                vm: unsafe { Vm::with_heap(env, heap) },
                start: Some(start),
            },
        }
    }

    /// [`LonaProcess::call`] on a node that has started.
    pub(crate) fn call_started(
        env: Arc<Env>,
        qualified: &str,
        args: &Fragment,
    ) -> Result<LonaProcess, crate::LookupError> {
        use crate::LookupError;
        let (ns, name) = qualified
            .rsplit_once('/')
            .ok_or_else(|| LookupError::NotQualified(qualified.to_string()))?;
        let var = env
            .namespaces
            .get(ns)
            .and_then(|n| n.lookup(name))
            .ok_or_else(|| LookupError::NoVar(ns.to_string(), name.to_string()))?;
        let f = var
            .value()
            .ok_or_else(|| LookupError::Unbound(ns.to_string(), name.to_string()))?;
        let heap = Heap::new();
        let f = heap.copy_from(f.root());
        // The arguments live in the caller's fragment: copied here (any
        // term: strings, vectors, maps, binaries), then the spawned
        // process copies the whole call onto its own heap.
        let args = heap.copy_from(args.root());
        let mut items = vec![f];
        match args.view() {
            View::Vector(v) => items.extend_from_slice(v),
            View::Nil | View::EmptyList => {}
            View::Cons(..) => items.extend(args.list_iter()),
            _ => return Err(LookupError::BadArguments(args.to_string())),
        }
        let start = Fragment::new(heap.vector(&items));
        let config = spawned_heap(&env);
        Ok(LonaProcess::spawned_on(
            env,
            start,
            Heap::with_config(config),
        ))
    }

    /// The main process of a program: runs `ev` and reports to `end`. It
    /// is limited by the node's default `:max-heap-size` as every process.
    pub fn main(mut ev: Evaluator, end: Arc<EndSignal>) -> LonaProcess {
        let max = ev.vm.env().max_heap_size();
        if max > 0 && ev.vm.heap.config().max_heap_size == 0 {
            ev.vm.heap.set_max_heap_size(max);
        }
        LonaProcess {
            body: Body::Main {
                ev: Box::new(ev),
                end,
            },
        }
    }
}

/// Charges what the VM spent to the runtime's budget.
fn charge(cx: &mut StepCx<'_>, before: u64, after: u64) {
    let spent = (after - before).min(u32::MAX as u64) as u32;
    cx.charge(spent.min(cx.budget()));
}

/// How a process that outgrew its limit or the node's memory ends
/// (module documentation, "Memory").
pub(crate) fn heap_limit(cx: &StepCx<'_>, e: HeapError) -> Step {
    // Erlang kills a process over its max_heap_size with reason `killed`
    // and logs it; so do we (the runtime adds its crash report if nobody
    // watches it).
    match e {
        HeapError::OutOfMemory { .. } => {
            eprintln!("=ERROR REPORT= process {} ended: {e}", cx.pid());
            Step::Exit(out_of_memory_reason())
        }
        HeapError::MaxHeapSize { .. } => {
            eprintln!("=ERROR REPORT= process {} killed: {e}", cx.pid());
            Step::Exit(Reason::Killed)
        }
    }
}

/// `[:system-limit :out-of-memory]`, built on a heap of its own (the
/// process's may be what could not grow).
fn out_of_memory_reason() -> Reason {
    let h = Heap::new();
    let t = h.vector(&[
        lona_term::kw!("system-limit"),
        lona_term::kw!("out-of-memory"),
    ]);
    crate::msg::term_reason(t, None)
}

/// What the main process's ending says about a [`HeapError`].
fn heap_limit_ending(e: HeapError) -> Ending {
    match e {
        HeapError::OutOfMemory { .. } => {
            Ending::Killed(format!("[:system-limit :out-of-memory]: {e}"))
        }
        HeapError::MaxHeapSize { .. } => Ending::Killed(format!("killed: {e}")),
    }
}

impl LonaProcess {
    fn vm(&self) -> &Vm {
        match &self.body {
            Body::Call { vm, .. } => vm,
            Body::Main { ev, .. } => &ev.vm,
        }
    }
}

impl Process for LonaProcess {
    fn current_function(&self) -> Option<String> {
        self.vm().current_function()
    }

    fn heap_words(&self) -> Option<usize> {
        // What `:max-heap-size` counts (heap, register stack, frames), so
        // a deep recursion shows in `process-info` and `(i)`; attached
        // messages included: they are the process's until its next
        // collection.
        let vm = self.vm();
        Some(vm.memory_words() + vm.heap.fragment_words())
    }

    fn visit(&mut self, what: &dyn std::any::Any) {
        if let Some(s) = what.downcast_ref::<lona_compiler::area::Sweep>() {
            self.vm().report_code(s);
            if let Body::Call { start: Some(f), .. } = &self.body {
                s.fragment(f);
            }
        }
    }

    fn init(&mut self, _cx: &mut StepCx<'_>) {
        if let Body::Main { ev, .. } = &mut self.body {
            // Now a process's, visited by the code collector (`purge`).
            ev.vm.adopt();
        }
    }

    fn step(&mut self, cx: &mut StepCx<'_>) -> Step {
        match catch_heap_error(|| self.step_vm(cx)) {
            Ok(s) => s,
            Err(e) => {
                if let Body::Main { end, .. } = &self.body {
                    end.set(heap_limit_ending(e));
                }
                heap_limit(cx, e)
            }
        }
    }

    fn close(&mut self, reason: &Reason) {
        if let Body::Main { end, .. } = &self.body {
            // Ended from outside (an exit signal): still an ending.
            end.set(Ending::Killed(format!("{reason:?}")));
        }
    }
}

impl LonaProcess {
    /// A step; an allocation past the limit or the node's memory unwinds
    /// out of it (caught by `step`).
    fn step_vm(&mut self, cx: &mut StepCx<'_>) -> Step {
        let budget = i32::try_from(cx.budget().max(1)).unwrap_or(i32::MAX);
        match &mut self.body {
            Body::Call { vm, start } => {
                if let Some(frag) = start.take() {
                    // Copied rather than attached: a few words, and the
                    // heap keeps no fragment list for an idle process.
                    let t = vm.heap.copy_from(frag.root());
                    drop(frag);
                    let View::Vector(items) = t.view() else {
                        return Step::Exit(Reason::from("bad spawn fragment"));
                    };
                    if items.is_empty() {
                        return Step::Exit(Reason::from("bad spawn fragment"));
                    }
                    let mut buf = [crate::tag::raw(0); 8];
                    let raw: Vec<RawTerm>;
                    let raw: &[RawTerm] = if items.len() <= buf.len() {
                        for (b, x) in buf.iter_mut().zip(items) {
                            *b = x.raw();
                        }
                        &buf[..items.len()]
                    } else {
                        raw = items.iter().map(|x| x.raw()).collect();
                        &raw
                    };
                    vm.start(raw[0], &raw[1..]);
                }
                let before = vm.reductions;
                let out = vm.run_in(budget, Some(cx));
                charge(cx, before, vm.reductions);
                match out {
                    Outcome::Yield => Step::Yield,
                    Outcome::Wait => Step::Wait,
                    Outcome::Done(_) => Step::Exit(Reason::Normal),
                    Outcome::Raised(r) => {
                        let frames = vm.take_trace();
                        // SAFETY: the reason is a word of the VM's heap
                        // (no collection since it was raised).
                        let reason = unsafe { vm.heap.term(r.reason) };
                        let t = exit_term(&vm.heap, r.class, reason);
                        Step::Exit(crate::msg::term_reason_frames(t, frames))
                    }
                    Outcome::Halt(n) => {
                        vm.env().flush_out();
                        vm.env().node().ending().set(Ending::Halt(n));
                        Step::Exit(Reason::Shutdown)
                    }
                    Outcome::HeapLimit(e) => heap_limit(cx, e),
                }
            }
            Body::Main { ev, end } => {
                let before = ev.vm.reductions;
                let p = ev.step_in(budget, Some(cx));
                charge(cx, before, ev.vm.reductions);
                match p {
                    Progress::Yield => Step::Yield,
                    Progress::Wait => Step::Wait,
                    Progress::Done => {
                        end.set(Ending::Normal);
                        Step::Exit(Reason::Normal)
                    }
                    Progress::Halt(n) => {
                        end.set(Ending::Halt(n));
                        Step::Exit(Reason::Shutdown)
                    }
                    Progress::HeapLimit(e) => {
                        end.set(heap_limit_ending(e));
                        heap_limit(cx, e)
                    }
                    // `(exit :normal)` in the main process is a normal
                    // end, as the program returning is (exit status 0),
                    // as in Erlang, where it is a process's normal end.
                    Progress::Failed(EvalError::Uncaught {
                        class: Class::Exit,
                        exit: Reason::Normal,
                        ..
                    }) => {
                        end.set(Ending::Normal);
                        Step::Exit(Reason::Normal)
                    }
                    Progress::Failed(e) => {
                        let reason = match &e {
                            EvalError::Uncaught { exit, .. } => exit.clone(),
                            other => Reason::from(other.to_string()),
                        };
                        end.set(Ending::Failed(e));
                        // `lona run` prints the reason with the trace; the
                        // runtime must not print it a second time.
                        cx.suppress_crash_report();
                        Step::Exit(reason)
                    }
                }
            }
        }
    }
}
