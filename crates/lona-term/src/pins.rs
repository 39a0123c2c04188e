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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fragment, Heap, Term};
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Pins held per code id (other tests of this binary make closures
    /// too: each test uses ids of its own).
    static HELD: Mutex<Option<HashMap<u64, i64>>> = Mutex::new(None);

    fn add(code: u64, by: i64) {
        *HELD
            .lock()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .entry(code)
            .or_default() += by;
    }

    fn held(code: u64) -> i64 {
        HELD.lock()
            .unwrap()
            .as_ref()
            .and_then(|m| m.get(&code).copied())
            .unwrap_or(0)
    }

    fn install() {
        set_code_pins(CodePins {
            retain: |c| add(c, 1),
            release: |c| add(c, -1),
        });
    }

    #[test]
    fn fragments_pin_their_closures_until_dropped_or_attached() {
        install();
        const A: u64 = 0x7E57_0001;
        const B: u64 = 0x7E57_0002;
        let h = Heap::new();
        // SAFETY: code ids are opaque to the heap.
        let (a, b) = unsafe { (h.closure(A, &[]), h.closure(B, &[Term::NIL])) };
        let nested = h.vector(&[a, h.list(&[b, a])]);
        let f = Fragment::new(nested);
        assert_eq!((held(A), held(B)), (2, 1));
        let g = Fragment::vector(&[a, nested]);
        assert_eq!((held(A), held(B)), (5, 2));
        drop(f);
        assert_eq!((held(A), held(B)), (3, 1));
        // Attached to a heap nobody visits (a Rust program's): it keeps
        // the pins until it is dropped.
        let kept = Heap::new();
        let k = kept.attach(Fragment::new(a));
        assert_eq!((held(A), held(B)), (4, 1));
        let _again = kept.copy_from(nested);
        assert_eq!((held(A), held(B)), (6, 2));
        let _ = k;
        drop(kept);
        assert_eq!((held(A), held(B)), (3, 1));
        // Attached to a visited heap (a process's: a VM asks it): the
        // heap holds the closures now, unpinned.
        let other = Heap::new();
        other.set_visited(true);
        let t = other.attach(g);
        assert_eq!((held(A), held(B)), (0, 0));
        let _copied = other.copy_from(nested);
        assert_eq!((held(A), held(B)), (0, 0));
        let _r = other.add_root(t);
        let mut found = 0;
        other.visit_foreign(&[], &mut |f| {
            found += (f == crate::Foreign::Code(A)) as usize
        });
        assert_eq!(found, 5, "3 attached, 2 copied");
        // Without pins: the caller is told nothing, and nothing is held.
        let u = Fragment::vector_unpinned(&[a, b]);
        assert_eq!((held(A), held(B)), (0, 0));
        let mut codes = Vec::new();
        u.visit_codes(|c| codes.push(c));
        codes.sort_unstable();
        assert_eq!(codes, vec![A, B]);
        drop(u);
        assert_eq!((held(A), held(B)), (0, 0));
    }
}
