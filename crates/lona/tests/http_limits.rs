//! `lona.http` against hostile peers, end to end with `lona run` (issue
//! 36): a server whose response body never ends, under a limited address
//! space (`prlimit --as`, as `runaways.rs`); a server dripping a byte at a
//! time past the request's `:timeout`; and the server's acceptor running
//! out of descriptors (a low `RLIMIT_NOFILE`), which must go on accepting
//! once they are freed. The finer cases (head limits, bad status lines,
//! chunked bodies) are in `lona-vm/tests/lonala/http_test.lona`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// A client: one `lona.http/request` to 127.0.0.1:PORT with `:timeout
/// MS` (and the other limits at their defaults), printing `result R`
/// (`[:status S :body-bytes N]` or `[:raised REASON]`), then `node alive`.
const CLIENT: &str = r#"
(require '[lona.http :as http])
(defn -main [port timeout]
  (let [r (try (let [r (http/request {:url (str "http://127.0.0.1:" port "/")
                                      :timeout (parse-int timeout)})]
                 [:status (:status r) :body-bytes (byte-count (:body r))])
               (catch :error e [:raised e]))]
    (println "result" r)
    (println "node alive")))
"#;

/// A server: `lona.http/start` on 127.0.0.1, printing `http listening
/// port=PORT`, answering every request with "hello" until killed.
const SERVER: &str = r#"
(require '[lona.http :as http])
(defn -main [& args]
  (let [srv (http/start (fn [req] {:status 200 :body "hello"}) {:ip "127.0.0.1"})]
    (println (str "http listening port=" (:port srv)))
    (flush)
    (receive :never :ok)))
"#;

/// `program` in a directory of its own (removed when dropped), and its
/// path.
fn program(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("lona-http-limits-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// A one-connection server on 127.0.0.1 (a thread): reads the request
/// head, then runs `f` on the connection. Its port.
fn hostile(f: impl FnOnce(&mut TcpStream) + Send + 'static) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let mut head = Vec::new();
        let mut b = [0; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match s.read(&mut b) {
                Ok(1) => head.push(b[0]),
                _ => return,
            }
        }
        f(&mut s);
    });
    port
}

/// Waits for `child` up to `limit`, killing it then; its output, and
/// whether it ended by itself.
fn wait_at_most(mut child: Child, limit: Duration) -> (Output, bool) {
    let start = Instant::now();
    let ended = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (child.wait_with_output().unwrap(), ended)
}

/// `CLIENT` against `port` with `timeout` ms, under `prlimit
/// --as=512MiB`, killed after `limit`: its stdout. `None` (with a
/// message) when util-linux's `prlimit` is not on this machine.
fn run_client(port: u16, timeout: u64, limit: Duration) -> Option<String> {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is not installed");
        return None;
    }
    let (_dir, path) = program("client.lona", CLIENT);
    let child = Command::new("prlimit")
        .arg(format!("--as={}", 512u64 << 20))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(&path)
        .arg(port.to_string())
        .arg(timeout.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, ended) = wait_at_most(child, limit);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        ended,
        "the client was still running after {limit:?}\n{stdout}\n{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.ends_with("node alive\n"), "{stdout}\n{stderr}");
    Some(stdout)
}

#[test]
fn a_body_without_end_is_refused_at_max_body_and_the_node_lives() {
    // `HTTP/1.1 200 OK`, no length, then 64 KB after 64 KB until the
    // client leaves: without a bound the client buffered it all and the
    // node ran out of memory (a 512 MiB address space: under a second).
    let port = hostile(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
        let chunk = vec![b'z'; 64 * 1024];
        while s.write_all(&chunk).is_ok() {}
    });
    let Some(out) = run_client(port, 30_000, Duration::from_secs(60)) else {
        return;
    };
    assert!(
        out.contains("result [:raised [:http :body-too-large]]"),
        "{out}"
    );
}

#[test]
fn a_server_dripping_a_byte_at_a_time_cannot_stretch_the_timeout() {
    // The issue's case: a byte every 1.5 s against `:timeout 2000` (each
    // read came within the timeout, so the request never ended).
    let port = hostile(|s| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
        while s.write_all(b"y").is_ok() {
            std::thread::sleep(Duration::from_millis(1500));
        }
    });
    // A guard against a hang, not a measure.
    let Some(out) = run_client(port, 2_000, Duration::from_secs(30)) else {
        return;
    };
    assert!(out.contains("result [:raised [:http :timeout]]"), "{out}");
}

/// A GET on a new connection to 127.0.0.1:`port`: the response (the
/// reason when there is none).
fn get(port: u16) -> String {
    let mut s = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => return format!("connect: {e}"),
    };
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    if let Err(e) = s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n") {
        return format!("write: {e}");
    }
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) => format!("read: {e} (after {:?})", String::from_utf8_lossy(&out)),
    }
}

/// Lines of `r` until one contains `want` (up to `limit`): whether it came.
fn wait_for_line(r: &Receiver<String>, want: &str, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match r.recv_timeout(left) {
            Ok(l) if l.contains(want) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

#[test]
fn the_acceptor_outlives_running_out_of_descriptors() {
    let (_dir, path) = program("server.lona", SERVER);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let lim = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: setrlimit is async-signal-safe, and `lim` is a copy owned
    // by the closure.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut server = Killed(cmd.spawn().expect("lona starts"));
    let mut first = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port: u16 = first
        .trim()
        .strip_prefix("http listening port=")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .parse()
        .unwrap();
    let (tx, errors) = channel();
    let stderr = server.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("server: {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    assert!(get(port).starts_with("HTTP/1.1 200"));
    // 200 connections against 64 descriptors: each one accepted holds one
    // (its process waits for a request) until accept fails with :emfile;
    // the rest wait in the listener's queue.
    let clients: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connects"))
        .collect();
    let reported = wait_for_line(&errors, "accept", Duration::from_secs(20));
    // The clients leave; their connections close and free the
    // descriptors; a new client is answered (after those queued).
    drop(clients);
    let answer = get(port);
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("hello"),
        "no answer after the descriptors were freed: {answer:?}"
    );
    assert!(reported, "no report of the failed accept on stderr");
    assert!(server.0.try_wait().unwrap().is_none(), "the server ended");
}
