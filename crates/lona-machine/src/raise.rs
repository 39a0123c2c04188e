//! Exceptions on their way up: Erlang's three classes (and the node-wide
//! `halt`), and what a built-in returns.

use lona_term::{RawTerm, Term};

/// The three classes of exception (Erlang's), plus the node-wide `halt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `(error reason)` and every runtime error.
    Error,
    /// `(throw value)`: non-local return.
    Throw,
    /// `(exit reason)`: the process should end.
    Exit,
    /// `(halt n)`: stop the node now with status `n`; not catchable.
    Halt(i32),
}

impl Class {
    /// The keyword `catch` clauses name: `:error`, `:throw`, `:exit`.
    pub fn keyword(self) -> Term<'static> {
        match self {
            Class::Error => lona_term::kw!("error"),
            Class::Throw => lona_term::kw!("throw"),
            Class::Exit | Class::Halt(_) => lona_term::kw!("exit"),
        }
    }

    /// The class a keyword names.
    pub fn from_keyword(t: Term<'_>) -> Option<Class> {
        match t.view() {
            lona_term::View::Keyword(a) => match a.name() {
                "error" => Some(Class::Error),
                "throw" => Some(Class::Throw),
                "exit" => Some(Class::Exit),
                _ => None,
            },
            _ => None,
        }
    }
}

/// An exception on its way up: its class and value (a word of the process
/// heap, or permanent).
#[derive(Clone, Copy, Debug)]
pub struct Raise {
    /// The class.
    pub class: Class,
    /// The value.
    pub reason: RawTerm,
}

impl Raise {
    /// An `:error` with a reason.
    pub fn error(reason: Term<'_>) -> Raise {
        Raise {
            class: Class::Error,
            reason: reason.raw(),
        }
    }

    /// `:badarg`
    pub fn badarg() -> Raise {
        Raise::error(lona_term::kw!("badarg"))
    }

    /// `:badarith`
    pub fn badarith() -> Raise {
        Raise::error(lona_term::kw!("badarith"))
    }

    /// `:system-limit`
    pub fn system_limit() -> Raise {
        Raise::error(lona_term::kw!("system-limit"))
    }
}

/// What a built-in returns.
pub type NResult = Result<RawTerm, Raise>;
