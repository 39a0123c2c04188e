//! Distribution while a connection's writer is stuck: a raw peer (the
//! handshake written by hand, `dist_common`) that never reads, and a
//! local process's large message to it, which the writer cannot finish
//! writing. The reader must go on reading the peer's packets, the node
//! must still be able to close the connection, and a node monitor must
//! say `nodedown` for a node whose name was never a keyword.

mod dist_common;

use dist_common::*;
use lona_runtime::{Ctx, Pid, Reason, Runtime};
use lona_term::Fragment;
use lona_vm::dist::Dist;
use std::io::Write;
use std::net::TcpStream;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A native node with a raw peer connected that never reads, whose
/// writer is stuck writing a 16 MB message of a local process to it.
struct Stuck {
    rt: Runtime,
    d: Arc<Dist>,
    fake: String,
    /// The peer's socket, to read from.
    s: TcpStream,
    /// What the peer writes: a thread writes it, and a tick every 100 ms
    /// (the node's net tick time is 2 s), until this is dropped or the
    /// node closes the connection.
    to_node: Sender<Vec<u8>>,
}

/// The node's net tick time in these tests: how long a reader waits for
/// its writer to link.
const TICK: Duration = Duration::from_secs(2);

/// The fake peer's process that links and sends (process 7 of `fake`).
const FAKE_PROC: u32 = 7;

/// `None`: no `epmd` (the test is skipped).
fn stuck_peer() -> Option<Stuck> {
    if !epmd_available() {
        return None;
    }
    // The peer's receive buffer is left as it is: a socket made small
    // here reads slowly once it reads (about 40 KB/s; the tests that read
    // need it fast). Unread, it takes some 100 KB, the node's send buffer
    // at most 4 MB (`tcp_wmem`).
    let FakePeer { rt, d, s, fake } =
        native_with_fake_peer("fake", "c38", |cfg| cfg.tick_time = TICK);
    let (to_node, packets) = channel::<Vec<u8>>();
    let mut w = s.try_clone().unwrap();
    std::thread::spawn(move || loop {
        let p = match packets.recv_timeout(Duration::from_millis(100)) {
            Ok(p) => p,
            Err(RecvTimeoutError::Timeout) => vec![0, 0, 0, 0],
            Err(RecvTimeoutError::Disconnected) => return,
        };
        if w.write_all(&p).is_err() {
            return;
        }
    });
    // A local process's 16 MB message: the writer waits to write it, and
    // so does everything behind it in its mailbox.
    let (d2, fake2) = (d.clone(), fake.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            let blob = "x".repeat(16 << 20);
            d2.send_value(ctx.pid(), "sink", &fake2, blob.as_str())
                .unwrap();
        })
        .unwrap();
    wait_for(
        || d.queued(&fake) >= 1 << 20,
        "the message was never queued",
    );
    // The writer has taken it, or takes it before anything sent later.
    std::thread::sleep(Duration::from_millis(200));
    Some(Stuck {
        rt,
        d,
        fake,
        s,
        to_node,
    })
}

/// Polls `cond` until it holds (a hang guard of 20 s, not a timing).
fn wait_for(mut cond: impl FnMut() -> bool, what: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Spawns a native process that registers as `name` (if given), tells
/// its pid, and then reports each message it receives as text, until
/// one is `[:die ...]`: then it ends with reason `shutdown`.
fn reporter(rt: &Runtime, name: Option<&'static str>) -> (Pid, Receiver<String>) {
    let (tx, rx) = channel();
    let (ptx, prx) = channel();
    rt.handle()
        .spawn(move |ctx: Ctx| async move {
            if let Some(n) = name {
                ctx.register(n).await.unwrap();
            }
            ptx.send(ctx.pid()).unwrap();
            loop {
                let m = ctx.receive::<Fragment>().await.root().to_string();
                let die = m.starts_with("[:die ");
                let _ = tx.send(m);
                if die {
                    ctx.exit(Reason::Shutdown).await;
                }
            }
        })
        .unwrap();
    (prx.recv_timeout(Duration::from_secs(20)).unwrap(), rx)
}

/// ETF: local process `p` of node `d` as the wire names it.
fn our_pid(v: &mut Vec<u8>, d: &Dist, p: Pid) {
    etf_pid_of(v, d.name(), p.index(), p.generation(), d.creation());
}

/// A pass-through `LINK` from the fake peer's process to local `to`.
fn link(s: &Stuck, to: Pid) -> Vec<u8> {
    let mut b = vec![112, 131, 104, 3, 97, 1];
    etf_pid(&mut b, &s.fake, FAKE_PROC);
    our_pid(&mut b, &s.d, to);
    framed(b)
}

/// A peer's `LINK` to a live local process does not stop the reader for
/// good while the writer is stuck. The peer links, then sends a message
/// to another local process (registered `probe`): the message arrives
/// while the writer is still stuck (the reader makes the link itself, on
/// the writer's behalf, and waits for nothing: `reply.rs`), and the
/// connection stays. Once, the reader waited for the writer to link
/// without end, and read nothing more (not even the peer's ticks).
#[test]
fn a_link_does_not_stop_the_reader_behind_a_stuck_writer() {
    let Some(st) = stuck_peer() else { return };
    let (target, _) = reporter(&st.rt, None);
    let (_, probe) = reporter(&st.rt, Some("probe"));
    let mut out = link(&st, target);
    out.extend_from_slice(&fake_reg_send(&st.fake, "probe", "hello"));
    st.to_node.send(out).unwrap();
    let got = probe
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| {
            panic!(
                "the message sent after the LINK never arrived ({} bytes still queued)",
                st.d.queued(&st.fake)
            )
        });
    assert!(got.starts_with("[:hello "), "{got}");
    // The writer was stuck all along.
    assert!(
        st.d.queued(&st.fake) >= 1 << 20,
        "{}",
        st.d.queued(&st.fake)
    );
    assert_eq!(st.d.state(&st.fake), Some(true));
}

