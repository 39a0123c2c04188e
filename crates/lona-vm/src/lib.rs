//! Lonala: reader, compiler, bytecode and interpreter.
//!
//! `form` and `reader` turn text into forms; `compiler` turns a form into
//! a `bytecode::Proto`; `vm` runs prototypes on one process heap, in
//! slices of reductions; `builtins` and `prelude.lona` are the core
//! library; `eval` drives files, namespaces and programs; `var` holds the
//! global names; `msg` and `process` make a Lonala program a process of
//! `lona-runtime` (messages and exit reasons as terms); `otp` supervises and
//! calls Lonala processes from Rust; `shell` is the
//! REPL's process and `introspect` the process table and node figures.

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

mod boot;
pub use lona_machine::bridge;
pub mod dist;
mod errno;
mod eval;
mod files;
pub use lona_machine::{introspect, jit, purge};
mod net;
pub mod node;
pub mod otp;
pub mod process;
pub mod safety;
mod services;
pub mod shell;
pub mod test_runner;

// The machine's modules the node uses, under the paths this crate always
// used (`crate::vm`, `crate::native`, ...): `lona_machine::node`.
use lona_machine::node::{
    builtins, bytecode, ending, env, error, host, msg, native, print, remote, vm,
};

pub use lona_compiler::{form_to_term, CompileError, QuoteError};
// The front's modules, under the names this crate always used.
pub use bridge::Fragment;
pub use env::{Env, SharedBuf, CORE_NS};
pub use error::{EvalError, LookupError, NodeError, PathError, TierError};
pub use eval::{eval_str, Evaluator, Progress};
use lona_compiler::{compiler, tag, var};
pub use lona_compiler::{Namespace, Namespaces, Var};
pub use lona_reader::{read_all, Form, FormKind, Pos, ReadError, Reader, Source};
pub use native::{Class, Exception, Native, NativeCall};

#[cfg(test)]
mod whitebox;
