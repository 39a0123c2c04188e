//! The reactor: one `epoll` instance (through `mio`) for every socket of
//! the node, watched by the scheduler's idle workers, and waking the
//! processes that wait on its sockets.
//!
//! # Readiness protocol
//! 1. A socket is registered once, edge-triggered, for reading and
//!    writing; its [`Registration`] owns a [`ScheduledIo`] slot found by
//!    the event's token (slot index and generation, so an event for a slot
//!    freed and reused is ignored).
//! 2. Whoever polls, on an event, first ORs the readiness into the slot's
//!    word (bumping its tick), then takes the waker of each direction that
//!    became ready and wakes it: the waiting process is queued like one a
//!    message arrived for.
//! 3. An operation (read, write, accept) first waits until its direction
//!    is ready ([`Registration::poll_ready`]): it stores its waker, *then*
//!    reads the readiness word, so either it sees an event that came in
//!    the meantime or the poller sees its waker (step 2's order,
//!    mirrored; both sides go through the slot's mutex).
//! 4. It then tries the system call. `WouldBlock` means the readiness it
//!    saw is used up: it clears that direction's bits, but only if the
//!    tick is still the one it saw (an event in between keeps them), and
//!    goes back to 3. This is tokio's scheme (`ScheduledIo`), which avoids
//!    both lost wake-ups and a second system call per operation.
//!
//! # Who polls (`docs/design.md`, D21)
//! 1. A worker that finds no work and would park (`worker.rs`, `idle.rs`)
//!    takes the poll instead if no other worker holds it ([`PollGuard`]),
//!    marks itself the runtime's poller, and waits in `epoll_wait` with no
//!    timeout. The processes its events wake are queued on *this* worker
//!    (its LIFO slot and local queue), where their data is hot.
//! 2. A worker that finds the poll taken parks as a waiter; whoever lets
//!    go of the poll unparks one waiter, so while any worker is idle one
//!    watches the sockets (workers of every runtime of the OS process
//!    share the poll: a process woken from another runtime's worker goes
//!    through its own runtime's injector, as any wake-up from outside).
//! 3. Waking a worker that waits in epoll (new work for it) goes through
//!    mio's waker (`Idle::unpark`); busy workers look at the poll without
//!    waiting every 61 slices, so events are seen when no worker is idle.
//!
//! With `LONA_IO_POLL=thread`, a reactor thread waits in `epoll_wait`
//! instead and every wake-up is a hand-off to a worker (the first design;
//! it is kept to measure one against the other).
//!
//! There is one reactor per OS process, started with the first socket: a
//! socket is owned by the process that holds it (closing when that process
//! ends and drops it), not by a runtime, and an idle node waits in
//! `epoll_wait` with no timeout: 10,000 idle connections cost no CPU.
//! Sockets are for Lona processes: their futures are woken by the
//! runtime's workers, not by any other executor. Wakers hold their
//! runtime weakly, so a socket that outlives its runtime wakes nothing.

use std::io;
use std::sync::atomic::{fence, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

use mio::{Events, Interest, Poll as MioPoll, Registry, Token};

/// Readiness bits of a slot's word (the low 16 bits; the tick above).
pub(crate) const READABLE: u64 = 1;
pub(crate) const WRITABLE: u64 = 2;
const READ_CLOSED: u64 = 4;
const WRITE_CLOSED: u64 = 8;
const ERROR: u64 = 16;
const BITS: u64 = 0xffff;

/// Which way an operation goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The bits that let an operation in this direction go ahead (a closed
    /// or failed socket lets the system call report it).
    fn mask(self) -> u64 {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR,
        }
    }
}

/// One registered socket's state, shared by its owner and the reactor.
#[derive(Default)]
struct ScheduledIo {
    /// `tick << 16 | bits`. Written by the reactor (ORs bits in, bumps the
    /// tick) and by the owner (clears bits it used up, if the tick is
    /// unchanged); read by both. SeqCst throughout: step 3's "store the
    /// waker, then read" must not pass step 2's "write, then take the
    /// waker" (the wakers' mutex orders the other half).
    readiness: AtomicU64,
    /// The process waiting to read / to write; written by the owner,
    /// taken by the reactor.
    reader: Mutex<Option<Waker>>,
    writer: Mutex<Option<Waker>>,
}

impl ScheduledIo {
    fn waker(&self, d: Direction) -> &Mutex<Option<Waker>> {
        match d {
            Direction::Read => &self.reader,
            Direction::Write => &self.writer,
        }
    }