/// Sends `request` (a `LINK` or `MONITOR_P` of local process `victim`
/// by the fake's process), then `[:die ...]` to `victim`, on which it
/// ends with reason `shutdown`, then a message to `probe`. The probe's
/// message arrives while the writer is still stuck (the reader waits for
/// nothing); then the peer reads, up to
/// the first packet of control message `answer` (`EXIT`, 3, or
/// `MONITOR_P_EXIT`, 21): returned.
fn victim_ends(
    st: &mut Stuck,
    request: impl FnOnce(&Stuck, Pid) -> Vec<u8>,
    answer: u8,
) -> Vec<u8> {
    let (victim, victim_rx) = reporter(&st.rt, Some("victim"));
    let (_, probe) = reporter(&st.rt, Some("probe"));
    let mut out = request(st, victim);
    out.extend_from_slice(&fake_reg_send(&st.fake, "victim", "die"));
    out.extend_from_slice(&fake_reg_send(&st.fake, "probe", "hello"));
    st.to_node.send(out).unwrap();
    let got = probe
        .recv_timeout(Duration::from_secs(20))
        .expect("the probe's message never arrived");
    assert!(got.starts_with("[:hello "), "{got}");
    assert!(
        st.d.queued(&st.fake) >= 1 << 20,
        "{}",
        st.d.queued(&st.fake)
    );
    // The peer reads now: the 16 MB message, then the answer.
    st.s.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let found = loop {
        let p = read_packet(&mut st.s).expect("the answer");
        if p.len() > 6 && p[..5] == [112, 131, 104, p[3], 97] && p[5] == answer {
            break p;
        }
    };
    let got = victim_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the victim got nothing");
    assert!(got.starts_with("[:die "), "{got}");
    found
}

/// The link's place in the order of the peer's signals is kept while the
/// writer is stuck (the reader made it, on the writer's behalf): the peer links to local process `victim`, then sends
/// it a message on which it ends with reason `shutdown` (`victim_ends`).
/// The peer gets the victim's `EXIT` with reason `shutdown`, as from
/// Erlang (the link was in place when the message came), not `noproc` (a
/// reader that went on and delivered the message before the writer linked
/// would have let `victim` end unlinked).
#[test]
fn a_message_after_a_link_finds_it_while_the_writer_is_stuck() {
    let Some(mut st) = stuck_peer() else { return };
    let exit = victim_ends(&mut st, link, 3);
    let text = String::from_utf8_lossy(&exit);
    assert!(text.ends_with("shutdown"), "the EXIT: {text:?}");
}

