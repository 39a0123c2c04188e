//! Clients that ask for a large response and never read it (issue 36,
//! point 1): a `lona.http` server must hold a bounded amount per such
//! connection (not a copy of each response), keep answering others, and
//! close the stalled connections once they stay unread past its idle
//! timeout.
//!
//! Before the fix, each of these connections pinned two copies of the
//! 32 MB body (the response built as one binary, then its unsent rest
//! copied into the socket's queue): 20 of them grew the server by over a
//! gigabyte, and the connections stayed open for good.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BODY: usize = 32 << 20;
const CLIENTS: usize = 20;

const SERVER: &str = r#"
(ns slow-readers (:require [lona.http :as http]))

(defn text [n]
  (loop [s "x"] (if (< (count s) n) (recur (str s s)) (subs s 0 n))))

(def big (bytes (text 33554432)))

(defn handler [req]
  (case (:uri req)
    "/big" {:status 200 :body big}
    "/count" {:status 200 :body (str (tcp/open-count))}
    {:status 200 :body "ok"}))

(defn -main [& args]
  (let [srv (http/start handler {:ip "127.0.0.1" :idle-timeout 2000})]
    (println "http listening port=" (:port srv))
    (receive :never nil)))
"#;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The server's resident memory, from `/proc`.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// A whole response to `GET path` on a new connection: its body.
fn get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_else(|| panic!("no response: {out:?}"))
}

#[test]
fn unread_responses_are_bounded_and_time_out() {
    let dir = tempfile::Builder::new()
        .prefix("lona-slow-readers-")
        .tempdir()
        .unwrap();
    let file = dir.path().join("slow_readers.lona");
    std::fs::write(&file, SERVER).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lona"))
        .arg("run")
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let server = Server(child);
    let port: u16 = line
        .trim()
        .strip_prefix("http listening port= ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .parse()
        .unwrap();

    // One reader that reads it all: the body is whole.
    assert_eq!(get(port, "/big").len(), BODY);
    let before = rss_bytes(pid);

    // Twenty that read nothing.
    let stalled: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(s, "GET /big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
            s
        })
        .collect();
    // Let every connection get as far as it can (the kernel's buffers
    // fill, then each waits): the largest resident size over a while.
    let mut peak = 0;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(50));
        peak = peak.max(rss_bytes(pid));
    }
    let grown = peak.saturating_sub(before);
    assert!(
        grown < (CLIENTS * BODY / 4) as u64,
        "{CLIENTS} unread {BODY}-byte responses grew the server by {grown} bytes"
    );

    // Others are served meanwhile.
    assert_eq!(get(port, "/"), "ok");

    // Unread past the idle timeout (2 s): the stalled connections close,
    // leaving the listener and the connection asking.
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        let open: usize = get(port, "/count").trim().parse().unwrap();
        if open == 2 {
            break;
        }
        assert!(
            Instant::now() < give_up,
            "{open} sockets still open a minute after the clients stopped reading"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // What the stalled clients get is a response cut short, then the end.
    for mut s in stalled {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert!(got.len() < BODY, "a stalled client got the whole body");
        assert!(got.starts_with(b"HTTP/1.1 200"));
    }
    drop(server);
}
