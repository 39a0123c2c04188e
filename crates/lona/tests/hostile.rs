//! Hostile peers against a Lonala server (`tests/hostile/server.lona`,
//! run by `lona run`), on 127.0.0.1: a flood at processes that do not
//! read, twenty thousand connections at once against a descriptor limit,
//! clients that leave in the middle of a packet, writes to a peer that
//! left. After each, the node is alive and serves a new client.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A running `server.lona`: its ports by behaviour, and the lines it
/// prints after the first.
struct Server {
    child: Child,
    ports: HashMap<String, u16>,
    lines: Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the server; with `nofile`, its descriptor limit (soft and
/// hard) is lowered to that before it runs.
fn start(nofile: Option<u64>) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.args(["run", "crates/lona/tests/hostile/server.lona"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(n) = nofile {
        let lim = libc::rlimit {
            rlim_cur: n,
            rlim_max: n,
        };
        // SAFETY: setrlimit is async-signal-safe, and `lim` is a copy
        // owned by the closure.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("lona starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    out.read_line(&mut first).expect("first line");
    let ports = first
        .trim()
        .strip_prefix("hostile listening ")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("name=port");
            (k.to_string(), v.parse().expect("a port"))
        })
        .collect();
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in out.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Server {
        child,
        ports,
        lines,
    }
}

impl Server {
    fn port(&self, name: &str) -> u16 {
        self.ports[name]
    }

    /// Waits (up to 30 s) for the server to print `want`.
    fn expect_line(&self, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l == want => return,
                Ok(l) => seen.push(l),
                Err(_) => break,
            }
        }
        panic!("the server never printed {want:?}; it printed {seen:?}");
    }

    fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().expect("try_wait").is_none(),
            "the server died"
        );
    }

    /// The server's resident memory, in bytes.
    fn rss(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse().ok())
            .expect("VmRSS");
        kb * 1024
    }

    /// A new client's round trip through the echo listener.
    fn echo_round_trip(&mut self, msg: &[u8]) {
        self.round_trip("echo", msg);
    }

    /// A new client's round trip through the echo listener `name`.
    fn round_trip(&mut self, name: &str, msg: &[u8]) {
        let mut s = client(self.port(name));
        s.write_all(msg).unwrap();
        let mut back = vec![0; msg.len()];
        s.read_exact(&mut back).unwrap();
        assert_eq!(back, msg);
        self.assert_alive();
    }
}

fn client(port: u16) -> TcpStream {
    let s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// Writes up to `total` bytes to `s` until a write has waited a second
/// for room (the peer takes no more); the bytes written.
fn flood(s: &mut TcpStream, total: usize) -> usize {
    s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    let mut sent = 0;
    while sent < total {
        match s.write(&chunk) {
            Ok(n) => sent += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
            Err(e) => panic!("flood: {e}"),
        }
    }
    sent
}

const MB: usize = 1024 * 1024;

#[test]
fn a_flood_at_processes_that_do_not_read_leaves_the_node_bounded() {
    let mut server = start(None);
    server.echo_round_trip(b"warm up");
    let before = server.rss();
    let mut floods = Vec::new();
    // A passive socket never read, an :active :once socket whose owner
    // never receives, and an echo whose client never reads the echo (the
    // server's send waits, so it stops reading).
    for name in ["hold", "once", "echo"] {
        let mut s = client(server.port(name));
        let sent = flood(&mut s, 100 * MB);
        eprintln!(
            "{name}: {} KB went in before the peer stopped taking",
            sent / 1024
        );
        assert!(
            sent < 100 * MB,
            "{name}: all 100 MB went in: the node buffered them"
        );
        floods.push(s);
    }
    let grown = server.rss().saturating_sub(before);
    eprintln!("the node grew by {} KB", grown / 1024);
    assert!(
        grown < 64 * MB as u64,
        "the node grew by {} MB",
        grown / MB as u64
    );
    // It serves others meanwhile, and after the flooders leave.
    server.echo_round_trip(b"still serving");
    drop(floods);
    server.echo_round_trip(b"and after");
}

/// The descriptor limit of this test process raised (to its hard limit,
/// or past it when privileged) towards `want`; the limit it got.
fn raise_fd_limit(want: u64) -> u64 {
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on local structs.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut cur), 0);
        if cur.rlim_cur >= want {
            return cur.rlim_cur;
        }
        let past = libc::rlimit {
            rlim_cur: want,
            rlim_max: want.max(cur.rlim_max),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &past) == 0 {
            return want;
        }
        let hard = libc::rlimit {
            rlim_cur: cur.rlim_max,
            rlim_max: cur.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &hard), 0);
        cur.rlim_max
    }
}

/// Starts a connection to 127.0.0.1:`port` without waiting for it; `None`
/// if the system refuses (no descriptor, no local port).
fn connect_nonblocking(port: u16) -> Option<OwnedFd> {
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: a new descriptor owned at once by an OwnedFd; `addr` is a
    // valid sockaddr_in of the length given.
    unsafe {
        let fd = libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return None;
        }
        let fd = OwnedFd::from_raw_fd(fd);
        let r = libc::connect(
            fd.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        let ok =
            r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EINPROGRESS);
        ok.then_some(fd)
    }
}

