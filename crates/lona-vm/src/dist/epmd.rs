//! Erlang's port mapper daemon: where a node says which port it listens
//! on, and asks where another node listens. `epmd` itself is Erlang's
//! (`erlang-base`); its two requests are `erl_dist::epmd`'s.
//!
//! 1. [`ensure_running`]: a node that starts distribution with no `epmd`
//!    on 127.0.0.1:4369 starts `epmd -daemon`, as `erl` does.
//! 2. [`register`]: `ALIVE2_REQ` with our name and port; `epmd` answers
//!    with our *creation* (which tells this incarnation's pids from an
//!    earlier one's) and keeps us registered while the connection stays
//!    open, so the node holds it until it stops.
//! 3. [`port_of`]: `PORT2_REQ` when a process first sends to a node: the
//!    port that node's distribution listens on.

use std::io;
use std::net::{SocketAddr, TcpStream as StdStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use erl_dist::epmd::{EpmdClient, NodeEntry, DEFAULT_EPMD_PORT};
use futures::io::AllowStdIo;

/// The port `epmd` listens on: `ERL_EPMD_PORT`, or 4369.
pub fn epmd_port() -> u16 {
    std::env::var("ERL_EPMD_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_EPMD_PORT)
}

fn local_epmd() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], epmd_port()))
}

/// Makes sure an `epmd` answers on this host, starting `epmd -daemon`
/// when none does.
pub fn ensure_running() -> Result<(), super::StartError> {
    use super::StartError;
    if StdStream::connect_timeout(&local_epmd(), Duration::from_secs(1)).is_ok() {
        return Ok(());
    }
    let status = std::process::Command::new("epmd")
        .arg("-daemon")
        .stdin(std::process::Stdio::null())
        .status()
        .map_err(|e| StartError::NoEpmd(epmd_port(), e))?;
    if !status.success() {
        return Err(StartError::EpmdFailed(status));
    }
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if StdStream::connect_timeout(&local_epmd(), Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(StartError::EpmdSilent)
}

/// Registers `name` (the part before `@`) as listening on `port`: the
/// open connection that keeps the registration, and our creation.
pub fn register(name: &str, port: u16) -> Result<(StdStream, u32), super::StartError> {
    use super::StartError;
    let s = StdStream::connect_timeout(&local_epmd(), Duration::from_secs(5))
        .map_err(StartError::EpmdUnreachable)?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let client = EpmdClient::new(AllowStdIo::new(s));
    let (s, creation) = futures::executor::block_on(client.register(NodeEntry::new(name, port)))
        .map_err(|e| match e {
            erl_dist::epmd::EpmdError::RegisterNodeError { .. } => {
                StartError::NameInUse(name.to_string())
            }
            e => StartError::EpmdRefused(name.to_string(), e.to_string()),
        })?;
    let s = s.into_inner();
    s.set_read_timeout(None).ok();
    Ok((s, creation.get()))
}

/// The address of `host`, for connecting to a node there: 127.0.0.1 for
/// this host's own names (a node here listens on loopback by default).
pub fn resolve(host: &str, own_host: &str) -> io::Result<std::net::IpAddr> {
    if host == own_host || host == "localhost" {
        return Ok([127, 0, 0, 1].into());
    }
    (host, 0)
        .to_socket_addrs()?
        .find(|a| a.is_ipv4())
        .map(|a| a.ip())
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no address for {host}")))
}

/// The distribution port of node `name` on `ip`, from that host's `epmd`
/// (`None`: no such node there). Waits in the calling process.
pub async fn port_of(ip: std::net::IpAddr, name: &str) -> io::Result<Option<u16>> {
    let s = lona_runtime::io::TcpStream::connect(SocketAddr::new(ip, epmd_port())).await?;
    let entry = EpmdClient::new(s)
        .get_node(name)
        .await
        .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(entry.map(|e| e.port))
}
