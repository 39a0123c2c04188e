//! Messages and exit reasons: how Lonala terms cross between processes.
//!
//! * A message is a [`Fragment`]: `send` deep-copies the term into a block
//!   of its own (strings and binaries of 64 bytes or more are shared by
//!   reference count, not copied), and the runtime carries it as an
//!   ordinary `Send` value. The receiver reads it in place while its
//!   patterns look at it; the one it takes joins its heap
//!   ([`lona_term::Heap::attach`]), and the next collection copies what is
//!   live out of it. So a message costs one copy.
//! * What the runtime itself delivers becomes a term when a Lonala process
//!   looks at it ([`message_term`]): `[:EXIT from reason]`, `[:DOWN ref pid
//!   reason]`, and the answers to `alive?` and `process-info`. A value a
//!   native Rust process sent that is not a term shows as
//!   `[:foreign "its Rust type"]`: a Lonala process can receive and drop it,
//!   never crash on it.
//! * Reasons: the runtime's standard reasons are keywords (`:normal`,
//!   `:kill`, `:killed`, `:shutdown`, `:noproc`); any other term travels
//!   as a [`TermReason`] (its own fragment), which also carries the Lonala
//!   stack trace of a crash for the runtime's crash report.

use std::fmt;
use std::sync::Arc;

use lona_runtime::{AliveReply, Down, Envelope, Exit, InfoReply, Pid, ProcessInfo, Reason, Ref};
use lona_term::{Fragment, Heap, RawTerm, Term, View};

/// An exit reason that is a Lonala term (anything but the runtime's
/// standard reasons).
pub struct TermReason {
    value: Fragment,
    /// The Lonala stack trace of the crash that produced it, if any (shown
    /// in crash reports; not part of the value).
    trace: Trace,
}

/// A crash's Lonala stack trace, as text or still as frames (formatted
/// only when a report shows it: most exits are never reported).
enum Trace {
    None,
    Text(Arc<str>),
    Frames(crate::trace::Frames),
}

// SAFETY: a fragment is never written after it is made, and the shared
// binaries it points to are immutable with atomic counts; reading it from
// several threads at once is reading immutable memory.
unsafe impl Sync for TermReason {}

impl TermReason {
    /// The reason's value.
    pub fn value(&self) -> Term<'_> {
        self.value.root()
    }
}

impl PartialEq for TermReason {
    fn eq(&self, other: &TermReason) -> bool {
        lona_term::equal(self.value(), other.value())
    }
}

impl fmt::Debug for TermReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        crate::print::readable(&mut s, self.value());
        f.write_str(&s)?;
        match &self.trace {
            Trace::None => {}
            Trace::Text(t) => write!(f, "\n{}", t.trim_end())?,
            Trace::Frames(t) => write!(f, "\n{}", crate::trace::trace_text(t).trim_end())?,
        }
        Ok(())
    }
}

/// A reason as Lonala prints it, without a crash's trace.
pub fn reason_text(r: &Reason) -> String {
    match r.downcast_ref::<TermReason>() {
        Some(t) => {
            let mut s = String::new();
            crate::print::readable(&mut s, t.value());
            s
        }
        None => format!("{r:?}"),
    }
}

/// The runtime reason for the term `t` (with the trace of the crash that
/// made it, for reports).
pub fn term_reason(t: Term<'_>, trace: Option<&str>) -> Reason {
    let trace = match trace.filter(|s| !s.is_empty()) {
        Some(s) => Trace::Text(Arc::from(s)),
        None => Trace::None,
    };
    reason_of(t, trace)
}

/// [`term_reason`] with the trace as the VM's frames (formatted only if a
/// crash report shows it).
pub fn term_reason_frames(t: Term<'_>, frames: crate::trace::Frames) -> Reason {
    let trace = if frames.is_empty() {
        Trace::None
    } else {
        Trace::Frames(frames)
    };
    reason_of(t, trace)
}

fn reason_of(t: Term<'_>, trace: Trace) -> Reason {
    if let View::Keyword(a) = t.view() {
        // Compared as atoms, interned once: no name lookup per exit.
        static STD: std::sync::OnceLock<[lona_term::Atom; 5]> = std::sync::OnceLock::new();
        let std = STD.get_or_init(|| {
            ["normal", "kill", "killed", "shutdown", "noproc"].map(lona_term::Atom::new)
        });
        match std.iter().position(|x| *x == a) {
            Some(0) => return Reason::Normal,
            Some(1) => return Reason::Kill,
            Some(2) => return Reason::Killed,
            Some(3) => return Reason::Shutdown,
            Some(4) => return Reason::NoProc,
            _ => {}
        }
    }
    Reason::custom(TermReason {
        value: Fragment::new(t),
        trace,
    })
}

/// The term for a runtime reason, built on `heap`.
pub fn reason_term<'h>(heap: &'h Heap, r: &Reason) -> Term<'h> {
    match r {
        Reason::Normal => lona_term::kw!("normal"),
        Reason::Kill => lona_term::kw!("kill"),
        Reason::Killed => lona_term::kw!("killed"),
        Reason::Shutdown => lona_term::kw!("shutdown"),
        Reason::NoProc => lona_term::kw!("noproc"),
        Reason::Panic(p) => heap.vector(&[lona_term::kw!("panic"), heap.string(&p.message)]),
        Reason::Custom(_) => {
            if let Some(tr) = r.downcast_ref::<TermReason>() {
                heap.copy_from(tr.value())
            } else if let Some(s) = r.downcast_ref::<String>() {
                heap.string(s)
            } else if let Some(s) = r.downcast_ref::<&'static str>() {
                heap.string(s)
            } else {
                heap.vector(&[lona_term::kw!("rust"), heap.string(&format!("{r:?}"))])
            }
        }
    }
}

