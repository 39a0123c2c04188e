//! An idle runtime uses no CPU. Its own test binary, so that no other test
//! runs in the process while it measures.

use lona_runtime::Builder;
use std::time::Duration;

fn rt(workers: usize) -> lona_runtime::Runtime {
    Builder::default().workers(workers).build().unwrap()
}

#[test]
fn idle_runtime_parks_its_workers() {
    let rt = rt(2);
    assert_eq!(rt.block_on(|_| async { 0 }), Ok(0));
    std::thread::sleep(Duration::from_millis(50));
    // CPU time of the whole test process over an idle 200 ms window.
    let cpu = || {
        let s = std::fs::read_to_string("/proc/self/stat").unwrap();
        let f: Vec<&str> = s.rsplit(')').next().unwrap().split_whitespace().collect();
        f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
    };
    let before = cpu();
    std::thread::sleep(Duration::from_millis(200));
    let used = cpu() - before;
    // Ticks are 10 ms; spinning workers would burn ~40 ticks.
    eprintln!("idle ticks: {used}");
    assert!(used <= 5, "idle runtime used {used} ticks of CPU");
}
