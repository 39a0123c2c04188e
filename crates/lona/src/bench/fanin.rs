//! `fanin`: 1,000 senders each send 1,000 messages to one receiver, which
//! counts all 1,000,000.

use super::{main_failed, ms};
use lona_runtime::Runtime;
use std::time::Instant;

struct Done(u64);

pub fn run(rt: &Runtime) -> Result<(), String> {
    const S: u64 = 1_000;
    const K: u64 = 1_000;
    let (elapsed, counted) = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let t0 = Instant::now();
            let recv = ctx
                .spawn(move |ctx| async move {
                    let mut n = 0u64;
                    while n < S * K {
                        ctx.receive::<u64>().await;
                        n += 1;
                    }
                    ctx.send(me, Done(n)).await;
                })
                .await
                .expect("spawn");
            for _ in 0..S {
                ctx.spawn(move |ctx| async move {
                    for i in 0..K {
                        ctx.send(recv, i).await;
                    }
                })
                .await
                .expect("spawn");
            }
            let Done(n) = ctx.receive::<Done>().await;
            (t0.elapsed(), n)
        })
        .map_err(main_failed)?;
    if counted != S * K {
        return Err(format!("fanin counted {counted}"));
    }
    println!(
        "fanin senders={S} each={K} total_ms={} msgs_per_s={:.1}",
        ms(elapsed),
        (S * K) as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}