    fn wake(&self, d: Direction) {
        let w = lock(self.waker(d)).take();
        if let Some(w) = w {
            w.wake();
        }
    }
}

/// A mutex whose holder cannot panic while holding it (the critical
/// sections only move an `Option<Waker>`); poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The slot table: written under its mutex by registration and
/// deregistration, read by the reactor per event.
struct Slots {
    entries: Vec<(u32, Option<Arc<ScheduledIo>>)>,
    free: Vec<u32>,
}

pub(crate) struct Reactor {
    registry: Registry,
    slots: Mutex<Slots>,
    /// Workers mode (the default; `docs/design.md` D21): no reactor
    /// thread; the poll is taken by one idle worker at a time, which waits
    /// in `epoll_wait` instead of parking, and busy workers look at it
    /// every few slices. `None` with `LONA_IO_POLL=thread`.
    polled: Option<Polled>,
}

/// The poll as workers share it (workers mode).
struct Polled {
    /// Held by the worker waiting in (or looking at) epoll.
    poll: Mutex<(MioPoll, Events)>,
    /// Makes the worker in epoll return.
    waker: mio::Waker,
    /// Workers parked because another held the poll, by their parker's
    /// address; `waiting` counts them (written under the lock, read after
    /// a fence by a worker letting go of the poll).
    waiters: Mutex<Vec<(usize, crossbeam_utils::sync::Unparker)>>,
    waiting: std::sync::atomic::AtomicUsize,
}

/// The waker's token in workers mode (no slot has it: indices are u32).
const WAKER: Token = Token(usize::MAX);

/// Whether workers poll (the default) rather than a reactor thread
/// (`LONA_IO_POLL=thread`, kept to measure one against the other).
fn workers_mode() -> bool {
    static MODE: OnceLock<bool> = OnceLock::new();
    *MODE.get_or_init(|| std::env::var("LONA_IO_POLL").map_or(true, |v| v != "thread"))
}

/// The reactor, if workers poll it and it has started.
pub(crate) fn polled() -> Option<&'static Reactor> {
    if !workers_mode() {
        return None;
    }
    REACTOR.get().and_then(|r| r.as_ref().ok().copied())
}

static REACTOR: OnceLock<Result<&'static Reactor, String>> = OnceLock::new();

/// Token layout: slot index in the low 32 bits, its generation above.
fn token(index: u32, gen: u32) -> Token {
    Token(((gen as usize) << 32) | index as usize)
}

