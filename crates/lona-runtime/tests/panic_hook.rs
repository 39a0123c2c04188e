//! The runtime's panic hook chains to the one installed before it and puts
//! it back when the last runtime shuts down. Its own test binary: the hook
//! is global to the program.

use lona_runtime::{Builder, Reason};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[test]
fn hook_chains_to_the_previous_one_and_is_restored() {
    let seen = Arc::new(AtomicUsize::new(0));
    let s2 = seen.clone();
    std::panic::set_hook(Box::new(move |_| {
        s2.fetch_add(1, Ordering::SeqCst);
    }));
    let outside_panic = || {
        let _ = std::panic::catch_unwind(|| panic!("outside any process"));
    };

    let a = Builder::default().workers(1).build().unwrap();
    let b = Builder::default().workers(1).build().unwrap();
    // A panic inside a process is the runtime's (it becomes the reason,
    // with its location); the user's hook does not see it.
    let r = a.block_on(|_ctx| async { panic!("inside") });
    assert!(
        matches!(r, Err(Reason::Panic(ref p)) if p.location.is_some()),
        "{r:?}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    // Any other panic reaches the previous hook, while runtimes run...
    outside_panic();
    assert_eq!(seen.load(Ordering::SeqCst), 1, "chained while running");
    drop(a);
    outside_panic();
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "chained while one still runs"
    );
    b.shutdown();
    // ...and after the last one shut down, the previous hook is back.
    outside_panic();
    assert_eq!(seen.load(Ordering::SeqCst), 3, "restored");
    let _ = std::panic::take_hook();
}
