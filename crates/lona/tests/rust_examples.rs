//! The Rust examples (`examples/echo.rs`, `chat.rs`, `http.rs`), end to
//! end on 127.0.0.1: each file is included as a module and its `serve`
//! run in a runtime of the test's, driven by plain blocking clients.

#[allow(dead_code)]
#[path = "../../../examples/echo.rs"]
mod echo;

#[allow(dead_code)]
#[path = "../../../examples/chat.rs"]
mod chat;

#[allow(dead_code)]
#[path = "../../../examples/http.rs"]
mod http;

use lona_runtime::io::TcpListener;
use lona_runtime::{Builder, Ctx, Runtime};
use std::future::Future;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Runs `serve` on a fresh 127.0.0.1 listener in a process of a new
/// runtime; the runtime (which stops it when dropped) and the address.
fn start<F, Fut>(serve: F) -> (Runtime, SocketAddr)
where
    F: FnOnce(Ctx, TcpListener) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let rt = Builder::default().workers(2).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.handle().spawn(move |ctx| serve(ctx, listener)).unwrap();
    (rt, addr)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

#[test]
fn echo_example() {
    let (rt, addr) = start(|ctx, l| async move { echo::serve(&ctx, l).await });
    let clients: Vec<_> = (0..50)
        .map(|c| {
            std::thread::spawn(move || {
                let mut s = connect(addr);
                for m in 0..20usize {
                    let len = 1 + (c * 977 + m * 5003) % 100_000;
                    let msg: Vec<u8> = (0..len).map(|i| (i + c + m) as u8).collect();
                    s.write_all(&msg).unwrap();
                    let mut back = vec![0; len];
                    s.read_exact(&mut back).unwrap();
                    assert_eq!(back, msg, "client {c} message {m}");
                }
                s
            })
        })
        .collect();
    let open: Vec<TcpStream> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    // A process per connection: the acceptor and 50 echoers at least.
    assert!(rt.handle().process_count() > 50);
    drop(open);
    // A client that leaves mid-message; the server goes on.
    let mut rude = connect(addr);
    rude.write_all(&[1; 10_000]).unwrap();
    drop(rude);
    let mut s = connect(addr);
    s.write_all(b"still here").unwrap();
    let mut back = [0; 10];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"still here");
}

