//! The benchmark workloads of `shared/design/benchmarks.md`, written against
//! the native Rust API. Each prints exactly one line
//! `<workload> key=value ...`.

pub const NAMES: &[&str] = &["spawn", "skynet", "ring", "pingpong", "fanin", "fair", "selective"];

pub fn run(name: &str, workers: Option<usize>) -> Result<(), String> {
    let _ = workers;
    Err(format!("workload {name} is not written yet"))
}
