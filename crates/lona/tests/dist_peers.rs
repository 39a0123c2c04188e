//! Distribution against peers that misbehave, written by hand on the
//! wire (no `erl` needed, only `epmd`): a handshake that stalls, a peer
//! claiming this node's own name, a peer that never reads what the node
//! sends it, nor the replies to its own requests (issue 36).

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
    small_rcvbuf(&s);
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
    let limit = 64 << 10;
    let FakePeer { rt, d, s, fake } = native_with_fake_peer("fake", "c36", |cfg| {
        cfg.busy_limit = limit;
    });
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

/// A pass-through `MONITOR_P` from process 7 of node `fake` (reference
/// `id`) for the name `nosuch`, which no process of the node holds: the
/// node answers `MONITOR_P_EXIT` `noproc` at once, from the reader.
fn monitor_nosuch(fake: &str, id: u32) -> Vec<u8> {
    let mut b = vec![112, 131, 104, 4, 97, 19];
    etf_pid(&mut b, fake, 7);
    etf_atom(&mut b, "nosuch");
    etf_ref(&mut b, fake, id);
    framed(b)
}

/// A pass-through `net_kernel` call from process 7 of node `fake`, as
/// `net_adm:ping` makes it: `{'$gen_call', {Pid, Ref}, {is_auth, Fake}}`,
/// answered `{Ref, yes}`.
fn is_auth(fake: &str) -> Vec<u8> {
    let mut b = vec![112, 131, 104, 4, 97, 6];
    etf_pid(&mut b, fake, 7);
    etf_atom(&mut b, "");
    etf_atom(&mut b, "net_kernel");
    b.extend_from_slice(&[131, 104, 3]);
    etf_atom(&mut b, "$gen_call");
    b.extend_from_slice(&[104, 2]);
    etf_pid(&mut b, fake, 7);
    etf_ref(&mut b, fake, 99);
    b.extend_from_slice(&[104, 2]);
    etf_atom(&mut b, "is_auth");
    etf_atom(&mut b, fake);
    framed(b)
}

/// Writes requests made by `request` (numbered from 1), `per_write` at a
/// time, never reading, until node `d` closes the connection of peer
/// `fake` (at most 96 MB of them): the bytes written, and the most seen
/// meanwhile queued for the peer (`Dist::queued`) and of its backlog of
/// replies (`Dist::replies_queued`), which never passes the reply limit
/// by more than one request's reply.
fn flood(
    d: &lona_vm::dist::Dist,
    fake: &str,
    s: &TcpStream,
    per_write: u32,
    mut request: impl FnMut(u32) -> Vec<u8>,
) -> (usize, usize) {
    use lona_vm::dist::{default_reply_limit, DEFAULT_BUSY_LIMIT};
    let mut w = s.try_clone().unwrap();
    w.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    let cap = 96usize << 20;
    let (mut sent, mut id, mut most, mut replies) = (0usize, 0u32, 0usize, 0usize);
    let mut batch = Vec::new();
    let end = loop {
        batch.clear();
        for _ in 0..per_write {
            id += 1;
            batch.extend_from_slice(&request(id));
        }
        if let Err(e) = w.write_all(&batch) {
            break Some(e);
        }
        sent += batch.len();
        most = most.max(d.queued(fake));
        replies = replies.max(d.replies_queued(fake));
        if sent >= cap {
            break None;
        }
    };
    let Some(e) = end else {
        panic!(
            "{sent} bytes of requests ({id}) and the node never closed the connection: {} \
             bytes queued for the peer now, at most {most} seen",
            d.queued(fake)
        );
    };
    // Closed by the node, not a write that timed out.
    assert!(
        !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e}"
    );
    let limit = default_reply_limit(DEFAULT_BUSY_LIMIT);
    assert!(replies <= limit + (128 << 10), "{replies} bytes of replies");
    (sent, most)
}

