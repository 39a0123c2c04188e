//! What the distribution tests share (`dist.rs`, against Erlang and
//! between Lona nodes; `dist_peers.rs` and `dist_stuck.rs`, raw peers
//! that misbehave): nodes started as child processes, epmd, the handshake
//! written by hand, and raw packets.
// Each test binary uses part of it.
#![allow(dead_code, unused_imports)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn erl_available() -> bool {
    let ok = Command::new("erl")
        .args(["-noshell", "-eval", "halt()."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: `erl` is not installed (apt-get install -y erlang-base)");
    }
    ok && epmd_available()
}

/// Whether a node can register: an `epmd` answers, or one can be started.
pub fn epmd_available() -> bool {
    let ok = TcpStream::connect(("127.0.0.1", 4369)).is_ok()
        || Command::new("epmd")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
    if !ok {
        eprintln!("skipped: no `epmd` (apt-get install -y erlang-base)");
    }
    ok
}

/// This host's short name, as `lona run --sname` and `erl -sname` take it.
pub fn host() -> String {
    let h = Command::new("hostname")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .filter(|s| !s.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_else(|| "localhost".into());
    h.trim().split('.').next().unwrap().to_string()
}

/// A node name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A directory for one test's files (a cookie, a home), removed when the
/// returned guard is dropped.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("lona-dist-")
        .tempdir()
        .unwrap()
}

/// A running node (`lona` or `erl`): its stdout lines, its stderr text.
pub struct Node {
    pub child: Child,
    pub lines: Receiver<String>,
    pub err: Arc<Mutex<String>>,
    /// The thread reading standard error, joined once the node ended
    /// (`wait`), so that all it wrote is in `err`.
    pub err_reader: Option<std::thread::JoinHandle<()>>,
    /// The program's directory, if the test made one (removed with the
    /// node).
    pub dir: Option<tempfile::TempDir>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    pub fn spawn(mut cmd: Command) -> Node {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("node starts");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut errp = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let e2 = err.clone();
        let err_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = errp.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e2.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Node {
            child,
            lines,
            err,
            err_reader: Some(err_reader),
            dir: None,
        }
    }

    /// A Lonala program `src` on a node named `name`.
    pub fn lona(name: &str, cookie: &str, src: &str) -> Node {
        let dir = scratch();
        let file = dir.path().join("main.lona");
        std::fs::write(&file, src).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
        cmd.arg("run")
            .arg(&file)
            .args(["--sname", name, "--cookie", cookie]);
        let mut node = Node::spawn(cmd);
        node.dir = Some(dir);
        node
    }

    /// An Erlang node running `eval`.
    pub fn erl(name: &str, cookie: &str, eval: &str) -> Node {
        let mut cmd = Command::new("erl");
        cmd.args([
            "-sname",
            name,
            "-setcookie",
            cookie,
            "-noshell",
            "-eval",
            eval,
        ]);
        Node::spawn(cmd)
    }

    /// The next stdout line, which must start with `prefix`.
    pub fn expect(&self, prefix: &str) -> String {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no line {prefix:?}; stderr: {}", self.stderr()));
        assert!(
            line.starts_with(prefix),
            "expected {prefix:?}, got {line:?}; stderr: {}",
            self.stderr()
        );
        line
    }

    pub fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Waits for the node to end by itself: its exit status.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // Its standard error read to the end (a test that read it
                // at once once found it empty: the reader had not run).
                // Bounded: a daemon the node started (epmd) could hold the
                // pipe open.
                if let Some(r) = self.err_reader.take() {
                    let give_up = Instant::now() + Duration::from_secs(2);
                    while !r.is_finished() && Instant::now() < give_up {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                return s;
            }
            assert!(Instant::now() < until, "the node did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The port node `name` registered with the local epmd (`PORT_PLEASE2`).
pub fn epmd_port_of(name: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", 4369)).unwrap();
    let mut req = vec![0, (1 + name.len()) as u8, 122];
    req.extend_from_slice(name.as_bytes());
    s.write_all(&req).unwrap();
    let mut resp = [0u8; 4];
    s.read_exact(&mut resp).unwrap();
    assert_eq!((resp[0], resp[1]), (119, 0), "epmd knows {name}");
    u16::from_be_bytes([resp[2], resp[3]])
}

/// Sends `:go` to the process registered as `main` on node `l`, from a
/// `lona eval` node.
pub fn send_go(l: &str, h: &str) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("eval")
        .args(["--sname", &format!("go{l}"), "--cookie", "c17"])
        .arg(format!("(send [:main :{l}@{h}] :go)"));
    let _ = cmd.status();
}

/// Writes one handshake message (a 2-byte length, then `m`).
pub fn hs_send(s: &mut TcpStream, m: &[u8]) {
    let mut pkt = (m.len() as u16).to_be_bytes().to_vec();
    pkt.extend_from_slice(m);
    s.write_all(&pkt).unwrap();
}

/// Reads one handshake message (`None`: the node closed the connection).
pub fn hs_recv(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    s.read_exact(&mut len).ok()?;
    let mut m = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut m).ok()?;
    Some(m)
}

/// Sends the name message of handshake version 6 (the flags a Lona or OTP
/// 25 node sends), naming this side `name`.
pub fn send_name(s: &mut TcpStream, name: &str) {
    let flags: u64 = 0x1_0000_0000 | 0x0100_0000 | 0x0004_0000 | 0x0001_0000 | 0x3_07_84;
    let mut m = vec![b'N'];
    m.extend_from_slice(&flags.to_be_bytes());
    m.extend_from_slice(&7u32.to_be_bytes());
    m.extend_from_slice(&(name.len() as u16).to_be_bytes());
    m.extend_from_slice(name.as_bytes());
    hs_send(s, &m);
}

/// Completes the handshake with Lona node `lona` (at `port`, cookie
/// `cookie`) as node `me`, byte by byte (version 6, pass-through packets):
/// the connected stream.
pub fn fake_peer_connect(port: u16, me: &str, cookie: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A hang guard only: every answer comes at once.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    send_name(&mut s, me);
    assert_eq!(hs_recv(&mut s).expect("a status"), b"sok");
    let ch = hs_recv(&mut s).expect("the node's challenge");
    assert_eq!(ch[0], b'N', "{ch:?}");
    let challenge = u32::from_be_bytes(ch[9..13].try_into().unwrap());
    let digest = md5::compute(format!("{cookie}{challenge}"));
    let mut reply = vec![b'r'];
    reply.extend_from_slice(&42u32.to_be_bytes());
    reply.extend_from_slice(&digest.0);
    hs_send(&mut s, &reply);
    let ack = hs_recv(&mut s).expect("the node's ack");
    assert_eq!(ack[0], b'a', "{ack:?}");
    s
}

/// A pass-through packet from the fake peer `fake`: `REG_SEND` to
/// `name` of `[tag pid]` (`{tag, Pid}`), `pid` a process of `fake`.
pub fn fake_reg_send(fake: &str, name: &str, tag: &str) -> Vec<u8> {
    let atom = |v: &mut Vec<u8>, a: &str| {
        v.extend_from_slice(&[119, a.len() as u8]);
        v.extend_from_slice(a.as_bytes());
    };
    let pid = |v: &mut Vec<u8>| {
        v.push(88);
        atom(v, fake);
        v.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1]);
    };
    let mut b = vec![112, 131, 104, 4, 97, 6];
    pid(&mut b);
    atom(&mut b, "");
    atom(&mut b, name);
    b.extend_from_slice(&[131, 104, 2]);
    atom(&mut b, tag);
    pid(&mut b);
    let mut p = (b.len() as u32).to_be_bytes().to_vec();
    p.extend_from_slice(&b);
    p
}

