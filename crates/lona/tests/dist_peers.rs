//! Distribution against peers that misbehave, written by hand on the
//! wire (no `erl` needed, only `epmd`): a handshake that stalls, a peer
//! claiming this node's own name, a peer that never reads what the node
//! sends it (issue 36).

mod dist_common;

use dist_common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_peer_that_stalls_in_the_handshake_leaves_no_entry_behind() {
    if !epmd_available() {
        return;
    }
    let (l, h) = (unique("lona"), host());
    let fake = format!("fake{l}@{h}");
    let lona = Node::lona(
        &l,
        "c17",
        &format!(
            r#"(defn wait-gone [i]
  (cond (nil? (node-state* :{fake})) (println "gone")
        (> i 300) (println "stuck" (node-state* :{fake}))
        :else (do (sleep 50) (wait-gone (inc i)))))
(defn -main []
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "state" (node-state* :{fake}))
  (wait-gone 0))"#
        ),
    );
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // The name message of handshake version 6, then nothing.
    send_name(&mut s, &fake);
    // Our node answers the status and its challenge; the fake says nothing.
    assert_eq!(hs_recv(&mut s).expect("a status"), b"sok");
    // While it stalls the entry is there (pending); after the setup time
    // (7 s) it is gone.
    send_go(&l, &h);
    lona.expect("state :pending");
    lona.expect("gone");
    drop(s);
}

