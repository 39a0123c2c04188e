//! The ground floor: ids, the values every floor carries, and the
//! lock-free structures a process is made of.

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
