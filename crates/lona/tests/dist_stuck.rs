//! Distribution and its connections' ends, with raw peers (the handshake
//! written by hand, `dist_common`): a node monitor must say `nodedown`
//! for a node whose name was never a keyword.

mod dist_common;

use dist_common::*;
use lona_runtime::Runtime;
use lona_term::Fragment;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

/// Polls `cond` until it holds (a hang guard of 20 s, not a timing).
fn wait_for(mut cond: impl FnMut() -> bool, what: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
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
    let (r, h) = (unique("rust"), host());
    // A name no other test of this binary makes a keyword of.
    let fake = format!("fresh{r}@{h}");
    let rt = Runtime::new().unwrap();
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c38".into());
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let s = fake_peer_connect(d.port(), &fake, "c38");
    wait_for(
        || d.state(&fake) == Some(true),
        "the fake peer never connected",
    );
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
