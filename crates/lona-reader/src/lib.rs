//! Lonala's reader: source text ([`Source`]) to forms ([`Form`]), the
//! first step of the language's pipeline (`docs/architecture.md`).
//!
//! A form is plain Rust data with the position where it starts: reading
//! needs no heap, no process and no node, and a form can be kept, printed
//! or handed to the compiler (`lona-vm`) anywhere. Every bound on what a
//! text can make the reader build (nesting depth, integer size) is here,
//! with the error that says where it was passed.

// No unsafe code here; should some come, each block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

mod form;
mod reader;

pub use form::{Form, FormKind, Pos, Source};
pub use reader::{read_all, ReadError, Reader, MAX_DEPTH, MAX_INT_BITS};
