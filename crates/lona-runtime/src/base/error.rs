//! Why a spawn or a send failed: [`SpawnError`], [`SendError`].

use std::fmt;

use crate::Pid;

/// Why a spawn failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpawnError {
    /// The process limit is reached (Erlang's `system_limit`).
    SystemLimit {
        /// The configured limit.
        limit: usize,
    },
    /// The runtime is shutting down.
    ShuttingDown,
    /// A spawn with a name ([`StepCx::spawn_named`](crate::StepCx::spawn_named)):
    /// the name is taken, so no process was made.
    NameTaken {
        /// The name.
        name: String,
        /// Who holds it.
        holder: Pid,
    },
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::SystemLimit { limit } => {
                write!(f, "system_limit: the process limit of {limit} is reached")
            }
            SpawnError::ShuttingDown => f.write_str("the runtime is shutting down"),
            SpawnError::NameTaken { name, holder } => {
                write!(f, "the name {name} is already registered by {holder}")
            }
        }
    }
}
impl std::error::Error for SpawnError {}

/// Why a send failed. Sending to a dead *pid* is not an error (it silently
/// succeeds, as in Erlang); sending to a name nobody holds is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// No process is registered under the name.
    NoName(String),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NoName(n) => write!(f, "no process is registered as {n:?} (badarg)"),
        }
    }
}
impl std::error::Error for SendError {}
