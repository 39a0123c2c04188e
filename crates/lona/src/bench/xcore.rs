//! `xcore`: a figure of the host, not of Lona: the round trip of one cache
//! line between two threads pinned to CPUs 0 and 1 (each waits for the
//! other's store, then stores). Two-worker figures depend on it: on this
//! project's 2-vCPU guests it moves between ~90 and ~450 ns from one minute
//! to the next (the host moving the vCPUs), and a workload that passes a
//! line across cores per message follows it. `scripts/bench-workers.sh`
//! prints it beside every workload, so that a table says which host it
//! was measured on.

use std::sync::atomic::{AtomicU64, Ordering::*};
use std::time::Instant;

const ROUNDS: u64 = 200_000;

#[repr(align(128))]
struct Line(AtomicU64);

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes a bit
    // within it (cpu < CPU_SETSIZE, checked), and sched_setaffinity reads
    // `size_of::<cpu_set_t>()` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("no cpu {cpu}"));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin a thread to cpu {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

pub fn run() -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return Err("xcore needs two CPUs".into());
    }
    let line = Line(AtomicU64::new(0));
    let ns = std::thread::scope(|s| -> Result<f64, String> {
        let other = s.spawn(|| -> Result<(), String> {
            pin(1)?;
            for i in 0..ROUNDS {
                while line.0.load(Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                line.0.store(2 * i + 2, Release);
            }
            Ok(())
        });
        let pinned = pin(0);
        let t0 = Instant::now();
        for i in 0..ROUNDS {
            line.0.store(2 * i + 1, Release);
            while line.0.load(Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        let ns = t0.elapsed().as_secs_f64() * 1e9 / ROUNDS as f64;
        other
            .join()
            .map_err(|_| "the other thread panicked".to_string())??;
        pinned?;
        Ok(ns)
    })?;
    println!("xcore rounds={ROUNDS} round_trip_ns={ns:.0}");
    Ok(())
}
