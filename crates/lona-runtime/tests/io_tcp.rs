//! Sockets for processes (`lona_runtime::io`), on 127.0.0.1 only: echo,
//! many connections, sockets closing with their owner however it ends,
//! deadlines, preemption of a process that always has data, UDP, and the
//! errors a user can cause.

mod common;

use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use lona_runtime::io::{TcpListener, TcpStream, UdpSocket};
use lona_runtime::{Builder, Down, Elapsed, Reason, Runtime};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn rt(workers: usize) -> Runtime {
    Builder::default()
        .workers(common::more_workers(workers))
        .build()
        .unwrap()
}

fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The open file descriptors of this test process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Tests in this file count descriptors: they run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());
fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..5000 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("never: {what}");
}

/// An echo server process per connection; the listener's process
/// accepts `n` connections, then ends.
async fn echo_server(ctx: &lona_runtime::Ctx, listener: TcpListener, n: usize) {
    for _ in 0..n {
        let (conn, _) = listener.accept().await.unwrap();
        ctx.spawn(move |_| async move {
            let mut buf = vec![0u8; 4096];
            loop {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(k) => {
                        if conn.write_all(&buf[..k]).await.is_err() {
                            return;
                        }
                    }
                }
            }
        })
        .await
        .unwrap();
    }
}

#[test]
fn smoke_echo() {
    let _s = serial();
    let rt = rt(2);
    let got = rt
        .block_on(|ctx| async move {
            let listener = TcpListener::bind(any_port()).unwrap();
            let addr = listener.local_addr().unwrap();
            ctx.spawn(move |ctx| async move { echo_server(&ctx, listener, 1).await })
                .await
                .unwrap();
            let c = TcpStream::connect(addr).await.unwrap();
            c.set_nodelay(true).unwrap();
            let mut out = Vec::new();
            for i in 0..100u32 {
                let msg = format!("message {i}\n");
                c.write_all(msg.as_bytes()).await.unwrap();
                let mut buf = vec![0; msg.len()];
                c.read_exact(&mut buf).await.unwrap();
                out.push(String::from_utf8(buf).unwrap());
            }
            out
        })
        .unwrap();
    assert_eq!(got.len(), 100);
    assert_eq!(got[99], "message 99\n");
}

#[test]
fn stampede_of_connections_each_in_its_own_process() {
    let _s = serial();
    const CONNS: usize = 200;
    const MSGS: usize = 20;
    let rt = rt(2);
    let total = Arc::new(AtomicUsize::new(0));
    let t = total.clone();
    rt.block_on(move |ctx| async move {
        let listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        ctx.spawn(move |ctx| async move { echo_server(&ctx, listener, CONNS).await })
            .await
            .unwrap();
        let me = ctx.pid();
        for c in 0..CONNS {
            let t = t.clone();
            ctx.spawn(move |ctx| async move {
                let s = TcpStream::connect(addr).await.unwrap();
                for m in 0..MSGS {
                    // Sizes up to 3 KB: some writes and reads come in parts.
                    let msg = vec![(c + m) as u8; 1 + (c * 7 + m * 131) % 3000];
                    s.write_all(&msg).await.unwrap();
                    let mut back = vec![0; msg.len()];
                    s.read_exact(&mut back).await.unwrap();
                    assert_eq!(back, msg, "connection {c} message {m}");
                    t.fetch_add(1, SeqCst);
                }
                ctx.send(me, ()).await;
            })
            .await
            .unwrap();
        }
        for _ in 0..CONNS {
            ctx.receive::<()>().await;
        }
    })
    .unwrap();
    assert_eq!(total.load(SeqCst), CONNS * MSGS);
}

/// `write_all_vectored` of more than the socket takes at once: every
/// slice arrives whole and in order, however the writes split them.
#[test]
fn vectored_writes_larger_than_the_socket_arrive_whole_and_in_order() {
    let _g = serial();
    let rt = rt(2);
    let got = rt
        .block_on(|ctx| async move {
            let listener = TcpListener::bind(any_port()).unwrap();
            let addr = listener.local_addr().unwrap();
            let me = ctx.pid();
            let reader = ctx
                .spawn(move |ctx| async move {
                    let (conn, _) = listener.accept().await.unwrap();
                    let mut all = Vec::new();
                    let mut buf = vec![0u8; 1 << 16];
                    loop {
                        match conn.read(&mut buf).await.unwrap() {
                            0 => break,
                            k => all.extend_from_slice(&buf[..k]),
                        }
                    }
                    ctx.send(me, all).await;
                })
                .await
                .unwrap();
            let _ = reader;
            let conn = TcpStream::connect(addr).await.unwrap();
            // Slices of odd sizes, 9 MB in all: several system calls.
            let parts: Vec<Vec<u8>> = (0..40u32)
                .map(|i| vec![i as u8; 1 + (i as usize * 7919 + 12345) % 450_000])
                .collect();
            let mut slices: Vec<std::io::IoSlice<'_>> =
                parts.iter().map(|p| std::io::IoSlice::new(p)).collect();
            conn.write_all_vectored(&mut slices).await.unwrap();
            drop(conn);
            let all: Vec<u8> = ctx.receive().await;
            (all, parts.concat())
        })
        .unwrap();
    assert_eq!(got.0.len(), got.1.len());
    assert!(got.0 == got.1, "the bytes arrive as written");
}

