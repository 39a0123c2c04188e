//! Lonala's machine: what runs compiled code, below the node.
//!
//! `bytecode` is the machine's prototype (`lona_compiler::Proto` with the
//! machine's part); `vm` runs prototypes on one process heap, in slices
//! of reductions; `jit` compiles hot ones to machine code; `builtins` are
//! the core library's leaf functions written in Rust; `env` is the data
//! every process of a node shares; `msg` and `bridge` make messages,
//! exit reasons and Rust values terms; `purge` is the code collector's
//! cycle; `introspect` the process table and node figures as terms.
//!
//! The machine knows no node service: processes as runtime processes,
//! files, sockets, distribution, code loading and the shell are
//! `lona-vm`'s, which reaches the machine through [`node`] (its unsafe
//! functions say what they trust) and is reached from it only through
//! traits and callbacks it hands down (its own state in
//! `Env::extension`, `remote::Distribution` there, the built-ins it installs in the machine's namespaces).

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

mod boot;
pub mod bridge;
mod builtins;
mod bytecode;
mod env;
mod error;
mod frame;
mod host;
pub mod introspect;
pub mod jit;
mod msg;
mod native;
pub mod node;
mod num;
mod print;
pub mod purge;
mod raise;
mod remote;
pub mod safety;
mod slot;
mod trace;
mod vm;
#[cfg(feature = "whitebox")]
#[doc(hidden)]
pub mod whitebox;

pub use bridge::Fragment;
pub use env::{Env, SharedBuf, CORE_NS};
pub use error::{BridgeError, EvalError, LookupError, NodeError, PathError, TierError};
pub use lona_compiler::{form_to_term, CompileError, QuoteError};
use lona_compiler::{tag, var};
pub use lona_compiler::{Namespace, Namespaces, Var};
pub use lona_reader::{read_all, Form, FormKind, Pos, ReadError, Reader, Source};
pub use native::{Class, Exception, Native, NativeCall};
