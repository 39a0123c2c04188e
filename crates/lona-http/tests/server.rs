//! The server end to end on 127.0.0.1, through a raw client: keep-alive,
//! pipelining, bodies (by length, chunked, `expect: 100-continue`), how
//! connections close (HTTP/1.0, `connection: close`), every error a
//! client can cause (and the server serving on after it), a handler's
//! panic, and 200 connections at once.

mod common;

use common::{handler, start, start_default, Raw};
use lona_http::{HttpServer, Request, Response};
use std::io::Write;
use std::sync::{Arc, Barrier};
use std::time::Duration;

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    for i in 0..20 {
        let r = c.get(&format!("/n?i={i}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), format!("GET /n i={i}\n"));
        assert_eq!(
            r.header("connection"),
            None,
            "HTTP/1.1 keeps the connection"
        );
        assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
        assert!(r.header("date").is_some_and(|d| d.ends_with(" GMT")));
    }
    // A POST with a body, then a GET, on the same connection.
    c.send(b"POST /echo HTTP/1.1\r\nhost: t\r\ncontent-length: 5\r\n\r\nhello");
    let r = c.response();
    assert_eq!((r.status, r.text()), (200, "hello"));
    assert_eq!(r.header("x-method"), Some("POST"));
    assert_eq!(c.get("/after").text(), "GET /after -\n");
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    let mut all = Vec::new();
    for i in 0..30 {
        if i % 10 == 5 {
            all.extend_from_slice(
                format!("POST /echo HTTP/1.1\r\ncontent-length: 6\r\n\r\nbody{i:02}").as_bytes(),
            );
        } else {
            all.extend_from_slice(format!("GET /p{i} HTTP/1.1\r\nhost: t\r\n\r\n").as_bytes());
        }
    }
    // All at once, then in pieces of 7 bytes.
    c.send(&all);
    for piece in all.chunks(7) {
        c.send(piece);
    }
    for _round in 0..2 {
        for i in 0..30 {
            let r = c.response();
            assert_eq!(r.status, 200);
            if i % 10 == 5 {
                assert_eq!(r.text(), format!("body{i:02}"));
            } else {
                assert_eq!(r.text(), format!("GET /p{i} -\n"));
            }
        }
    }
    // A HEAD in the pipeline: its length is said, no body is sent.
    c.send(b"HEAD /big HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\n");
    let r = c.try_response(true).unwrap();
    assert_eq!(
        (r.status, r.header("content-length")),
        (200, Some("100000"))
    );
    assert_eq!(c.response().text(), "GET /x -\n");
}

#[test]
fn chunked_request_bodies_are_decoded() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    let req: &[u8] = b"POST /echo HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n\
        5\r\nhello\r\n1;ext=\"x\"\r\n,\r\nA \r\n world 123\r\n0\r\nx-trailer: t\r\n\r\n";
    c.send(req);
    let r = c.response();
    assert_eq!((r.status, r.text()), (200, "hello, world 123"));
    // The same, a byte at a time.
    for b in req {
        c.send(&[*b]);
    }
    assert_eq!(c.response().text(), "hello, world 123");
    // Empty, and large chunks (several reads each).
    c.send(b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n");
    assert_eq!(c.response().body, b"");
    let chunk = vec![b'z'; 300_000];
    c.send(b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n493e0\r\n");
    c.send(&chunk);
    c.send(b"\r\n493e0\r\n");
    c.send(&chunk);
    c.send(b"\r\n0\r\n\r\n");
    let r = c.response();
    assert_eq!(r.body.len(), 600_000);
    assert!(r.body.iter().all(|&b| b == b'z'));
    // Still the same connection.
    assert_eq!(c.get("/").status, 200);
}

#[test]
fn malformed_chunked_bodies_are_refused() {
    let srv = start_default();
    for bad in [
        &b"zz\r\nhello\r\n0\r\n\r\n"[..],          // not hex
        b"5\r\nhelloXX0\r\n\r\n",                  // no CRLF after the data
        b"fffffffffffffffff\r\n",                  // too many digits
        b"5\r\nhello\r\n0\r\nbad trailer\r\n\r\n", // not a header line
    ] {
        let mut c = Raw::connect(srv.addr);
        c.send(b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n");
        c.send(bad);
        let r = c.response();
        assert_eq!(r.status, 400, "{:?}", String::from_utf8_lossy(bad));
        assert_eq!(r.header("connection"), Some("close"));
        assert!(c.closed());
    }
    // Chunks adding up past the limit: 413.
    let srv = start(HttpServer::new().max_body_bytes(1000), handler);
    let mut c = Raw::connect(srv.addr);
    c.send(b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n");
    for _ in 0..3 {
        c.send(b"190\r\n");
        c.send(&[b'a'; 400]);
        c.send(b"\r\n");
    }
    assert_eq!(c.response().status, 413);
    assert!(c.closed());
}

#[test]
fn connection_close_closes_after_the_response() {
    let srv = start_default();
    // Asked by the client.
    let mut c = Raw::connect(srv.addr);
    c.send(b"GET /a HTTP/1.1\r\nconnection: Close\r\n\r\n");
    let r = c.response();
    assert_eq!((r.status, r.header("connection")), (200, Some("close")));
    assert!(c.closed());
    // Asked by the handler.
    let mut c = Raw::connect(srv.addr);
    let r = c.get("/close");
    assert_eq!((r.text(), r.header("connection")), ("bye\n", Some("close")));
    assert!(c.closed());
    // A request pipelined after a close is not answered.
    let mut c = Raw::connect(srv.addr);
    c.send(b"GET /a HTTP/1.1\r\nconnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
    assert_eq!(c.response().text(), "GET /a -\n");
    assert!(c.closed());
}

#[test]
fn http_1_0_closes_unless_asked_to_keep_alive() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    c.send(b"GET /old HTTP/1.0\r\n\r\n");
    let r = c.response();
    assert_eq!((r.status, r.text()), (200, "GET /old -\n"));
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
    // keep-alive asked for: kept, and said so.
    let mut c = Raw::connect(srv.addr);
    for _ in 0..3 {
        c.send(b"GET /ka HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let r = c.response();
        assert_eq!(
            (r.text(), r.header("connection")),
            ("GET /ka -\n", Some("keep-alive"))
        );
    }
    // A transfer-encoding in HTTP/1.0 is faulty framing.
    c.send(b"POST /echo HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n");
    assert_eq!(c.response().status, 400);
    assert!(c.closed());
}

/// Sends `bytes` on a fresh connection; the status of the answer, after
/// which the server must have closed.
fn refused(addr: std::net::SocketAddr, bytes: &[u8]) -> u16 {
    let mut c = Raw::connect(addr);
    c.send(bytes);
    let r = c.response();
    assert_eq!(r.header("connection"), Some("close"), "{r:?}");
    assert!(c.closed(), "the connection stays open after {}", r.status);
    r.status
}

#[test]
fn garbage_and_bad_framing_get_400_and_a_close() {
    let srv = start_default();
    let a = srv.addr;
    assert_eq!(
        refused(
            a,
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n"
        ),
        400
    );
    assert_eq!(refused(a, b"GET / HTTP/1.1\r\nbad header\r\n\r\n"), 400);
    assert_eq!(refused(a, b"GET / HTTP/9.9\r\n\r\n"), 400);
    assert_eq!(refused(a, b"GET /\x7f HTTP/1.1\r\n\r\n"), 400);
    assert_eq!(
        refused(a, b"POST / HTTP/1.1\r\ncontent-length: -3\r\n\r\n"),
        400
    );
    assert_eq!(
        refused(
            a,
            b"POST / HTTP/1.1\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\n"
        ),
        400
    );
    let smuggle = b"POST / HTTP/1.1\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n";
    assert_eq!(refused(a, smuggle), 400);
    assert_eq!(
        refused(a, b"POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n"),
        501
    );
    assert_eq!(
        refused(
            a,
            b"POST / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n"
        ),
        501
    );
    assert_eq!(refused(a, b"POST / HTTP/1.1\r\nexpect: tea\r\n\r\n"), 417);
    let many = format!("GET / HTTP/1.1\r\n{}\r\n", "a: b\r\n".repeat(101));
    assert_eq!(refused(a, many.as_bytes()), 431);
    // Still serving.
    assert_eq!(Raw::connect(a).get("/ok").text(), "GET /ok -\n");
}

#[test]
fn a_huge_header_line_gets_431() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    // 1 MB of header line, written by another thread (the server stops
    // reading at 64 KiB; its answer comes while this is still sending).
    let mut w = c.s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let mut req = b"GET / HTTP/1.1\r\nx-big: ".to_vec();
        req.resize(req.len() + (1 << 20), b'a');
        req.extend_from_slice(b"\r\n\r\n");
        let _ = w.write_all(&req); // may fail once the server closes
    });
    let r = c.response();
    assert_eq!((r.status, r.header("connection")), (431, Some("close")));
    writer.join().unwrap();
    assert!(c.closed());
    // A head just under the limit is fine.
    let mut c = Raw::connect(srv.addr);
    let value = "v".repeat(60_000);
    c.send(format!("GET /under HTTP/1.1\r\nx-big: {value}\r\n\r\n").as_bytes());
    assert_eq!(c.response().text(), "GET /under -\n");
}

#[test]
fn a_big_content_length_gets_413_before_any_body() {
    let srv = start_default();
    // Declared past the limit: refused without waiting for the body.
    assert_eq!(
        refused(
            srv.addr,
            b"POST /echo HTTP/1.1\r\ncontent-length: 8388609\r\n\r\n"
        ),
        413
    );
    assert_eq!(
        refused(
            srv.addr,
            b"POST /echo HTTP/1.1\r\ncontent-length: 9999999999999999999\r\n\r\n"
        ),
        413
    );
    // At the limit: accepted.
    let mut c = Raw::connect(srv.addr);
    c.send(b"POST /echo HTTP/1.1\r\ncontent-length: 8388608\r\n\r\n");
    c.send(&vec![7u8; 8 << 20]);
    let r = c.response();
    assert_eq!((r.status, r.body.len()), (200, 8 << 20));
}

#[test]
fn a_declared_length_is_never_allocated_up_front() {
    // No body limit at all: a request declaring 2^62 bytes would abort the
    // test process if the server reserved what it declares. It sends 10
    // bytes and leaves; the server serves on.
    let srv = start(HttpServer::new().max_body_bytes(usize::MAX), handler);
    let mut c = Raw::connect(srv.addr);
    c.send(b"POST /echo HTTP/1.1\r\ncontent-length: 4611686018427387904\r\n\r\n0123456789");
    drop(c);
    let mut c = Raw::connect(srv.addr);
    c.send(b"POST /echo HTTP/1.1\r\ncontent-length: 4611686018427387904\r\n\r\n0123456789");
    c.s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(c.closed(), "a body that ends early is not answered");
    assert_eq!(Raw::connect(srv.addr).get("/alive").status, 200);
}

#[test]
fn clients_leaving_mid_request_do_not_stop_the_server() {
    let srv = start_default();
    let mut steady = Raw::connect(srv.addr);
    assert_eq!(steady.get("/before").status, 200);
    for partial in [
        &b"GE"[..],
        b"GET /x HTTP/1.1\r\nhost: t\r\n",
        b"POST /echo HTTP/1.1\r\ncontent-length: 100\r\n\r\nonly some",
        b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n10\r\nabc",
    ] {
        let mut c = Raw::connect(srv.addr);
        c.send(partial);
        drop(c);
        // Half-closed: the server sees the end and closes unanswered.
        let mut c = Raw::connect(srv.addr);
        c.send(partial);
        c.s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(c.closed());
    }
    // A client that leaves before reading a large answer.
    let mut c = Raw::connect(srv.addr);
    for _ in 0..50 {
        c.send(b"GET /big HTTP/1.1\r\n\r\n");
    }
    drop(c);
    assert_eq!(steady.get("/after").text(), "GET /after -\n");
    assert_eq!(Raw::connect(srv.addr).get("/new").status, 200);
}

#[test]
fn a_stalled_request_gets_408_and_an_idle_connection_is_closed() {
    let srv = start(
        HttpServer::new().idle_timeout(Duration::from_secs(1)),
        handler,
    );
    // Idle between requests: closed without a word.
    let mut c = Raw::connect(srv.addr);
    assert_eq!(c.get("/").status, 200);
    assert!(c.closed());
    // Stalled inside a head, or inside a body: 408.
    for partial in [
        &b"GET / HTTP/1.1\r\n"[..],
        b"POST /echo HTTP/1.1\r\ncontent-length: 9\r\n\r\nabc",
    ] {
        let mut c = Raw::connect(srv.addr);
        c.send(partial);
        let r = c.response();
        assert_eq!((r.status, r.header("connection")), (408, Some("close")));
        assert!(c.closed());
    }
}

#[test]
fn expect_100_continue_is_answered_before_the_body() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    c.send(b"PUT /echo HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 4\r\n\r\n");
    let interim = c.response();
    assert_eq!((interim.status, interim.body.len()), (100, 0));
    c.send(b"data");
    let r = c.response();
    assert_eq!(
        (r.status, r.text(), r.header("x-method")),
        (200, "data", Some("PUT"))
    );
    // Too large: 413 instead of 100.
    c.send(b"PUT /echo HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 999999999\r\n\r\n");
    assert_eq!(c.response().status, 413);
    assert!(c.closed());
}

#[test]
fn responses_without_bodies_and_invalid_responses() {
    let srv = start_default();
    let mut c = Raw::connect(srv.addr);
    let r = c.get("/empty");
    assert_eq!((r.status, r.header("content-length")), (204, None));
    // A header that would split the response: 500, never sent as is.
    let r = c.get("/bad-header");
    assert_eq!((r.status, r.header("x-injected")), (500, None));
    assert!(c.closed());
    assert_eq!(Raw::connect(srv.addr).get("/big").body.len(), 100_000);
}

#[test]
fn a_panicking_handler_gets_500_and_the_server_keeps_serving() {
    let srv = start_default();
    let mut other = Raw::connect(srv.addr);
    assert_eq!(other.get("/before").status, 200);
    let processes = srv.rt.handle().process_count();
    for _ in 0..5 {
        let mut c = Raw::connect(srv.addr);
        assert_eq!(c.get("/ok").status, 200);
        let r = c.get("/panic");
        assert_eq!((r.status, r.header("connection")), (500, Some("close")));
        assert!(c.closed());
    }
    // The connection process ended; the acceptor and the other connection
    // did not.
    assert_eq!(other.get("/after").text(), "GET /after -\n");
    assert_eq!(Raw::connect(srv.addr).get("/new").status, 200);
    let mut settled = false;
    for _ in 0..2000 {
        if srv.rt.handle().process_count() <= processes {
            settled = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(settled, "the panicked connections' processes ended");
}

#[test]
fn async_handlers_and_handlers_that_use_the_process() {
    struct Counter;
    impl lona_http::Handler for Counter {
        async fn call(&self, ctx: &lona_runtime::Ctx, req: Request) -> Response {
            // Talk to another process from inside the request.
            let me = ctx.pid();
            ctx.spawn(move |ctx| async move { ctx.send(me, 41u32).await })
                .await
                .unwrap();
            let n: u32 = ctx.receive().await;
            Response::text(format!("{} {}\n", req.path, n + 1))
        }
    }
    let srv = start(HttpServer::new(), Counter);
    assert_eq!(Raw::connect(srv.addr).get("/c").text(), "/c 42\n");
    let srv = start(
        HttpServer::new(),
        lona_http::Async(|req: Request| async move { Response::text(req.path) }),
    );
    assert_eq!(Raw::connect(srv.addr).get("/async").text(), "/async");
}

#[test]
fn two_hundred_connections_at_once_each_in_its_own_process() {
    const CONNS: usize = 200;
    let srv = start_default();
    let barrier = Arc::new(Barrier::new(CONNS + 1));
    let addr = srv.addr;
    let clients: Vec<_> = (0..CONNS)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut c = Raw::connect(addr);
                assert_eq!(c.get(&format!("/c{i}")).text(), format!("GET /c{i} -\n"));
                barrier.wait(); // every connection is open and served
                barrier.wait(); // counted
                for k in 0..5 {
                    let r = c.get(&format!("/c{i}?k={k}"));
                    assert_eq!(r.text(), format!("GET /c{i} k={k}\n"));
                }
            })
        })
        .collect();
    barrier.wait();
    // The acceptor, this runtime's own, and a process per connection.
    assert!(srv.rt.handle().process_count() > CONNS);
    barrier.wait();
    for c in clients {
        c.join().unwrap();
    }
}

/// `Server`, the old name of `HttpServer`, still works (deprecated).
#[test]
#[allow(deprecated)]
fn the_old_name_still_serves() {
    let old: lona_http::Server = lona_http::Server::new().max_body_bytes(1000);
    let srv = start(old, handler);
    assert_eq!(Raw::connect(srv.addr).get("/old").text(), "GET /old -\n");
}