impl Reactor {
    /// The node's reactor, started on first use.
    pub(crate) fn get() -> io::Result<&'static Reactor> {
        REACTOR
            .get_or_init(|| Reactor::start().map_err(|e| e.to_string()))
            .as_ref()
            .copied()
            .map_err(|e| io::Error::other(format!("the I/O reactor could not start: {e}")))
    }

    fn start() -> io::Result<&'static Reactor> {
        let poll = MioPoll::new()?;
        let registry = poll.registry().try_clone()?;
        let slots = Mutex::new(Slots {
            entries: Vec::new(),
            free: Vec::new(),
        });
        if workers_mode() {
            let waker = mio::Waker::new(poll.registry(), WAKER)?;
            let events = Events::with_capacity(1024);
            return Ok(Box::leak(Box::new(Reactor {
                registry,
                slots,
                polled: Some(Polled {
                    poll: Mutex::new((poll, events)),
                    waker,
                    waiters: Mutex::new(Vec::new()),
                    waiting: Default::default(),
                }),
            })));
        }
        let reactor: &'static Reactor = Box::leak(Box::new(Reactor {
            registry,
            slots,
            polled: None,
        }));
        std::thread::Builder::new()
            .name("lona-io".into())
            .spawn(move || reactor.run(poll))?;
        Ok(reactor)
    }

    fn run(&self, mut poll: MioPoll) {
        let mut events = Events::with_capacity(1024);
        loop {
            if let Err(e) = poll.poll(&mut events, None) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                log::error!(target: "lona::io", "the I/O reactor stopped: {e}");
                return;
            }
            self.dispatch(&events);
        }
    }

    /// Workers mode: the poll, if no other worker holds it.
    pub(crate) fn try_take(&self) -> Option<PollGuard<'_>> {
        let p = self.polled.as_ref()?;
        let g = p.poll.try_lock().ok()?;
        Some(PollGuard {
            reactor: self,
            polled: p,
            g: Some(g),
        })
    }

    /// Workers mode: looks at the poll without waiting, if no other
    /// worker holds it (a busy worker, every few slices).
    pub(crate) fn try_turn_now(&self) {
        if let Some(mut g) = self.try_take() {
            g.turn(Some(std::time::Duration::ZERO));
        }
    }

    /// Workers mode: an idle worker that found the poll taken parks on
    /// `parker` as a waiter, unparked when the holder lets go of the poll
    /// (`PollGuard`'s drop), so that an idle worker always watches the
    /// sockets (of every runtime: a worker of one may wake processes of
    /// another). True if the poll looked free after registering: the
    /// caller tries to take it again instead of parking.
    pub(crate) fn wait_as_waiter(
        &self,
        parker: &crossbeam_utils::sync::Parker,
        timeout: Option<std::time::Duration>,
    ) -> bool {
        let Some(p) = &self.polled else {
            return false;
        };
        let id = parker as *const _ as usize;
        lock(&p.waiters).push((id, parker.unparker().clone()));
        // Relaxed: under the lock; published by the fence below.
        p.waiting.fetch_add(1, Relaxed);
        // The holder's order is: let go, fence, read `waiting`; this one's:
        // count, fence, look at the lock. Either this sees it free or the
        // holder sees this waiter (and unparks it).
        fence(SeqCst);
        let free = p.poll.try_lock().is_ok();
        if !free {
            match timeout {
                Some(d) => parker.park_timeout(d),
                None => parker.park(),
            }
        }
        let mut w = lock(&p.waiters);
        if let Some(i) = w.iter().position(|(x, _)| *x == id) {
            w.swap_remove(i);
            p.waiting.fetch_sub(1, Relaxed);
        }
        free
    }

    /// Workers mode: makes a worker waiting in [`PollGuard::turn`]
    /// return.
    pub(crate) fn wake_poller(&self) {
        if let Some(p) = &self.polled {
            let _ = p.waker.wake();
        }
    }

    fn dispatch(&self, events: &Events) {
        {
            for ev in events.iter() {
                if ev.token() == WAKER {
                    continue;
                }
                let t = ev.token().0;
                let (index, gen) = (t as u32, (t >> 32) as u32);
                let io = {
                    let slots = lock(&self.slots);
                    match slots.entries.get(index as usize) {
                        Some((g, Some(io))) if *g == gen => io.clone(),
                        _ => continue, // deregistered since
                    }
                };
                let mut bits = 0;
                if ev.is_readable() {
                    bits |= READABLE;
                }
                if ev.is_writable() {
                    bits |= WRITABLE;
                }
                if ev.is_read_closed() {
                    bits |= READ_CLOSED;
                }
                if ev.is_write_closed() {
                    bits |= WRITE_CLOSED;
                }
                if ev.is_error() {
                    bits |= ERROR;
                }
                // Step 2: readiness first (with a new tick), then wakers.
                let _ = io.readiness.fetch_update(SeqCst, SeqCst, |w| {
                    Some(((w >> 16) + 1) << 16 | (w & BITS) | bits)
                });
                if bits & Direction::Read.mask() != 0 {
                    io.wake(Direction::Read);
                }
                if bits & Direction::Write.mask() != 0 {
                    io.wake(Direction::Write);
                }
            }
        }
    }
}

/// The poll, held by one worker (workers mode); letting go of it unparks
/// a waiter ([`Reactor::wait_as_waiter`]).
pub(crate) struct PollGuard<'a> {
    reactor: &'a Reactor,
    polled: &'a Polled,
    g: Option<std::sync::MutexGuard<'a, (MioPoll, Events)>>,
}

impl PollGuard<'_> {
    /// Waits for events up to `timeout` (`None`: until an event or
    /// [`Reactor::wake_poller`]) and wakes their processes from here.
    pub(crate) fn turn(&mut self, timeout: Option<std::time::Duration>) {
        let Some(g) = self.g.as_mut() else { return };
        let (poll, events) = &mut **g;
        match poll.poll(events, timeout) {
            Ok(()) => self.reactor.dispatch(events),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => log::error!(target: "lona::io", "epoll_wait: {e}"),
        }
    }
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        drop(self.g.take());
        let p = self.polled;
        // Let go, SeqCst fence, then the count (`wait_as_waiter`).
        fence(SeqCst);
        if p.waiting.load(Relaxed) > 0 {
            let w = lock(&p.waiters).pop();
            if let Some((_, u)) = w {
                p.waiting.fetch_sub(1, Relaxed);
                u.unpark();
            }
        }
    }
}

/// A socket's registration with the reactor (its slot, freed when
/// dropped); [`Evented`] pairs it with its socket.
pub(crate) struct Registration {
    io: Arc<ScheduledIo>,
    index: u32,
    reactor: &'static Reactor,
}

