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
    let r = deep(n - 1) + 1;
    // Keep the frame alive across the call.
    std::hint::black_box(&frame);
    r
}

#[test]
fn the_default_stack_holds_a_deep_recursion() {
    // At least 3 MiB of frames: std's 2 MiB thread default would abort.
    let rt = Builder::default().workers(1).build().unwrap();
    assert_eq!(rt.block_on(|_ctx| async { deep(3 * 1024) }), Ok(3 * 1024));
}

#[test]
fn stack_size_sets_the_worker_stack() {
    let rt = Builder::default()
        .workers(1)
        .stack_size(160 << 20)
        .build()
        .unwrap();
    // At least 24 MiB of frames, beyond the default.
    assert_eq!(rt.block_on(|_ctx| async { deep(24 * 1024) }), Ok(24 * 1024));
}
