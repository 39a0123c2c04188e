//! What the node (`lona-vm`, the crate above) uses of the machine, under
//! the module names it has always used (`vm`, `native`, `builtins`, ...).
//!
//! Everything here is public because the node is another crate; nothing
//! here lets safe code hand the VM a word it did not make. What trusts
//! its caller is an `unsafe fn` with its contract (making a [`Vm`],
//! defining a built-in on raw words, naming a closure from its code
//! word), and a built-in's context [`BuiltinCx`] cannot be made outside
//! this crate. `crate::safety` has the compile-fail tests.

pub use crate::native::{BuiltinCx, DictSlot, NResult, Raise, Request};
pub use crate::vm::{Outcome, Vm};

/// Built-ins: defining them, the machine's own.
pub mod builtins {
    use lona_compiler::Namespace;

    pub use crate::builtins::{def_user, install, ANY};
    pub use crate::bytecode::NativeFn;

    /// Defines `ns/name` as the built-in `f` on raw words, taking `lo` to
    /// `hi` arguments ([`ANY`]: any number).
    ///
    /// # Safety
    ///
    /// `f` keeps the built-ins' calling convention: it reads its
    /// arguments only as words of `cx.heap` (through
    /// [`BuiltinCx::term`](crate::native::BuiltinCx::term)), returns (or
    /// raises) a word of that heap or an immediate, and does not keep a
    /// word past its return. The VM follows the word it returns.
    pub unsafe fn def(ns: &'static Namespace, name: &str, lo: u16, hi: u16, f: NativeFn) {
        crate::builtins::def(ns, name, lo, hi, f)
    }

    /// A leaf built-in's hand-over of a case it cannot do alone to the
    /// prelude's Lonala function `name` (see `Request::Redirect`).
    pub fn redirect(
        cx: &mut crate::native::BuiltinCx<'_, '_>,
        name: &str,
    ) -> crate::native::NResult {
        crate::builtins::seq::redirect(cx, name)
    }
}

/// The machine's prototype.
pub mod bytecode {
    pub use crate::bytecode::{Entry, Instr, Proto, NO_TIMEOUT};
}

/// The node's data.
pub mod env {
    pub use crate::env::{Env, SharedBuf, CORE_NS};
}

/// Typed errors.
pub mod error {
    pub use crate::error::{BridgeError, EvalError, LookupError, NodeError, PathError, TierError};
}

/// The compiler's host for a node.
pub mod host {
    pub use crate::host::NodeHost;
}

/// Messages and exit reasons as terms.
pub mod msg {
    pub use crate::msg::*;
}

/// What a built-in sees, and the typed natives.
pub mod native {
    pub use crate::native::{
        BuiltinCx, Class, DictSlot, Exception, NResult, Native, NativeCall, Raise, Request,
    };
}

/// Values as text.
pub mod print {
    pub use crate::print::{display_into, readable, readable_into};

    /// Makes the machine's closure namer the term crate's (how a closure
    /// prints), once per process.
    pub fn install_closure_namer() {
        lona_term::set_closure_namer(crate::print::fn_name);
    }
}

/// Other nodes as the machine sees them.
pub mod remote {
    pub use crate::remote::{Distribution, RemotePid, RemoteSendError, Watched};
}

/// The interpreter.
pub mod vm {
    pub use crate::vm::{Outcome, Vm};
}
