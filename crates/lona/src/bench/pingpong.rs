//! `pingpong`: two processes, 1,000,000 round trips.

use super::{main_failed, ms};
use lona_runtime::{Pid, Runtime};
use std::time::Instant;

pub(super) enum Ping {
    Ping(Pid),
    Stop,
}
pub(super) struct Pong;

pub(super) async fn pong_loop(ctx: lona_runtime::Ctx) {
    loop {
        match ctx.receive::<Ping>().await {
            Ping::Ping(from) => {
                ctx.send(from, Pong).await;
            }
            Ping::Stop => return,
        }
    }
}

pub fn run(rt: &Runtime) -> Result<(), String> {
    const R: u32 = 1_000_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let pong = ctx.spawn(pong_loop).await.expect("spawn");
            let t0 = Instant::now();
            for _ in 0..R {
                ctx.send(pong, Ping::Ping(me)).await;
                ctx.receive::<Pong>().await;
            }
            let e = t0.elapsed();
            ctx.send(pong, Ping::Stop).await;
            e
        })
        .map_err(main_failed)?;
    println!(
        "pingpong round_trips={R} total_ms={} ns_per_round_trip={:.1}",
        ms(elapsed),
        elapsed.as_nanos() as f64 / R as f64
    );
    Ok(())
}
