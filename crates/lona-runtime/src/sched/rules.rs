//! [`Rules`]: the signal rules as the scheduler calls them. The rules
//! themselves (links, monitors, exit signals, aliases, info requests) are
//! the floor above (`rules::links`); the scheduler meets them at three
//! points only, and calls them through these plain function pointers,
//! set once when the runtime is built (`node::builder`), so this floor
//! never names a rule. Messages never go through them: a drain moves a
//! message of the running process into its mailbox itself (`StepCx::drain`),
//! and only a signal, or a node addressed to an earlier process in the
//! slot, costs the indirect call.

use crate::base::envelope::Envelope;
use crate::sched::cx::StepCx;
use crate::sched::process::{Extra, Private};
use crate::sched::shared::Shared;
use crate::{Pid, Reason};

/// The three points where the scheduler hands a process's signals to the
/// rules (module doc).
#[derive(Clone, Copy)]
pub(crate) struct Rules {
    /// A drain of a running process that is not ending met a signal, or
    /// a node addressed to an earlier process in its slot: act on it.
    pub(crate) on_signal: fn(&mut StepCx<'_>, Envelope),
    /// A node reached a process that is ending (its drain after an exit
    /// signal took effect, or its closed inbox in `worker::finish`):
    /// answer it as a dead process would.
    pub(crate) on_node_dying: fn(&Shared, &mut Private, Pid, Envelope),
    /// The process `pid` ended with this reason: tell its links and
    /// monitors (its name was already released).
    pub(crate) notify_end: fn(&Shared, Pid, &Reason, &mut Extra),
}
