//! `call`: 1,000,000 synchronous calls to one `lona_otp::Server` (Erlang:
//! `gen_server:call`).

use super::{main_failed, ms};
use lona_otp::{Answer, ReplyTo, Server};
use lona_runtime::{Ctx, Reason, Runtime};
use std::time::Instant;

struct Counter(u64);

impl Server for Counter {
    type Call = u64;
    type Reply = u64;
    type Cast = ();
    type Info = ();
    async fn handle_call(&mut self, _: &Ctx, n: u64, _: ReplyTo<u64>) -> Answer<u64> {
        self.0 += n;
        Answer::Reply(self.0)
    }
}

pub fn run(rt: &Runtime) -> Result<(), String> {
    const C: u64 = 1_000_000;
    let elapsed = rt
        .block_on(|ctx| async move {
            let s = lona_otp::start(&ctx, Counter(0), None)
                .await
                .expect("start");
            let t0 = Instant::now();
            let mut last = 0;
            for _ in 0..C {
                last = s.call(&ctx, 1).await.expect("call");
            }
            let e = t0.elapsed();
            assert_eq!(last, C);
            s.stop(&ctx, Reason::Normal).await.expect("stop");
            e
        })
        .map_err(main_failed)?;
    println!(
        "call calls={C} total_ms={} us_per_call={:.3}",
        ms(elapsed),
        elapsed.as_secs_f64() * 1e6 / C as f64
    );
    Ok(())
}
