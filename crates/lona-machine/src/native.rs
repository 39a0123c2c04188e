//! What a built-in function written in Rust sees: the process heap, its
//! reduction budget, the node, and how to raise an error.

use lona_term::{Heap, RawTerm, Term};

use std::sync::Arc;

use lona_runtime::StepCx;

use crate::env::Env;

pub use crate::raise::{Class, NResult, Raise};

/// A built-in's view of its process.
///
/// Made only by the machine (the interpreter's and compiled code's calls
/// of built-ins; `non_exhaustive` keeps it so outside this crate): a
/// context made elsewhere would let safe code read any word as a term of
/// a heap it chose ([`BuiltinCx::term`]).
#[non_exhaustive]
pub struct BuiltinCx<'a, 'r> {
    /// The process heap: allocate results here. Allocation never moves
    /// anything, so the argument words stay valid for the whole call.
    pub heap: &'a Heap,
    /// The node.
    pub env: &'a Arc<Env>,
    /// The runtime, when the VM runs as a process (`None` for a scratch
    /// VM, e.g. macro expansion): process built-ins raise without it.
    pub rt: Option<&'a mut StepCx<'r>>,
    /// Something the VM does after the built-in returns.
    pub request: Option<Request>,
    /// Reductions left in this slice; a built-in doing work proportional
    /// to its input charges it with [`BuiltinCx::charge`].
    pub reds: &'a mut i32,
    /// Where the process keeps its dictionary's root once it has one
    /// (`pd-put`; the VM's rarely used parts, made at first use): see
    /// [`BuiltinCx::dict`].
    pub dict_slot: &'a mut dyn DictSlot,
    /// The function of the embedding program, when the built-in being
    /// called is one of its natives (from the callee's prototype; what
    /// `call_user_native` calls).
    pub user_native: Option<Native>,
}

/// Where a process keeps its dictionary's root: the interpreter's state
/// implements it (`vm::Extra`), so that built-ins reach the dictionary
/// without knowing the interpreter.
pub trait DictSlot {
    /// The root, if the process has a dictionary.
    fn dict(&self) -> Option<lona_term::Root>;
    /// Records the root (the dictionary's first entry).
    fn set_dict(&mut self, r: lona_term::Root);
}

impl<'a, 'r> BuiltinCx<'a, 'r> {
    /// Charges `n` reductions (for work proportional to an input's size).
    #[inline]
    pub fn charge(&mut self, n: usize) {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        *self.reds = self.reds.saturating_sub(n);
    }

    /// The process dictionary's root, if it has one.
    pub fn dict(&self) -> Option<lona_term::Root> {
        self.dict_slot.dict()
    }

    /// Records the process dictionary's root (its first `pd-put`).
    pub fn set_dict(&mut self, r: lona_term::Root) {
        self.dict_slot.set_dict(r);
    }

    /// The runtime, or `:no-process` when the VM does not run as a
    /// process.
    pub fn rt(&mut self) -> Result<&mut StepCx<'r>, Raise> {
        self.rt
            .as_deref_mut()
            .ok_or_else(|| Raise::error(lona_term::kw!("no-process")))
    }

    /// An argument word as a term of this heap, without any metadata it
    /// carries (`lona_term`'s `meta.rs`): a built-in sees the value.
    #[inline]
    pub fn term(&self, r: RawTerm) -> Term<'a> {
        self.term_with_meta(r).unmeta()
    }

    /// An argument word as a term of this heap, metadata and all (`meta`,
    /// `with-meta`).
    #[inline]
    pub fn term_with_meta(&self, r: RawTerm) -> Term<'a> {
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

// ---- natives of the embedding program ----------------------------------

