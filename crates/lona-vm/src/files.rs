//! Open files of Lonala processes (`file/open`, Erlang's `file:open`): a
//! handle term is a reference, looked up in one table, like a socket's.
//!
//! 1. **Work.** Every operation (open, read, read-line, write, position,
//!    close) is a job on the runtime's blocking pool, so no scheduler
//!    worker waits on a disk. The built-in queues it on the handle and
//!    returns a tag at once; the job sends the caller
//!    `[:lona.io/done tag value]`, which `lonala/file.lona` receives.
//! 2. **Order.** A handle's operations run one at a time, in the order
//!    they were queued: each handle has a queue, and at most one pool job
//!    drains it (`Inner::busy`), taking the file out of the record while
//!    it works on it. A write followed by a read sees the write.
//! 3. **Owner.** A handle belongs to the process that opened it: only the
//!    owner's operations are queued (another process gets
//!    `[:error :not-owner]`). Each handle has a watcher, a native process
//!    spawned linked to the owner and trapping exits (a socket's port
//!    process, without the socket): when the owner ends, however it ends,
//!    the watcher's end drops its guard, which closes the handle
//!    ([`shut`]). A file a job holds at that moment is closed by the job
//!    when it finishes.
//! 4. **Close.** `close` is a job queued after those before it: it closes
//!    the file and ends the watcher. From its call on, the handle is out
//!    of the table and every operation gives `[:error :closed]`.
//!
//! Who writes what (`Inner`, under its mutex): the owner's built-ins
//! (queue a job, mark `closed` on close), the draining job (`file`,
//! `busy`), and [`shut`] (everything, once).

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use lona_runtime::io::run_detached;
use lona_runtime::{Ctx, Exit, Handle, Pid, Ref};
use lona_term::{Fragment, Heap, Term};

/// The longest line `read-line` gives, in bytes (without its end): a file
/// without newlines cannot make the node buffer it whole.
pub(crate) const MAX_LINE: usize = 1024 * 1024;

/// The most bytes one `read` asks for.
pub(crate) const MAX_READ: usize = 64 * 1024 * 1024;

/// How much a refill for `read-line` reads.
const CHUNK: usize = 64 * 1024;

/// What a job does.
pub(crate) enum Op {
    /// The handle's first job.
    Open(String, OpenOptions),
    /// Up to `n` bytes (fewer only at the end).
    Read(usize),
    /// The next line, without its end.
    ReadLine,
    Write(Vec<u8>),
    Position(SeekFrom),
    Close,
}

struct Job {
    op: Op,
    to: Pid,
    tag: u64,
}

/// An open file and what `read-line` read past the position the process
/// sees (`ahead[at..]`).
struct Open {
    file: File,
    ahead: Vec<u8>,
    at: usize,
}

struct Inner {
    owner: Pid,
    /// `None` while the job holds it, or once closed.
    file: Option<Open>,
    queue: VecDeque<Job>,
    /// A pool job is draining `queue`.
    busy: bool,
    /// No more operations are taken (closed by its owner, or `shut`).
    closed: bool,
    /// The owner ended: the file is closed as soon as nobody holds it.
    shut: bool,
}

/// One handle.
pub(crate) struct FileRec {
    id: u64,
    inner: Mutex<Inner>,
    /// The watcher (set once, right after it is spawned).
    watcher: OnceLock<Pid>,
    handle: Handle,
}

/// Why an operation was not queued.
pub(crate) enum Refused {
    Closed,
    NotOwner,
}

/// The most bytes `slurp` and `file/read-lines` read of one file: a
/// larger one is `:file-too-large` (`file/open` and `file/read` read it
/// in parts).
pub(crate) const MAX_WHOLE: u64 = 64 * 1024 * 1024;

/// A bound was reached: the reason, as a job's error.
#[derive(Debug)]
struct Limit(&'static str);

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Limit {}

pub(crate) fn over(reason: &'static str) -> std::io::Error {
    std::io::Error::other(Limit(reason))
}

/// Whether `e` is a bound reached (not an error of the system).
pub(crate) fn is_limit(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|i| i.is::<Limit>())
}

