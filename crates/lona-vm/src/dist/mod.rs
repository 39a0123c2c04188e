//! Distribution: this node as a peer of other Lona nodes and of Erlang
//! and Elixir nodes, over Erlang's own distribution protocol
//! (`erts/doc/guides/erl_dist_protocol.md`; `docs/design.md`, D22).
//!
//! # How a connection comes up
//! 1. [`start`] (`lona run --sname NAME`): the cookie is read (or made,
//!    `cookie.rs`), a listener is bound (127.0.0.1 unless asked), `epmd`
//!    is started if none runs and told our name and port; its answer is
//!    our *creation*. An acceptor process waits on the listener.
//! 2. The first message for a node that has no connection makes one: a
//!    *writer* process is spawned and entered in the node table at once,
//!    so every later message for that node queues in its mailbox, in
//!    order. It asks the peer host's `epmd` for the port, connects and
//!    runs the client half of the handshake (version 6, the cookie
//!    challenge; `erl_dist::handshake`). A node that cannot be reached
//!    ends the writer and the messages are dropped, as Erlang drops them.
//! 3. An incoming connection gets a process that runs the server half;
//!    once the peer has proven the cookie it becomes that node's writer
//!    (or, when our own attempt to reach the same node is under way, hands
//!    the connection to that writer: Erlang's rule for simultaneous
//!    connects, the greater name's attempt wins).
//! 4. A connected writer spawns a linked *reader*. The writer encodes
//!    what local processes send and writes it in batches, and a tick when
//!    it has been silent for a quarter of the net tick time; the reader
//!    decodes packets and delivers to local processes. Either ending
//!    (the peer gone, a malformed packet, a write error, no packet for a
//!    whole net tick time, the peer's replies unread past the reply
//!    limit) ends the other, and the node table entry goes. The reader
//!    shuts the socket down as it ends, and so does `disconnect`: a
//!    writer waiting to write to a peer that does not read fails then,
//!    instead of waiting on. The reader sends every signal of the peer to
//!    local processes itself, as the packets come (links and monitors
//!    too, made on the writer's behalf), so they keep the peer's order
//!    and the reader never waits for the writer (`reply.rs`).
//!
//! # What a peer cannot do
//! Every length is checked against the bytes that came; a packet is read
//! into a buffer that grows only as bytes arrive, up to a limit
//! ([`MAX_PACKET`]); atoms a peer sends become keywords only while the
//! atom table is less than half full, so a peer cannot take the table
//! from this node's own code; a malformed packet closes that connection
//! (logged), nothing else. A peer that reads slowly, or never, cannot
//! make the node queue without end what its processes send there: past
//! 1 MB queued for a connection the senders wait (`outq.rs`). Nor the
//! replies to its own requests: past 16 MB of them unread (16 times the
//! busy limit) the connection is closed, as Erlang closes one to a node
//! that does not respond (`outq.rs`, "The peer's own backlog").
//!
//! # Files
//! - `cookie.rs`: `~/.erlang.cookie`;
//! - `epmd.rs`: registration and port lookup;
//! - `wire.rs`: packets and control messages, read from bytes;
//! - `pieces.rs`: large messages cut into pieces (Erlang's fragments) and joined again;
//! - `outq.rs`: the bound of what is queued for a connection (Erlang's
//!   `dist_buf_busy_limit`: senders wait while it is over);
//! - `conn.rs`: the acceptor, writer and reader processes;
//! - `out.rs`: what a writer's mailbox takes, and what each counts;
//! - `reason.rs`: exit reasons under Erlang's names on the wire
//!   (`:case-clause` is `case_clause` there);
//! - `reply.rs`: what the reader queues for the writer in answer to the
//!   peer, counted towards the reply limit; how the peer's signals keep
//!   their order (the reader makes links and monitors on the writer's
//!   behalf); and the socket as those who close a connection hold it.

use crate::NodeEnv;
mod conn;
pub mod cookie;
pub mod epmd;
mod error;
mod out;
mod outq;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod pieces;
#[cfg(not(feature = "fuzzing"))]
pub(crate) mod pieces;
mod reason;
mod reply;
// The packet reader and writer: public only for the fuzz target
// (`fuzz/fuzz_targets/dist_wire.rs`, feature `fuzzing`); not an API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod wire;
#[cfg(not(feature = "fuzzing"))]
pub(crate) mod wire;

pub use crate::remote::{Distribution, RemotePid, RemoteSendError, Watched};
pub use error::StartError;
use outq::Outq;
pub use outq::{
    default_reply_limit, DistReady, DEFAULT_BUSY_LIMIT, ENVELOPE, MIN_BUSY_LIMIT, MIN_REPLY_LIMIT,
};

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lona_runtime::Ref;
use lona_runtime::{Handle, Pid};
use lona_term::{Atom, Fragment, Term};

use crate::env::Env;

/// The largest packet a peer may send, and the most bytes of fragmented
/// messages under way on one connection (a message of this size or more
/// is refused and the connection closed): 256 MiB.
pub const MAX_PACKET: usize = 256 << 20;

/// A binary of at least this many bytes in a message to another node is
/// written from where it is, not copied into the packet (the size from
/// which a message is written in fragments anyway).
const SPLICE_MIN: usize = 64 << 10;

