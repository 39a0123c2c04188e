//! Lonala stack traces as text. The VM captures a trace as frames
//! (`vm/trace.rs`); they are formatted here, below the VM, only when
//! someone shows them (a crash report in `msg`, an uncaught error).

use crate::bytecode::Proto;

/// A stack trace: `(function, pc)` frames, innermost first.
pub(crate) type Frames = Vec<(&'static Proto, u32)>;

/// Frames kept in a stack trace.
pub(crate) const TRACE_DEPTH: usize = 24;

/// A trace (innermost first) as text lines `  at ns/f (file:line)`.
pub(crate) fn trace_text(trace: &[(&'static Proto, u32)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (p, pc) in trace {
        let _ = if p.native.is_some() {
            writeln!(s, "  at {} (built-in)", p.name)
        } else {
            writeln!(s, "  at {} ({}:{})", p.name, p.file, p.line_at(*pc))
        };
    }
    s
}
