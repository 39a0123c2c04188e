//! `mesh`: 100 processes; each sends 20,000 messages to pseudo-random
//! others (itself included), then `Fin` to every one; each counts what it
//! received until it has a `Fin` from all. The sequence is the one of
//! `anchors.erl`: per process `I` (1-based) a 32-bit xorshift (13, 17, 5)
//! seeded with `(I * 2654435761) mod 2^32 | 1`, the target `x mod N`.

use super::{main_failed, ms};
use lona_runtime::{Ctx, Pid, Runtime};
use std::sync::Arc;
use std::time::Instant;

const N: u64 = 100;
const M: u64 = 20_000;

struct Peers(Arc<Vec<Pid>>);
enum Mesh {
    Msg(#[allow(dead_code)] u64),
    Fin,
}
struct Got(u64);

/// The xorshift step of `anchors.erl`'s `mesh_send`, on 32 bits.
pub(super) fn xorshift(x: u64) -> u64 {
    let x = x ^ ((x << 13) & 0xFFFF_FFFF);
    let x = x ^ (x >> 17);
    x ^ ((x << 5) & 0xFFFF_FFFF)
}

/// The first state of process `i` (1-based).
pub(super) fn seed(i: u64) -> u64 {
    ((i * 2_654_435_761) & 0xFFFF_FFFF) | 1
}

async fn node(ctx: Ctx, parent: Pid, i: u64) {
    let Peers(peers) = ctx.receive::<Peers>().await;
    let n = peers.len() as u64;
    let mut x = seed(i);
    for k in (1..=M).rev() {
        x = xorshift(x);
        ctx.send(peers[(x % n) as usize], Mesh::Msg(k)).await;
    }
    for &p in peers.iter() {
        ctx.send(p, Mesh::Fin).await;
    }
    let (mut fins, mut count) = (n, 0u64);
    while fins > 0 {
        match ctx.receive::<Mesh>().await {
            Mesh::Msg(_) => count += 1,
            Mesh::Fin => fins -= 1,
        }
    }
    ctx.send(parent, Got(count)).await;
}

pub fn run(rt: &Runtime) -> Result<(), String> {
    let (elapsed, total) = rt
        .block_on(|ctx| async move {
            let me = ctx.pid();
            let t0 = Instant::now();
            let mut pids = Vec::with_capacity(N as usize);
            for i in 1..=N {
                pids.push(ctx.spawn(move |c| node(c, me, i)).await.expect("spawn"));
            }
            let peers = Arc::new(pids);
            for &p in peers.iter() {
                ctx.send(p, Peers(peers.clone())).await;
            }
            let mut total = 0;
            for _ in 0..N {
                total += ctx.receive::<Got>().await.0;
            }
            (t0.elapsed(), total)
        })
        .map_err(main_failed)?;
    if total != N * M {
        return Err(format!("mesh counted {total}, not {}", N * M));
    }
    println!(
        "mesh procs={N} msgs={total} total_ms={} msgs_per_s={:.1}",
        ms(elapsed),
        total as f64 / elapsed.as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequence is `anchors.erl`'s: the first targets of process 1,
    /// as `erl` computes them with `mesh_send`'s arithmetic (N = 100).
    #[test]
    fn xorshift_matches_the_erlang_sequence() {
        let mut x = seed(1);
        assert_eq!(x, 2_654_435_761);
        let mut targets = Vec::new();
        for _ in 0..5 {
            x = xorshift(x);
            targets.push(x % 100);
        }
        assert_eq!(targets, [9, 66, 75, 11, 39]);
        assert_eq!(x, 3_982_747_539);
    }
}
