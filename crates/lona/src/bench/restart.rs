//! `restart`: a supervisor-like loop restarting a crashing linked child
//! 100,000 times.

use super::{main_failed, ms};
use lona_runtime::{Exit, Reason, Runtime};
use std::time::Instant;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const C: u32 = 100_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            ctx.trap_exit(true).await;
            let crash = Reason::from("crash");
            let t0 = Instant::now();
            for _ in 0..C {
                let r = crash.clone();
                let child = ctx
                    .spawn_link(move |ctx| async move {
                        ctx.exit(r).await;
                    })
                    .await
                    .expect("spawn");
                let e = ctx.receive_where(|e: &Exit| e.from == child).await;
                assert_eq!(e.reason, crash);
            }
            t0.elapsed()
        })
        .map_err(main_failed)?;
    println!(
        "restart crashes={C} total_ms={} us_per_restart={:.2}",
        ms(elapsed),
        elapsed.as_secs_f64() * 1e6 / C as f64
    );
    Ok(())
}
