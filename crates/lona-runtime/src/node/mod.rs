//! The node from any thread: building, running, handling and seeing it.

pub(crate) mod builder;
pub(crate) mod handle;
pub(crate) mod runtime;
pub(crate) mod stats;
pub(crate) mod visit;