/// A bound's reason, if `e` is a bound reached.
pub(crate) fn limit_reason(e: &std::io::Error) -> Option<&'static str> {
    e.get_ref()
        .and_then(|i| i.downcast_ref::<Limit>())
        .map(|l| l.0)
}

/// The bytes of `r` to its end, if there are at most [`MAX_WHOLE`]
/// (`size_hint`: what to make room for first).
pub(crate) fn read_whole(r: impl Read, size_hint: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(size_hint.min(MAX_WHOLE) as usize + 1);
    r.take(MAX_WHOLE + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_WHOLE {
        return Err(over("file-too-large"));
    }
    Ok(buf)
}

/// What the watcher is told.
pub(crate) struct Stop;

fn table() -> MutexGuard<'static, HashMap<u64, Arc<FileRec>>> {
    static T: OnceLock<Mutex<HashMap<u64, Arc<FileRec>>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The handle `id`, if it is open.
pub(crate) fn get(id: u64) -> Option<Arc<FileRec>> {
    table().get(&id).cloned()
}

/// How many handles are open (tests).
pub(crate) fn count() -> usize {
    table().len()
}

impl FileRec {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A handle owned by `owner`, in the table (its open job is queued
    /// by [`FileRec::start`] once its watcher, whose guard is
    /// [`ShutOnDrop`], is spawned).
    pub(crate) fn new(owner: Pid, handle: Handle) -> Arc<Self> {
        let rec = Arc::new(FileRec {
            id: Ref::new().to_bits(),
            inner: Mutex::new(Inner {
                owner,
                file: None,
                queue: VecDeque::new(),
                busy: false,
                closed: false,
                shut: false,
            }),
            watcher: OnceLock::new(),
            handle,
        });
        table().insert(rec.id, rec.clone());
        rec
    }

    pub(crate) fn set_watcher(&self, pid: Pid) {
        let _ = self.watcher.set(pid);
    }

    /// Queues `op` for `me`: the tag its answer will carry.
    pub(crate) fn submit(self: &Arc<Self>, me: Pid, op: Op) -> Result<u64, Refused> {
        let mut g = self.inner();
        if g.closed {
            return Err(Refused::Closed);
        }
        if g.owner != me {
            return Err(Refused::NotOwner);
        }
        if matches!(op, Op::Close) {
            g.closed = true;
            table().remove(&self.id);
        }
        let tag = Ref::new().to_bits();
        g.queue.push_back(Job { op, to: me, tag });
        self.kick(g);
        Ok(tag)
    }

    /// Queues the open job (the first; nobody else can see the handle
    /// yet): the tag its answer will carry.
    pub(crate) fn start(self: &Arc<Self>, me: Pid, path: String, opts: OpenOptions) -> u64 {
        let tag = Ref::new().to_bits();
        let mut g = self.inner();
        g.queue.push_back(Job {
            op: Op::Open(path, opts),
            to: me,
            tag,
        });
        self.kick(g);
        tag
    }

    /// Starts a job draining the queue unless one is.
    fn kick(self: &Arc<Self>, mut g: MutexGuard<'_, Inner>) {
        if !g.busy {
            g.busy = true;
            drop(g);
            let rec = self.clone();
            if let Err(e) = run_detached(move || drain(&rec)) {
                // No thread can run the queue (the system refuses one):
                // every queued operation is answered with the error, none
                // waits for good.
                let jobs: Vec<Job> = {
                    let mut g = self.inner();
                    g.busy = false;
                    g.queue.drain(..).collect()
                };
                for job in jobs {
                    self.answer(job.to, job.tag, io_err(&e));
                }
            }
        }
    }

    /// Sends a job's caller `to` its answer, `[:lona.io/done tag reply]`.
    fn answer(&self, to: Pid, tag: u64, reply: Reply) {
        let h = Heap::new();
        let v = reply.term(&h, self.id);
        let msg = Fragment::vector(&[lona_term::kw!("lona.io/done"), h.reference(tag), v]);
        self.handle.send(to, msg);
    }

    fn stop_watcher(&self) {
        if let Some(w) = self.watcher.get() {
            self.handle.send(*w, Stop);
        }
    }
}

/// Step 2: runs the queued jobs in order, on a pool thread.
fn drain(rec: &Arc<FileRec>) {
    loop {
        let (job, mut file) = {
            let mut g = rec.inner();
            let Some(job) = g.queue.pop_front() else {
                g.busy = false;
                return;
            };
            let f = g.file.take();
            (job, f)
        };
        let reply = run(rec, job.op, &mut file);
        let left = {
            let mut g = rec.inner();
            if g.shut {
                file
            } else {
                g.file = file;
                None
            }
        };
        // Closed here, on the pool, out of the lock.
        drop(left);
        rec.answer(job.to, job.tag, reply);
    }
}

/// What a job answers.
enum Reply {
    Opened,
    Bytes(Vec<u8>),
    Line(String),
    Eof,
    Ok,
    Pos(u64),
    Error(&'static str),
}

impl Reply {
    fn term<'h>(self, h: &'h Heap, id: u64) -> Term<'h> {
        let ok = |v: Term<'h>| h.vector(&[lona_term::kw!("ok"), v]);
        match self {
            Reply::Opened => ok(h.reference(id)),
            Reply::Bytes(b) => ok(h.binary(&b)),
            Reply::Line(s) => ok(h.string(&s)),
            Reply::Eof => lona_term::kw!("eof"),
            Reply::Ok => lona_term::kw!("ok"),
            Reply::Pos(p) => ok(h.int(i64::try_from(p).unwrap_or(i64::MAX))),
            Reply::Error(e) => h.vector(&[lona_term::kw!("error"), Term::keyword(e)]),
        }
    }
}

fn io_err(e: &std::io::Error) -> Reply {
    Reply::Error(crate::errno::error_name(e))
}

/// One job's work on the file it was handed (`None`: closed meanwhile).
fn run(rec: &FileRec, op: Op, file: &mut Option<Open>) -> Reply {
    if let Op::Open(path, opts) = op {
        return match opts.open(path) {
            Ok(f) => {
                *file = Some(Open {
                    file: f,
                    ahead: Vec::new(),
                    at: 0,
                });
                Reply::Opened
            }
            Err(e) => {
                // Nothing to watch any more.
                rec.inner().closed = true;
                table().remove(&rec.id);
                rec.stop_watcher();
                io_err(&e)
            }
        };
    }
    if let Op::Close = op {
        rec.stop_watcher();
        return match file.take() {
            Some(_) => Reply::Ok,
            None => Reply::Error("closed"),
        };
    }
    let Some(f) = file.as_mut() else {
        return Reply::Error("closed");
    };
    match op {
        Op::Read(n) => f.read(n),
        Op::ReadLine => f.read_line(),
        Op::Write(data) => f.write(&data),
        Op::Position(to) => f.position(to),
        Op::Open(..) | Op::Close => unreachable!("handled above"),
    }
}

impl Open {
    fn unread(&self) -> usize {
        self.ahead.len() - self.at
    }

    /// Forgets what was read ahead, moving the file back to the position
    /// the process sees.
    fn rewind(&mut self) -> std::io::Result<()> {
        let n = self.unread();
        self.ahead.clear();
        self.at = 0;
        if n > 0 {
            self.file.seek(SeekFrom::Current(-(n as i64)))?;
        }
        Ok(())
    }

    fn read(&mut self, n: usize) -> Reply {
        let from_ahead = n.min(self.unread());
        let mut out = self.ahead[self.at..self.at + from_ahead].to_vec();
        self.at += from_ahead;
        let want = (n - out.len()) as u64;
        if want > 0 {
            if let Err(e) = (&mut self.file).take(want).read_to_end(&mut out) {
                return io_err(&e);
            }
        }
        if out.is_empty() && n > 0 {
            Reply::Eof
        } else {
            Reply::Bytes(out)
        }
    }

    fn read_line(&mut self) -> Reply {
        let mut searched = 0;
        loop {
            let rest = &self.ahead[self.at..];
            if let Some(i) = rest[searched..].iter().position(|&b| b == b'\n') {
                let end = searched + i;
                let mut line = &rest[..end];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                if line.len() > MAX_LINE {
                    return Reply::Error("line-too-long");
                }
                let r = line_reply(line);
                self.at += end + 1;
                return r;
            }
            if rest.len() > MAX_LINE + 1 {
                // Longer than a line may be, even without its end.
                return Reply::Error("line-too-long");
            }
            searched = rest.len();
            // Refill: what was taken goes, then a chunk is read.
            self.ahead.drain(..self.at);
            self.at = 0;
            let have = self.ahead.len();
            self.ahead.resize(have + CHUNK, 0);
            let got = loop {
                match self.file.read(&mut self.ahead[have..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r,
                }
            };
            match got {
                Ok(n) => self.ahead.truncate(have + n),
                Err(e) => {
                    self.ahead.truncate(have);
                    return io_err(&e);
                }
            }
            if self.ahead.len() == have {
                // The end: what is left is the last line.
                if have == 0 {
                    return Reply::Eof;
                }
                let r = line_reply(&self.ahead);
                self.ahead.clear();
                return r;
            }
        }
    }

    fn write(&mut self, data: &[u8]) -> Reply {
        match self.rewind().and_then(|()| self.file.write_all(data)) {
            Ok(()) => Reply::Ok,
            Err(e) => io_err(&e),
        }
    }

    fn position(&mut self, to: SeekFrom) -> Reply {
        let to = match to {
            SeekFrom::Current(d) => SeekFrom::Current(d - self.unread() as i64),
            other => other,
        };
        self.ahead.clear();
        self.at = 0;
        match self.file.seek(to) {
            Ok(p) => Reply::Pos(p),
            Err(e) => io_err(&e),
        }
    }
}

fn line_reply(line: &[u8]) -> Reply {
    match std::str::from_utf8(line) {
        Ok(s) => Reply::Line(s.to_string()),
        Err(_) => Reply::Error("badarg"),
    }
}

/// Step 3, when the owner ended: out of the table, no more operations,
/// and the file closed (on the pool; by the job holding it, if one is).
fn shut(rec: &FileRec) {
    table().remove(&rec.id);
    let file = {
        let mut g = rec.inner();
        g.closed = true;
        g.shut = true;
        g.queue.clear();
        g.file.take()
    };
    if let Some(f) = file {
        // Closed on the pool; if no pool thread can be started, the
        // refused job is dropped here, and the file with it.
        let _ = run_detached(move || drop(f));
    }
}

/// The watcher's guard: however the watcher ends (even killed before its
/// first step, when its future is dropped unpolled), the handle is shut.
pub(crate) struct ShutOnDrop(pub(crate) Arc<FileRec>);

impl Drop for ShutOnDrop {
    fn drop(&mut self) {
        shut(&self.0);
    }
}

/// Step 3: the watcher's body. It ends when its owner does (the `Exit`
/// of the link) or when told to ([`Stop`]: closed, or the open failed).
pub(crate) async fn watch(ctx: Ctx, guard: ShutOnDrop) {
    let owner = guard.0.inner().owner;
    ctx.trap_exit(true).await;
    // An owner that ended before exits were trapped sent a signal this
    // process ignored (a `:normal` one): ask.
    if !ctx.is_alive(owner).await {
        return;
    }
    loop {
        let e = ctx.receive_any().await;
        if e.downcast_ref::<Exit>().is_some_and(|x| x.from == owner) || e.is::<Stop>() {
            return;
        }
        // Anything else sent to a watcher is dropped.
    }
}