/// A peer that knows the cookie but claims the node's own name is
/// refused with `nok`, as Erlang refuses it (`net_kernel` gets no
/// connection id for its own node; `dist_util` sends `nok`), and the node
/// never lists itself among its peers. Before the fix it answered `ok`,
/// the handshake completed and `(nodes)` held the node's own name.
#[test]
fn a_peer_claiming_the_nodes_own_name_is_refused_with_nok() {
    if !epmd_available() {
        return;
    }
    let (l, h) = (unique("lona"), host());
    let own = format!("{l}@{h}");
    let lona = Node::lona(
        &l,
        "c17",
        r#"(defn -main []
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "self-listed" (contains? (set (nodes)) (node)) (node-state* (node))))"#,
    );
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A hang guard only: every answer comes at once.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The name message, with the node's own name.
    send_name(&mut s, &own);
    let status = hs_recv(&mut s).expect("a status");
    if status == b"sok" {
        // What the node did before: go on as a peer with the cookie
        // would, so the test sees what that led to.
        let ch = hs_recv(&mut s).expect("the node's challenge");
        assert_eq!(ch[0], b'N', "{ch:?}");
        let challenge = u32::from_be_bytes(ch[9..13].try_into().unwrap());
        let digest = md5::compute(format!("c17{challenge}"));
        let mut reply = vec![b'r'];
        reply.extend_from_slice(&42u32.to_be_bytes());
        reply.extend_from_slice(&digest.0);
        hs_send(&mut s, &reply);
        let ack = hs_recv(&mut s).expect("the node's ack");
        assert_eq!(ack[0], b'a', "{ack:?}");
    } else {
        // Refused: the node closes the connection.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{rest:?}");
    }
    send_go(&l, &h);
    let seen = lona.expect("self-listed");
    assert_eq!(
        String::from_utf8_lossy(&status),
        "snok",
        "the node's answer; then it printed {seen:?}"
    );
    assert_eq!(seen, "self-listed false nil");
    // Logged (read by a thread of this test: waited for, with a hang guard).
    let until = Instant::now() + Duration::from_secs(20);
    while !lona.stderr().contains("claiming this node's own name") {
        assert!(Instant::now() < until, "not logged: {}", lona.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(s);
}

/// Issue 36 (decision 20): a peer that completes the handshake and then
/// never reads cannot make the node queue without end what its processes
/// send there. Four processes send 2 GiB of fresh 1 MiB binaries to a
/// process of such a peer, the node under a 1 GiB address-space limit:
/// once the connection's queue is over its limit (1 MB, Erlang's
/// `dist_buf_busy_limit`) the senders wait (`:waiting`, the count of
/// messages sent stops), the node's resident memory stays within 200 MB of
/// where it began, and signals wait too (a `monitor`, an `exit` and a
/// `link` to the peer's process, asked for while the connection is busy).
/// Once the peer is gone everyone goes on (what they send to the dead
/// node is dropped, as Erlang drops it) and the program ends normally.
/// Before the limit the writer's mailbox took every message: resident
/// memory grew 280 MB in the first 253 messages, on the way to the
/// address-space limit.
#[test]
fn a_peer_that_never_reads_makes_senders_wait_not_the_node_grow() {
    if !epmd_available() {
        return;
    }
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is not installed");
        return;
    }
    let (l, h) = (unique("lona"), host());
    let fake = format!("fake{l}@{h}");
    let prog = r#"
(def blob (concat-bytes (repeat 65536 (bytes "0123456789abcdef"))))

(defn sender [main dest n]
  (loop [i 0]
    (when (< i n)
      ;; a fresh 1 MiB binary each time
      (send dest (concat-bytes [blob (bytes (str i))]))
      (send main :sent)
      (recur (inc i))))
  (send main :done))

(defn wait-up [n i]
  (cond (= (node-state* n) :up) true
        (> i 1000) false
        :else (do (sleep 20) (wait-up n (inc i)))))

(defn status [p] (:status (process-info p)))

(defn probe [main what f]
  (spawn (fn []
           (process-flag :trap-exit true)
           (f)
           (println "probe" what)
           (send main :done))))

(defn watch [senders sent done want base]
  (if (= done want)
    (println "done" sent)
    (receive
      :sent (watch senders (inc sent) done want base)
      :done (watch senders sent (inc done) want base)
      [:probe pid] (let [me (self) n (node pid)]
                     (probe me "monitor" #(monitor [:sink n]))
                     (probe me "exit" #(exit pid :bye))
                     (probe me "link" #(link pid))
                     (println "probing")
                     (watch senders sent done (+ want 3) base))
      :tick (do (println "report" sent (quot (- (memory) base) 1048576)
                         (count (filter #(= :waiting (status %)) senders))
                         (:current-function (process-info (first senders))))
                (send-after 300 (self) :tick)
                (watch senders sent done want base)))))

(defn -main [fake]
  (let [n (keyword fake)
        base (memory)
        me (self)]
    (register :main me)
    (println "ready")
    (when-not (wait-up n 0)
      (println "never up")
      (halt 1))
    (let [dest [:sink n]
          senders [(spawn sender me dest 512) (spawn sender me dest 512)
                   (spawn sender me dest 512) (spawn sender me dest 512)]]
      (send-after 300 me :tick)
      (watch senders 0 0 4 base))))
"#;
    let tmp = scratch();
    let file = tmp.path().join("flood.lona");
    std::fs::write(&file, prog).unwrap();
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_lona"))
        .args(["run", "--workers", "2", "--sname", &l, "--cookie", "c36"])
        .arg(&file)
        .arg(&fake);
    let mut lona = Node::spawn(cmd);
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let s = fake_peer_connect(port, &fake, "c36");
    // A small receive buffer, and never a read: what the node writes
    // stops after a few hundred kilobytes in the kernel's buffers.
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
    // The fake writes: ticks, so the node keeps the connection (the net
    // tick time is 60 s; the fake never reads the node's), and the
    // packets the test gives it, from one thread.
    let (to_fake, packets) = channel::<Vec<u8>>();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticker = {
        let (stop, mut w) = (stop.clone(), s.try_clone().unwrap());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = w.write_all(&[0, 0, 0, 0]);
                while let Ok(p) = packets.try_recv() {
                    w.write_all(&p).unwrap();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    // Reports until the count of messages sent stays the same for three
    // reports (about a second) with all four senders waiting; then the
    // probes, which must wait too (three more reports and no probe done).
    let until = Instant::now() + Duration::from_secs(120);
    let mut last: Option<u64> = None;
    let mut same = 0;
    let mut probing = false;
    let stalled = loop {
        assert!(
            Instant::now() < until,
            "the senders never stopped; stderr: {}",
            lona.stderr()
        );
        let line = lona
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the node stopped reporting; stderr: {}", lona.stderr()));
        if line == "probing" {
            probing = true;
            same = 0;
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[0], "report", "{line}; stderr: {}", lona.stderr());
        let (sent, mb, waiting): (u64, u64, usize) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        assert!(
            mb < 200,
            "resident memory grew {mb} MB ({sent} messages sent): {line}"
        );
        if waiting == 4 && last == Some(sent) {
            same += 1;
        } else {
            same = 0;
        }
        last = Some(sent);
        if same >= 3 && !probing {
            to_fake.send(fake_reg_send(&fake, "main", "probe")).unwrap();
        } else if same >= 3 {
            break line;
        }
    };
    let sent = last.unwrap();
    assert!(sent < 2048, "{sent}");
    eprintln!("stalled: {stalled}");
    // The peer goes: the connection ends, the senders go on, the node
    // drops what they send to the node that is gone, and the program ends.
    stop.store(true, Ordering::Relaxed);
    ticker.join().unwrap();
    drop(s);
    let until = Instant::now() + Duration::from_secs(120);
    let mut probes = Vec::new();
    loop {
        let line = lona
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("the senders did not finish; stderr: {}", lona.stderr()));
        if line.starts_with("done") {
            assert_eq!(line, "done 2048");
            break;
        }
        if let Some(p) = line.strip_prefix("probe ") {
            probes.push(p.to_string());
            continue;
        }
        assert!(line.starts_with("report"), "{line}");
    }
    probes.sort();
    assert_eq!(probes, ["exit", "link", "monitor"]);
    let status = lona.wait();
    let err = lona.stderr();
    assert!(status.success(), "{status:?}; stderr: {err}");
    assert!(!err.contains("memory allocation of"), "{err}");
}

/// The same bound for a native Rust sender: past the connection's limit
/// `send_value` is refused with `RemoteSendError::Busy` (Erlang's
/// `nosuspend`), with no more than the limit and one message queued, and
/// `until_ready` waits; the peer's end wakes it.
#[test]
fn a_native_sender_is_told_busy_and_waits_until_ready() {
    use lona_vm::dist::RemoteSendError;
    use std::sync::atomic::AtomicBool;
    if !epmd_available() {
        return;
    }
    let (r, h) = (unique("rust"), host());
    let fake = format!("fake{r}@{h}");
    let rt = lona_runtime::Runtime::new().unwrap();
    let limit = 64 << 10;
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c36".into());
    cfg.busy_limit = limit;
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let s = fake_peer_connect(d.port(), &fake, "c36");
    let until = Instant::now() + Duration::from_secs(20);
    while d.state(&fake) != Some(true) {
        assert!(Instant::now() < until, "the fake peer never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Arc::new(AtomicBool::new(false));
    let (tx, rx) = channel::<Result<(usize, usize), bool>>();
    let (d2, fake2, k2) = (d.clone(), fake.clone(), killed.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            let blob = "x".repeat(16 << 10);
            let mut sent = 0;
            loop {
                let busy = loop {
                    match d2.send_value(ctx.pid(), "sink", &fake2, &blob) {
                        Ok(_) => sent += 1,
                        Err(RemoteSendError::Busy) => break d2.queued(&fake2),
                        Err(e) => panic!("{e}"),
                    }
                    assert!(sent < 100_000, "never busy");
                };
                tx.send(Ok((sent, busy))).unwrap();
                d2.until_ready(&ctx, &fake2).await;
                if d2.state(&fake2).is_none() {
                    // Woken by the connection's end.
                    tx.send(Err(k2.load(Ordering::SeqCst))).unwrap();
                    return;
                }
            }
        })
        .unwrap();
    // Busy, woken as the writer drains into the kernel's buffers, busy
    // again, ... until those are full: then the sender waits.
    let until = Instant::now() + Duration::from_secs(30);
    let queued = loop {
        let mut last = None;
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(Ok(x)) => last = Some(x),
            Ok(Err(_)) => panic!("woken with the connection gone"),
            Err(_) => {}
        }
        assert!(Instant::now() < until, "the sender never stopped");
        match last {
            Some(x) => {
                // Not more than the limit and one message (a packet is
                // the blob and a few dozen bytes).
                assert!(
                    x.1 >= limit / 2 && x.1 < limit + (17 << 10),
                    "{} bytes queued after {} messages",
                    x.1,
                    x.0
                );
            }
            None => break d.queued(&fake),
        }
    };
    eprintln!("stalled with {queued} bytes queued");
    // Still busy: the queue is over half the limit.
    assert!(queued >= limit / 2, "{queued}");
    killed.store(true, Ordering::SeqCst);
    drop(s);
    let Ok(Err(after_kill)) = rx.recv_timeout(Duration::from_secs(30)) else {
        panic!("the sender was not woken by the connection's end");
    };
    assert!(after_kill);
}
