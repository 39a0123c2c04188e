//! Other nodes, as the machine sees them: what built-ins ask of the
//! distribution (sends, links, monitors, spawns on another node, the
//! node table), as a trait the node layer implements (`dist/`) and puts
//! in its own state (`lona_vm::NodeServices`, in
//! [`Env::extension`](crate::Env::extension)), so that nothing below it names the
//! distribution itself; and the values that cross between the two.

use std::any::Any;

use lona_runtime::{Pid, Ref};
use lona_term::{Atom, Term};

/// Why a message for another node was not sent.
#[derive(Debug)]
pub enum RemoteSendError {
    /// The node name cannot be a peer's (our own, no `@`, too long).
    NotAPeer,
    /// The message holds what Erlang's term format cannot carry.
    Encode(lona_term::etf::EncodeError),
    /// A Rust value the serde bridge cannot make a term of.
    Bridge(crate::error::BridgeError),
    /// The connection to the node has more queued than its limit
    /// (`dist::Config::busy_limit`): nothing was sent. Erlang's `nosuspend`;
    /// a native process awaits `Dist::until_ready` and sends again.
    Busy,
}

impl std::fmt::Display for RemoteSendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteSendError::NotAPeer => f.write_str("not a node name another node can have"),
            RemoteSendError::Encode(e) => write!(f, "cannot be sent to another node: {e}"),
            RemoteSendError::Bridge(e) => write!(f, "not a term: {e}"),
            RemoteSendError::Busy => f.write_str("the connection to the node is busy"),
        }
    }
}

/// Another node's process, as the origin of an exit signal it sent
/// ([`lona_runtime::ForeignExit`]): a trapping Lonala process sees it as
/// the pid in `[:EXIT pid reason]`.
#[derive(Clone, Copy, Debug)]
pub struct RemotePid {
    /// Its node.
    pub node: Atom,
    /// Its id, serial and creation on that node.
    pub id: u32,
    pub serial: u32,
    pub creation: u32,
}

/// What a remote monitor watches.
pub enum Watched<'a> {
    /// A process: id, serial, creation.
    Pid(u32, u32, u32),
    /// A registered name.
    Name(&'a str),
}

/// A distributed node, as built-ins reach it (implemented by `dist/`
/// for its `Arc<Dist>`; each method is the one of `Dist` of that name).
pub trait Distribution: Send + Sync {
    /// The node's name as an atom.
    fn atom(&self) -> Atom;
    /// The node's full name, `name@host`.
    fn name(&self) -> &str;
    /// Sends `msg` to another node's process `pid` (id, serial,
    /// creation); the bytes queued for that node.
    fn send_pid(
        &self,
        from: Option<Pid>,
        node: &str,
        pid: (u32, u32, u32),
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError>;
    /// Sends `msg` to the process registered as `name` on `node`.
    fn send_reg(
        &self,
        from: Pid,
        name: &str,
        node: &str,
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError>;
    /// Asks for a message to `pid` once `node`'s connection is no longer
    /// busy: the reference it will carry, `None` if there is no
    /// connection.
    fn arm_ready(&self, pid: Pid, node: &str, lonala: bool) -> Option<u64>;
    /// Whether `node`'s connection has more queued than its limit.
    fn busy(&self, node: &str) -> bool;
    /// Links `me` with another node's process; the writer process that
    /// carries the link, if any.
    fn link(&self, me: Pid, node: &str, pid: (u32, u32, u32)) -> Option<Pid>;
    /// Removes a link of `me` with another node's process.
    fn unlink(&self, me: Pid, node: &str, pid: (u32, u32, u32));
    /// Monitors a process (or name) of another node for `watcher`; the
    /// `DOWN` names `target`.
    fn monitor(&self, watcher: Pid, node: &str, what: Watched<'_>, target: Term<'_>) -> Ref;
    /// Removes a remote monitor: whether it was there.
    fn demonitor(&self, watcher: Pid, mref: u64) -> bool;
    /// Sends an exit signal to another node's process.
    fn exit(
        &self,
        me: Pid,
        node: &str,
        pid: (u32, u32, u32),
        reason: Term<'_>,
    ) -> Result<(), RemoteSendError>;
    /// Asks `node` to spawn `module:function(args)`; the request's
    /// reference.
    #[allow(clippy::too_many_arguments)]
    fn spawn_request(
        &self,
        me: Pid,
        node: &str,
        module: &str,
        function: &str,
        args: Term<'_>,
        link: bool,
        monitor: bool,
    ) -> Result<Ref, RemoteSendError>;
    /// `watcher` gets `[:nodedown node]` when `node`'s connection ends.
    fn monitor_node(&self, watcher: Pid, node: &str);
    /// Ends a [`Distribution::monitor_node`].
    fn demonitor_node(&self, watcher: Pid, node: &str);
    /// The nodes connected now.
    fn nodes(&self) -> Vec<String>;
    /// Starts connecting to `node`: false if it cannot be.
    fn connect(&self, node: &str) -> bool;
    /// Whether a connection to `node` is up (`Some(true)`), under way
    /// (`Some(false)`) or absent.
    fn state(&self, node: &str) -> Option<bool>;
    /// Closes the connection to `node`: whether there was one.
    fn disconnect(&self, node: &str) -> bool;
    /// The implementation, for the node layer to find its own type.
    fn as_any(&self) -> &dyn Any;
}
