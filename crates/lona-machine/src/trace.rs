//! Lonala stack traces as text. The VM captures a trace as frames
//! (`vm/trace.rs`); a trace that leaves the process (an exit reason) keeps
//! names, files and lines rather than the prototypes, so that no crash
//! report keeps code alive (`purge`). They are formatted here, below the
//! VM, only when someone shows them (a crash report in `msg`, an uncaught
//! error).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::bytecode::Proto;

pub(crate) use crate::bytecode::DebugName;

/// The interned name and file of `p` (cached in the prototype: a crash
/// pays no lock and no shared count).
pub(crate) fn debug_name(p: &Proto) -> &'static DebugName {
    p.ext.debug.get_or_init(|| {
        type Names = HashMap<(Arc<str>, Arc<str>), &'static DebugName>;
        static NAMES: Mutex<Option<Names>> = Mutex::new(None);
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        names
            .get_or_insert_with(HashMap::new)
            .entry((p.name.clone(), p.file.clone()))
            .or_insert_with(|| {
                Box::leak(Box::new(DebugName {
                    name: p.name.clone(),
                    file: p.file.clone(),
                }))
            })
    })
}

/// One frame of a trace that outlives the code it names.
#[derive(Clone, Copy, Debug)]
pub struct TraceFrame {
    who: &'static DebugName,
    /// The line; `None` for a built-in.
    line: Option<u32>,
}

/// A stack trace, innermost first.
pub type Frames = Vec<TraceFrame>;

/// Frames kept in a stack trace.
pub(crate) const TRACE_DEPTH: usize = 24;

/// The frames of a trace captured as `(function, pc)`.
pub(crate) fn frames_of(trace: &[(&'static Proto, u32)]) -> Frames {
    trace
        .iter()
        .map(|(p, pc)| TraceFrame {
            who: debug_name(p),
            line: p.ext.native.is_none().then(|| p.line_at(*pc)),
        })
        .collect()
}

/// A trace (innermost first) as text lines `  at ns/f (file:line)`.
pub(crate) fn trace_text(trace: &[TraceFrame]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for f in trace {
        let _ = match f.line {
            None => writeln!(s, "  at {} (built-in)", f.who.name),
            Some(line) => writeln!(s, "  at {} ({}:{})", f.who.name, f.who.file, line),
        };
    }
    s
}