/// The same for a monitor: the peer monitors `victim` (`MONITOR_P`), then
/// sends it the message it ends on; the peer's `MONITOR_P_EXIT` says
/// `shutdown`, not `noproc`. Once, the reader handed the monitor to the
/// writer and delivered the message at once: the victim ended before the
/// writer monitored it, and the peer was told `noproc`. Now the reader
/// makes the monitor itself, on the writer's behalf (`reply.rs`).
#[test]
fn a_message_after_a_monitor_finds_it_while_the_writer_is_stuck() {
    let Some(mut st) = stuck_peer() else { return };
    let monitor = |st: &Stuck, to: Pid| {
        let mut b = vec![112, 131, 104, 4, 97, 19];
        etf_pid(&mut b, &st.fake, FAKE_PROC);
        our_pid(&mut b, &st.d, to);
        etf_ref(&mut b, &st.fake, 1);
        framed(b)
    };
    let down = victim_ends(&mut st, monitor, 21);
    let text = String::from_utf8_lossy(&down);
    assert!(text.ends_with("shutdown"), "the MONITOR_P_EXIT: {text:?}");
}

/// `disconnect` closes a connection whose writer is stuck. A native
/// process watches the peer (`monitor_node`), monitors a name there and
/// links to a process there; `Dist::disconnect` ends the connection: each
/// of them fires (`nodedown`, `DOWN` and an exit signal `noconnection`),
/// and `nodes` no longer lists the peer. Before, the writer's mailbox
/// took the request behind the write it was stuck in, and the connection
/// stayed.
#[test]
fn disconnect_closes_a_connection_whose_writer_is_stuck() {
    use lona_vm::dist::Watched;
    let Some(st) = stuck_peer() else { return };
    let (tx, rx) = channel::<String>();
    let (d2, fake2) = (st.d.clone(), st.fake.clone());
    st.rt
        .handle()
        .spawn(move |ctx| async move {
            ctx.trap_exit(true).await;
            d2.monitor_node(ctx.pid(), &fake2);
            let sink = lona_term::Term::keyword("sink");
            d2.monitor(ctx.pid(), &fake2, Watched::Name("sink"), sink);
            let writer = d2.link(ctx.pid(), &fake2, (FAKE_PROC, 0, 1)).unwrap();
            // The caller links to the writer, as `link` says.
            ctx.link(writer).await.unwrap();
            tx.send("watching".into()).unwrap();
            loop {
                let e = ctx.receive_any().await;
                let e = match e.downcast::<Fragment>() {
                    Ok(f) => {
                        tx.send(f.root().to_string()).unwrap();
                        continue;
                    }
                    Err(e) => e,
                };
                if let Ok(x) = e.downcast::<lona_runtime::ForeignExit>() {
                    tx.send(format!("exit {}", x.reason)).unwrap();
                } else {
                    tx.send("something else".into()).unwrap();
                }
            }
        })
        .unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        "watching"
    );
    assert!(st.d.nodes().contains(&st.fake));
    assert!(st.d.disconnect(&st.fake));
    let mut seen: Vec<String> = (0..3)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| {
                    panic!(
                        "not everything fired; nodes: {:?}, state: {:?}",
                        st.d.nodes(),
                        st.d.state(&st.fake)
                    )
                })
        })
        .collect();
    seen.sort();
    assert!(seen[0].starts_with("[:DOWN "), "{seen:?}");
    assert!(seen[0].ends_with(" :sink :noconnection]"), "{seen:?}");
    assert_eq!(seen[1], format!("[:nodedown :{}]", st.fake), "{seen:?}");
    assert!(
        seen[2].starts_with("exit ") && seen[2].contains("noconnection"),
        "{seen:?}"
    );
    wait_for(
        || st.d.state(&st.fake).is_none(),
        "the connection is still in the table",
    );
    assert!(!st.d.nodes().contains(&st.fake));
}

/// A native process's `monitor_node` on a node whose name was never a
/// keyword gets `[:nodedown node]` when the connection ends (the peer
/// closes it). Before, the message was sent only if the name already was
/// one, and here nothing came.
#[test]
fn nodedown_comes_for_a_node_whose_name_was_never_a_keyword() {
    if !epmd_available() {
        return;
    }
    // A name no other test of this binary makes a keyword of.
    let FakePeer { rt, d, s, fake } = native_with_fake_peer("fresh", "c38", |_| {});
    let (tx, rx) = channel::<String>();
    let (d2, fake2) = (d.clone(), fake.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            d2.monitor_node(ctx.pid(), &fake2);
            tx.send("watching".into()).unwrap();
            let m = ctx.receive::<Fragment>().await;
            tx.send(m.root().to_string()).unwrap();
        })
        .unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        "watching"
    );
    assert!(
        lona_term::Atom::existing(&fake).is_none(),
        "the test needs a name that is not a keyword yet"
    );
    drop(s);
    wait_for(|| d.state(&fake).is_none(), "the connection never ended");
    let got = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("no nodedown came");
    assert_eq!(got, format!("[:nodedown :{fake}]"));
}
