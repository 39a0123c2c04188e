//! `fair`: 2 × workers processes spinning forever (a loop that calls the
//! runtime's budget point), while a ping-pong pair measures 10,000
//! round-trip latencies.

use super::main_failed;
use super::pingpong::{pong_loop, Ping, Pong};
use lona_runtime::{Reason, Runtime};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const R: usize = 10_000;
    let hogs_n = rt.workers() * 2;
    let turns: Arc<Vec<AtomicU64>> = Arc::new((0..hogs_n).map(|_| AtomicU64::new(0)).collect());
    let t2 = turns.clone();
    let mut lat = rt
        .block_on(move |ctx| async move {
            let me = ctx.pid();
            let mut hogs = Vec::with_capacity(hogs_n);
            for i in 0..hogs_n {
                let turns = t2.clone();
                hogs.push(
                    ctx.spawn(move |ctx| async move {
                        let mut n = 0u64;
                        loop {
                            n = std::hint::black_box(n.wrapping_add(1));
                            if ctx.budget_left() == 1 {
                                // Last reduction of this slice: count the turn.
                                turns[i].fetch_add(1, Ordering::Relaxed);
                            }
                            ctx.charge(1).await;
                        }
                    })
                    .await
                    .expect("spawn"),
                );
            }
            let pong = ctx.spawn(pong_loop).await.expect("spawn");
            let mut lat = Vec::with_capacity(R);
            for _ in 0..R {
                let t0 = Instant::now();
                ctx.send(pong, Ping::Ping(me)).await;
                ctx.receive::<Pong>().await;
                lat.push(t0.elapsed().as_nanos() as u64);
            }
            for h in hogs {
                ctx.send_exit(h, Reason::Shutdown).await;
            }
            ctx.send(pong, Ping::Stop).await;
            lat
        })
        .map_err(main_failed)?;
    let min_turns = turns
        .iter()
        .map(|t| t.load(Ordering::Relaxed))
        .min()
        .unwrap_or(0);
    if min_turns == 0 {
        return Err("fair: a hog never got a turn".into());
    }
    lat.sort_unstable();
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "fair hogs={hogs_n} round_trips={R} p50_us={:.1} p99_us={:.1} max_us={:.1} min_hog_slices={min_turns}",
        us(lat[R / 2 - 1]),
        us(lat[R * 99 / 100 - 1]),
        us(lat[R - 1]),
    );
    Ok(())
}