/// ETF for raw packets: an atom (`SMALL_ATOM_UTF8_EXT`).
pub fn etf_atom(v: &mut Vec<u8>, a: &str) {
    v.extend_from_slice(&[119, a.len() as u8]);
    v.extend_from_slice(a.as_bytes());
}

/// ETF: process `id` of node `node` (`NEW_PID_EXT`, serial 0, creation 1).
pub fn etf_pid(v: &mut Vec<u8>, node: &str, id: u32) {
    etf_pid_of(v, node, id, 0, 1);
}

/// ETF: process `id`, `serial`, `creation` of node `node` (`NEW_PID_EXT`).
pub fn etf_pid_of(v: &mut Vec<u8>, node: &str, id: u32, serial: u32, creation: u32) {
    v.push(88);
    etf_atom(v, node);
    v.extend_from_slice(&id.to_be_bytes());
    v.extend_from_slice(&serial.to_be_bytes());
    v.extend_from_slice(&creation.to_be_bytes());
}

/// ETF: reference `id` of node `node` (`NEWER_REFERENCE_EXT`, one word).
pub fn etf_ref(v: &mut Vec<u8>, node: &str, id: u32) {
    v.extend_from_slice(&[90, 0, 1]);
    etf_atom(v, node);
    v.extend_from_slice(&[0, 0, 0, 1]);
    v.extend_from_slice(&id.to_be_bytes());
}

/// `body` with its 4-byte length before it.
pub fn framed(body: Vec<u8>) -> Vec<u8> {
    let mut p = (body.len() as u32).to_be_bytes().to_vec();
    p.extend_from_slice(&body);
    p
}

/// Reads one packet the node sent (ticks skipped): its bytes.
pub fn read_packet(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    loop {
        let mut len = [0u8; 4];
        s.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        if len == 0 {
            continue;
        }
        let mut p = vec![0u8; len];
        s.read_exact(&mut p)?;
        return Ok(p);
    }
}

/// Sets the socket's receive buffer small (the kernel's smallest, about
/// 2 KB): what the node writes there stops after a little.
pub fn small_rcvbuf(s: &TcpStream) {
    let small: libc::c_int = 4096;
    // SAFETY: setsockopt on a socket this test owns, with a c_int option
    // value of the size given.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// A native node with a fake peer connected to it by hand (the handshake
/// done, nothing read since): what [`native_with_fake_peer`] made.
pub struct FakePeer {
    pub rt: lona_runtime::Runtime,
    pub d: Arc<lona_vm::dist::Dist>,
    /// The peer's socket.
    pub s: TcpStream,
    /// The peer's name, `{prefix}{unique}@host`.
    pub fake: String,
}

/// Starts a native node named after `unique("rust")` with cookie
/// `cookie` (and what `tune` sets in its configuration), connects a fake
/// peer called `{prefix}...@host` to it, and waits until the node has the
/// peer up.
pub fn native_with_fake_peer(
    prefix: &str,
    cookie: &str,
    tune: impl FnOnce(&mut lona_vm::dist::Config),
) -> FakePeer {
    let (r, h) = (unique("rust"), host());
    let fake = format!("{prefix}{r}@{h}");
    let rt = lona_runtime::Runtime::new().unwrap();
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some(cookie.into());
    tune(&mut cfg);
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let s = fake_peer_connect(d.port(), &fake, cookie);
    let until = Instant::now() + Duration::from_secs(20);
    while d.state(&fake) != Some(true) {
        assert!(Instant::now() < until, "the fake peer never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    FakePeer { rt, d, s, fake }
}
