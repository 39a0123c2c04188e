//! Lonala's front: from forms (`lona-reader`) to bytecode.
//!
//! `compiler` turns a top-level form into a [`bytecode::Proto`], asking
//! its [`Host`] for the namespaces and to run macros; `bytecode` is the
//! instruction set (one table of opcodes, `bytecode::ops`) and the
//! prototype, which carries a part of the machine's own (`Proto<X>`);
//! `var` holds the global names; `area` is the memory a code collector
//! frees, with the barriers vars and messages use; `tag` reads raw term
//! words by their bit layout. This crate knows no interpreter and no
//! processes: `lona-vm` runs what it makes.

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

pub mod area;
pub mod bytecode;
pub mod collect;
pub mod compiler;
pub mod error;
pub mod tag;
pub mod var;

pub use bytecode::Proto;
pub use compiler::{form_to_term, term_to_form, CompileError, Compiler, ExpandError, Host};
pub use error::QuoteError;
pub use var::{Namespace, Namespaces, Var};
