//! Unix signals (SIGTERM, SIGINT, ...) as messages: [`Handle::notify_signals`]
//! hands each one to a chosen process, which decides what it means (an
//! orderly shutdown, say), as Erlang's `erl_signal_server` does.
//!
//! A thread of [`signal_hook`]'s iterator waits for the signals (their
//! handlers only write to a pipe, which is async-signal-safe) and sends
//! each as an [`OsSignal`] message through the runtime's [`Handle`].

use std::io;
use std::thread::JoinHandle;

use signal_hook::iterator::backend::Handle as SignalsHandle;
use signal_hook::iterator::Signals;

use crate::base::pid::Dest;
use crate::Handle;

pub use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};

/// The message [`Handle::notify_signals`] delivers: a Unix signal the OS
/// process received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OsSignal {
    /// The signal's number: [`SIGTERM`], [`SIGINT`], ...
    pub signo: i32,
}

impl OsSignal {
    /// The signal's name, `"SIGTERM"`, when it has one.
    pub fn name(&self) -> Option<&'static str> {
        signal_hook::low_level::signal_name(self.signo)
    }
}

/// Forwards signals while it lives (see [`Handle::notify_signals`]);
/// dropping it stops the forwarding thread and removes the handlers.
#[must_use = "signals are forwarded only while this lives"]
#[derive(Debug)]
pub struct SignalForwarder {
    handle: SignalsHandle,
    thread: Option<JoinHandle<()>>,
}

impl Drop for SignalForwarder {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Handle {
    /// Deliver the Unix signals `signals` (e.g. `[SIGTERM, SIGINT]`) as
    /// [`OsSignal`] messages to `to`, a pid or a registered name (looked
    /// up at each signal), for as long as the returned
    /// [`SignalForwarder`] lives. Unix only.
    ///
    /// - The signals no longer do what they did by default (end the OS
    ///   process): the receiving process decides, say by stopping its
    ///   supervision tree and returning from `main`'s `block_on`.
    /// - A signal arriving when `to` is not there (a dead pid, a name no
    ///   one holds) does what it would have done without forwarding (for
    ///   SIGTERM and SIGINT: the OS process ends), so a program whose
    ///   receiver is gone can still be stopped.
    /// - Several signals arriving close together may be delivered as one.
    /// - Dropping the forwarder stops the forwarding; the signals are then
    ///   *ignored*, not given back their default action (a limitation of
    ///   `signal-hook`): keep it for the program's life.
    /// - Signals that cannot be caught (SIGKILL, SIGSTOP) or must not be
    ///   (SIGSEGV, SIGILL, SIGFPE) are refused with an `InvalidInput`
    ///   error; so is a number that is not a signal.
    ///
    /// ```no_run
    /// use lona_runtime::os_signal::{OsSignal, SIGINT, SIGTERM};
    ///
    /// let rt = lona_runtime::Runtime::new().unwrap();
    /// let r = rt.block_on(|ctx| async move {
    ///     let _signals = ctx.handle().notify_signals(&[SIGTERM, SIGINT], ctx.pid())?;
    ///     // ... start the service ...
    ///     let sig: OsSignal = ctx.receive().await;
    ///     // ... stop it in order ...
    ///     Ok::<_, std::io::Error>(sig)
    /// });
    /// let sig = r??; // the main process's reason, then its own result
    /// eprintln!("stopped by {}", sig.name().unwrap_or("a signal"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn notify_signals(
        &self,
        signals: &[i32],
        to: impl Into<Dest>,
    ) -> io::Result<SignalForwarder> {
        // signal-hook panics on these; an error is the caller's to handle.
        if let Some(s) = signals
            .iter()
            .find(|s| signal_hook::consts::FORBIDDEN.contains(s))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("signal {s} cannot be forwarded"),
            ));
        }
        let mut iter = Signals::new(signals)?;
        let handle = iter.handle();
        let rt = self.clone();
        let to = to.into();
        let thread = std::thread::Builder::new()
            .name("lona-signals".into())
            .spawn(move || {
                for signo in iter.forever() {
                    if !deliver(&rt, &to, OsSignal { signo }) {
                        // Nobody to tell: the signal's default action.
                        let _ = signal_hook::low_level::emulate_default_handler(signo);
                    }
                }
            })?;
        Ok(SignalForwarder {
            handle,
            thread: Some(thread),
        })
    }
}

/// Send `sig` to `to`; false if `to` is not there.
fn deliver(rt: &Handle, to: &Dest, sig: OsSignal) -> bool {
    match to {
        Dest::Pid(p) => {
            if !rt.is_alive_now(*p) {
                return false;
            }
            rt.send(*p, sig);
            true
        }
        Dest::Name(n) => rt.send_name(n, sig).is_ok(),
    }
}
