//! The errors of the language front that are not compile errors.

use std::fmt;

/// A quoted form whose keyword or symbol cannot be made
/// ([`form_to_term`](crate::compiler::form_to_term)): the atom table is full, or
/// the name too long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteError {
    /// The name as written (`:k` for a keyword).
    pub name: String,
    /// Why.
    pub source: lona_term::AtomError,
}

impl fmt::Display for QuoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.starts_with(':') {
            write!(f, "keyword {}: {}", self.name, self.source)
        } else {
            write!(f, "symbol {}: {}", self.name, self.source)
        }
    }
}

impl std::error::Error for QuoteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}
