//! Crash reports and panics.
//!
//! A panic inside a process is caught by its worker and ends that process
//! with [`Reason::Panic`], carrying the panic message and location. To get
//! the location, a running runtime installs a panic hook that records it for
//! panics raised while a process steps, and keeps quiet about them (the
//! crash report below says it instead); any other panic goes to the hook
//! that was installed before. The hook is installed when the first runtime
//! is built and the previous one is put back when the last runtime shuts
//! down (a count, so several runtimes in one program share it).
//!
//! An abnormal end (not `Normal`, not `Shutdown`) of a process that no
//! process links to or monitors, caused by the process itself (a panic, its
//! own `exit`; not an exit signal from another process, whose cause is
//! reported or handled where it started), is reported through the `log` crate at
//! `error` level, target `lona::crash`, so an embedding application routes it
//! with its own logger. When no logger is installed, the report goes to
//! standard error so that it is never lost.

use crate::{PanicInfo, Pid, Reason};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};

thread_local! {
    static IN_PROCESS: Cell<bool> = const { Cell::new(false) };
    static LAST_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Runtimes alive, and the hook that was installed before the first.
static HOOK: Mutex<(usize, Option<Arc<Hook>>)> = Mutex::new((0, None));

/// A runtime starts: install the hook if it is the first.
pub(crate) fn install_hook() {
    let mut g = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    g.0 += 1;
    if g.0 > 1 {
        return;
    }
    let previous: Arc<Hook> = Arc::new(std::panic::take_hook());
    g.1 = Some(previous.clone());
    std::panic::set_hook(Box::new(move |info| {
        if IN_PROCESS.with(|c| c.get()) {
            let loc = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            LAST_LOCATION.with(|c| *c.borrow_mut() = loc);
        } else {
            previous(info);
        }
    }));
}

/// A runtime shut down: put the previous hook back if it was the last.
pub(crate) fn uninstall_hook() {
    if std::thread::panicking() {
        // std forbids changing the hook while unwinding (a runtime dropped
        // by a panic): leave ours in place, still chaining to the previous.
        return;
    }
    let mut g = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    g.0 = g.0.saturating_sub(1);
    if g.0 > 0 {
        return;
    }
    if let Some(previous) = g.1.take() {
        drop(std::panic::take_hook());
        std::panic::set_hook(Box::new(move |info| previous(info)));
    }
}

pub(crate) fn enter_process() {
    IN_PROCESS.with(|c| c.set(true));
}

/// Whether this thread is running a process's step right now.
pub(crate) fn in_process() -> bool {
    IN_PROCESS.with(|c| c.get())
}

pub(crate) fn leave_process() {
    IN_PROCESS.with(|c| c.set(false));
}

/// The exit reason for a panic caught inside a process (by the worker, or
/// by code that runs user code and survives its panics, as a supervisor
/// running a start function): its message and, when the panic happened
/// while a process stepped on this thread, its location.
pub fn panic_reason(payload: Box<dyn Any + Send>) -> Reason {
    let message = if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "explicit panic".to_string()
    };
    let location = LAST_LOCATION.with(|c| c.borrow_mut().take());
    // Dropping the payload could itself panic; contain it.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)));
    Reason::Panic(Arc::new(PanicInfo { message, location }))
}

/// Whether an exit with `reason` is abnormal (reported when unwatched).
pub(crate) fn is_abnormal(reason: &Reason) -> bool {
    !matches!(reason, Reason::Normal | Reason::Shutdown)
}

/// Report the end of a process nobody links to or monitors.
pub(crate) fn unwatched_end(pid: Pid, reason: &Reason) {
    if !is_abnormal(reason) {
        return;
    }
    // A custom reason's `Debug` is user code; `Reason`'s Debug contains
    // its panics (see `reason`).
    let text = match reason {
        Reason::Panic(p) => match &p.location {
            Some(l) => format!("process {pid} crashed: panicked at {l}: {}", p.message),
            None => format!("process {pid} crashed: panicked: {}", p.message),
        },
        r => format!("process {pid} crashed with reason {r:?}"),
    };
    if log::max_level() == log::LevelFilter::Off {
        eprintln!("=CRASH REPORT= {text}");
    } else {
        log::error!(target: "lona::crash", "{text}");
    }
}
