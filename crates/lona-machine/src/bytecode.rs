//! The bytecode the front makes (`lona_compiler::bytecode`: the machine
//! model, the instructions and their table), and what this machine keeps
//! in each prototype: [`ProtoExt`].

use std::sync::OnceLock;

use lona_term::RawTerm;

pub use lona_compiler::bytecode::{Entry, Instr, NO_TIMEOUT};

/// A compiled function, as this machine runs it.
pub type Proto = lona_compiler::bytecode::Proto<ProtoExt>;

/// The signature of a built-in function written in Rust.
///
/// Built-ins are leaf functions: they never call back into Lonala. They get
/// their arguments as raw words of the process heap and may allocate on it
/// (allocation never moves the heap; see `crate::vm`).
pub type NativeFn = fn(&mut crate::native::BuiltinCx<'_, '_>, &[RawTerm]) -> crate::native::NResult;

/// The machine's part of a prototype ([`Proto::ext`]): what the front
/// leaves empty.
#[derive(Default)]
pub struct ProtoExt {
    /// A built-in: when set, calls run this instead of `code`.
    pub(crate) native: Option<NativeFn>,
    /// A native defined by the embedding program
    /// ([`Env::define_native`](crate::Env::define_native)): `native` is
    /// then the trampoline that calls it with typed terms.
    pub(crate) user_native: Option<crate::native::Native>,
    /// The compiling tier's state of this prototype (`jit`).
    pub(crate) jit: crate::slot::JitSlot,
    /// Its name and file for traces that outlive it (`trace`), made by
    /// the first trace through it.
    pub(crate) debug: OnceLock<&'static DebugName>,
}

/// A prototype with the given code and nothing else (no arities: it is
/// entered only by the VM itself, or it is the built-in `native`, taking
/// its fewest to most arguments).
pub fn bare(name: &str, code: Vec<Instr>, native: Option<(NativeFn, u16, u16)>) -> Proto {
    Proto::bare(
        name,
        code,
        native.map(|n| (n.1, n.2)),
        ProtoExt {
            native: native.map(|n| n.0),
            ..Default::default()
        },
    )
}

/// A function's name and file, interned: the same for every version of
/// the function, so that a million redefinitions keep one.
#[derive(Debug)]
pub(crate) struct DebugName {
    pub(crate) name: std::sync::Arc<str>,
    pub(crate) file: std::sync::Arc<str>,
}
