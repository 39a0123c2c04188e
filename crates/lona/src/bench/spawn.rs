//! `spawn`: 1,000,000 processes that each block in `receive`; then stop
//! them all.

use super::{main_failed, ms, rss_bytes};
use lona_runtime::Runtime;
use std::time::{Duration, Instant};

struct Stop;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const N: usize = 1_000_000;
    let rss0 = rss_bytes();
    let (spawn_time, pids) = rt
        .block_on(|ctx| async move {
            let mut pids = Vec::with_capacity(N);
            let t0 = Instant::now();
            for _ in 0..N {
                let p = ctx
                    .spawn(|ctx| async move {
                        ctx.receive::<Stop>().await;
                    })
                    .await;
                pids.push(p.expect("spawn within the limit"));
            }
            (t0.elapsed(), pids)
        })
        .map_err(main_failed)?;
    // Wait until every process has run up to its receive.
    while rt.processes().len() < N {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(50));
    let rss1 = rss_bytes();
    let t1 = Instant::now();
    for p in &pids {
        rt.send(*p, Stop);
    }
    while rt.process_count() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let teardown = t1.elapsed();
    let bytes = (rss1.saturating_sub(rss0) as f64 - (pids.capacity() * 8) as f64) / N as f64;
    println!(
        "spawn n={N} total_ms={} ns_per_spawn={:.1} bytes_per_process={:.1} teardown_ms={}",
        ms(spawn_time),
        spawn_time.as_nanos() as f64 / N as f64,
        bytes,
        ms(teardown)
    );
    Ok(())
}