/// Connection attempts per helper process, four of them (each needs that
/// many descriptors, under the usual limits).
const PER_HELPER: usize = 5_000;

/// Not a test: the client side of
/// `twenty_thousand_connections_at_once_against_a_descriptor_limit`, run
/// by it in processes of their own (this binary again, with
/// `HOSTILE_CONNECT=PORT`), so that no one process needs twenty thousand
/// descriptors. Starts `PER_HELPER` connections without waiting for
/// them, prints `attempts N`, and holds them until its stdin closes.
#[test]
#[ignore = "a helper process of the twenty-thousand-connections test"]
fn connect_helper() {
    let Ok(port) = std::env::var("HOSTILE_CONNECT") else {
        return;
    };
    let port: u16 = port.parse().expect("a port");
    raise_fd_limit(PER_HELPER as u64 + 64);
    let fds: Vec<OwnedFd> = (0..PER_HELPER)
        .filter_map(|_| connect_nonblocking(port))
        .collect();
    println!("attempts {}", fds.len());
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(fds);
}

/// A helper process holding `PER_HELPER` connection attempts; they end
/// when it is dropped.
struct Helper(Child, BufReader<std::process::ChildStdout>);

impl Drop for Helper {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        // What the test harness prints at its end.
        let _ = self.1.read_to_end(&mut Vec::new());
        let _ = self.0.wait();
    }
}

/// Starts a helper; the attempts it made.
fn helper(port: u16) -> (Helper, usize) {
    let mut child = Command::new(std::env::current_exe().expect("this test binary"))
        .args(["connect_helper", "--exact", "--ignored", "--nocapture"])
        .env("HOSTILE_CONNECT", port.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("helper starts");
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut helper = Helper(child, out);
    let mut line = String::new();
    while helper.1.read_line(&mut line).expect("helper output") > 0 {
        if let Some(n) = line.trim().strip_prefix("attempts ") {
            let n = n.parse().expect("a count");
            return (helper, n);
        }
        line.clear();
    }
    panic!("the helper ended without saying how many attempts it made");
}

#[test]
fn twenty_thousand_connections_at_once_against_a_descriptor_limit() {
    // The server may hold 256 descriptors.
    let mut server = start(Some(256));
    server.echo_round_trip(b"before");
    // A helper per listening port (see `storm0` in server.lona).
    let helpers: Vec<(Helper, usize)> = (0..4)
        .map(|i| helper(server.port(&format!("storm{i}"))))
        .collect();
    let attempts: usize = helpers.iter().map(|(_, n)| n).sum();
    eprintln!("{attempts} connection attempts at once");
    // Fewer only where the helpers' descriptor limit is under PER_HELPER.
    assert!(attempts > 10_000, "{attempts} attempts");
    // The acceptor runs out of descriptors: `tcp/accept` raises :emfile,
    // which it catches (and prints), and it goes on.
    server.expect_line("accept error :emfile");
    server.assert_alive();
    // The clients leave: their connections end, the server's processes
    // close them, and a new client is served (after what was queued).
    drop(helpers);
    server.echo_round_trip(b"after the storm");
    server.round_trip("storm0", b"where the storm was");
}

#[test]
fn clients_leaving_in_the_middle_of_a_packet() {
    let mut server = start(None);
    let port = server.port("framed");
    // A header announcing 1,000 bytes, 10 of them, and gone.
    let mut s = client(port);
    s.write_all(&[0, 0, 3, 232]).unwrap();
    s.write_all(&[1; 10]).unwrap();
    drop(s);
    server.expect_line("framed ended :closed");
    // Half a header.
    let mut s = client(port);
    s.write_all(&[0, 0]).unwrap();
    drop(s);
    server.expect_line("framed ended :closed");
    // A header announcing 100 MB (past :packet-size): refused at once,
    // before any of it is buffered, and the server closes.
    let mut s = client(port);
    s.write_all(&(100 * MB as u32).to_be_bytes()).unwrap();
    let _ = s.write_all(&[2; 64 * 1024]);
    server.expect_line("framed ended :emsgsize");
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{} bytes came back", rest.len());
    // A well-behaved client is served.
    let mut s = client(port);
    s.write_all(&[0, 0, 0, 5]).unwrap();
    s.write_all(b"hello").unwrap();
    let mut back = [0; 9];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"\0\0\0\x05hello");
    server.assert_alive();
}

#[test]
fn writing_to_a_peer_that_left_gives_closed() {
    let mut server = start(None);
    let mut s = client(server.port("late"));
    s.write_all(b"x").unwrap();
    drop(s);
    // The first sends may go into the kernel's buffer; then the peer's
    // reset makes one fail: `[:error :closed]`, as Erlang's gen_tcp.
    server.expect_line("late send [:error :closed]");
    server.expect_line("late close :ok");
    server.echo_round_trip(b"still serving");
}
