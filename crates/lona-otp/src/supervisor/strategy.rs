//! Restart strategies and the restart intensity (OTP's supervisor flags).
//!
//! - `OneForOne`: the child that ended is restarted;
//! - `OneForAll`: every other child is stopped (reverse start order), then
//!   all are started again (start order);
//! - `RestForOne`: the children after it in start order are stopped, then
//!   it and they are started again.
//!
//! With every strategy, the children that depend on a restarted child
//! (transitively) are restarted with it. More than `intensity` restarts
//! within `period` and the supervisor gives up: it stops every child and
//! exits with `shutdown` (defaults: 1 restart in 5 seconds).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How a static supervisor restarts children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Only the child that ended (and its dependents).
    #[default]
    OneForOne,
    /// Every child.
    OneForAll,
    /// The child and the children started after it.
    RestForOne,
}

/// OTP's supervisor flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupFlags {
    /// The strategy (static supervisors; a dynamic one is one-for-one).
    pub strategy: Strategy,
    /// Restarts allowed within `period`.
    pub intensity: u32,
    /// The window of `intensity`.
    pub period: Duration,
}

impl Default for SupFlags {
    /// `one_for_one`, 1 restart in 5 seconds.
    fn default() -> Self {
        SupFlags {
            strategy: Strategy::OneForOne,
            intensity: 1,
            period: Duration::from_secs(5),
        }
    }
}

/// The restarts of the last `period`.
#[derive(Debug)]
pub(crate) struct Restarts {
    times: VecDeque<Instant>,
    intensity: u32,
    period: Duration,
}

impl Restarts {
    pub(crate) fn new(flags: &SupFlags) -> Restarts {
        Restarts {
            times: VecDeque::new(),
            intensity: flags.intensity,
            period: flags.period,
        }
    }

    /// Count one restart now; false if that makes more than `intensity`
    /// within `period` (the supervisor must give up).
    pub(crate) fn add(&mut self) -> bool {
        let now = Instant::now();
        while let Some(&t) = self.times.front() {
            if now.saturating_duration_since(t) > self.period {
                self.times.pop_front();
            } else {
                break;
            }
        }
        self.times.push_back(now);
        self.times.len() as u64 <= self.intensity as u64
    }
}