/// A pid as a term.
pub fn pid_term(heap: &Heap, p: Pid) -> Term<'_> {
    heap.pid(lona_term::Pid(p.to_bits()))
}

/// The runtime pid a term names, if it is a pid.
pub fn term_pid(t: Term<'_>) -> Option<Pid> {
    match t.view() {
        View::Pid(p) => Some(Pid::from_bits(p.0)),
        _ => None,
    }
}

/// A reference as a term.
pub fn ref_term(heap: &Heap, r: Ref) -> Term<'_> {
    heap.reference(r.to_bits())
}

/// The message in `e` as a term a Lonala process can match (see the
/// module documentation). A fragment is read in place: the word points
/// into the message, which stays valid while the message is in the
/// mailbox and after it joined the heap.
#[inline]
pub fn message_term(heap: &Heap, e: &Envelope) -> RawTerm {
    // Inline, the common case: a receive's scan calls this for every
    // message it passes over.
    if let Some(f) = e.downcast_ref::<Fragment>() {
        return f.root().raw();
    }
    runtime_message_term(heap, e)
}

/// [`message_term`] of what is not a fragment.
#[inline(never)]
fn runtime_message_term(heap: &Heap, e: &Envelope) -> RawTerm {
    let t = if let Some(x) = e.downcast_ref::<Exit>() {
        heap.vector(&[
            lona_term::kw!("EXIT"),
            pid_term(heap, x.from),
            reason_term(heap, &x.reason),
        ])
    } else if let Some(x) = e.downcast_ref::<lona_runtime::ForeignExit>() {
        // From another node's process: the distribution gives its pid.
        let from = match x.from.downcast_ref::<crate::remote::RemotePid>() {
            Some(p) => heap.ext_pid(p.node, p.id, p.serial, p.creation),
            None => Term::NIL,
        };
        heap.vector(&[lona_term::kw!("EXIT"), from, reason_term(heap, &x.reason)])
    } else if let Some(d) = e.downcast_ref::<Down>() {
        heap.vector(&[
            lona_term::kw!("DOWN"),
            ref_term(heap, d.mref),
            pid_term(heap, d.pid),
            reason_term(heap, &d.reason),
        ])
    } else if let Some(a) = e.downcast_ref::<AliveReply>() {
        heap.vector(&[
            lona_term::kw!("alive-reply"),
            ref_term(heap, a.tag),
            Term::bool(a.alive),
        ])
    } else if let Some(i) = e.downcast_ref::<InfoReply>() {
        let info = match &i.info {
            Some(info) => info_term(heap, info),
            None => Term::NIL,
        };
        heap.vector(&[lona_term::kw!("info-reply"), ref_term(heap, i.tag), info])
    } else {
        heap.vector(&[lona_term::kw!("foreign"), heap.string(e.type_name())])
    };
    t.raw()
}

/// `process-info`'s map. `heap_words`: the process's own heap and stack,
/// when it describes itself.
pub fn info_term<'h>(heap: &'h Heap, i: &ProcessInfo) -> Term<'h> {
    let pids = |v: &[Pid]| {
        let items: Vec<Term<'h>> = v.iter().map(|p| pid_term(heap, *p)).collect();
        heap.list(&items)
    };
    let status = match i.status {
        lona_runtime::Status::Running => "running",
        lona_runtime::Status::Waiting => "waiting",
    };
    let int = |n: u64| heap.int(i64::try_from(n).unwrap_or(i64::MAX));
    let mut pairs = vec![
        (lona_term::kw!("status"), Term::keyword(status)),
        (
            lona_term::kw!("message-queue-len"),
            int(i.message_queue_len as u64),
        ),
        (lona_term::kw!("reductions"), int(i.reductions)),
        (lona_term::kw!("links"), pids(&i.links)),
        (lona_term::kw!("monitors"), pids(&i.monitors)),
        (lona_term::kw!("monitored-by"), pids(&i.monitored_by)),
        (
            lona_term::kw!("registered-name"),
            // a name registered from Rust may be new: a string when the
            // atom table cannot take it
            i.registered_name.as_deref().map_or(Term::NIL, |n| {
                Term::try_keyword(n).unwrap_or_else(|_| heap.string(n))
            }),
        ),
        (lona_term::kw!("trap-exit"), Term::bool(i.trap_exit)),
        (
            lona_term::kw!("parent"),
            i.parent.map_or(Term::NIL, |p| pid_term(heap, p)),
        ),
        (
            lona_term::kw!("priority"),
            Term::keyword(i.priority.as_str()),
        ),
    ];
    if let Some(w) = i.heap_words {
        pairs.push((lona_term::kw!("heap-size"), int(w as u64)));
    }
    pairs.push((
        lona_term::kw!("current-function"),
        i.current_function.as_deref().map_or(Term::NIL, |n| {
            Term::try_symbol(n).unwrap_or_else(|_| heap.string(n))
        }),
    ));
    pairs.push((lona_term::kw!("memory"), int(i.memory as u64)));
    heap.map(&pairs)
}

/// The exit reason for an uncaught exception (lonala.md, "Errors").
pub fn exit_term<'h>(heap: &'h Heap, class: crate::raise::Class, reason: Term<'h>) -> Term<'h> {
    match class {
        crate::raise::Class::Error => heap.vector(&[lona_term::kw!("error"), reason]),
        crate::raise::Class::Throw => heap.vector(&[
            lona_term::kw!("error"),
            heap.vector(&[lona_term::kw!("nocatch"), reason]),
        ]),
        crate::raise::Class::Exit | crate::raise::Class::Halt(_) => reason,
    }
}
