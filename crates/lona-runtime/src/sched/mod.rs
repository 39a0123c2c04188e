//! The scheduler: processes, their table, the workers that run them.

pub(crate) mod cx;
pub(crate) mod idle;
pub(crate) mod load;
pub(crate) mod polled;
pub(crate) mod process;
pub(crate) mod reactor;
pub(crate) mod registry;
pub(crate) mod report;
pub(crate) mod rules;
pub(crate) mod shared;
pub(crate) mod table;
pub(crate) mod ticket;
pub(crate) mod timer;
pub(crate) mod worker;
