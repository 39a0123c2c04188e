//! Process identifiers.
//!
//! A [`Pid`] is a slot index in the process table plus the slot's
//! generation at spawn time. When the process exits its slot's generation
//! is bumped before the slot is reused, so a stale pid held by anyone never
//! reaches a newer process in the same slot (`docs/design.md`, D4). The
//! generation is 32 bits and wraps: a pid can name a later process only
//! after its slot has been reused 2^32 times (Erlang's pids wrap too).

use std::fmt;

/// The identifier of a process. Cheap to copy, compare and hash; printed
/// Erlang-style as `<0.INDEX.GENERATION>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid(u64);

impl Pid {
    pub(crate) const fn new(index: u32, generation: u32) -> Pid {
        Pid(((generation as u64) << 32) | index as u64)
    }

    /// The slot index in the process table.
    pub const fn index(self) -> u32 {
        self.0 as u32
    }

    /// The slot generation this pid was issued with.
    pub const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The pid as one 64-bit word (generation high, index low), the form a
    /// term heap stores it in.
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// The inverse of [`Pid::to_bits`]. Any word is a valid pid; one that
    /// names no live process simply reaches nobody.
    pub const fn from_bits(bits: u64) -> Pid {
        Pid(bits)
    }
}

impl fmt::Debug for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<0.{}.{}>", self.index(), self.generation())
    }
}

impl fmt::Display for Pid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The pid of the runtime itself, Erlang's `init` (`<0.0.0>`): exit
/// signals that no process sent come from it. Those are runtime shutdown's
/// `Shutdown` and `Kill` ([`Runtime::shutdown`](crate::Runtime::shutdown))
/// and [`Handle::send_exit`](crate::Handle::send_exit) from outside any
/// process; a process that traps exits sees them as
/// [`Exit`](crate::Exit)` { from: RUNTIME_PID, .. }`. When an Erlang node
/// stops, `init` takes the applications down and what survives is killed;
/// here the runtime is that `init`, so the signal names it rather than a
/// made-up pid. Slot 0 of the process table is reserved for it and never
/// holds a process, so this pid names no process: sending to it drops the
/// message, linking to or monitoring it gives `noproc`.
pub const RUNTIME_PID: Pid = Pid::new(0, 0);

/// Where a message or timer goes: a pid or a registered name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dest {
    /// A process.
    Pid(Pid),
    /// A registered name.
    Name(String),
}
impl From<Pid> for Dest {
    fn from(p: Pid) -> Dest {
        Dest::Pid(p)
    }
}
impl From<&str> for Dest {
    fn from(n: &str) -> Dest {
        Dest::Name(n.to_string())
    }
}
impl From<String> for Dest {
    fn from(n: String) -> Dest {
        Dest::Name(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_index_and_generation() {
        let p = Pid::new(0xdead_beef, 7);
        assert_eq!(p.index(), 0xdead_beef);
        assert_eq!(p.generation(), 7);
        assert_eq!(Pid::from_bits(p.to_bits()), p);
        assert_ne!(Pid::new(1, 0), Pid::new(1, 1));
        assert_eq!(format!("{p}"), "<0.3735928559.7>");
    }
}

/// A unique reference (Erlang's `make_ref()`): monitors, timers, request
/// tags. Unique within the node for its lifetime.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ref(u64);

impl Ref {
    /// A fresh reference. Cheap: each thread takes ids from a shared counter
    /// in blocks.
    pub fn new() -> Ref {
        use std::cell::Cell;
        use std::sync::atomic::{AtomicU64, Ordering};
        const BLOCK: u64 = 1024;
        static NEXT_BLOCK: AtomicU64 = AtomicU64::new(1);
        thread_local! {
            static RANGE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        }
        RANGE.with(|r| {
            let (mut next, mut end) = r.get();
            if next == end {
                // Relaxed: uniqueness needs only the RMW's atomicity.
                next = NEXT_BLOCK.fetch_add(1, Ordering::Relaxed) * BLOCK;
                end = next + BLOCK;
            }
            r.set((next + 1, end));
            Ref(next)
        })
    }

    /// The reference as a number (for a term heap).
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// The inverse of [`Ref::to_bits`].
    pub const fn from_bits(bits: u64) -> Ref {
        Ref(bits)
    }
}

impl Default for Ref {
    fn default() -> Self {
        Ref::new()
    }
}

impl fmt::Debug for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#Ref<0.{}>", self.0)
    }
}

#[cfg(test)]
mod ref_tests {
    use super::Ref;

    #[test]
    fn refs_are_unique_across_threads() {
        let mut all: Vec<Ref> = (0..4)
            .map(|_| std::thread::spawn(|| (0..3000).map(|_| Ref::new()).collect::<Vec<_>>()))
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 12_000);
    }
}