#[test]
fn a_short_read_uses_up_readiness_and_the_next_edge_brings_it_back() {
    // A read that fills less than its buffer drained the socket: the next
    // try says WouldBlock (without asking the kernel), and data that comes
    // later wakes the reader: an event after the read is never lost.
    let _s = serial();
    let rt = rt(2);
    let (got, after, more) = rt
        .block_on(move |ctx| async move {
            let listener = TcpListener::bind(any_port()).unwrap();
            let addr = listener.local_addr().unwrap();
            let client = ctx
                .spawn(move |ctx| async move {
                    let c = TcpStream::connect(addr).await.unwrap();
                    c.write_all(b"0123456789").await.unwrap();
                    ctx.receive::<()>().await; // go
                    c.write_all(b"abcde").await.unwrap();
                    ctx.receive::<()>().await; // done: keep the socket till then
                })
                .await
                .unwrap();
            let (s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 64];
            let mut got = Vec::new();
            while got.len() < 10 {
                let n = s.read(&mut buf).await.unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            let after = s.try_read(&mut buf).map_err(|e| e.kind());
            ctx.send(client, ()).await;
            let mut more = Vec::new();
            while more.len() < 5 {
                let n = ctx
                    .timeout(Duration::from_secs(30), s.read(&mut buf))
                    .await
                    .expect("woken by the data sent after the short read")
                    .unwrap();
                more.extend_from_slice(&buf[..n]);
            }
            ctx.send(client, ()).await;
            (got, after, more)
        })
        .unwrap();
    assert_eq!(got, b"0123456789");
    assert_eq!(after, Err(std::io::ErrorKind::WouldBlock));
    assert_eq!(more, b"abcde");
}

#[test]
fn a_burst_of_connections_waits_in_the_backlog() {
    // 300 connections arrive while nobody accepts: with the standard
    // library's backlog of 128 the rest would wait for SYN retries (a
    // second and more each); with `DEFAULT_BACKLOG` all are queued, then
    // accepted.
    let _s = serial();
    const CONNS: usize = 300;
    let listener = TcpListener::bind(any_port()).unwrap();
    let addr = listener.local_addr().unwrap();
    let clients: Vec<std::net::TcpStream> = (0..CONNS)
        .map(|i| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("connection {i} not queued: {e}"))
        })
        .collect();
    let rt = rt(1);
    let accepted = rt
        .block_on(move |_| async move {
            let mut n = 0;
            while n < CONNS {
                listener.accept().await.unwrap();
                n += 1;
            }
            n
        })
        .unwrap();
    assert_eq!(accepted, CONNS);
    drop(clients);
    // A backlog of one still listens (the system's minimum applies).
    let small = TcpListener::bind_with_backlog(any_port(), 1).unwrap();
    assert!(small.local_addr().unwrap().port() > 0);
}

#[test]
fn sockets_close_when_their_process_ends_however_it_ends() {
    let _s = serial();
    let rt = rt(2);
    // Warm up: the reactor's own descriptors (epoll, its waker) exist once.
    drop(TcpListener::bind(any_port()).unwrap());
    let before = open_fds();
    let ok = rt.block_on(|ctx| async move {
        let listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        ctx.spawn(move |ctx| async move { echo_server(&ctx, listener, 4).await })
            .await
            .unwrap();
        // Four owners of a client socket each (and the echo side's four),
        // ending in four ways while they wait in a read.
        let mut endings = Vec::new();
        let me = ctx.pid();
        for how in 0..4 {
            let p = ctx
                .spawn(move |ctx| async move {
                    let s = TcpStream::connect(addr).await.unwrap();
                    // Connected (so the echo side accepts all four before
                    // any is killed, and its acceptor ends).
                    ctx.send(me, Connected).await;
                    let mut buf = [0; 1];
                    match how {
                        0 => {} // ends normally, dropping it
                        1 => panic!("crash while holding a socket"),
                        _ => {
                            let _ = s.read(&mut buf).await; // waits: killed here
                            let _ = ctx;
                        }
                    }
                })
                .await
                .unwrap();
            let m = ctx.monitor(p).await;
            endings.push((p, m, how));
        }
        for _ in 0..4 {
            ctx.receive::<Connected>().await;
        }
        let (p2, p3) = (endings[2].0, endings[3].0);
        ctx.send_exit(p2, Reason::Kill).await;
        ctx.send_exit(p3, Reason::Shutdown).await;
        for _ in 0..4 {
            let d: Down = ctx.receive().await;
            assert!(endings.iter().any(|e| e.1 == d.mref));
        }
        true
    });
    assert_eq!(ok, Ok(true));
    // The echo processes see the other ends close and end too.
    wait_until("every socket closed", || open_fds() <= before);
    assert_eq!(open_fds(), before);
    // A runtime shut down with processes waiting on sockets closes them.
    let rt2 = rt2_with_waiting_sockets();
    assert!(open_fds() > before);
    rt2.shutdown();
    wait_until("sockets closed at shutdown", || open_fds() <= before);
    drop(rt);
}

