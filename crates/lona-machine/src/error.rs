//! The errors of `lona-vm`'s public functions that are not about Lonala
//! source (those are [`CompileError`](crate::CompileError),
//! [`ReadError`](crate::ReadError) and [`EvalError`](crate::EvalError)),
//! each an enum a caller can match on, with a message as `Display`. The
//! distribution's are [`dist::StartError`](crate::dist::StartError).

use std::fmt;

/// A function looked up by name from Rust ([`introspect`](crate::introspect),
/// `lona_vm::process::LonaProcess::call`) that is not
/// there.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LookupError {
    /// The name is not `ns/name`.
    NotQualified(String),
    /// No namespace `ns` has a var `name` (`ns`, `name`).
    NoVar(String, String),
    /// The var has no value (`ns`, `name`).
    Unbound(String, String),
    /// The var's value is not a function (`ns`, `name`).
    NotAFunction(String, String),
    /// The arguments given are not a vector or a list (what they are).
    BadArguments(String),
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NotQualified(q) => write!(f, "{q}: expected ns/name"),
            LookupError::NoVar(ns, name) => write!(f, "no var {ns}/{name}"),
            LookupError::Unbound(ns, name) => write!(f, "{ns}/{name} is not defined"),
            LookupError::NotAFunction(ns, name) => write!(f, "{ns}/{name} is not a function"),
            LookupError::BadArguments(what) => {
                write!(f, "the arguments must be a vector or a list, not {what}")
            }
        }
    }
}

impl std::error::Error for LookupError {}

/// A node that could not run its main process (`lona_vm::node::run_main`).
#[derive(Debug)]
#[non_exhaustive]
pub enum NodeError {
    /// The runtime could not be started (its worker threads).
    Start(std::io::Error),
    /// The main process could not be spawned (the process limit).
    Spawn(lona_runtime::SpawnError),
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeError::Start(e) => write!(f, "cannot start the node: {e}"),
            NodeError::Spawn(e) => write!(f, "cannot spawn the main process: {e}"),
        }
    }
}

impl std::error::Error for NodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NodeError::Start(e) => Some(e),
            NodeError::Spawn(e) => Some(e),
        }
    }
}

/// A file or directory given to the test runner
/// (`lona_vm::test_runner::find_tests`) that
/// cannot be read: the path and why.
#[derive(Debug)]
pub struct PathError {
    /// The path.
    pub path: std::path::PathBuf,
    /// Why (`NotFound` for a path that does not exist).
    pub source: std::io::Error,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.source.kind() == std::io::ErrorKind::NotFound {
            write!(f, "{}: no such file or directory", self.path.display())
        } else {
            write!(f, "{}: {}", self.path.display(), self.source)
        }
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// A tier name [`Tier::parse`](crate::jit::Tier::parse) does not know, or
/// one this build lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TierError {
    /// Not `interp`, `jit` or `jit-eager`.
    Unknown(String),
    /// `jit` or `jit-eager` in a build without the feature `jit`.
    NotBuilt(String),
}

impl fmt::Display for TierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TierError::Unknown(s) => write!(f, "unknown tier {s:?}: interp, jit or jit-eager"),
            TierError::NotBuilt(s) => write!(
                f,
                "tier {s}: this build has no compiling tier (feature `jit`)"
            ),
        }
    }
}

impl std::error::Error for TierError {}

/// Why evaluation stopped with an error.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalError {
    /// The source does not read.
    Read(lona_reader::ReadError),
    /// A form does not compile.
    Compile(lona_compiler::CompileError),
    /// A file could not be loaded.
    Load(String),
    /// An exception nothing caught.
    Uncaught {
        /// `:error`, `:throw` or `:exit`.
        class: crate::raise::Class,
        /// The value, printed.
        reason: String,
        /// The exit reason of the process, printed (`[:error e]`,
        /// `[:error [:nocatch v]]`, or `r` for an exit).
        exit_reason: String,
        /// Lonala stack trace, one `  at ns/f (file:line)` per line.
        trace: String,
        /// The exit reason as the runtime carries it (to links, monitors
        /// and the crash report).
        exit: lona_runtime::Reason,
    },
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Read(e) => write!(f, "{e}"),
            EvalError::Compile(e) => write!(f, "{e}"),
            EvalError::Load(e) => write!(f, "{e}"),
            EvalError::Uncaught {
                class,
                reason,
                trace,
                ..
            } => {
                let k = match class {
                    crate::raise::Class::Error => "error",
                    crate::raise::Class::Throw => "throw",
                    crate::raise::Class::Exit | crate::raise::Class::Halt(_) => "exit",
                };
                write!(f, "uncaught {k}: {reason}\n{trace}")
            }
        }
    }
}

impl std::error::Error for EvalError {}

/// Why a value did not convert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeError(pub(crate) String);

impl std::fmt::Display for BridgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BridgeError {}
