//! What a built-in function written in Rust sees: the process heap, its
//! reduction budget, the node, and how to raise an error.

use lona_term::{Heap, RawTerm, Term};

use std::sync::Arc;

use lona_runtime::Cx;

use crate::env::Env;

/// The three classes of exception (Erlang's), plus the node-wide `halt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `(error reason)` and every runtime error.
    Error,
    /// `(throw value)`: non-local return.
    Throw,
    /// `(exit reason)`: the process should end.
    Exit,
    /// `(halt n)`: stop the node now with status `n`; not catchable.
    Halt(i32),
}

impl Class {
    /// The keyword `catch` clauses name: `:error`, `:throw`, `:exit`.
    pub fn keyword(self) -> Term<'static> {
        match self {
            Class::Error => Term::keyword("error"),
            Class::Throw => Term::keyword("throw"),
            Class::Exit | Class::Halt(_) => Term::keyword("exit"),
        }
    }

    /// The class a keyword names.
    pub fn from_keyword(t: Term<'_>) -> Option<Class> {
        match t.view() {
            lona_term::View::Keyword(a) => match a.name() {
                "error" => Some(Class::Error),
                "throw" => Some(Class::Throw),
                "exit" => Some(Class::Exit),
                _ => None,
            },
            _ => None,
        }
    }
}

/// An exception on its way up: its class and value (a word of the process
/// heap, or permanent).
#[derive(Clone, Copy, Debug)]
pub struct Raise {
    /// The class.
    pub class: Class,
    /// The value.
    pub reason: RawTerm,
}

impl Raise {
    /// An `:error` with a reason.
    pub fn error(reason: Term<'_>) -> Raise {
        Raise {
            class: Class::Error,
            reason: reason.raw(),
        }
    }

    /// `:badarg`
    pub fn badarg() -> Raise {
        Raise::error(Term::keyword("badarg"))
    }

    /// `:badarith`
    pub fn badarith() -> Raise {
        Raise::error(Term::keyword("badarith"))
    }
}

/// What a built-in returns.
pub type NResult = Result<RawTerm, Raise>;

/// A built-in's view of its process.
pub struct NativeCx<'a, 'r> {
    /// The process heap: allocate results here. Allocation never moves
    /// anything, so the argument words stay valid for the whole call.
    pub heap: &'a Heap,
    /// The node.
    pub env: &'a Arc<Env>,
    /// The runtime, when the VM runs as a process (`None` for a scratch
    /// VM, e.g. macro expansion): process built-ins raise without it.
    pub rt: Option<&'a mut Cx<'r>>,
    /// Something the VM does after the built-in returns.
    pub request: Option<Request>,
    /// Reductions left in this slice; a built-in doing work proportional
    /// to its input charges it with [`NativeCx::charge`].
    pub reds: &'a mut i32,
    /// The process dictionary's root, once it has one (`pd-put`).
    pub dict: &'a mut Option<lona_term::Root>,
}

impl<'a, 'r> NativeCx<'a, 'r> {
    /// Charges `n` reductions (for work proportional to an input's size).
    #[inline]
    pub fn charge(&mut self, n: usize) {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        *self.reds = self.reds.saturating_sub(n);
    }

    /// The runtime, or `:no-process` when the VM does not run as a
    /// process.
    pub fn rt(&mut self) -> Result<&mut Cx<'r>, Raise> {
        self.rt
            .as_deref_mut()
            .ok_or_else(|| Raise::error(Term::keyword("no-process")))
    }

    /// An argument word as a term of this heap.
    #[inline]
    pub fn term(&self, r: RawTerm) -> Term<'a> {
        // SAFETY: arguments are words of this process's registers, valid
        // since the last collection, and none happens during a built-in.
        unsafe { self.heap.term(r) }
    }
}

/// What a built-in asks the VM to do once it has returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    /// Collect the heap at the next safepoint (`(gc)`, `(gc :full)`).
    Gc {
        /// A major collection.
        full: bool,
    },
    /// Set the process's `:max-heap-size` (`(process-flag :max-heap-size
    /// n)`).
    MaxHeapSize {
        /// Words, 0 for no limit.
        words: usize,
    },
    /// End the slice (`(yield)`).
    Yield,
    /// Call the function the built-in returned, with the same arguments,
    /// in place of this call (its result is the call's result). A leaf
    /// built-in hands a case it cannot do alone to Lonala code this way:
    /// `first` of a lazy sequence runs the prelude's `first-lazy`, which
    /// calls the sequence's thunk. The common case stays one built-in call.
    Redirect,
}
