//! Sockets for processes: TCP and UDP that wait the way `receive` waits.
//!
//! A process that reads a socket with nothing to read is *waiting*, like
//! one in `receive`: it holds no thread, and it is queued on a worker
//! again when the socket becomes ready. One `epoll` instance
//! (`sched/reactor.rs`, on `mio`) holds every socket of the node, and an idle scheduler worker
//! waits in it instead of parking; an idle node sleeps in `epoll_wait`,
//! whatever the number of connections.
//!
//! A socket belongs to the process holding it, as an Erlang port belongs
//! to its owner: it is a plain Rust value, closed when dropped, so when
//! its process ends (normally, by a crash, a kill, or the runtime's
//! shutdown) its sockets close. Each operation costs one reduction, so a
//! process reading a fast socket is preempted like any other. Deadlines
//! come from the runtime's timers: [`Ctx::timeout`](crate::Ctx::timeout).
//!
//! The streams implement `futures-io`'s `AsyncRead`/`AsyncWrite` (and
//! tokio's, with the `tokio` feature), so protocol crates written against
//! those traits run on them.
//!
//! Files go through a small pool of blocking threads (`blocking.rs`), so
//! no scheduler worker waits on a disk: [`fs`] for whole files,
//! directories and line-by-line reading, [`spawn_blocking`] for anything
//! else that blocks.
//!
//! # Floor
//! Above the scheduler (`sched`), beside the other floors: the poll, who
//! waits in it and the readiness protocol are the scheduler's
//! (`sched/reactor.rs`: idle workers wait there); the sockets reach the
//! process they charge through `sched::polled`, never through `native`,
//! so a socket works the same in any kind of process.
//!
//! # Files
//! - `blocking.rs`: the blocking pool;
//! - `fs.rs`: files;
//! - `coop.rs`: the reduction each operation costs, and the operations
//!   of a reactor registration that wait for readiness and charge it;
//! - `tcp.rs`: [`TcpListener`], [`TcpStream`];
//! - `udp.rs`: [`UdpSocket`].

mod blocking;
pub(crate) mod coop;
pub mod fs;
mod tcp;
mod udp;

pub use blocking::{run_detached, spawn_blocking, Blocking, MAX_THREADS};
pub use tcp::{TcpListener, TcpStream};
pub use udp::UdpSocket;
