//! Lonala: reader, compiler, bytecode and interpreter.

pub mod form;

pub use form::{Form, FormKind, Pos, Source};
