//! The signal rules, written once for every kind of process: control
//! signals and the messages they become (`signal`), links, monitors, exit
//! signals and aliases, and sending a signal (`links`), process info and
//! its answers (`info`), receive timeouts (`timeout`). Each adds its
//! operations to [`StepCx`](crate::StepCx).
//!
//! Uses `base` and `sched`; the scheduler calls up into it only through
//! `sched::rules::Rules` (set to [`links::RULES`]).

pub(crate) mod info;
pub(crate) mod links;
pub(crate) mod signal;
pub(crate) mod timeout;
