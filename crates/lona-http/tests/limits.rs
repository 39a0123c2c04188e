//! The acceptor at the node's limits: out of file descriptors (`accept`
//! fails with `EMFILE`) and at the process limit (the connection cannot
//! get a process). Either way it reports it, waits, goes on, and serves
//! again once the limit is no longer reached. And how a handler's panic
//! is reported: by the runtime, as the crash of the connection's process.
//! Its own test binary: it uses up this process's descriptors, and it
//! installs a logger to see the reports; the tests run one at a time.

use lona_http::{HttpServer, Request, Response};
use lona_runtime::io::TcpListener;
use lona_runtime::Builder;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;
use std::time::Duration;

/// What the server and the runtime reported (`log`, targets `lona::http`
/// and `lona::crash`).
static REPORTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Recorder;
impl log::Log for Recorder {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == "lona::http" || m.target() == "lona::crash"
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            lock(&REPORTS).push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> std::sync::MutexGuard<'static, ()> {
    let g = lock(&SERIAL);
    if log::set_logger(&Recorder).is_ok() {
        log::set_max_level(log::LevelFilter::Error);
    }
    lock(&REPORTS).clear();
    g
}

fn wait_for_report(what: &str) {
    for _ in 0..4000 {
        if lock(&REPORTS).iter().any(|r| r.contains(what)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no report containing {what:?}: {:?}", lock(&REPORTS));
}

fn hello(req: Request) -> Response {
    if req.path == "/panic" {
        panic!("asked to panic");
    }
    Response::text(format!("hello {}\n", req.path))
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// One request on `s`; what comes back until the server closes (nothing
/// if it closed unanswered: a write or read may then fail).
fn get_closing(s: &mut TcpStream, path: &str) -> String {
    let req = format!("GET {path} HTTP/1.1\r\nconnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    let mut got = Vec::new();
    let mut buf = [0; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("{e}"),
        }
    }
    String::from_utf8(got).unwrap()
}

#[test]
fn accepting_out_of_descriptors_waits_and_recovers() {
    let _g = setup();
    let rt = Builder::default().workers(2).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    // Clients first, while there are descriptors: the kernel completes
    // their connections in the listener's backlog.
    let mut clients: Vec<TcpStream> = (0..5).map(|_| connect(addr)).collect();
    // Use up every descriptor left, then start the server: its accepts
    // fail with EMFILE.
    let mut hog = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => hog.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(24), "{e}");
                break;
            }
        }
    }
    rt.handle()
        .spawn(move |ctx| async move { HttpServer::new().serve(&ctx, listener, hello).await })
        .unwrap();
    wait_for_report("accept: ");
    assert!(
        lock(&REPORTS).iter().any(|r| r.contains("os error 24")),
        "{:?}",
        lock(&REPORTS)
    );
    // Descriptors back: every waiting client is served.
    drop(hog);
    for (i, c) in clients.iter_mut().enumerate() {
        let got = get_closing(c, &format!("/c{i}"));
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        assert!(got.ends_with(&format!("hello /c{i}\n")), "{got}");
    }
    let got = get_closing(&mut connect(addr), "/after");
    assert!(got.ends_with("hello /after\n"), "{got}");
}

#[test]
fn at_the_process_limit_connections_are_closed_then_served_again() {
    let _g = setup();
    const LIMIT: usize = 8;
    let rt = Builder::default()
        .workers(2)
        .process_limit(LIMIT)
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.handle()
        .spawn(move |ctx| async move { HttpServer::new().serve(&ctx, listener, hello).await })
        .unwrap();
    // Keep-alive connections, each holding a process, until one cannot
    // get a process and is closed unanswered.
    let mut held = Vec::new();
    let refused = loop {
        assert!(held.len() <= LIMIT, "the process limit was never reached");
        let mut s = connect(addr);
        s.write_all(b"GET /hold HTTP/1.1\r\n\r\n").unwrap();
        let mut buf = [0; 1024];
        match s.read(&mut buf) {
            Ok(0) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break s,
            Ok(n) => {
                let got = String::from_utf8_lossy(&buf[..n]).to_string();
                assert!(got.ends_with("hello /hold\n"), "{got}");
                held.push(s);
            }
            Err(e) => panic!("{e}"),
        }
    };
    drop(refused);
    wait_for_report("closed unanswered");
    // Processes freed: served again.
    drop(held);
    let mut served = false;
    for _ in 0..2000 {
        let got = get_closing(&mut connect(addr), "/again");
        if got.ends_with("hello /again\n") {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(served, "never served again after the limit");
}

#[test]
fn a_handler_panic_is_reported_as_its_connection_process_crash() {
    let _g = setup();
    let rt = Builder::default().workers(2).build().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    rt.handle()
        .spawn(move |ctx| async move { HttpServer::new().serve(&ctx, listener, hello).await })
        .unwrap();
    let got = get_closing(&mut connect(addr), "/panic");
    assert!(
        got.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{got}"
    );
    // The runtime's crash report: the process, the panic's place and
    // message.
    wait_for_report("panicked at");
    let reports = lock(&REPORTS).clone();
    assert!(
        reports.iter().any(|r| r.starts_with("process <")
            && r.contains("crashed: panicked at")
            && r.contains("limits.rs")
            && r.ends_with("asked to panic")),
        "{reports:?}"
    );
    let got = get_closing(&mut connect(addr), "/after");
    assert!(got.ends_with("hello /after\n"), "{got}");
}