/// How a node joins the distribution.
#[derive(Clone, Debug)]
pub struct Config {
    /// `name` or `name@host`; a short name without a host gets this
    /// host's short name (Erlang's `-sname`).
    pub name: String,
    /// Long names (`-name`): the host part is a fully qualified name.
    pub long_names: bool,
    /// The cookie; `None`: `~/.erlang.cookie` (created when missing).
    pub cookie: Option<String>,
    /// The address the distribution listens on (default 127.0.0.1).
    pub ip: IpAddr,
    /// The port it listens on (default 0: any).
    pub port: u16,
    /// Erlang's `net_ticktime`: a connection silent for this long is
    /// declared down; a tick is sent every quarter of it.
    pub tick_time: Duration,
    /// Erlang's `dist_buf_busy_limit` (`erl +zdbbl`), in bytes: once this
    /// much is queued for a connection and not yet written, processes
    /// sending to that node wait until less than half of it is (see
    /// `outq.rs`). Default [`DEFAULT_BUSY_LIMIT`] (1 MB); at least
    /// [`MIN_BUSY_LIMIT`].
    pub busy_limit: usize,
    /// The most a peer may leave unread of the replies to its own
    /// requests (`LINK`, `MONITOR_P`, `UNLINK_ID`, `SPAWN_REQUEST`,
    /// `is_auth`), in bytes, before the connection is closed as one to a
    /// node that does not respond (see `outq.rs`). What local processes
    /// send never counts. `None` (the default): [`default_reply_limit`],
    /// 16 times `busy_limit`, at least 16 MB; at least [`MIN_REPLY_LIMIT`].
    pub reply_limit: Option<usize>,
}

impl Config {
    /// A short-named node: `name` or `name@host`.
    pub fn short(name: &str) -> Config {
        Config {
            name: name.to_string(),
            long_names: false,
            cookie: None,
            ip: [127, 0, 0, 1].into(),
            port: 0,
            tick_time: Duration::from_secs(60),
            busy_limit: DEFAULT_BUSY_LIMIT,
            reply_limit: None,
        }
    }
}

/// One connection in the node table.
#[derive(Clone)]
struct Conn {
    /// The writer process: messages for the node go to its mailbox.
    writer: Pid,
    /// Whether the handshake is done (`nodes` lists only these).
    up: bool,
    /// What is queued in the writer's mailbox, and who waits for it.
    q: Arc<Outq>,
    /// The connection's socket, once up: what `disconnect` shuts down, so
    /// the connection ends even while the writer is stuck writing.
    closer: Option<Arc<reply::Closer>>,
}

/// A monitor of ours on another node's process.
struct RemoteMon {
    /// The local process that gets the `DOWN`.
    watcher: Pid,
    /// The node the monitored process is on.
    node: String,
    /// What the `DOWN` names: the pid, or `[name node]`.
    target: Fragment,
    /// The monitored process as the wire names it (for `DEMONITOR_P`).
    wire_target: Vec<u8>,
}

/// `[:DOWN mref target reason]` for remote monitor `m`.
fn down_message(mref: u64, m: &RemoteMon, reason: Term<'_>) -> Fragment {
    let heap = lona_term::Heap::new();
    Fragment::vector(&[
        lona_term::kw!("DOWN"),
        heap.reference(mref),
        m.target.root(),
        reason,
    ])
}

/// One end of a cross-node link: a process of another node.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RemoteLink {
    pub(crate) node: String,
    /// id, serial, creation
    pub(crate) pid: (u32, u32, u32),
}

/// A distributed node's identity and its connections.
pub struct Dist {
    /// The node's environment (weak: the environment holds the `Dist`):
    /// where a spawn request from a peer finds its function.
    env: std::sync::Weak<Env>,
    /// Our full name, `name@host`.
    name: String,
    /// The part before `@`.
    alive: String,
    /// The part after `@`.
    host: String,
    /// Our name as a keyword (what `(node)` returns).
    atom: Atom,
    /// Our creation, from `epmd`.
    creation: u32,
    cookie: String,
    tick_time: Duration,
    /// Each connection's queue limit ([`Config::busy_limit`]).
    busy_limit: usize,
    /// Each connection's reply limit ([`Config::reply_limit`]).
    reply_limit: usize,
    /// The port the distribution listens on.
    port: u16,
    handle: Handle,
    /// Node name → connection. Written by senders (a new writer) and by
    /// writers (up; gone); read by senders and `nodes`.
    conns: Mutex<HashMap<String, Conn>>,
    /// Monitors our processes hold on other nodes' processes, by
    /// reference. Written by `monitor` (insert) and by whoever delivers
    /// the `DOWN` or takes the monitor back (remove, and send, under the
    /// lock: a `DOWN` is delivered at most once, and never after
    /// `demonitor` returned).
    remote_mons: Mutex<HashMap<u64, RemoteMon>>,
    /// `monitor-node` subscriptions: node → the processes told of its
    /// going down (once each, then forgotten, as Erlang's).
    node_watchers: Mutex<HashMap<String, Vec<Pid>>>,
    /// Links between our processes and other nodes' (Erlang keeps a
    /// link's state on both sides; this is ours): local pid → its remote
    /// partners. Written by `link`/`unlink`, by readers (the peer's
    /// `LINK`, `EXIT`) and by writers (a local process ended, the
    /// connection went).
    links: Mutex<HashMap<Pid, Vec<RemoteLink>>>,
    /// Our spawn requests waiting for their reply: reference → (the
    /// requester, the node asked).
    spawns: Mutex<HashMap<u64, (Pid, String)>>,
    /// Messages received and sent in fragments (counted by readers and
    /// writers; read by [`Dist::fragmented`]).
    frags_in: AtomicU64,
    frags_out: AtomicU64,
    /// A `[:nodedown name]` went with the name as a string (the atom table
    /// was full): logged once.
    nodedown_strings: AtomicBool,
    /// The connection to `epmd` that keeps us registered (never read).
    _epmd: std::net::TcpStream,
}

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Dist({} creation {})", self.name, self.creation)
    }
}

/// This host's short name (what `-sname` appends).
fn short_host() -> String {
    let h = std::process::Command::new("hostname")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "localhost".to_string());
    h.split('.').next().unwrap_or("localhost").to_string()
}

