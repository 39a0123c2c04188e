//! Helpers shared by the VM's integration tests.
#![allow(dead_code)]

/// The worker count for a test that holds for any number of workers:
/// `n`, or `LONA_TEST_WORKERS` when it is set (`scripts/stress-workers.sh`
/// runs the suites with 16 and 64 workers on two cores that way). Tests
/// whose point is one schedule (one worker's fairness, two workers'
/// latency) build their runtime with a literal count instead.
pub fn workers(n: usize) -> usize {
    match std::env::var("LONA_TEST_WORKERS") {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&w| w > 0)
            .unwrap_or_else(|| panic!("LONA_TEST_WORKERS={v:?}: expected a positive integer")),
        Err(_) => n,
    }
}
