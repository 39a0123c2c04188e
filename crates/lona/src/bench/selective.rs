//! `selective`: a process with 10,000 non-matching messages queued
//! receives 10,000 matching ones.

use super::{main_failed, ms};
use lona_runtime::Runtime;
use std::time::Instant;

struct Junk(#[allow(dead_code)] u32);
struct Want(#[allow(dead_code)] u32);
struct Go;
struct Done;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const N: u32 = 10_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let p = ctx
                .spawn(move |ctx| async move {
                    ctx.receive::<Go>().await;
                    for _ in 0..N {
                        ctx.receive::<Want>().await;
                    }
                    ctx.send(me, Done).await;
                })
                .await
                .expect("spawn");
            for i in 0..N {
                ctx.send(p, Junk(i)).await;
            }
            for i in 0..N {
                ctx.send(p, Want(i)).await;
            }
            let t0 = Instant::now();
            ctx.send(p, Go).await;
            ctx.receive::<Done>().await;
            t0.elapsed()
        })
        .map_err(main_failed)?;
    println!("selective junk={N} wanted={N} total_ms={}", ms(elapsed));
    Ok(())
}
