//! `suprestart`: a one-for-one supervisor restarting a child that crashes
//! at once, 100,000 times. Each start tells the bench process, which
//! counts them.

use super::{main_failed, ms};
use lona_otp::{ChildSpec, Strategy, Supervisor};
use lona_runtime::{Reason, Runtime};
use std::time::{Duration, Instant};

struct Started;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const R: u32 = 100_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            ctx.trap_exit(true).await;
            let me = ctx.pid();
            let crash = Reason::from("crash");
            let spec = ChildSpec::new("crasher", move |ctx| {
                let crash = crash.clone();
                Box::pin(async move {
                    let pid = ctx
                        .spawn_link(move |c| async move { match c.exit(crash).await {} })
                        .await
                        .map_err(Reason::custom)?;
                    ctx.send(me, Started).await;
                    Ok(pid)
                })
            });
            let t0 = Instant::now();
            let sup = Supervisor::new(Strategy::OneForOne)
                .intensity(10 * R, Duration::from_secs(1))
                .child(spec)
                .start_link(&ctx, None)
                .await
                .expect("start");
            // The first start and R restarts.
            for _ in 0..=R {
                ctx.receive::<Started>().await;
            }
            let e = t0.elapsed();
            sup.stop(&ctx).await.expect("stop");
            e
        })
        .map_err(main_failed)?;
    println!(
        "suprestart restarts={R} total_ms={} us_per_restart={:.3}",
        ms(elapsed),
        elapsed.as_secs_f64() * 1e6 / R as f64
    );
    Ok(())
}
