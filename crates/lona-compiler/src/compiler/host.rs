//! What the compiler asks of the node it compiles for: the namespaces,
//! and running a macro. The compiler knows no machine: a macro is a
//! function of the language, so expanding one is the host's work, handed
//! down as this trait (`lona-vm` runs it on a scratch interpreter).

use lona_reader::{Form, Pos};
use lona_term::RawTerm;

use crate::error::QuoteError;
use crate::var::{Namespace, Namespaces};

/// The node a [`Compiler`](super::Compiler) compiles for.
pub trait Host {
    /// Every namespace.
    fn namespaces(&self) -> &Namespaces;

    /// The core library (`lona.core`), which every namespace refers to.
    fn core(&self) -> &'static Namespace;

    /// Runs the macro function `f` (a permanent term) on the forms `args`
    /// of a call at `pos`, to completion: its result as a form (placed at
    /// `pos`), or why there is none.
    fn expand(&self, f: RawTerm, args: &[Form], pos: Pos) -> Result<Form, ExpandError>;
}

/// Why a macro call has no expansion ([`Host::expand`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpandError {
    /// The argument at this position cannot be a term.
    Quote(Pos, QuoteError),
    /// The macro ran out of its reductions.
    Unfinished,
    /// The macro raised this (printed).
    Raised(String),
    /// The macro asked to halt the node.
    Halt,
    /// The macro waited for a message.
    Wait,
    /// Its result is not a form (why).
    NotForm(String),
}
