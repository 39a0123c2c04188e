//! The signal rules: links, monitors, exit signals, aliases, info.

pub(crate) mod info;
pub(crate) mod links;
pub(crate) mod signal;
pub(crate) mod timeout;
