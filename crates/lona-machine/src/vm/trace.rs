//! Stack traces: captured when a raise happens (innermost frame first,
//! a failed built-in at the head), kept as frames, and formatted only when
//! someone shows them (a crash report, `trace_term` for a `catch`).

use lona_term::{RawTerm, Term};

use super::Vm;
use crate::trace::{frames_of, trace_text, Frames, TRACE_DEPTH};

impl Vm {
    /// Captures the stack trace at the current (synced) position.
    pub(super) fn capture_trace(&mut self) {
        let x = self.extra.get_or_insert_with(Box::default);
        let trace = &mut x.exn_trace;
        trace.clear();
        // A built-in that failed has no frame; it heads the trace (not
        // `throw`/`error`/`exit`, which raise on purpose: as in Erlang, the
        // trace starts at their caller).
        if let Some(p) = x.fault_native.take() {
            if !matches!(
                &*p.name,
                "lona.core/throw" | "lona.core/error" | "lona.core/exit"
            ) {
                trace.push((p, 0));
            }
        }
        let pc = self.cur.pc.saturating_sub(1);
        trace.push((self.cur.proto, pc));
        for f in self.frames.iter().rev() {
            if trace.len() >= TRACE_DEPTH {
                break;
            }
            trace.push((f.proto, f.pc.saturating_sub(1)));
        }
        trace.retain(|(p, _)| !p.name.starts_with('%'));
    }

    /// The current exception's trace (empty before the first).
    fn exn_trace(&self) -> &[(&'static crate::bytecode::Proto, u32)] {
        self.extra.as_ref().map_or(&[], |x| &x.exn_trace)
    }

    /// The function the process is in, `ns/name` (the innermost frame of a
    /// named function: anonymous ones are named after where they are
    /// defined); `None` before the first call.
    pub fn current_function(&self) -> Option<String> {
        std::iter::once(&self.cur)
            .chain(self.frames.iter().rev())
            .map(|f| &f.proto.name)
            .find(|n| !n.starts_with('%') && !n.is_empty())
            .map(|n| n.to_string())
    }

    /// The current exception's trace: `[[sym "file" line] ...]` as a list.
    pub fn trace_term(&self) -> RawTerm {
        let items: Vec<Term<'_>> = self
            .exn_trace()
            .iter()
            .map(|(p, pc)| {
                self.heap.vector(&[
                    Term::try_symbol(&p.name).unwrap_or_else(|_| self.heap.string(&p.name)),
                    self.heap.string(&p.file),
                    Term::small_int(p.line_at(*pc) as i64).unwrap_or(Term::NIL),
                ])
            })
            .collect();
        self.heap.list(&items).raw()
    }

    /// The trace as text lines `  at ns/f (file:line)`.
    pub fn trace_text(&self) -> String {
        trace_text(&frames_of(self.exn_trace()))
    }

    /// The current exception's trace, taken (for a process that ends with
    /// it: formatted only if someone prints it).
    pub fn take_trace(&mut self) -> Frames {
        match &mut self.extra {
            Some(x) => frames_of(&std::mem::take(&mut x.exn_trace)),
            None => frames_of(&[]),
        }
    }
}
