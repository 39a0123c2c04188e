//! `ring`: 10,000 processes in a ring, a token passed 1,000 laps.

use super::{main_failed, ms};
use lona_runtime::{Pid, Runtime};
use std::time::Instant;

struct Token(u32);

pub fn run(rt: &Runtime) -> Result<(), String> {
    const N: u32 = 10_000;
    const M: u32 = 1_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            let t0 = Instant::now();
            let mut next: Pid = ctx.pid();
            for _ in 0..N - 1 {
                let to = next;
                next = ctx
                    .spawn(move |ctx| async move {
                        loop {
                            let Token(k) = ctx.receive::<Token>().await;
                            ctx.send(to, Token(k)).await;
                            if k == 0 {
                                return;
                            }
                        }
                    })
                    .await
                    .expect("spawn");
            }
            let last = next;
            ctx.send(last, Token(M)).await;
            loop {
                let Token(k) = ctx.receive::<Token>().await;
                if k == 1 {
                    ctx.send(last, Token(0)).await;
                    break;
                }
                ctx.send(last, Token(k - 1)).await;
            }
            t0.elapsed()
        })
        .map_err(main_failed)?;
    let msgs = N as u64 * M as u64;
    println!(
        "ring n={N} laps={M} msgs={msgs} total_ms={} ns_per_hop={:.1}",
        ms(elapsed),
        elapsed.as_nanos() as f64 / msgs as f64
    );
    Ok(())
}
