//! The example servers, end to end on 127.0.0.1: the echo servers, `lona
//! bench echo-server 0` (the Rust API) and `lona run bench/lonala/echo.lona
//! 0` (Lonala), which must print `echo listening port=PORT`, then echo
//! every connection, many at once, until killed; and the chat server of
//! `examples/chat.lona`; the HTTP servers, `lona bench http-server 0` and
//! `examples/http.lona`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `lona ARGS...` and reads the port from its first line,
/// `WHAT listening port=PORT`.
fn start(args: &[&str]) -> (Server, u16) {
    start_as("echo", args)
}

fn start_as(what: &str, args: &[&str]) -> (Server, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lona"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix(&format!("{what} listening port="))
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .parse()
        .unwrap();
    (Server(child), port)
}

/// 50 clients at once, each 20 round trips of different sizes (up to
/// 100 KB, so reads and writes come in parts), then one that sends and
/// disconnects mid-stream; the server keeps serving.
fn exercise(port: u16) {
    let clients: Vec<_> = (0..50)
        .map(|c| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                for m in 0..20usize {
                    let len = 1 + (c * 977 + m * 5003) % 100_000;
                    let msg: Vec<u8> = (0..len).map(|i| (i + c + m) as u8).collect();
                    s.write_all(&msg).unwrap();
                    let mut back = vec![0; len];
                    s.read_exact(&mut back).unwrap();
                    assert_eq!(back, msg, "client {c} message {m}");
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // A client that leaves mid-message.
    let mut rude = TcpStream::connect(("127.0.0.1", port)).unwrap();
    rude.write_all(&[1; 10_000]).unwrap();
    drop(rude);
    // Still serving.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"still here").unwrap();
    let mut back = [0; 10];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"still here");
}

#[test]
fn rust_api_echo_server() {
    let (_server, port) = start(&["bench", "echo-server", "0"]);
    exercise(port);
}

#[test]
fn lonala_echo_server() {
    let (_server, port) = start(&["run", "bench/lonala/echo.lona", "0"]);
    exercise(port);
}

/// Reads from `s` until `want` has arrived (lines from the chat come as
/// the room sends them).
fn expect(s: &mut TcpStream, want: &str) {
    let mut got = Vec::new();
    let mut buf = [0; 256];
    while !String::from_utf8_lossy(&got).contains(want) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed while waiting for {want:?}; got {got:?}");
        got.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn lonala_chat_server() {
    let (_server, port) = start_as("chat", &["run", "examples/chat.lona", "0"]);
    let connect = || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    };
    // Joins one at a time (each client's join reaches the room on its own
    // path): the room's welcome says the client is in.
    let join = |name: &str, others: usize| {
        let mut s = connect();
        expect(&mut s, "name? ");
        s.write_all(format!("{name}\n").as_bytes()).unwrap();
        expect(&mut s, &format!("* welcome {name}, {others} others here\n"));
        s
    };
    let mut a = join("alice", 0);
    let mut b = join("bob", 1);
    expect(&mut a, "* bob joined\n");
    let mut c = join("carol", 2);
    expect(&mut a, "* carol joined\n");
    expect(&mut b, "* carol joined\n");
    a.write_all(b"hello all\n").unwrap();
    expect(&mut b, "alice: hello all\n");
    expect(&mut c, "alice: hello all\n");
    // A client that leaves: the others hear it, and the room goes on.
    drop(b);
    expect(&mut a, "* bob left\n");
    c.write_all(b"still here\n").unwrap();
    expect(&mut a, "carol: still here\n");
}

/// Sends a raw HTTP/1.1 request and reads the response up to its body's
/// `content-length`.
fn http_get(s: &mut TcpStream, path: &str) -> String {
    s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            if got.len() >= end + 4 + len {
                return text;
            }
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed: {got:?}");
        got.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn lonala_http_example() {
    let (_server, port) = start_as("http", &["run", "examples/http.lona", "0"]);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Keep-alive: three requests on one connection.
    assert!(http_get(&mut s, "/").ends_with("\r\n\r\nhello\n"));
    let json = http_get(&mut s, "/json?name=lona");
    assert!(json.contains("content-type: application/json"), "{json}");
    assert!(
        json.ends_with("{\"hello\": \"lona\", \"method\": \"get\"}\n"),
        "{json}"
    );
    assert!(http_get(&mut s, "/elsewhere").starts_with("HTTP/1.1 404"));
}

#[test]
fn rust_api_http_server() {
    let (_server, port) = start_as("http", &["bench", "http-server", "0"]);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // What the anchors (bench/erlang/http.erl, bench/go/http_server.go)
    // answer, on any path, keep-alive.
    for path in ["/", "/anything", "/x?y=z"] {
        let resp = http_get(&mut s, path);
        assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
        assert!(resp.contains("Content-Type: text/plain\r\n"), "{resp}");
        assert!(resp.contains("content-length: 13\r\n"), "{resp}");
        assert!(resp.ends_with("\r\n\r\nHello, world!"), "{resp}");
    }
    // 50 clients at once, each with 20 pipelined requests.
    let clients: Vec<_> = (0..50)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                s.write_all(&b"GET / HTTP/1.1\r\nhost: x\r\n\r\n".repeat(20))
                    .unwrap();
                let mut got = Vec::new();
                let mut buf = [0; 4096];
                while got.windows(13).filter(|w| w == b"Hello, world!").count() < 20 {
                    let n = s.read(&mut buf).unwrap();
                    assert!(n > 0, "closed: {got:?}");
                    got.extend_from_slice(&buf[..n]);
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // Garbage is refused and closed; the server goes on.
    let mut bad = TcpStream::connect(("127.0.0.1", port)).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    bad.write_all(b"\x00\x01\x02 nonsense\r\n\r\n").unwrap();
    let mut got = String::new();
    bad.read_to_string(&mut got).unwrap();
    assert!(got.starts_with("HTTP/1.1 400 "), "{got}");
    assert!(http_get(&mut s, "/").ends_with("Hello, world!"));
}