/// Reads from `s` until `want` has arrived.
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
fn chat_example() {
    let (_rt, addr) = start(|ctx, l| async move { chat::serve(&ctx, l).await });
    // Joins one at a time: the room's welcome says the client is in.
    let join = |name: &str, others: usize| {
        let mut s = connect(addr);
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
    // Lines, also in pieces and several in one write.
    a.write_all(b"hello all\n").unwrap();
    expect(&mut b, "alice: hello all\n");
    expect(&mut c, "alice: hello all\n");
    b.write_all(b"in ").unwrap();
    b.write_all(b"pieces\nand two\n").unwrap();
    expect(&mut a, "bob: in pieces\nbob: and two\n");
    expect(&mut c, "bob: in pieces\nbob: and two\n");
    // A client that leaves: the others hear it, and the room goes on.
    drop(b);
    expect(&mut a, "* bob left\n");
    expect(&mut c, "* bob left\n");
    c.write_all(b"still here\n").unwrap();
    expect(&mut a, "carol: still here\n");
    // One that leaves before giving its name is never announced.
    drop(connect(addr));
    let _d = join("dave", 2);
    expect(&mut a, "* dave joined\n");
}

/// Sends a raw HTTP/1.1 request and reads its response, up to its body's
/// `content-length`.
fn http_get(s: &mut TcpStream, method: &str, path: &str) -> String {
    s.write_all(format!("{method} {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len: usize = text[..end]
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
fn http_example() {
    let (rt, addr) = start(|ctx, l| async move { http::serve(&ctx, l).await });
    // What examples/http.lona answers, on one keep-alive connection.
    let mut s = connect(addr);
    let hello = http_get(&mut s, "GET", "/");
    assert!(hello.starts_with("HTTP/1.1 200 OK\r\n"), "{hello}");
    assert!(hello.contains("content-type: text/plain\r\n"), "{hello}");
    assert!(hello.ends_with("\r\n\r\nhello\n"), "{hello}");
    let json = http_get(&mut s, "GET", "/json?name=lona");
    assert!(json.contains("content-type: application/json"), "{json}");
    assert!(
        json.ends_with("\r\n\r\n{\"hello\": \"lona\", \"method\": \"get\"}\n"),
        "{json}"
    );
    let json = http_get(&mut s, "POST", "/json");
    assert!(
        json.ends_with("{\"hello\": \"world\", \"method\": \"post\"}\n"),
        "{json}"
    );
    // A name that needs escaping stays valid JSON.
    let json = http_get(&mut s, "GET", "/json?name=a%22b%5C%0A");
    assert!(
        json.ends_with("{\"hello\": \"a\\\"b\\\\\\n\", \"method\": \"get\"}\n"),
        "{json}"
    );
    let missing = http_get(&mut s, "GET", "/elsewhere");
    assert!(
        missing.starts_with("HTTP/1.1 404 Not Found\r\n"),
        "{missing}"
    );
    assert!(missing.ends_with("\r\n\r\nnot found\n"), "{missing}");
    // And through the crate's own client, from a process.
    let body = rt
        .block_on(move |ctx| async move {
            let r = lona_http::get(&ctx, &format!("http://{addr}/json?name=rust")).await;
            r.unwrap().body.into_owned()
        })
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc, serde_json::json!({"hello": "rust", "method": "get"}));
}

/// The example binary `name`, built beside this test (by `cargo test`,
/// which builds the examples; built here if it is missing).
fn example_binary(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/this-test → target/<profile>/examples/<name>
    let profile = exe.parent().unwrap().parent().unwrap();
    let bin = profile.join("examples").join(name);
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build.args(["build", "-p", "lona", "--example", name]);
        if profile.file_name().is_some_and(|p| p == "release") {
            build.arg("--release");
        }
        assert!(build.status().unwrap().success(), "building {name}");
    }
    bin
}

/// Sends `GET path` on a new connection; the response's body.
fn get_body(addr: SocketAddr, path: &str) -> String {
    let mut s = connect(addr);
    let resp = http_get(&mut s, "GET", path);
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{path}: {resp}");
    resp.split_once("\r\n\r\n").unwrap().1.to_string()
}

#[test]
fn service_example() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use std::sync::{Arc, Mutex};

    let mut child = Command::new(example_binary("service"))
        .arg("0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port: u16 = line
        .trim()
        .strip_prefix("service listening port=")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));

    // /count: the counter server's numbers, one more each request.
    let counts: Vec<u64> = (0..5)
        .map(|_| get_body(addr, "/count").trim().parse().unwrap())
        .collect();
    assert_eq!(counts, vec![1, 2, 3, 4, 5]);

    // /ticks: the Lonala server, fed by the native ticker; the ticks go
    // up (waiting for the next one, however long it takes).
    let first: u64 = get_body(addr, "/ticks").trim().parse().unwrap();
    let later = loop {
        let n: u64 = get_body(addr, "/ticks").trim().parse().unwrap();
        if n > first {
            break n;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(later > first);

    // Four /slow requests (more than the runtime's workers) in flight,
    // then /count: it answers before any of them, so a waiting handler
    // holds no worker.
    let done = Arc::new(Mutex::new(Vec::new()));
    let slows: Vec<_> = (0..4)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n")
                .unwrap();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut buf = [0; 256];
                while !got.ends_with(b"slow\n") {
                    let n = s.read(&mut buf).unwrap();
                    assert!(n > 0, "closed: {got:?}");
                    got.extend_from_slice(&buf[..n]);
                }
                done.lock().unwrap().push("slow".to_string());
            })
        })
        .collect();
    let n = get_body(addr, "/count");
    done.lock().unwrap().push(format!("count {}", n.trim()));
    for s in slows {
        s.join().unwrap();
    }
    assert_eq!(
        *done.lock().unwrap(),
        vec!["count 6", "slow", "slow", "slow", "slow"]
    );

    // SIGTERM: an orderly stop and a clean exit.
    // SAFETY: kill(2) on the child's pid, which this test owns and has
    // not waited for, so the pid is not reused.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(r, 0);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{status:?}: {rest}");
    assert_eq!(rest, "stopped by SIGTERM\n");
}
