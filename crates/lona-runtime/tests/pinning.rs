//! `Builder::pin_workers`: a pinned runtime runs processes as any other,
//! and (on Linux) each worker thread may run on one core only.

use lona_runtime::{Builder, Pid};

/// The CPUs the calling thread may run on (Linux: its affinity mask).
#[cfg(target_os = "linux")]
fn thread_cpus() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set, zeroed and then filled in by the
    // system for the calling thread (pid 0); its size is passed with it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let r = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(r, 0, "sched_getaffinity failed");
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_cpus() -> Vec<usize> {
    Vec::new()
}

/// Runs `n` processes on a runtime of `workers` workers (pinned or not):
/// each plays 100 ping-pong round trips with a partner of its own and then
/// reports the CPUs its worker thread may use. Returns the reports, after
/// checking every round trip's answer.
fn run(pin: bool, workers: usize, n: u64) -> Vec<Vec<usize>> {
    let rt = Builder::default()
        .workers(workers)
        .pin_workers(pin)
        .build()
        .unwrap();
    let reports = rt.block_on(move |ctx| async move {
        let main = ctx.pid();
        for i in 0..n {
            ctx.spawn(move |ctx| async move {
                let me = ctx.pid();
                let echo = ctx
                    .spawn(|ctx| async move {
                        loop {
                            let (from, k): (Pid, u64) = ctx.receive().await;
                            ctx.send(from, k * 2).await;
                        }
                    })
                    .await
                    .unwrap();
                let mut sum = 0;
                for k in 0..100u64 {
                    ctx.send(echo, (me, k)).await;
                    sum += ctx.receive::<u64>().await;
                }
                ctx.send_exit(echo, lona_runtime::Reason::Kill).await;
                ctx.send(main, (i, sum, thread_cpus())).await;
            })
            .await
            .unwrap();
        }
        let mut got = Vec::new();
        for _ in 0..n {
            got.push(ctx.receive::<(u64, u64, Vec<usize>)>().await);
        }
        got
    });
    let mut reports = reports.expect("the main process failed");
    reports.sort_by_key(|r| r.0);
    assert_eq!(reports.len() as u64, n);
    for (want, (i, sum, _)) in reports.iter().enumerate() {
        assert_eq!(*i, want as u64);
        assert_eq!(*sum, 2 * (0..100u64).sum::<u64>());
    }
    reports.into_iter().map(|r| r.2).collect()
}

#[test]
fn pinned_workers_run_processes_each_on_one_core() {
    let allowed = thread_cpus();
    // One worker more than cores: two workers share a core (i mod n).
    let workers = allowed.len().max(1) + 1;
    for cpus in run(true, workers, 200) {
        if cfg!(target_os = "linux") {
            assert_eq!(cpus.len(), 1, "a pinned worker may run on {cpus:?}");
            assert!(allowed.contains(&cpus[0]), "{cpus:?} not in {allowed:?}");
        }
    }
}

#[test]
fn unpinned_workers_keep_the_programs_cores() {
    let allowed = thread_cpus();
    for cpus in run(false, 2, 50) {
        assert_eq!(cpus, allowed);
    }
}