/// Checks a node name part: letters, digits, `_` and `-` (Erlang's rule).
fn valid_alive(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Makes a node of native Rust processes distributed: [`start`] with a
/// node environment of its own (the Lonala core, whose term codec and
/// `lona.server` protocol the distribution uses). Native processes send
/// Rust values with [`Dist::send_value`] and receive what other nodes send
/// as [`Fragment`]s, read with [`crate::bridge::from_message`].
pub fn start_native(handle: &Handle, cfg: Config) -> Result<Arc<Dist>, StartError> {
    let env = Env::new(Box::new(std::io::stdout()));
    start(&env, handle, cfg)
}

/// The [`Builder`](lona_runtime::Builder) option that makes a Rust
/// program's node distributed as it starts:
///
/// ```no_run
/// use lona_vm::dist::{Config, Distributed};
/// let (rt, dist) = lona_runtime::Builder::default()
///     .workers(2)
///     .distributed(Config::short("app"))
///     .build()?;
/// // `dist.send_value(..)`, `dist.nodes()`, ...
/// # drop((rt, dist));
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// It is [`start_native`] run on the new runtime: the node is named,
/// registered with `epmd` and listening when `build` returns.
pub trait Distributed {
    /// Builds with distribution configured by `cfg`.
    fn distributed(self, cfg: Config) -> DistributedBuilder;
}

impl Distributed for lona_runtime::Builder {
    fn distributed(self, cfg: Config) -> DistributedBuilder {
        DistributedBuilder { builder: self, cfg }
    }
}

/// A [`Builder`](lona_runtime::Builder) with a distribution [`Config`]
/// (from [`Distributed::distributed`]).
#[derive(Debug)]
pub struct DistributedBuilder {
    builder: lona_runtime::Builder,
    cfg: Config,
}

impl DistributedBuilder {
    /// Starts the runtime, then the distribution on it. An error of the
    /// distribution (a bad name, a name taken, no `epmd`, a port in use,
    /// an unreadable cookie) shuts the runtime down again and comes back
    /// as an [`std::io::Error`] carrying the [`StartError`] (its kind:
    /// `From<StartError>`).
    pub fn build(self) -> std::io::Result<(lona_runtime::Runtime, Arc<Dist>)> {
        let rt = self.builder.build()?;
        match start_native(&rt.handle(), self.cfg) {
            Ok(d) => Ok((rt, d)),
            Err(e) => {
                drop(rt);
                Err(e.into())
            }
        }
    }
}

/// Makes this node distributed, as `cfg` says, and records it in `env`
/// (for `node`, `nodes` and sends to other nodes). Errors: a bad name, a
/// name already registered on this host, no `epmd` to be had, a port in
/// use, an unreadable cookie.
pub fn start(env: &Arc<Env>, handle: &Handle, cfg: Config) -> Result<Arc<Dist>, StartError> {
    if env.node().dist().is_some() {
        return Err(StartError::AlreadyDistributed);
    }
    let (alive, host) = match cfg.name.split_once('@') {
        Some((a, h)) => (a.to_string(), h.to_string()),
        None if cfg.long_names => return Err(StartError::NoHost(cfg.name)),
        None => (cfg.name.clone(), short_host()),
    };
    if !valid_alive(&alive) {
        return Err(StartError::BadName(cfg.name));
    }
    let host_chars = host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    if host.is_empty() || !host_chars || (!cfg.long_names && host.contains('.')) {
        return Err(StartError::BadHost(cfg.name));
    }
    let name = format!("{alive}@{host}");
    let atom = Atom::try_new(&name).map_err(|e| StartError::NameAtom(name.clone(), e))?;
    let cookie = match cfg.cookie {
        Some(c) if !c.is_empty() => c,
        Some(_) => return Err(StartError::EmptyCookie),
        None => {
            let path = cookie::default_path().ok_or(StartError::NoHome)?;
            cookie::read_or_create(&path)?
        }
    };
    let at = SocketAddr::new(cfg.ip, cfg.port);
    let listener =
        lona_runtime::io::TcpListener::bind(at).map_err(|e| StartError::Listen(at, e))?;
    let port = listener
        .local_addr()
        .map_err(|e| StartError::Listen(at, e))?
        .port();
    epmd::ensure_running()?;
    let (epmd_conn, creation) = epmd::register(&alive, port)?;
    let dist = Arc::new(Dist {
        env: Arc::downgrade(env),
        name,
        alive,
        host,
        atom,
        creation,
        cookie,
        tick_time: cfg.tick_time.max(Duration::from_millis(400)),
        busy_limit: cfg.busy_limit.max(MIN_BUSY_LIMIT),
        reply_limit: cfg
            .reply_limit
            .unwrap_or_else(|| default_reply_limit(cfg.busy_limit.max(MIN_BUSY_LIMIT)))
            .max(MIN_REPLY_LIMIT),
        port,
        handle: handle.clone(),
        conns: Mutex::new(HashMap::new()),
        remote_mons: Mutex::new(HashMap::new()),
        node_watchers: Mutex::new(HashMap::new()),
        links: Mutex::new(HashMap::new()),
        spawns: Mutex::new(HashMap::new()),
        frags_in: AtomicU64::new(0),
        frags_out: AtomicU64::new(0),
        nodedown_strings: AtomicBool::new(false),
        _epmd: epmd_conn,
    });
    env.node()
        .dist
        .set(Arc::new(DistHandle(dist.clone())))
        .map_err(|_| StartError::AlreadyDistributed)?;
    conn::spawn_acceptor(&dist, listener)?;
    Ok(dist)
}

/// The distribution of `env`'s node, once [`start`] made it one.
pub fn of(env: &Env) -> Option<Arc<Dist>> {
    env.node()
        .dist()?
        .as_any()
        .downcast_ref::<DistHandle>()
        .map(|h| h.0.clone())
}

/// The node's distribution as the node holds it (`NodeServices::dist`): the
/// machine's trait cannot be implemented for `Arc<Dist>` here, a type of
/// neither crate.
pub(crate) struct DistHandle(pub(crate) Arc<Dist>);

impl crate::remote::Distribution for DistHandle {
    fn atom(&self) -> Atom {
        Dist::atom(&self.0)
    }
    fn name(&self) -> &str {
        Dist::name(&self.0)
    }
    fn send_pid(
        &self,
        from: Option<Pid>,
        node: &str,
        pid: (u32, u32, u32),
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError> {
        Dist::send_pid(&self.0, from, node, pid, msg)
    }
    fn send_reg(
        &self,
        from: Pid,
        name: &str,
        node: &str,
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError> {
        Dist::send_reg(&self.0, from, name, node, msg)
    }
    fn arm_ready(&self, pid: Pid, node: &str, lonala: bool) -> Option<u64> {
        Dist::arm_ready(&self.0, pid, node, lonala)
    }
    fn busy(&self, node: &str) -> bool {
        Dist::busy(&self.0, node)
    }
    fn link(&self, me: Pid, node: &str, pid: (u32, u32, u32)) -> Option<Pid> {
        Dist::link(&self.0, me, node, pid)
    }
    fn unlink(&self, me: Pid, node: &str, pid: (u32, u32, u32)) {
        Dist::unlink(&self.0, me, node, pid)
    }
    fn monitor(&self, watcher: Pid, node: &str, what: Watched<'_>, target: Term<'_>) -> Ref {
        Dist::monitor(&self.0, watcher, node, what, target)
    }
    fn demonitor(&self, watcher: Pid, mref: u64) -> bool {
        Dist::demonitor(&self.0, watcher, mref)
    }
    fn exit(
        &self,
        me: Pid,
        node: &str,
        pid: (u32, u32, u32),
        reason: Term<'_>,
    ) -> Result<(), RemoteSendError> {
        Dist::exit(&self.0, me, node, pid, reason)
    }
    fn spawn_request(
        &self,
        me: Pid,
        node: &str,
        module: &str,
        function: &str,
        args: Term<'_>,
        link: bool,
        monitor: bool,
    ) -> Result<Ref, RemoteSendError> {
        Dist::spawn_request(&self.0, me, node, module, function, args, link, monitor)
    }
    fn monitor_node(&self, watcher: Pid, node: &str) {
        Dist::monitor_node(&self.0, watcher, node)
    }
    fn demonitor_node(&self, watcher: Pid, node: &str) {
        Dist::demonitor_node(&self.0, watcher, node)
    }
    fn nodes(&self) -> Vec<String> {
        Dist::nodes(&self.0)
    }
    fn connect(&self, node: &str) -> bool {
        Dist::connect(&self.0, node)
    }
    fn state(&self, node: &str) -> Option<bool> {
        Dist::state(&self.0, node)
    }
    fn disconnect(&self, node: &str) -> bool {
        Dist::disconnect(&self.0, node)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl Dist {
    /// Our full name, `name@host`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many messages came in fragments from peers, and went out in
    /// fragments to them, since the node started.
    pub fn fragmented(&self) -> (u64, u64) {
        // Relaxed: statistics, ordered with nothing.
        (self.frags_in.load(Relaxed), self.frags_out.load(Relaxed))
    }

    /// Our name as a keyword.
    pub fn atom(&self) -> Atom {
        self.atom
    }

    /// Our creation (from `epmd`).
    pub fn creation(&self) -> u32 {
        self.creation
    }

    /// The port the distribution listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Our identity for the term codec (what our pids are sent as).
    pub(crate) fn etf_node(&self) -> lona_term::etf::Node {
        lona_term::etf::Node {
            name: self.atom,
            creation: self.creation,
        }
    }

    /// Waits (at most `patience`) until what local processes sent to
    /// other nodes is written: a stopping node says its last words, as
    /// Erlang's `init:stop` does (`halt` does not wait, in both).
    pub fn flush(&self, patience: std::time::Duration) {
        let writers: Vec<Pid> = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|c| c.writer)
            .collect();
        // Connections still being made too: their writers answer once
        // connected (or drop the channel when they cannot connect).
        let (tx, rx) = std::sync::mpsc::channel();
        for w in &writers {
            self.handle.send(*w, out::Out::Sync(tx.clone()));
        }
        drop(tx);
        let until = std::time::Instant::now() + patience;
        for _ in &writers {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if rx.recv_timeout(left).is_err() {
                break;
            }
        }
    }

    /// The nodes we have a connection to (handshake done), sorted.
    pub fn nodes(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, c)| c.up)
            .map(|(n, _)| n.clone())
            .collect();
        v.sort();
        v
    }

    /// The writer of `node`'s connection and its queue, spawning one
    /// (which connects) when there is none. `None`: the node name is not
    /// one we could reach (no `@`, our own name) or the process table is
    /// full.
    fn writer_for(self: &Arc<Self>, node: &str) -> Option<(Pid, Arc<Outq>)> {
        if node == self.name || !node.contains('@') || node.len() > 255 {
            return None;
        }
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = conns.get(node) {
            return Some((c.writer, c.q.clone()));
        }
        let q = self.new_outq();
        let pid = conn::spawn_connector(self, node.to_string(), q.clone())?;
        conns.insert(
            node.to_string(),
            Conn {
                writer: pid,
                up: false,
                q: q.clone(),
                closer: None,
            },
        );
        Some((pid, q))
    }

    /// A queue count for a new connection.
    fn new_outq(&self) -> Arc<Outq> {
        Arc::new(Outq::new(&self.handle, self.busy_limit, self.reply_limit))
    }

    /// Whether the connection to `node` is busy: more queued than the
    /// limit ([`Config::busy_limit`]). A node with no connection is not.
    pub fn busy(&self, node: &str) -> bool {
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .is_some_and(|c| c.q.busy())
    }

    /// Bytes queued for `node`'s connection and not yet written (0 with
    /// no connection).
    pub fn queued(&self, node: &str) -> usize {
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .map_or(0, |c| c.q.queued())
    }

    /// Bytes of `node`'s backlog of replies to its own requests: queued
    /// and not yet written, or handed to the writer and not yet done, each
    /// with [`ENVELOPE`] more (0 with no connection). Past
    /// [`Config::reply_limit`] the connection is closed.
    pub fn replies_queued(&self, node: &str) -> usize {
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .map_or(0, |c| c.q.replies())
    }

    /// Arms a wake-up for process `pid` when the connection to `node`
    /// drains: the reference of the message that will come (`[:lona.dist/ready
    /// ref]` to a Lonala process, [`DistReady`] to a native one), or
    /// `None` when it is not busy (send now).
    pub(crate) fn arm_ready(&self, pid: Pid, node: &str, lonala: bool) -> Option<u64> {
        let q = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .map(|c| c.q.clone())?;
        q.wait(pid, lonala)
    }

    /// Waits, in native process `ctx`, while the connection to `node` is
    /// busy (what a native sender does on [`RemoteSendError::Busy`] before
    /// it sends again). Returns at once when it is not; a connection that
    /// ends wakes it too.
    pub async fn until_ready(&self, ctx: &lona_runtime::Ctx, node: &str) {
        if let Some(r) = self.arm_ready(ctx.pid(), node, false) {
            ctx.receive_where(move |m: &DistReady| m.0 == r).await;
        }
    }

    /// Sends `msg` to the process registered as `name` on `node`, from
    /// `from` (connecting first if need be). The message is encoded here,
    /// in the sender, so what cannot cross is the sender's error.
    ///
    /// While the connection is busy (more queued than
    /// [`Config::busy_limit`]) nothing is sent and the answer is
    /// [`RemoteSendError::Busy`] (Erlang's `nosuspend`): a native process
    /// awaits [`Dist::until_ready`] and sends again (a Lonala process's
    /// `send` waits by itself). So do the other `send_*` functions.
    pub fn send_reg(
        self: &Arc<Self>,
        from: Pid,
        name: &str,
        node: &str,
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError> {
        if name.len() > 255 {
            return Err(RemoteSendError::NotAPeer);
        }
        let ctl = wire::Control::RegSend {
            from: self.wire_pid(from),
            unused: wire::UNUSED,
            name,
            msg: &[],
        };
        self.send_message(Some(from), node, &ctl, msg)
    }

    /// Sends the Rust value `v` (through the serde bridge: a struct becomes
    /// a map, an enum variant a keyword or a tagged tuple, ...) to the
    /// process registered as `name` on `node`, from local process `from`.
    pub fn send_value<T: serde::Serialize + ?Sized>(
        self: &Arc<Self>,
        from: Pid,
        name: &str,
        node: &str,
        v: &T,
    ) -> Result<usize, RemoteSendError> {
        let heap = lona_term::Heap::new();
        let t = crate::bridge::to_term(&heap, v).map_err(RemoteSendError::Bridge)?;
        self.send_reg(from, name, node, t)
    }

    /// Sends the Rust value `v` (serde bridge) to a process of another
    /// node, as a native process received its pid.
    pub fn send_value_to<T: serde::Serialize + ?Sized>(
        self: &Arc<Self>,
        to: &crate::bridge::RemotePidTerm,
        v: &T,
    ) -> Result<usize, RemoteSendError> {
        let heap = lona_term::Heap::new();
        let t = crate::bridge::to_term(&heap, v).map_err(RemoteSendError::Bridge)?;
        self.send_pid(None, &to.node, (to.id, to.serial, to.creation), t)
    }

    /// Sends `msg` to process `(id, serial, creation)` of `node`
    /// (connecting first if need be), encoded here as [`Dist::send_reg`].
    /// `from`, the sending process if there is one, is what lets the
    /// connection write this message between the fragments of another
    /// process's large one (the order of one sender's messages is kept).
    pub fn send_pid(
        self: &Arc<Self>,
        from: Option<Pid>,
        node: &str,
        pid: (u32, u32, u32),
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError> {
        let ctl = wire::Control::Send {
            sender: false,
            from: wire::UNUSED,
            to: wire::WirePid::of(node, pid),
            msg: &[],
        };
        self.send_message(from, node, &ctl, msg)
    }

    /// Encodes `msg` after control message `ctl` into one packet and
    /// queues it on `node`'s connection, as sent by `from`: the packet's
    /// size.
    fn send_message(
        self: &Arc<Self>,
        from: Option<Pid>,
        node: &str,
        ctl: &wire::Control<'_>,
        msg: Term<'_>,
    ) -> Result<usize, RemoteSendError> {
        if node.len() > 255 {
            return Err(RemoteSendError::NotAPeer);
        }
        let (w, q) = self.writer_for(node).ok_or(RemoteSendError::NotAPeer)?;
        // The one check on the hot path (`outq.rs`).
        if q.busy() {
            return Err(RemoteSendError::Busy);
        }
        let mut p = Vec::new();
        let at = ctl.open(&mut p);
        // Large binaries are referenced, not copied: the writer writes
        // them from where they are.
        let mut splices = Vec::new();
        lona_term::etf::encode_node_spliced(
            &mut p,
            msg,
            &self.etf_node(),
            SPLICE_MIN,
            &mut splices,
        )
        .map_err(RemoteSendError::Encode)?;
        let mut packet = pieces::Packet { bytes: p, splices };
        let n = packet.len();
        if n - 4 > u32::MAX as usize {
            return Err(RemoteSendError::Encode(
                lona_term::etf::EncodeError::Unsupported("message over 2^32 - 1 bytes"),
            ));
        }
        let extra = n - packet.bytes.len();
        wire::put::finish_spliced(&mut packet.bytes, at, extra);
        q.add(n);
        self.handle.send(w, out::Out::Message { from, packet });
        Ok(n)
    }

    /// Queues packet `p` on `node`'s connection, made if need be: the
    /// writer, `None` when `node` cannot be a peer.
    fn queue(self: &Arc<Self>, node: &str, p: Vec<u8>) -> Option<Pid> {
        let (w, q) = self.writer_for(node)?;
        q.add(p.len());
        self.handle.send(w, out::Out::Packet(p));
        Some(w)
    }

    /// Queues packet `p` on `node`'s connection if there is one (no new
    /// connection for it).
    fn queue_if_connected(&self, node: &str, p: Vec<u8>) {
        let w = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .map(|c| (c.writer, c.q.clone()));
        if let Some((w, q)) = w {
            q.add(p.len());
            self.handle.send(w, out::Out::Packet(p));
        }
    }

    /// The bytes of our reference `r` as the wire has it.
    fn ref_bytes(&self, r: u64) -> Vec<u8> {
        let mut v = Vec::new();
        wire::put::reference(&mut v, &self.name, self.creation, r);
        v
    }

    /// The bytes of our pid `p` as the wire has it.
    fn pid_bytes(&self, p: Pid) -> Vec<u8> {
        let mut v = Vec::new();
        wire::put::pid(&mut v, self.wire_pid(p));
        v
    }

    /// A local pid as the wire names it.
    pub(crate) fn wire_pid(&self, p: Pid) -> wire::WirePid<'_> {
        wire::WirePid {
            node: &self.name,
            id: p.index(),
            serial: p.generation(),
            creation: self.creation,
        }
    }

    /// The connection to `node`: `Some(true)` up, `Some(false)` being
    /// made, `None` none.
    pub fn state(&self, node: &str) -> Option<bool> {
        self.conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .map(|c| c.up)
    }

    /// Starts connecting to `node` if no connection is there or under way.
    pub fn connect(self: &Arc<Self>, node: &str) -> bool {
        self.writer_for(node).is_some()
    }

    /// Closes the connection to `node`: true if there was one. It ends at
    /// once, as Erlang's `disconnect_node` ends it (what is queued for the
    /// node is dropped), and its links and monitors fire `noconnection`
    /// as the writer goes, even when the writer was stuck writing to a
    /// peer that does not read: the socket is shut down here, which fails
    /// that write (the writer's mailbox, where `Out::Disconnect` goes too,
    /// for a connection still being made, waits behind it).
    pub fn disconnect(&self, node: &str) -> bool {
        let c = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(node)
            .cloned();
        match c {
            Some(c) => {
                self.handle.send(c.writer, out::Out::Disconnect);
                if let Some(closer) = c.closer {
                    closer.close("disconnected");
                }
                true
            }
            None => false,
        }
    }

    /// Marks `writer`'s connection to `node` up, with its socket.
    fn mark_up(&self, node: &str, writer: Pid, closer: &Arc<reply::Closer>) {
        if let Some(c) = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(node)
        {
            if c.writer == writer {
                c.up = true;
                c.closer = Some(closer.clone());
            }
        }
    }

    /// Removes `node`'s entry if `writer` still holds it; then, if it
    /// did, the node is down for everyone watching it (`DOWN`
    /// `:noconnection`, `[:nodedown node]`). In this order: a monitor
    /// made after the entry went reaches a new connection, one made
    /// before is in the table when the `DOWN`s go.
    fn forget(&self, node: &str, writer: Pid) {
        let removed = {
            let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
            if conns.get(node).is_some_and(|c| c.writer == writer) {
                conns.remove(node)
            } else {
                None
            }
        };
        if let Some(c) = removed {
            // Senders waiting for the connection to drain go on (what they
            // send now makes a new connection).
            c.q.close();
            self.node_down(node);
        }
    }

    /// Removes the entry `writer` holds, whichever node it is for.
    fn forget_writer(&self, writer: Pid) {
        let node = self
            .conns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(_, c)| c.writer == writer)
            .map(|(n, _)| n.clone());
        if let Some(n) = node {
            self.forget(&n, writer);
        }
    }

    /// Everything watching `node` learns it is gone.
    fn node_down(&self, node: &str) {
        // Spawn requests still unanswered fail.
        let failed: Vec<u64> = self
            .spawns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, (_, n))| n == node)
            .map(|(r, _)| *r)
            .collect();
        for r in failed {
            self.fail_spawn(r);
        }
        // Links: every local partner gets `noconnection` from its remote
        // end, as Erlang's.
        let cut: Vec<(Pid, RemoteLink)> = {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            let mut cut = Vec::new();
            links.retain(|p, v| {
                v.retain(|l| {
                    if l.node == node {
                        cut.push((*p, l.clone()));
                        false
                    } else {
                        true
                    }
                });
                !v.is_empty()
            });
            cut
        };
        for (p, l) in cut {
            self.handle.send_foreign_exit(
                p,
                self.origin(&l),
                crate::msg::term_reason(lona_term::kw!("noconnection"), None),
                true,
            );
        }
        {
            let mut mons = self.remote_mons.lock().unwrap_or_else(|e| e.into_inner());
            let gone: Vec<u64> = mons
                .iter()
                .filter(|(_, m)| m.node == node)
                .map(|(r, _)| *r)
                .collect();
            for r in gone {
                if let Some(m) = mons.remove(&r) {
                    self.handle.send(
                        m.watcher,
                        down_message(r, &m, lona_term::kw!("noconnection")),
                    );
                }
            }
        }
        let watchers = self
            .node_watchers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(node);
        if let Some(ws) = watchers {
            let heap = lona_term::Heap::new();
            // `[:nodedown node]`, the name a keyword, made if need be (a
            // native process's `monitor_node` names a node by a string):
            // the names come from the node table and from the watchers' own
            // calls, so they are few. With the atom table full, the name
            // goes as a string, and that is logged once: the watcher still
            // learns that the node is down.
            let name = match Atom::try_new(node) {
                Ok(a) => Term::keyword_atom(a),
                Err(e) => {
                    if !self.nodedown_strings.swap(true, Relaxed) {
                        conn::log(
                            self,
                            format_args!(
                                "[:nodedown name] for {node} (and for any other node whose \
                                 name cannot be a keyword) has the name as a string: {e}"
                            ),
                        );
                    }
                    heap.string(node)
                }
            };
            for w in ws {
                let msg = Fragment::vector(&[lona_term::kw!("nodedown"), name]);
                self.handle.send(w, msg);
            }
        }
    }

    /// `watcher` monitors a process of `node` (`target` is what the
    /// `DOWN` will name). Connects if need be; a node that cannot be
    /// reached gives `DOWN` `:noconnection`.
    pub fn monitor(
        self: &Arc<Self>,
        watcher: Pid,
        node: &str,
        what: Watched<'_>,
        target: Term<'_>,
    ) -> Ref {
        let mref = Ref::new();
        let mut wire_target = Vec::new();
        match what {
            Watched::Pid(id, serial, creation) => wire::put::pid(
                &mut wire_target,
                wire::WirePid::of(node, (id, serial, creation)),
            ),
            Watched::Name(n) => wire::put::atom(&mut wire_target, n),
        }
        let mut p = Vec::new();
        wire::Control::MonitorP {
            watcher: &self.pid_bytes(watcher),
            target: &wire_target,
            mref: &self.ref_bytes(mref.to_bits()),
        }
        .write(&mut p);
        // The entry first, then the connection (see `forget`).
        self.remote_mons
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                mref.to_bits(),
                RemoteMon {
                    watcher,
                    node: node.to_string(),
                    target: Fragment::new(target),
                    wire_target,
                },
            );
        if self.queue(node, p).is_none() {
            self.fire_down(mref.to_bits(), lona_term::kw!("noconnection"));
        }
        mref
    }

    /// Delivers the `DOWN` of remote monitor `mref` with `reason`, unless
    /// it was taken back.
    fn fire_down(&self, mref: u64, reason: Term<'_>) {
        let mut mons = self.remote_mons.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = mons.remove(&mref) {
            self.handle.send(m.watcher, down_message(mref, &m, reason));
        }
    }

    /// Takes back remote monitor `mref` of `watcher`: true if it was
    /// active (no `DOWN` will come; one already delivered stays in the
    /// mailbox for the caller to flush).
    pub fn demonitor(&self, watcher: Pid, mref: u64) -> bool {
        let m = {
            let mut mons = self.remote_mons.lock().unwrap_or_else(|e| e.into_inner());
            match mons.get(&mref) {
                Some(m) if m.watcher == watcher => mons.remove(&mref),
                _ => None,
            }
        };
        let Some(m) = m else { return false };
        let mut p = Vec::new();
        wire::Control::DemonitorP {
            watcher: &self.pid_bytes(watcher),
            target: &m.wire_target,
            mref: &self.ref_bytes(mref),
        }
        .write(&mut p);
        self.queue_if_connected(&m.node, p);
        true
    }

    /// What a trapping process is told an exit signal from `l` came from:
    /// its pid, as a term.
    pub(crate) fn origin(&self, l: &RemoteLink) -> lona_runtime::Origin {
        let (id, serial, creation) = l.pid;
        Arc::new(RemotePid {
            // One name per connected node: bounded by the connections.
            node: Atom::try_new(&l.node).unwrap_or(self.atom),
            id,
            serial,
            creation,
        })
    }

    /// Records a link between local `p` and `l`: true if new.
    pub(crate) fn add_link(&self, p: Pid, l: RemoteLink) -> bool {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        let v = links.entry(p).or_default();
        if v.contains(&l) {
            false
        } else {
            v.push(l);
            true
        }
    }

    /// Removes the link between `p` and `l`: true if there was one.
    pub(crate) fn remove_link(&self, p: Pid, l: &RemoteLink) -> bool {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        let Some(v) = links.get_mut(&p) else {
            return false;
        };
        let Some(i) = v.iter().position(|x| x == l) else {
            return false;
        };
        v.swap_remove(i);
        if v.is_empty() {
            links.remove(&p);
        }
        true
    }

    /// The local processes with links to processes of `node`.
    pub(crate) fn local_partners(&self, node: &str) -> Vec<Pid> {
        self.links
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, v)| v.iter().any(|l| l.node == node))
            .map(|(p, _)| *p)
            .collect()
    }

    /// Takes the links of local `p` to processes of `node` (it ended).
    pub(crate) fn take_links(&self, p: Pid, node: &str) -> Vec<RemoteLink> {
        let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
        let Some(v) = links.get_mut(&p) else {
            return Vec::new();
        };
        let (gone, kept): (Vec<RemoteLink>, Vec<RemoteLink>) =
            v.drain(..).partition(|l| l.node == node);
        if kept.is_empty() {
            links.remove(&p);
        } else {
            *v = kept;
        }
        gone
    }

    /// `(link pid)` to another node's process: the link is ours at once
    /// and `LINK` goes to the peer (connecting first if need be; a node
    /// that cannot be reached gives `noconnection` through the link).
    /// Returns the connection's writer, which the caller links to (in
    /// its own process, so its end reaches the writer with its reason,
    /// however soon it comes).
    pub fn link(self: &Arc<Self>, me: Pid, node: &str, pid: (u32, u32, u32)) -> Option<Pid> {
        let l = RemoteLink {
            node: node.to_string(),
            pid,
        };
        let Some((q, outq)) = self.writer_for(node) else {
            self.handle.send_foreign_exit(
                me,
                self.origin(&l),
                crate::msg::term_reason(lona_term::kw!("noconnection"), None),
                true,
            );
            return None;
        };
        if !self.add_link(me, l) {
            return Some(q);
        }
        let mut p = Vec::new();
        wire::Control::Link {
            from: self.wire_pid(me),
            to: wire::WirePid::of(node, pid),
        }
        .write(&mut p);
        outq.add(p.len());
        self.handle.send(q, out::Out::Packet(p));
        Some(q)
    }

    /// `(unlink pid)` of another node's process.
    pub fn unlink(&self, me: Pid, node: &str, pid: (u32, u32, u32)) {
        let l = RemoteLink {
            node: node.to_string(),
            pid,
        };
        if !self.remove_link(me, &l) {
            return;
        }
        let mut to = Vec::new();
        wire::put::pid(&mut to, wire::WirePid::of(node, pid));
        let mut p = Vec::new();
        // Our side is unlinked at once; the peer's acknowledgement is
        // not waited for.
        wire::Control::UnlinkId {
            id: &[lona_term::etf::tag::SMALL_INTEGER_EXT, 1],
            from: &self.pid_bytes(me),
            to: &to,
        }
        .write(&mut p);
        self.queue_if_connected(node, p);
    }

    /// `(exit pid reason)` to another node's process (`EXIT2`).
    /// [`RemoteSendError::Busy`] while the connection is busy (nothing
    /// sent), as for a message.
    pub fn exit(
        self: &Arc<Self>,
        me: Pid,
        node: &str,
        pid: (u32, u32, u32),
        reason: Term<'_>,
    ) -> Result<(), RemoteSendError> {
        if self.busy(node) {
            return Err(RemoteSendError::Busy);
        }
        let heap = lona_term::Heap::new();
        let reason = reason::to_erlang(&heap, heap.copy_from(reason));
        let mut r = Vec::new();
        lona_term::etf::encode_node_into(&mut r, reason, &self.etf_node())
            .map_err(RemoteSendError::Encode)?;
        let mut p = Vec::new();
        wire::Control::Exit {
            link: false,
            from: self.wire_pid(me),
            to: wire::WirePid::of(node, pid),
            reason: &r,
        }
        .write(&mut p);
        self.queue(node, p).ok_or(RemoteSendError::NotAPeer)?;
        Ok(())
    }

    /// Asks `node` to spawn `module/function` with `args` (a list) for
    /// `me`, linked and/or monitored: the request's reference; the answer
    /// comes to `me` as `[:spawn-reply ref pid]` or `[:spawn-reply ref
    /// [:error reason]]` (`:noconnection` when the node cannot be
    /// reached). With `monitor`, the reference is the monitor's too.
    /// [`RemoteSendError::Busy`] while the connection is busy (nothing
    /// sent).
    #[allow(clippy::too_many_arguments)]
    pub fn spawn_request(
        self: &Arc<Self>,
        me: Pid,
        node: &str,
        module: &str,
        function: &str,
        args: Term<'_>,
        link: bool,
        monitor: bool,
    ) -> Result<Ref, RemoteSendError> {
        if module.len() > 255 || function.len() > 255 {
            return Err(RemoteSendError::NotAPeer);
        }
        if self.busy(node) {
            return Err(RemoteSendError::Busy);
        }
        let req = Ref::new();
        let mut opts = Vec::new();
        let names: &[&str] = match (link, monitor) {
            (true, true) => &["link", "monitor"],
            (true, false) => &["link"],
            (false, true) => &["monitor"],
            (false, false) => &[],
        };
        wire::put::atom_list(&mut opts, names);
        let ctl = wire::Control::SpawnRequest {
            req: &self.ref_bytes(req.to_bits()),
            from: self.wire_pid(me),
            group_leader: &self.pid_bytes(me),
            module,
            function,
            arity: args.list_iter().count() as i64,
            opts: &opts,
            args: &[],
        };
        let mut p = Vec::new();
        let at = ctl.open(&mut p);
        lona_term::etf::encode_node_into(&mut p, args, &self.etf_node())
            .map_err(RemoteSendError::Encode)?;
        wire::put::finish(&mut p, at);
        // The entry first, then the connection (see `forget`).
        self.spawns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(req.to_bits(), (me, node.to_string()));
        if self.queue(node, p).is_none() {
            self.fail_spawn(req.to_bits());
        }
        Ok(req)
    }

    /// Fails spawn request `r` with `:noconnection` (unless answered).
    fn fail_spawn(&self, r: u64) {
        let p = self
            .spawns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&r);
        if let Some((p, _)) = p {
            let heap = lona_term::Heap::new();
            let err = heap.vector(&[lona_term::kw!("error"), lona_term::kw!("noconnection")]);
            let msg = heap.vector(&[lona_term::kw!("spawn-reply"), heap.reference(r), err]);
            self.handle.send(p, Fragment::new(msg));
        }
    }

    /// Takes our spawn request `r` (answered now): its requester.
    pub(crate) fn take_spawn(&self, r: u64) -> Option<Pid> {
        self.spawns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&r)
            .map(|(p, _)| p)
    }

    /// Records a monitor of ours on another node's process, made by a
    /// spawn request (`mref` is the request's reference).
    pub(crate) fn add_remote_monitor(
        &self,
        watcher: Pid,
        node: &str,
        mref: u64,
        target: Term<'_>,
        wire_target: Vec<u8>,
    ) {
        self.remote_mons
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                mref,
                RemoteMon {
                    watcher,
                    node: node.to_string(),
                    target: Fragment::new(target),
                    wire_target,
                },
            );
    }

    /// The node's environment, while it lives.
    pub(crate) fn env(&self) -> Option<Arc<Env>> {
        self.env.upgrade()
    }

    /// `(monitor-node node true)`: `watcher` gets `[:nodedown node]` when
    /// the connection to `node` goes (connecting first if need be; at once
    /// if it cannot be a peer).
    pub fn monitor_node(self: &Arc<Self>, watcher: Pid, node: &str) {
        self.node_watchers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(node.to_string())
            .or_default()
            .push(watcher);
        if self.writer_for(node).is_none() {
            self.node_down(node);
        }
    }

    /// `(monitor-node node false)`: one subscription of `watcher` less.
    pub fn demonitor_node(&self, watcher: Pid, node: &str) {
        let mut ws = self.node_watchers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = ws.get_mut(node) {
            if let Some(i) = v.iter().position(|p| *p == watcher) {
                v.swap_remove(i);
            }
        }
    }
}
