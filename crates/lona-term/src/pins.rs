//! Pins on code: how a message keeps the code its closures name alive.
//!
//! A closure's code id is opaque to this crate, but the VM that made it
//! frees code once nothing can run it. A process heap is asked what it
//! holds (`scan.rs`); a [`Fragment`](crate::Fragment) in flight, or kept
//! by a Rust program, cannot be asked, so it *pins* instead:
//!
//! 1. Copying a closure into a fragment calls the installed `retain`
//!    with its code id, and the fragment remembers the id.
//! 2. Dropping the fragment, or attaching it to a heap (which the VM's
//!    collector then asks), calls `release` for each id it remembers.
//!
//! Without hooks installed ([`set_code_pins`]) nothing is called.

use std::sync::OnceLock;

/// What a VM does when a fragment starts and stops holding a closure's
/// code id. Both are called from any thread, also from `Drop`, and must
/// neither panic nor block for long.
#[derive(Clone, Copy, Debug)]
pub struct CodePins {
    /// A fragment now holds a closure with this code id.
    pub retain: fn(u64),
    /// A fragment no longer holds it (dropped, or attached to a heap).
    pub release: fn(u64),
}

static PINS: OnceLock<CodePins> = OnceLock::new();

/// Installs the hooks (once per OS process: later calls are ignored and
/// return false).
pub fn set_code_pins(pins: CodePins) -> bool {
    PINS.set(pins).is_ok()
}

/// Pins `code` (step 1).
#[inline]
pub(crate) fn retain(code: u64) {
    if let Some(p) = PINS.get() {
        (p.retain)(code);
    }
}

/// Unpins every id in `codes` (step 2).
pub(crate) fn release_all(codes: &[u64]) {
    if let Some(p) = PINS.get() {
        for c in codes {
            (p.release)(*c);
        }
    }
}
