//! `skynet`: a 10-ary tree of 1,000,000 leaves; each leaf sends its number
//! to its parent, each parent sums its children and sends the sum up.

use super::{main_failed, ms};
use lona_runtime::{Ctx, Pid, Runtime};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

fn skynet(
    ctx: Ctx,
    parent: Pid,
    num: u64,
    size: u64,
    div: u64,
) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        if size == 1 {
            ctx.send(parent, num).await;
            return;
        }
        let sub = size / div;
        let me = ctx.pid();
        for i in 0..div {
            ctx.spawn(move |c| skynet(c, me, num + i * sub, sub, div))
                .await
                .expect("spawn");
        }
        let mut sum = 0u64;
        for _ in 0..div {
            sum += ctx.receive::<u64>().await;
        }
        ctx.send(parent, sum).await;
    })
}

pub fn run(rt: &Runtime) -> Result<(), String> {
    let (elapsed, sum) = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let t0 = Instant::now();
            ctx.spawn(move |c| skynet(c, me, 0, 1_000_000, 10))
                .await
                .expect("spawn");
            let sum = ctx.receive::<u64>().await;
            (t0.elapsed(), sum)
        })
        .map_err(main_failed)?;
    if sum != 499_999_500_000 {
        return Err(format!("skynet: wrong sum {sum}"));
    }
    println!("skynet leaves=1000000 total_ms={}", ms(elapsed));
    Ok(())
}
