//! Lonala: reader, compiler, bytecode and interpreter.

pub mod form;
pub mod reader;

pub use form::{Form, FormKind, Pos, Source};
pub use reader::{read_all, ReadError, Reader};
