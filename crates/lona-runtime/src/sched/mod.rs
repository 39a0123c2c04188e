//! The scheduler: what a process is ([`Process`](crate::Process), its
//! private part, its slot in the process table), what it sees while it
//! runs ([`StepCx`](crate::StepCx)), the state the workers share (`shared`:
//! delivery, waking, scheduling, spawning, ending), the worker threads
//! (`worker`, `idle`), and the services they drive: timers, registered
//! names, the reactor idle workers wait in, visits' tickets, panics and
//! crash reports.
//!
//! Uses only `base`. The signal rules, one floor up, are reached through
//! [`rules::Rules`]: three function pointers the builder sets, so this
//! floor never names a rule. Its core types are mutually recursive (a
//! slot holds a process, whose step takes a `StepCx` pointing at the slot,
//! the shared state and the worker), so `cx`, `process`, `rules`,
//! `shared` and `worker` use each other; every other file here uses only
//! files below it.

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