impl Registration {
    /// Registers `source` for reading and writing (edge-triggered).
    pub(crate) fn new(source: &mut impl mio::event::Source) -> io::Result<Registration> {
        let reactor = Reactor::get()?;
        // Assumed ready until a try says otherwise: a socket that already
        // has data (a fresh connection's request) is read at once, without
        // a trip through the reactor; a wrong guess costs one `WouldBlock`.
        let io = Arc::new(ScheduledIo {
            readiness: AtomicU64::new(READABLE | WRITABLE),
            ..ScheduledIo::default()
        });
        let (index, gen) = {
            let mut s = lock(&reactor.slots);
            let index = match s.free.pop() {
                Some(i) => i,
                None => {
                    s.entries.push((0, None));
                    (s.entries.len() - 1) as u32
                }
            };
            let e = &mut s.entries[index as usize];
            e.0 = e.0.wrapping_add(1);
            e.1 = Some(io.clone());
            (index, e.0)
        };
        let r = reactor.registry.register(
            source,
            token(index, gen),
            Interest::READABLE | Interest::WRITABLE,
        );
        let reg = Registration { io, index, reactor };
        r.map(|()| reg)
    }

    /// Step 3: ready to try an operation in direction `d`, or `Pending`
    /// with the waker stored.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, d: Direction) -> Poll<u64> {
        let w = self.io.readiness.load(SeqCst);
        if w & d.mask() != 0 {
            return Poll::Ready(w);
        }
        {
            let mut slot = lock(self.io.waker(d));
            match &*slot {
                Some(old) if old.will_wake(cx.waker()) => {}
                _ => *slot = Some(cx.waker().clone()),
            }
        }
        let w = self.io.readiness.load(SeqCst);
        if w & d.mask() != 0 {
            Poll::Ready(w)
        } else {
            Poll::Pending
        }
    }

    /// Step 4: the readiness `seen` (a word `poll_ready` returned) is used
    /// up in direction `d`; cleared unless an event came in since.
    pub(crate) fn clear(&self, seen: u64, d: Direction) {
        let ready = match d {
            Direction::Read => READABLE,
            Direction::Write => WRITABLE,
        };
        let _ = self
            .io
            .readiness
            .compare_exchange(seen, seen & !ready, SeqCst, SeqCst);
    }

    /// One try of the non-blocking `op` in direction `d`, without waiting
    /// and without charging: `WouldBlock` when the socket is not ready
    /// (readiness used up is cleared, as in `poll_io`).
    pub(crate) fn try_io<R>(
        &self,
        d: Direction,
        op: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        self.try_io_until(d, op, |_| false)
    }

    /// [`Registration::try_io`] for a stream (see
    /// [`Registration::poll_stream_io`]).
    pub(crate) fn try_stream_io(
        &self,
        d: Direction,
        len: usize,
        op: impl FnOnce() -> io::Result<usize>,
    ) -> io::Result<usize> {
        self.try_io_until(d, op, |&n| n > 0 && n < len)
    }

    fn try_io_until<R>(
        &self,
        d: Direction,
        op: impl FnOnce() -> io::Result<R>,
        used_up: impl Fn(&R) -> bool,
    ) -> io::Result<R> {
        let seen = self.io.readiness.load(SeqCst);
        if seen & d.mask() == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let r = op();
        let drained = match &r {
            Err(e) => e.kind() == io::ErrorKind::WouldBlock,
            Ok(v) => used_up(v),
        };
        if drained {
            self.clear(seen, d);
        }
        r
    }
}

/// A socket and its registration: every socket type of `io` is one. When
/// dropped, the socket is deregistered, then closed, then its slot freed.
pub(crate) struct Evented<S: mio::event::Source> {
    // Field order: the socket closes before the slot is given back.
    pub(crate) source: S,
    pub(crate) reg: Registration,
}

impl<S: mio::event::Source> Evented<S> {
    pub(crate) fn new(mut source: S) -> io::Result<Evented<S>> {
        let reg = Registration::new(&mut source)?;
        Ok(Evented { source, reg })
    }
}

impl<S: mio::event::Source> Drop for Evented<S> {
    fn drop(&mut self) {
        let _ = self.reg.reactor.registry.deregister(&mut self.source);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut s = lock(&self.reactor.slots);
        if let Some(e) = s.entries.get_mut(self.index as usize) {
            e.1 = None;
        }
        s.free.push(self.index);
    }
}