/// A client's "I am connected".
struct Connected;

fn rt2_with_waiting_sockets() -> Runtime {
    let rt = rt(1);
    let ready = Arc::new(AtomicUsize::new(0));
    let r = ready.clone();
    rt.spawn(move |ctx| async move {
        let listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        let r2 = r.clone();
        ctx.spawn(move |_| async move {
            let s = TcpStream::connect(addr).await.unwrap();
            r2.fetch_add(1, SeqCst);
            let mut b = [0; 1];
            let _ = s.read(&mut b).await;
        })
        .await
        .unwrap();
        let (_conn, _) = listener.accept().await.unwrap();
        r.fetch_add(1, SeqCst);
        ctx.receive::<()>().await; // forever
    })
    .unwrap();
    wait_until("both sides connected", || ready.load(SeqCst) == 2);
    rt
}

#[test]
fn a_killed_acceptor_closes_its_listener() {
    let _s = serial();
    let rt = rt(2);
    let refused = rt
        .block_on(|ctx| async move {
            let listener = TcpListener::bind(any_port()).unwrap();
            let addr = listener.local_addr().unwrap();
            let p = ctx
                .spawn(move |_| async move {
                    let _ = listener.accept().await;
                    unreachable!("nobody connects before the kill");
                })
                .await
                .unwrap();
            ctx.yield_now().await;
            let m = ctx.monitor(p).await;
            ctx.send_exit(p, Reason::Kill).await;
            let d: Down = ctx.receive().await;
            assert_eq!(d.mref, m);
            assert_eq!(d.reason, Reason::Killed);
            TcpStream::connect(addr).await.err().map(|e| e.kind())
        })
        .unwrap();
    assert_eq!(refused, Some(std::io::ErrorKind::ConnectionRefused));
}

#[test]
fn deadlines_come_from_the_runtimes_timers() {
    let _s = serial();
    let rt = rt(2);
    rt.block_on(|ctx| async move {
        let listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let mut buf = [0; 8];
        // Nothing comes: the read is given up.
        let t0 = std::time::Instant::now();
        let r = ctx
            .timeout(Duration::from_millis(30), server.read(&mut buf))
            .await;
        assert_eq!(r.unwrap_err(), Elapsed);
        assert!(t0.elapsed() >= Duration::from_millis(30), "early");
        // Data before the deadline: the result, and the timer cancelled.
        client.write_all(b"hi").await.unwrap();
        let r = ctx
            .timeout(Duration::from_secs(10), server.read(&mut buf))
            .await;
        assert_eq!(r.unwrap().unwrap(), 2);
        assert_eq!(ctx.handle().pending_timers(), 0);
        // Duration::MAX never elapses (and starts no timer).
        client.write_all(b"x").await.unwrap();
        let r = ctx.timeout(Duration::MAX, server.read(&mut buf)).await;
        assert_eq!(r.unwrap().unwrap(), 1);
        // A timed-out accept, then the listener still accepts.
        let r = ctx
            .timeout(Duration::from_millis(5), listener.accept())
            .await;
        assert!(r.is_err());
        let _c2 = TcpStream::connect(addr).await.unwrap();
        assert!(listener.accept().await.is_ok());
        // Elapsed as an io::Error is TimedOut.
        let e: std::io::Error = Elapsed.into();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    })
    .unwrap();
}

