//! Lonala: reader, compiler, bytecode and interpreter.
//!
//! `form` and `reader` turn text into forms; `compiler` turns a form into
//! a `bytecode::Proto`; `vm` runs prototypes on one process heap, in
//! slices of reductions; `builtins` and `prelude.lona` are the core
//! library; `eval` drives files, namespaces and programs; `var` holds the
//! global names; `msg` and `process` make a Lonala program a process of
//! `lona-runtime` (messages and exit reasons as terms); `shell` is the
//! REPL's process and `introspect` the process table and node figures.

pub mod bridge;
pub mod builtins;
pub mod bytecode;
pub mod compiler;
pub mod env;
pub mod eval;
pub mod form;
pub mod introspect;
pub mod msg;
pub mod native;
pub mod node;
pub mod num;
pub mod process;
pub mod reader;
pub mod shell;
mod tag;
pub mod test_runner;
pub mod var;
pub mod vm;

pub use compiler::CompileError;
pub use env::{Env, SharedBuf};
pub use eval::{eval_str, EvalError, Evaluator, Progress};
pub use form::{Form, FormKind, Pos, Source};
pub use reader::{read_all, ReadError, Reader};
pub use vm::{Outcome, Vm};
