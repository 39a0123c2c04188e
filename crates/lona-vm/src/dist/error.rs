//! Why a node could not be made distributed ([`start`](super::start)).

use std::fmt;
use std::path::PathBuf;

/// Why [`start`](super::start) (or [`start_native`](super::start_native),
/// or [`DistributedBuilder::build`](super::DistributedBuilder::build))
/// failed; its `Display` is the message `lona run --name` prints.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartError {
    /// The node is distributed already.
    AlreadyDistributed,
    /// A long name (`--name`) without `@HOST`.
    NoHost(String),
    /// The part before `@` is not letters, digits, `_` and `-`.
    BadName(String),
    /// The host is not a host name (or has dots in a short name).
    BadHost(String),
    /// The name cannot be an atom (the table is full, or it is too long).
    NameAtom(String, lona_term::AtomError),
    /// The cookie given is empty.
    EmptyCookie,
    /// No cookie given and no `$HOME` for `~/.erlang.cookie`.
    NoHome,
    /// The cookie file is empty.
    EmptyCookieFile(PathBuf),
    /// The cookie file cannot be read, created or written (which).
    CookieFile(PathBuf, &'static str, std::io::Error),
    /// The distribution's port cannot be listened on (`ip:port`).
    Listen(std::net::SocketAddr, std::io::Error),
    /// No `epmd` runs on this port, and `epmd -daemon` cannot be started.
    NoEpmd(u16, std::io::Error),
    /// `epmd -daemon` ran and failed (its exit status).
    EpmdFailed(std::process::ExitStatus),
    /// `epmd -daemon` was started but does not answer.
    EpmdSilent,
    /// `epmd` cannot be reached to register with.
    EpmdUnreachable(std::io::Error),
    /// Another node of this name is registered on this host.
    NameInUse(String),
    /// `epmd` refused the registration for another reason (name, why).
    EpmdRefused(String, String),
    /// The process that accepts connections could not be spawned (the
    /// process limit).
    Acceptor(lona_runtime::SpawnError),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StartError::*;
        match self {
            AlreadyDistributed => write!(f, "the node is already distributed"),
            NoHost(n) => write!(f, "a long node name needs a host: {n}@HOST"),
            BadName(n) => write!(
                f,
                "bad node name {n:?}: letters, digits, _ and - before the @"
            ),
            BadHost(n) => write!(
                f,
                "bad host in node name {n:?} (short names take a host without dots)"
            ),
            NameAtom(n, e) => write!(f, "node name {n}: {e}"),
            EmptyCookie => write!(f, "the cookie is empty"),
            NoHome => write!(f, "no $HOME for ~/.erlang.cookie; give --cookie"),
            EmptyCookieFile(p) => write!(f, "the cookie file {} is empty", p.display()),
            CookieFile(p, "read", e) => {
                write!(f, "cannot read the cookie file {}: {e}", p.display())
            }
            CookieFile(p, what, e) => write!(f, "cannot {what} {}: {e}", p.display()),
            Listen(a, e) => write!(f, "cannot listen for other nodes on {a}: {e}"),
            NoEpmd(port, e) => write!(
                f,
                "no epmd runs on port {port} and `epmd -daemon` cannot be started ({e}); \
                 install Erlang's epmd (Debian: erlang-base) or start one"
            ),
            EpmdFailed(s) => write!(f, "`epmd -daemon` failed: {s}"),
            EpmdSilent => write!(f, "epmd was started but does not answer"),
            EpmdUnreachable(e) => write!(f, "cannot reach epmd: {e}"),
            NameInUse(n) => write!(f, "the node name {n} is already in use on this host"),
            EpmdRefused(n, why) => write!(f, "epmd refused the registration of {n}: {why}"),
            Acceptor(e) => write!(f, "cannot spawn the distribution acceptor: {e}"),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        use StartError::*;
        match self {
            NameAtom(_, e) => Some(e),
            CookieFile(_, _, e) | Listen(_, e) | NoEpmd(_, e) | EpmdUnreachable(e) => Some(e),
            Acceptor(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StartError> for std::io::Error {
    /// Kind `AddrInUse` for a port or name taken, `NotFound` for no
    /// `epmd`, `InvalidInput` for a bad name or cookie, else `Other`.
    fn from(e: StartError) -> std::io::Error {
        use std::io::ErrorKind as K;
        use StartError::*;
        let kind = match &e {
            Listen(_, io) if io.kind() == K::AddrInUse => K::AddrInUse,
            NameInUse(_) => K::AddrInUse,
            NoEpmd(..) => K::NotFound,
            NoHost(_) | BadName(_) | BadHost(_) | EmptyCookie | EmptyCookieFile(_) => {
                K::InvalidInput
            }
            _ => K::Other,
        };
        std::io::Error::new(kind, e)
    }
}
