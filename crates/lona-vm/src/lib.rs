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
pub mod bridge;
mod builtins;
mod bytecode;
pub mod dist;
mod ending;
mod env;
mod errno;
mod error;
mod eval;
mod files;
mod frame;
mod host;
pub mod introspect;
pub mod jit;
mod msg;
mod native;
mod net;
pub mod node;
mod num;
pub mod otp;
mod print;
pub mod process;
pub mod purge;
mod raise;
mod remote;
pub mod safety;
mod services;
pub mod shell;
mod slot;
pub mod test_runner;
mod trace;
mod vm;

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
