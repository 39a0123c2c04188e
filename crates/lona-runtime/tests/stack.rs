//! Worker stacks: native processes run on their worker's stack, and a
//! stack overflow aborts the whole program (Rust cannot unwind from it), so
//! the default is generous and `Builder::stack_size` sets it.

use lona_runtime::Builder;

/// Recurse `n` levels with a 1 KiB frame each; returns `n`.
fn deep(n: u32) -> u32 {
    let frame = std::hint::black_box([n as u8; 1024]);
    if n == 0 {
        return frame[0] as u32;
    }
    deep(n - 1) + 1 + (frame[1023] as u32 & 0)
}

#[test]
fn the_default_stack_holds_a_deep_recursion() {
    // About 6 MiB of frames: std's 2 MiB thread default would abort here.
    let rt = Builder::default().workers(1).build().unwrap();
    assert_eq!(rt.block_on(|_ctx| async { deep(6 * 1024) }), Ok(6 * 1024));
}

#[test]
fn stack_size_sets_the_worker_stack() {
    let rt = Builder::default()
        .workers(1)
        .stack_size(96 << 20)
        .build()
        .unwrap();
    assert_eq!(rt.block_on(|_ctx| async { deep(48 * 1024) }), Ok(48 * 1024));
}