#[test]
fn no_starvation_by_a_process_that_always_has_data() {
    let _s = serial();
    // One worker: without a reduction per read, the reader would run its
    // 200,000 reads before the other process ever got the worker.
    let rt = rt(1);
    let other_ran = Arc::new(AtomicBool::new(false));
    let seen_during = Arc::new(AtomicBool::new(false));
    let (o, s) = (other_ran.clone(), seen_during.clone());
    rt.block_on(move |ctx| async move {
        let listener = TcpListener::bind(any_port()).unwrap();
        let addr = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(addr).unwrap();
        let (server, _) = listener.accept().await.unwrap();
        // 200 KB already in the socket: every 1-byte read succeeds at once.
        let w = std::thread::spawn(move || {
            use std::io::Write;
            let mut c = client;
            c.write_all(&vec![7u8; 200_000]).unwrap();
            c
        });
        let _client = w.join().unwrap();
        let me = ctx.pid();
        let o2 = o.clone();
        ctx.spawn(move |ctx| async move {
            o2.store(true, SeqCst);
            ctx.send(me, ()).await;
        })
        .await
        .unwrap();
        let mut b = [0u8; 1];
        for _ in 0..200_000 {
            assert_eq!(server.read(&mut b).await.unwrap(), 1);
            if o.load(SeqCst) {
                s.store(true, SeqCst);
            }
        }
        ctx.receive::<()>().await;
    })
    .unwrap();
    assert!(other_ran.load(SeqCst));
    assert!(
        seen_during.load(SeqCst),
        "the other process only ran after 200,000 reads"
    );
}

#[test]
fn errors_a_user_can_cause() {
    let _s = serial();
    let rt = rt(2);
    rt.block_on(|_ctx| async move {
        // A port already in use.
        let l = TcpListener::bind(any_port()).unwrap();
        let addr = l.local_addr().unwrap();
        let e = TcpListener::bind(addr).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
        // Connecting to a port nobody listens on.
        drop(l);
        let e = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
        // Writing to a connection the other side closed: an error value
        // (no SIGPIPE), after at most a few writes.
        let l = TcpListener::bind(any_port()).unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (s, _) = l.accept().await.unwrap();
        drop(s);
        let mut failed = None;
        for _ in 0..100 {
            if let Err(e) = c.write_all(&[1; 1000]).await {
                failed = Some(e.kind());
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            matches!(
                failed,
                Some(std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset)
            ),
            "{failed:?}"
        );
        // Reading at the end of the stream: Ok(0), again and again.
        let mut b = [0; 4];
        assert!(matches!(c.read(&mut b).await, Ok(0) | Err(_)));
    })
    .unwrap();
}

#[test]
fn futures_io_traits_carry_a_line_protocol() {
    let _s = serial();
    let rt = rt(2);
    let lines = rt
        .block_on(|ctx| async move {
            let listener = TcpListener::bind(any_port()).unwrap();
            let addr = listener.local_addr().unwrap();
            ctx.spawn(move |_| async move {
                let (conn, _) = listener.accept().await.unwrap();
                // A line-at-a-time server over the futures-io traits.
                let mut reader = BufReader::new(&conn);
                let mut line = String::new();
                while reader.read_line(&mut line).await.unwrap() > 0 {
                    AsyncWriteExt::write_all(&mut &conn, line.to_uppercase().as_bytes())
                        .await
                        .unwrap();
                    line.clear();
                }
            })
            .await
            .unwrap();
            let mut c = TcpStream::connect(addr).await.unwrap();
            AsyncWriteExt::write_all(&mut c, b"one\ntwo\nthree\n")
                .await
                .unwrap();
            c.close().await.unwrap();
            let mut all = String::new();
            c.read_to_string(&mut all).await.unwrap();
            all
        })
        .unwrap();
    assert_eq!(lines, "ONE\nTWO\nTHREE\n");
}

#[test]
fn udp_round_trips() {
    let _s = serial();
    let rt = rt(2);
    rt.block_on(|ctx| async move {
        let server = UdpSocket::bind(any_port()).unwrap();
        let saddr = server.local_addr().unwrap();
        ctx.spawn(move |_| async move {
            let mut buf = [0; 1500];
            for _ in 0..10 {
                let (n, from) = server.recv_from(&mut buf).await.unwrap();
                server.send_to(&buf[..n], from).await.unwrap();
            }
        })
        .await
        .unwrap();
        let client = UdpSocket::bind(any_port()).unwrap();
        client.connect(saddr).unwrap();
        for i in 0..10u8 {
            client.send(&[i; 100]).await.unwrap();
            let mut buf = [0; 1500];
            let n = ctx
                .timeout(Duration::from_secs(5), client.recv(&mut buf))
                .await
                .expect("an answer on loopback")
                .unwrap();
            assert_eq!(&buf[..n], &[i; 100]);
        }
    })
    .unwrap();
}
