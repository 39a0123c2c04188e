//! Lonala stack traces as text. The VM captures a trace as frames
//! (`vm/trace.rs`); a trace that leaves the process (an exit reason) keeps
//! names, files and lines rather than the prototypes, so that no crash
//! report keeps code alive (`purge`). They are formatted here, below the
//! VM, only when someone shows them (a crash report in `msg`, an uncaught
//! error).

use std::sync::Arc;

use crate::bytecode::Proto;

/// One frame of a trace that outlives the code it names.
#[derive(Clone, Debug)]
pub(crate) struct TraceFrame {
    name: Arc<str>,
    /// The file and line; `None` for a built-in.
    at: Option<(Arc<str>, u32)>,
}

/// A stack trace, innermost first.
pub(crate) type Frames = Vec<TraceFrame>;

/// Frames kept in a stack trace.
pub(crate) const TRACE_DEPTH: usize = 24;

/// The frames of a trace captured as `(function, pc)`.
pub(crate) fn frames_of(trace: &[(&'static Proto, u32)]) -> Frames {
    trace
        .iter()
        .map(|(p, pc)| TraceFrame {
            name: p.name.clone(),
            at: p.native.is_none().then(|| (p.file.clone(), p.line_at(*pc))),
        })
        .collect()
}

/// A trace (innermost first) as text lines `  at ns/f (file:line)`.
pub(crate) fn trace_text(trace: &[TraceFrame]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for f in trace {
        let _ = match &f.at {
            None => writeln!(s, "  at {} (built-in)", f.name),
            Some((file, line)) => writeln!(s, "  at {} ({}:{})", f.name, file, line),
        };
    }
    s
}
