//! Reductions for I/O: every socket operation a process polls costs one
//! reduction, so a process reading a socket that always has data is
//! preempted like any other (tokio's cooperative budget does the same).

use std::task::Context;

/// Charges the process being polled one reduction. True when its slice is
/// spent: the operation must return `Pending` and the process yields (it
/// is queued again at once; no waker is needed). Outside a Lona process
/// (another executor polling the future) nothing is charged.
pub(crate) fn spent(_cx: &Context<'_>) -> bool {
    crate::native::with_current_cx(|cx| {
        if cx.charge(1) {
            false
        } else {
            cx.yielded = true;
            true
        }
    })
    .unwrap_or(false)
}
