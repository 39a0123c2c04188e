//! The Lona node: Lonala programs as processes of `lona-runtime`, over the
//! machine (`lona-machine`: the interpreter, the compiling tier, the
//! built-ins), and the crate an embedding program uses.
//!
//! `eval` drives files, namespaces and programs on the machine's VM and
//! loads the prelude; `boot` starts a node once before its first code
//! runs (the node's built-ins `services`, the prelude) and holds the ways
//! to run code ([`Evaluator::new`], [`eval_str`]); `process` makes a VM a
//! process of the runtime; `files` and `net` are file handles and
//! sockets; `dist` other nodes; `otp` supervises and calls Lonala
//! processes from Rust; `shell` is the REPL's process, `test_runner`
//! `lona test`, `node` a runtime with a program's main process. `bridge`,
//! `introspect`, `jit` and `purge` are the machine's, re-exported here
//! under the paths they always had.

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

mod boot;
pub use lona_machine::bridge;
pub mod dist;
mod ending;
mod env;
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
use lona_machine::node::{builtins, bytecode, error, host, msg, native, print, remote, vm};

pub use lona_compiler::{form_to_term, CompileError, QuoteError};
// The front's modules, under the names this crate always used.
pub use boot::eval_str;
pub use bridge::Fragment;
pub use env::{Env, NodeEnv, NodeServices, SharedBuf, CORE_NS};
pub use error::{EvalError, LookupError, NodeError, PathError, TierError};
pub use eval::{Evaluator, Progress};
use lona_compiler::{compiler, tag, var};
pub use lona_compiler::{Namespace, Namespaces, Var};
pub use lona_reader::{read_all, Form, FormKind, Pos, ReadError, Reader, Source};
pub use native::{Class, Exception, Native, NativeCall};

#[cfg(test)]
mod whitebox;
