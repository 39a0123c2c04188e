//! The ground floor: ids and the values every floor carries ([`Pid`],
//! [`Ref`], [`Reason`], [`Envelope`], the errors, [`Priority`]), and the
//! lock-free structures a process is made of: its state word (`state`),
//! inbox (`inbox`), mailbox (`mailbox`), the urgent run queues
//! (`priority`), the live count (`live`), and the reclaimer thread
//! (`reclaim`). The protocols here are loom-checked (`sync` swaps in
//! loom's atomics) and run under Miri.
//!
//! Uses no other floor: nothing here knows what a process runs, how it is
//! scheduled, or what a signal means.
//!
//! [`Pid`]: crate::Pid
//! [`Ref`]: crate::Ref
//! [`Reason`]: crate::Reason
//! [`Envelope`]: crate::Envelope
//! [`Priority`]: crate::Priority

pub(crate) mod envelope;
pub(crate) mod error;
pub(crate) mod inbox;
pub(crate) mod live;
pub(crate) mod mailbox;
pub(crate) mod pid;
pub(crate) mod priority;
pub(crate) mod reason;
pub(crate) mod reclaim;
pub(crate) mod state;
pub(crate) mod sync;
