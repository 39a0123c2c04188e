//! `supstart`: a dynamic supervisor (Erlang: `simple_one_for_one`)
//! starting 100,000 workers, one `start_child` call each.

use super::{main_failed, ms};
use lona_otp::DynamicSupervisor;
use lona_runtime::{Ctx, Runtime};
use std::time::Instant;

pub fn run(rt: &Runtime) -> Result<(), String> {
    const N: u32 = 100_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            ctx.trap_exit(true).await;
            let sup = DynamicSupervisor::worker(|ctx: Ctx, _: ()| async move {
                ctx.receive::<()>().await;
            })
            .start_link(&ctx, None)
            .await
            .expect("start");
            let t0 = Instant::now();
            for _ in 0..N {
                sup.start_child(&ctx, ()).await.expect("start_child");
            }
            let e = t0.elapsed();
            assert_eq!(sup.count_children(&ctx).await.unwrap().active, N as usize);
            sup.stop(&ctx).await.expect("stop");
            e
        })
        .map_err(main_failed)?;
    println!(
        "supstart children={N} total_ms={} us_per_child={:.3}",
        ms(elapsed),
        elapsed.as_secs_f64() * 1e6 / N as f64
    );
    Ok(())
}
