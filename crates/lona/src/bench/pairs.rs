//! `pairs`: 1,000 independent ping-pong pairs, 1,000 round trips each:
//! independent work for every worker (round trips per second).

use super::pingpong::{pong_loop, Ping, Pong};
use super::{main_failed, ms};
use lona_runtime::Runtime;
use std::time::Instant;

struct Done;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const P: u64 = 1_000;
    const R: u64 = 1_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            let main = ctx.pid();
            let t0 = Instant::now();
            for _ in 0..P {
                ctx.spawn(move |ctx| async move {
                    let me = ctx.pid();
                    let pong = ctx.spawn(pong_loop).await.expect("spawn");
                    for _ in 0..R {
                        ctx.send(pong, Ping::Ping(me)).await;
                        ctx.receive::<Pong>().await;
                    }
                    ctx.send(pong, Ping::Stop).await;
                    ctx.send(main, Done).await;
                })
                .await
                .expect("spawn");
            }
            for _ in 0..P {
                ctx.receive::<Done>().await;
            }
            t0.elapsed()
        })
        .map_err(main_failed)?;
    let trips = P * R;
    println!(
        "pairs pairs={P} round_trips={trips} total_ms={} round_trips_per_s={:.1}",
        ms(elapsed),
        trips as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}
