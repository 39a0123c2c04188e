//! Registered names: `register`, `unregister`, `whereis`, send to a name.
//!
//! One map each way under one lock. A name is freed when its process ends,
//! *before* the process is marked exited ([`Registry::remove_pid_then`]
//! marks it under the lock), so nobody sees the process dead while its name
//! still resolves. A `register` racing the end is caught on both sides:
//! `register` re-checks that the process is alive after inserting, and the
//! exit path calls [`Registry::process_ended`] after marking it exited, so
//! a name can never outlive its process (fences in both: whichever runs
//! second sees the other's effect).

use crate::sched::process::IdMap;
use crate::Pid;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Why `register` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterError {
    /// The name is taken by another process.
    NameTaken {
        /// The name asked for.
        name: String,
        /// Its holder.
        holder: Pid,
    },
    /// The process already has a name.
    AlreadyRegistered {
        /// The process.
        pid: Pid,
        /// Its name.
        name: String,
    },
    /// The process does not exist.
    NoProc(Pid),
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::NameTaken { name, holder } => {
                write!(f, "name {name:?} is already registered to {holder}")
            }
            RegisterError::AlreadyRegistered { pid, name } => {
                write!(f, "process {pid} is already registered as {name:?}")
            }
            RegisterError::NoProc(pid) => write!(f, "process {pid} does not exist (noproc)"),
        }
    }
}
impl std::error::Error for RegisterError {}

/// Names may come from outside (a user's input made a name), so they are
/// hashed with per-map random seeds (`foldhash`: a multiply-and-fold,
/// several times faster than SipHash on a short name, looked up on every
/// call by name); pids are the runtime's own (`IdMap`).
#[derive(Default)]
struct Maps {
    by_name: HashMap<Box<str>, Pid, foldhash::fast::RandomState>,
    by_pid: IdMap<Pid, Box<str>>,
}

#[derive(Default)]
pub(crate) struct Registry {
    maps: RwLock<Maps>,
    /// Names registered: lets the exit path skip the lock when zero.
    count: AtomicUsize,
}

impl Registry {
    fn read(&self) -> RwLockReadGuard<'_, Maps> {
        self.maps.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> RwLockWriteGuard<'_, Maps> {
        self.maps.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Insert; the caller re-checks liveness afterwards (module doc).
    pub(crate) fn insert(&self, name: &str, pid: Pid) -> Result<(), RegisterError> {
        let mut m = self.write();
        if let Some(holder) = m.by_name.get(name) {
            return Err(RegisterError::NameTaken {
                name: name.into(),
                holder: *holder,
            });
        }
        if let Some(old) = m.by_pid.get(&pid) {
            return Err(RegisterError::AlreadyRegistered {
                pid,
                name: old.to_string(),
            });
        }
        m.by_name.insert(name.into(), pid);
        m.by_pid.insert(pid, name.into());
        // SeqCst: the count is the lock-free "any names?" check of the exit
        // path, a store-load pair with it (see `process_ended`).
        self.count.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Insert `name` for a process being spawned, running `publish` (which
    /// makes it alive) under the registry's lock, so no one finds the name
    /// before the process is alive. When the name is taken, `publish` is
    /// dropped without running.
    pub(crate) fn insert_publishing(
        &self,
        name: &str,
        pid: Pid,
        publish: impl FnOnce(),
    ) -> Result<(), crate::SpawnError> {
        let mut m = self.write();
        if let Some(holder) = m.by_name.get(name) {
            return Err(crate::SpawnError::NameTaken {
                name: name.into(),
                holder: *holder,
            });
        }
        publish();
        m.by_name.insert(name.into(), pid);
        m.by_pid.insert(pid, name.into());
        // SeqCst: as in `insert`.
        self.count.fetch_add(1, SeqCst);
        Ok(())
    }

    /// Remove `name`; returns its pid.
    pub(crate) fn remove(&self, name: &str) -> Option<Pid> {
        let mut m = self.write();
        let pid = m.by_name.remove(name)?;
        m.by_pid.remove(&pid);
        // SeqCst: as for the increment in `insert`.
        self.count.fetch_sub(1, SeqCst);
        Some(pid)
    }

    pub(crate) fn whereis(&self, name: &str) -> Option<Pid> {
        self.read().by_name.get(name).copied()
    }

    pub(crate) fn name_of(&self, pid: Pid) -> Option<String> {
        // SeqCst: a plain load on x86; a hint only (the lock decides).
        if self.count.load(SeqCst) == 0 {
            return None;
        }
        self.read().by_pid.get(&pid).map(|n| n.to_string())
    }

    /// Free the name of `pid`, if it has one, and run `exit` (which marks
    /// the process exited) while still holding the lock; without a name,
    /// just run `exit`.
    pub(crate) fn remove_pid_then(&self, pid: Pid, exit: impl FnOnce()) {
        // SeqCst: the load side of the store-load pair with `insert`'s
        // count increment (see `process_ended`).
        if self.count.load(SeqCst) > 0 && self.read().by_pid.contains_key(&pid) {
            let mut m = self.write();
            if let Some(name) = m.by_pid.remove(&pid) {
                m.by_name.remove(&name);
                // SeqCst: as for the increment in `insert`.
                self.count.fetch_sub(1, SeqCst);
            }
            exit();
            return;
        }
        exit();
    }

    /// Free the name of a process that ended (its state says exited).
    pub(crate) fn process_ended(&self, pid: Pid) {
        // The fence pairs with the one in `Shared::register` (store-load on
        // the state word vs. this count): a concurrent register either shows
        // here or sees the process dead in its re-check.
        std::sync::atomic::fence(SeqCst);
        // SeqCst: the load of that store-load pair.
        if self.count.load(SeqCst) == 0 {
            return;
        }
        let has = self.read().by_pid.contains_key(&pid);
        if has {
            let mut m = self.write();
            if let Some(name) = m.by_pid.remove(&pid) {
                m.by_name.remove(&name);
                // SeqCst: as for the increment in `insert`.
                self.count.fetch_sub(1, SeqCst);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        // SeqCst: a snapshot for callers; a plain load on x86.
        self.count.load(SeqCst)
    }
}