/// Issue 36's last point: a peer that sends requests the node answers
/// itself (here `MONITOR_P` of a name nobody holds: `MONITOR_P_EXIT`
/// `noproc`) and never reads cannot make the node queue the replies
/// without end. Past the reply limit (16 MB by default) the node closes
/// the connection, as Erlang closes one to a node that does not respond:
/// its monitors and `monitor-node` fire (`noconnection`, `nodedown`), the
/// same name can connect again and is answered. What the node queued for
/// the peer never passed the limit and the busy limit together.
#[test]
fn a_peer_that_never_reads_its_replies_is_disconnected() {
    use lona_vm::dist::Watched;
    if !epmd_available() {
        return;
    }
    let FakePeer { rt, d, s, fake } = native_with_fake_peer("fake", "c36", |_| {});
    small_rcvbuf(&s);
    // A native process watches the peer, and a name there.
    let (tx, rx) = channel::<String>();
    let (d2, fake2) = (d.clone(), fake.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            // `[:nodedown node]` names the node as a keyword, which must
            // exist (a Lonala program made it with `keyword`).
            lona_term::Atom::try_new(&fake2).unwrap();
            d2.monitor_node(ctx.pid(), &fake2);
            let sink = lona_term::Term::keyword("sink");
            d2.monitor(ctx.pid(), &fake2, Watched::Name("sink"), sink);
            for _ in 0..2 {
                let m = ctx.receive::<lona_term::Fragment>().await;
                tx.send(m.root().to_string()).unwrap();
            }
        })
        .unwrap();
    // Requests in batches of a thousand (about 100 KB), never a read,
    // until the node closes the connection.
    let (sent, most) = flood(&d, &fake, &s, 1000, |id| monitor_nosuch(&fake, id));
    eprintln!("closed after {sent} bytes of requests; at most {most} bytes queued for the peer");
    // The default reply limit (16 MB) and the busy limit (1 MB), and a
    // batch's replies the node had read before it looked.
    assert!(most <= (17 << 20) + (256 << 10), "{most} bytes queued");
    let until = Instant::now() + Duration::from_secs(20);
    while d.state(&fake).is_some() {
        assert!(
            Instant::now() < until,
            "the connection is still in the table"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut seen = vec![
        rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        rx.recv_timeout(Duration::from_secs(20)).unwrap(),
    ];
    seen.sort();
    assert!(seen[0].starts_with("[:DOWN "), "{seen:?}");
    assert!(seen[0].ends_with(" :sink :noconnection]"), "{seen:?}");
    assert!(seen[1].starts_with("[:nodedown :"), "{seen:?}");
    drop(s);
    // The node goes on: the same name connects again, and is answered.
    let mut s = fake_peer_connect(d.port(), &fake, "c36");
    s.write_all(&is_auth(&fake)).unwrap();
    let answer = read_packet(&mut s).unwrap();
    assert!(answer.ends_with(&[119, 3, b'y', b'e', b's']), "{answer:?}");
}

/// What local processes send never counts towards the reply limit: a
/// 20 MB message from a native process to a peer that reads slowly, 64 KB
/// at a time, arrives whole though the node's reply limit is 1 MB, and
/// the 500 replies the peer asked for meanwhile (`MONITOR_P_EXIT`s, most
/// of which wait behind the message) arrive too; the connection stays up. (A
/// cap on the whole queue, tried before, closed the connection under such
/// a message.)
#[test]
fn a_large_message_to_a_slow_reader_is_not_held_to_the_reply_limit() {
    if !epmd_available() {
        return;
    }
    let FakePeer { rt, d, s, fake } = native_with_fake_peer("fake", "c36", |cfg| {
        cfg.reply_limit = Some(1 << 20);
    });
    let blob = "0123456789abcdef".repeat(20 << 16) + "end";
    const ASKED: u32 = 500;
    // The peer reads slowly: 64 KB, a pause, 64 KB, ...
    let (tx, rx) = channel::<(bool, u32)>();
    let mut rs = s.try_clone().unwrap();
    let want = blob.clone();
    let reader = std::thread::spawn(move || {
        rs.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let (mut whole, mut replies) = (false, 0);
        while !(whole && replies == ASKED) {
            let mut len = [0u8; 4];
            if rs.read_exact(&mut len).is_err() {
                break;
            }
            let mut p = vec![0u8; u32::from_be_bytes(len) as usize];
            for chunk in p.chunks_mut(64 << 10) {
                rs.read_exact(chunk).unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
            // `MONITOR_P_EXIT` (21).
            if p.starts_with(&[112, 131, 104, 5, 97, 21]) {
                replies += 1;
            } else if p.len() > want.len() {
                assert!(
                    p.ends_with(want.as_bytes()),
                    "a message of {} bytes",
                    p.len()
                );
                whole = true;
            }
        }
        tx.send((whole, replies)).unwrap();
    });
    let (d2, fake2) = (d.clone(), fake.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            let n = d2
                .send_value(ctx.pid(), "sink", &fake2, blob.as_str())
                .unwrap();
            assert!(n > 20 << 20, "{n}");
        })
        .unwrap();
    // While it reads, the peer asks.
    let mut w = s.try_clone().unwrap();
    for i in 0..ASKED {
        w.write_all(&monitor_nosuch(&fake, i)).unwrap();
        if i % 50 == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let (whole, replies) = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the peer's reader ended");
    reader.join().unwrap();
    assert!(
        whole,
        "the 20 MB message did not arrive ({replies} replies did)"
    );
    assert_eq!(replies, ASKED);
    assert_eq!(d.state(&fake), Some(true), "the connection went");
    assert!(d.replies_queued(&fake) < 1 << 20);
}

/// A pass-through `SPAWN_REQUEST` from process 7 of node `fake`
/// (reference `id`) of `nosuch/f`, which is not defined, with one 64 KB
/// binary as its argument: handed to the writer, which answers
/// `SPAWN_REPLY` `undef`.
fn spawn_nosuch(fake: &str, id: u32) -> Vec<u8> {
    let mut b = vec![112, 131, 104, 6, 97, 29];
    etf_ref(&mut b, fake, id);
    etf_pid(&mut b, fake, 7);
    etf_pid(&mut b, fake, 7);
    b.extend_from_slice(&[104, 3]);
    etf_atom(&mut b, "nosuch");
    etf_atom(&mut b, "f");
    b.extend_from_slice(&[97, 1, 106]);
    b.extend_from_slice(&[131, 108, 0, 0, 0, 1, 109]);
    b.extend_from_slice(&(64u32 << 10).to_be_bytes());
    b.resize(b.len() + (64 << 10), b'x');
    b.push(106);
    framed(b)
}

/// The work the writer does for the peer counts too: while the writer
/// waits to write (a 4 MB message of a local process to a peer that
/// never reads), the peer's `SPAWN_REQUEST`s, 64 KB of arguments each,
/// wait in its mailbox; past the reply limit (16 MB) the connection is
/// closed. Before, they queued there uncounted, without end.
#[test]
fn a_peer_that_floods_spawn_requests_and_never_reads_is_disconnected() {
    if !epmd_available() {
        return;
    }
    let FakePeer { rt, d, s, fake } = native_with_fake_peer("fake", "c36", |_| {});
    small_rcvbuf(&s);
    // A local process's 4 MB message: the writer waits to write it.
    let (d2, fake2) = (d.clone(), fake.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            let blob = "x".repeat(4 << 20);
            d2.send_value(ctx.pid(), "sink", &fake2, blob.as_str())
                .unwrap();
        })
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while d.queued(&fake) < 1 << 20 {
        assert!(Instant::now() < until, "the message was never queued");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (sent, _) = flood(&d, &fake, &s, 16, |id| spawn_nosuch(&fake, id));
    eprintln!("closed after {sent} bytes of spawn requests");
    let until = Instant::now() + Duration::from_secs(20);
    while d.state(&fake).is_some() {
        assert!(
            Instant::now() < until,
            "the connection is still in the table"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `lona run --dist-reply-limit KB` sets the reply limit: at 64 KB a peer
/// that asks and never reads is disconnected after a few hundred KB of
/// requests, the node says why in one line, and the program goes on.
#[test]
fn lona_run_takes_the_reply_limit() {
    if !epmd_available() {
        return;
    }
    let (l, h) = (unique("lona"), host());
    let fake = format!("fake{l}@{h}");
    let tmp = scratch();
    let file = tmp.path().join("main.lona");
    std::fs::write(
        &file,
        r#"(defn -main []
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "still here"))"#,
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.args([
        "run",
        "--sname",
        &l,
        "--cookie",
        "c17",
        "--dist-reply-limit",
        "64",
    ])
    .arg(&file);
    let mut lona = Node::spawn(cmd);
    lona.expect("ready");
    let s = fake_peer_connect(epmd_port_of(&l), &fake, "c17");
    small_rcvbuf(&s);
    let mut w = s.try_clone().unwrap();
    w.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    let (mut sent, mut id) = (0usize, 0u32);
    let e = loop {
        let mut batch = Vec::new();
        for _ in 0..100 {
            id += 1;
            batch.extend_from_slice(&monitor_nosuch(&fake, id));
        }
        if let Err(e) = w.write_all(&batch) {
            break e;
        }
        sent += batch.len();
        assert!(sent < 16 << 20, "never closed; stderr: {}", lona.stderr());
    };
    assert!(
        !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        "{e}"
    );
    eprintln!("closed after {sent} bytes of requests");
    send_go(&l, &h);
    lona.expect("still here");
    assert!(lona.wait().success(), "stderr: {}", lona.stderr());
    let err = lona.stderr();
    assert!(
        err.contains(&format!("connection to {fake} closed: not responding"))
            && err.contains("(the reply limit is 65536)"),
        "{err}"
    );
}
