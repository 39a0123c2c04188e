//! Process aliases (`links` rule 11, Erlang's `alias/0` of OTP 24): a
//! message sent to an alias reaches the mailbox only while the alias is
//! active; one that arrives after `unalias` is dropped unseen.

mod common;

use lona_runtime::{Builder, Ctx, Pid, Ref};
use std::future::Future;
use std::time::Duration;

fn run<T: Send + 'static, Fut: Future<Output = T> + Send + 'static>(
    f: impl FnOnce(Ctx) -> Fut,
) -> T {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    rt.block_on(f).expect("main process ended abnormally")
}

#[derive(Debug, PartialEq)]
struct Reply(u32);

/// A process that, for each `(to, alias, n)` it receives, sends `Reply(n)`
/// to the alias and then `()` to `to` directly.
async fn replier(ctx: Ctx) {
    loop {
        let (to, alias, n): (Pid, Ref, u32) = ctx.receive().await;
        ctx.send_alias(to, alias, Reply(n)).await;
        ctx.send(to, ()).await;
    }
}

#[test]
fn message_to_active_alias_reaches_the_mailbox() {
    let got = run(|ctx| async move {
        let r = Ref::new();
        ctx.alias(r).await;
        let p = ctx.spawn(replier).await.unwrap();
        ctx.send(p, (ctx.pid(), r, 7u32)).await;
        ctx.receive::<()>().await;
        ctx.receive_timeout::<Reply>(Duration::ZERO).await
    });
    assert_eq!(got, Some(Reply(7)));
}

#[test]
fn message_to_deactivated_alias_is_dropped_on_arrival() {
    let (was_active, got, again) = run(|ctx| async move {
        let r = Ref::new();
        ctx.alias(r).await;
        let was_active = ctx.unalias(r).await;
        let p = ctx.spawn(replier).await.unwrap();
        ctx.send(p, (ctx.pid(), r, 1u32)).await;
        // The alias message travels before `()`: when `()` is here, it was
        // handled (and dropped).
        ctx.receive::<()>().await;
        let got = ctx.receive_timeout::<Reply>(Duration::ZERO).await;
        (was_active, got, ctx.unalias(r).await)
    });
    assert!(was_active);
    assert_eq!(got, None);
    assert!(!again, "an alias is inactive after unalias");
}

#[test]
fn message_already_in_the_inbox_is_dropped_after_unalias() {
    let got = run(|ctx| async move {
        let r = Ref::new();
        ctx.alias(r).await;
        // To oneself: delivered into the inbox at once, not drained yet.
        ctx.send_alias(ctx.pid(), r, Reply(3)).await;
        ctx.unalias(r).await;
        ctx.receive_timeout::<Reply>(Duration::from_millis(20))
            .await
    });
    assert_eq!(got, None);
}

#[test]
fn an_unknown_ref_is_no_alias() {
    let got = run(|ctx| async move {
        ctx.send_alias(ctx.pid(), Ref::new(), Reply(9)).await;
        ctx.receive_timeout::<Reply>(Duration::from_millis(20))
            .await
    });
    assert_eq!(got, None);
}

#[test]
fn alias_messages_keep_their_order_with_plain_messages() {
    let seen = run(|ctx| async move {
        let r = Ref::new();
        ctx.alias(r).await;
        let me = ctx.pid();
        ctx.spawn(move |c| async move {
            for i in 0..100u32 {
                if i % 2 == 0 {
                    c.send_alias(me, r, Reply(i)).await;
                } else {
                    c.send(me, i).await;
                }
            }
        })
        .await
        .unwrap();
        let mut seen = vec![];
        for _ in 0..100 {
            let e = ctx.receive_any().await;
            match e.downcast::<u32>() {
                Ok(i) => seen.push(i),
                Err(e) => seen.push(e.downcast::<Reply>().unwrap().0),
            }
        }
        seen
    });
    assert_eq!(seen, (0..100).collect::<Vec<_>>());
}

#[test]
fn alias_message_to_a_dead_process_is_dropped_quietly() {
    run(|ctx| async move {
        let (p, _) = ctx.spawn_monitor(|_| async {}).await.unwrap();
        ctx.receive::<lona_runtime::Down>().await;
        ctx.send_alias(p, Ref::new(), Reply(1)).await;
    });
}

#[test]
fn several_aliases_are_independent() {
    let got = run(|ctx| async move {
        let (a, b) = (Ref::new(), Ref::new());
        ctx.alias(a).await;
        ctx.alias(b).await;
        ctx.unalias(a).await;
        ctx.send_alias(ctx.pid(), a, Reply(1)).await;
        ctx.send_alias(ctx.pid(), b, Reply(2)).await;
        ctx.receive_timeout::<Reply>(Duration::from_millis(20))
            .await
    });
    assert_eq!(got, Some(Reply(2)));
}