/// A function written in Rust that Lonala code calls like any function:
/// what [`Env::define_native`] takes.
///
/// It gets its call ([`NativeCall`]: the heap to allocate on, the node)
/// and its arguments as terms of that heap, and returns a term or raises
/// an [`Exception`]. Everything it sees and returns is a [`Term`] tied to
/// the heap borrow `'h` (or an immediate, `Term<'static>`), so a native
/// written in safe Rust cannot hand the VM a word that is not a term: the
/// VM reads no raw words from it. A term of some other heap that outlives
/// the call (a leaked or permanent one) is copied onto the process heap.
///
/// ```
/// # #![forbid(unsafe_code)]
/// use lona_machine::{Env, Exception, NativeCall};
/// use lona_term::Term;
///
/// fn twice<'h>(cx: &mut NativeCall<'h, '_>, args: &[Term<'h>]) -> Result<Term<'h>, Exception<'h>> {
///     let n = args[0].as_i64().ok_or_else(Exception::badarg)?;
///     Ok(cx.heap().int(n.checked_mul(2).ok_or_else(Exception::badarith)?))
/// }
///
/// let env = Env::new(Box::new(std::io::sink()));
/// env.define_native("calc", "twice", 1, 1, twice);
/// env.define_native("calc", "answer", 0, 0, |_cx, _args| Ok(Term::small_int(42).unwrap()));
/// // `lona_vm::eval_str(&env, "t", "(calc/twice (calc/answer))")` is "84"
/// // (`lona-vm`'s tests/natives.rs runs it).
/// assert!(env.namespaces.get("calc").unwrap().lookup("twice").is_some());
/// ```
pub type Native =
    for<'h> fn(&mut NativeCall<'h, '_>, &[Term<'h>]) -> Result<Term<'h>, Exception<'h>>;

/// What a [`Native`] sees of its call: the process heap its arguments live
/// on and its result is made on, the node, its reduction budget.
pub struct NativeCall<'h, 'c> {
    heap: &'h Heap,
    env: &'c Arc<Env>,
    reds: &'c mut i32,
}

impl<'h, 'c> NativeCall<'h, 'c> {
    /// The calling process's heap: allocate the result here. Nothing moves
    /// during the call, so the arguments stay valid.
    #[inline]
    pub fn heap(&self) -> &'h Heap {
        self.heap
    }

    /// The node the process belongs to.
    pub fn env(&self) -> &Arc<Env> {
        self.env
    }

    /// Charges `n` reductions, for work proportional to an input's size, so
    /// that a long native call still lets other processes run soon after.
    pub fn charge(&mut self, n: usize) {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        *self.reds = self.reds.saturating_sub(n);
    }
}

/// An exception a [`Native`] raises: its class and reason, which Lonala's
/// `try`/`catch` sees as for any built-in (`(catch :error e ...)`).
#[derive(Clone, Copy, Debug)]
pub struct Exception<'h> {
    class: Class,
    reason: Term<'h>,
}

impl<'h> Exception<'h> {
    /// An `:error` with `reason` (`(error reason)`).
    pub fn error(reason: Term<'h>) -> Exception<'h> {
        Exception {
            class: Class::Error,
            reason,
        }
    }

    /// A `:throw` of `value` (`(throw value)`).
    pub fn throw(value: Term<'h>) -> Exception<'h> {
        Exception {
            class: Class::Throw,
            reason: value,
        }
    }

    /// An `:exit` with `reason` (`(exit reason)`).
    pub fn exit(reason: Term<'h>) -> Exception<'h> {
        Exception {
            class: Class::Exit,
            reason,
        }
    }

    /// The `:error` `:badarg` (a wrong argument).
    pub fn badarg() -> Exception<'h> {
        Exception::error(lona_term::kw!("badarg"))
    }

    /// The `:error` `:badarith` (an arithmetic error).
    pub fn badarith() -> Exception<'h> {
        Exception::error(lona_term::kw!("badarith"))
    }

    /// The reason (or thrown value).
    pub fn reason(&self) -> Term<'h> {
        self.reason
    }
}

/// A term a native returned, as a word the VM may keep: itself if the
/// process heap may hold it, else a copy on that heap.
#[inline]
fn adopt(heap: &Heap, t: Term<'_>) -> RawTerm {
    if heap.owns(t) {
        t.raw()
    } else {
        heap.copy_from(t).raw()
    }
}

/// The built-in every [`Native`] is defined as: calls the native kept in
/// the callee's prototype with the arguments as terms.
pub(crate) fn call_user_native(cx: &mut BuiltinCx<'_, '_>, args: &[RawTerm]) -> NResult {
    let Some(f) = cx.user_native else {
        return Err(Raise::error(lona_term::kw!("undef")));
    };
    let heap = cx.heap;
    // SAFETY: `Term` and `RawTerm` are both `repr(transparent)` over
    // `u64`; the argument words are terms of this heap, valid for the
    // whole call (no collection happens during a built-in).
    let args: &[Term<'_>] =
        unsafe { std::slice::from_raw_parts(args.as_ptr() as *const Term<'_>, args.len()) };
    let mut call = NativeCall {
        heap,
        env: cx.env,
        reds: &mut *cx.reds,
    };
    match f(&mut call, args) {
        Ok(t) => Ok(adopt(heap, t)),
        Err(e) => Err(Raise {
            class: e.class,
            reason: adopt(heap, e.reason),
        }),
    }
}
