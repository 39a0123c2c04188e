//! Files for Lonala: each built-in queues its work on the runtime's
//! blocking pool and returns a reference at once; the pool thread sends
//! the caller `[:lona.io/done ref [:ok value]]` or `[:lona.io/done ref
//! [:error reason]]`, which the Lonala functions (`slurp`, `spit`,
//! `read-line` in the prelude, the `file` namespace in `lib/file.lona`)
//! receive. No scheduler worker ever waits on a disk.
//!
//! Handles (`file/open` and the operations on what it gives) queue their
//! work on the handle (`files.rs`: the order, the owner, the closing);
//! their built-ins answer a tag to wait for, or at once an error value
//! (`[:error :closed]`, `[:error :not-owner]`).

use std::io::BufRead;

use std::sync::Arc;

use lona_runtime::io::run_detached;
use lona_runtime::{native_process, Ref, SpawnOpts};
use lona_term::{Fragment, Heap, RawTerm, Term, View};

use super::def;
use crate::files::{self, FileRec, Op, Refused};
use crate::native::{NResult, NativeCx, Raise};
use crate::net::error_name;
use crate::var::Namespace;

/// What a job found.
enum Done {
    Str(String),
    Strs(Vec<String>),
    Bool(bool),
    Nil,
}

fn path_arg(cx: &NativeCx<'_, '_>, r: RawTerm) -> Result<String, Raise> {
    cx.term(r)
        .as_str()
        .map(str::to_string)
        .ok_or_else(Raise::badarg)
}

/// Queues `f`; its result goes to the caller as `[:lona.io/done ref r]`.
fn job(
    cx: &mut NativeCx<'_, '_>,
    f: impl FnOnce() -> std::io::Result<Done> + Send + 'static,
) -> NResult {
    let rt = cx.rt()?;
    let (me, handle) = (rt.pid(), rt.handle());
    let id = Ref::new().to_bits();
    run_detached(move || {
        let r = f();
        let h = Heap::new();
        let v = match r {
            Ok(d) => {
                let v = match d {
                    Done::Str(s) => h.string(&s),
                    Done::Strs(v) => {
                        let items: Vec<Term<'_>> = v.iter().map(|s| h.string(s)).collect();
                        h.list(&items)
                    }
                    Done::Bool(b) => Term::bool(b),
                    Done::Nil => Term::NIL,
                };
                h.vector(&[lona_term::kw!("ok"), v])
            }
            Err(e) => h.vector(&[lona_term::kw!("error"), Term::keyword(error_name(&e))]),
        };
        let msg = Fragment::vector(&[lona_term::kw!("lona.io/done"), h.reference(id), v]);
        handle.send(me, msg);
    });
    Ok(cx.heap.reference(id).raw())
}

/// `(file/slurp* path)`: the file's text (`:badarg` if not UTF-8).
fn slurp(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || std::fs::read_to_string(p).map(Done::Str))
}

/// `(file/spit* path text append?)`
fn spit(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    let data: Vec<u8> = match cx.term(a[1]).view() {
        View::Str(s) => s.as_bytes().to_vec(),
        View::Binary(b) => b.to_vec(),
        _ => {
            let mut out = String::new();
            crate::print::display_into(&mut out, cx.term(a[1]));
            out.into_bytes()
        }
    };
    cx.charge(data.len() / 256);
    let append = crate::tag::truthy(cx.term(a[2]).bits());
    job(cx, move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(p)?;
        f.write_all(&data)?;
        Ok(Done::Nil)
    })
}

/// `(file/list-dir* path)`: entry names, sorted.
fn list_dir(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || {
        let mut v = std::fs::read_dir(p)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<Vec<_>>>()?;
        v.sort();
        Ok(Done::Strs(v))
    })
}

/// `(file/exists?* path)`
fn exists(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || {
        std::path::Path::new(&p).try_exists().map(Done::Bool)
    })
}

/// `(file/delete* path)`
fn delete(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || std::fs::remove_file(p).map(|()| Done::Nil))
}

/// `(file/read-lines* path)`: the lines, without their ends.
fn read_lines(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || {
        let f = std::io::BufReader::new(std::fs::File::open(p)?);
        f.lines()
            .collect::<std::io::Result<Vec<_>>>()
            .map(Done::Strs)
    })
}

/// `(file/read-line*)`: the next line of standard input without its end,
/// or nil at its end. `(file/read-line* f)`: a handle's, see
/// [`read_line_of`].
fn read_line(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if !a.is_empty() {
        return read_line_of(cx, a);
    }
    job(cx, move || {
        let mut s = String::new();
        if std::io::stdin().lock().read_line(&mut s)? == 0 {
            return Ok(Done::Nil);
        }
        if s.ends_with('\n') {
            s.pop();
            if s.ends_with('\r') {
                s.pop();
            }
        }
        Ok(Done::Str(s))
    })
}

/// The keywords of `file/open`'s modes, as `OpenOptions` (Erlang's
/// rules: `:write` truncates unless with `:read` or `:append`; `:write`,
/// `:append` and `:exclusive` create a missing file, `:exclusive` fails
/// with `:eexist` when it exists; no mode is `:read`).
fn open_options(cx: &NativeCx<'_, '_>, r: RawTerm) -> Result<std::fs::OpenOptions, Raise> {
    let mut modes: Vec<Term<'_>> = Vec::new();
    let t = cx.term(r);
    match t.view() {
        View::Set(m) => modes.extend(m.iter().map(|(k, _)| k)),
        View::Vector(v) => modes.extend_from_slice(v),
        View::Keyword(_) => modes.push(t),
        View::Nil => {}
        _ => return Err(Raise::badarg()),
    }
    let (mut read, mut write, mut append, mut exclusive) = (false, false, false, false);
    for m in modes {
        match m.view() {
            View::Keyword(a) if a.name() == "read" => read = true,
            View::Keyword(a) if a.name() == "write" => write = true,
            View::Keyword(a) if a.name() == "append" => append = true,
            View::Keyword(a) if a.name() == "exclusive" => exclusive = true,
            _ => return Err(Raise::badarg()),
        }
    }
    let mut o = std::fs::OpenOptions::new();
    let writing = write || append || exclusive;
    o.read(read || !writing)
        .write(writing)
        .append(append)
        .create(writing && !exclusive)
        .create_new(exclusive)
        .truncate(write && !read && !append && !exclusive);
    Ok(o)
}

/// `(file/open* path modes)`: a tag; the answer is `[:ok f]` or
/// `[:error reason]`. The handle belongs to the caller, watched by a
/// process linked to it (`files.rs`).
fn open(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    let o = open_options(cx, a[1])?;
    let rt = cx.rt()?;
    let me = rt.pid();
    let rec = FileRec::new(me, rt.handle());
    let guard = files::ShutOnDrop(rec.clone());
    match rt.spawn(
        SpawnOpts::new().link(true),
        native_process(move |ctx| files::watch(ctx, guard)),
    ) {
        // The guard, dropped with the closure, took the handle out.
        Err(_) => return Ok(super::tcp::error_tuple(cx, "system-limit")),
        Ok((pid, _)) => rec.set_watcher(pid),
    }
    let tag = rec.start(me, p, o);
    Ok(cx.heap.reference(tag).raw())
}

/// The handle a term names (`None`: closed, or never one).
fn handle(cx: &NativeCx<'_, '_>, r: RawTerm) -> Result<Option<Arc<FileRec>>, Raise> {
    match cx.term(r).view() {
        View::Ref(id) => Ok(files::get(id)),
        _ => Err(Raise::badarg()),
    }
}

/// Queues `op` on the handle `f`: the tag to wait for, or an error value.
fn submit(cx: &mut NativeCx<'_, '_>, f: RawTerm, op: Op) -> NResult {
    let Some(rec) = handle(cx, f)? else {
        return Ok(super::tcp::error_tuple(cx, "closed"));
    };
    let me = cx.rt()?.pid();
    match rec.submit(me, op) {
        Ok(tag) => Ok(cx.heap.reference(tag).raw()),
        Err(Refused::Closed) => Ok(super::tcp::error_tuple(cx, "closed")),
        Err(Refused::NotOwner) => Ok(super::tcp::error_tuple(cx, "not-owner")),
    }
}

/// `(file/read* f n)`: answers `[:ok binary]` (up to `n` bytes; fewer
/// only at the end) or `:eof`.
fn read(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let n = cx
        .term(a[1])
        .as_i64()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= files::MAX_READ)
        .ok_or_else(Raise::badarg)?;
    submit(cx, a[0], Op::Read(n))
}

/// `(file/read-line* f)`: answers `[:ok line]` (without its end), `:eof`,
/// or `[:error :line-too-long]`.
fn read_line_of(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    submit(cx, a[0], Op::ReadLine)
}

/// `(file/write* f data)`: a string or a binary; answers `:ok`.
fn write(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let data = super::tcp::data_arg(cx, a[1])?.to_vec();
    cx.charge(data.len() / 4096);
    submit(cx, a[0], Op::Write(data))
}

/// `(file/position* f pos)`: `pos` an offset from the start, or `:bof`,
/// `:cur`, `:eof`, or `[:bof n]`, `[:cur n]`, `[:eof n]` (Erlang's);
/// answers `[:ok offset]`.
fn position(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    use std::io::SeekFrom;
    let t = cx.term(a[1]);
    let (whence, n) = match t.view() {
        View::Int(n) => ("bof", n),
        View::Keyword(w) => (w.name(), 0),
        View::Vector([w, n]) => match (w.view(), n.view()) {
            (View::Keyword(w), View::Int(n)) => (w.name(), n),
            _ => return Err(Raise::badarg()),
        },
        _ => return Err(Raise::badarg()),
    };
    let to = match whence {
        "bof" => SeekFrom::Start(u64::try_from(n).map_err(|_| Raise::badarg())?),
        "cur" => SeekFrom::Current(n),
        "eof" => SeekFrom::End(n),
        _ => return Err(Raise::badarg()),
    };
    submit(cx, a[0], Op::Position(to))
}

/// `(file/close* f)`: answers `:ok` once what was queued before it is
/// done and the file is closed.
fn close(cx: &mut NativeCx<'_, '_>, a: &[RawTerm]) -> NResult {
    submit(cx, a[0], Op::Close)
}

/// `(file/open-count)`: how many handles of the node are open (tests).
fn open_count(cx: &mut NativeCx<'_, '_>, _a: &[RawTerm]) -> NResult {
    Ok(cx.heap.int(files::count() as i64).raw())
}

pub(super) fn install(file: &'static Namespace) {
    def(file, "open*", 2, 2, open);
    def(file, "read*", 2, 2, read);
    def(file, "write*", 2, 2, write);
    def(file, "position*", 2, 2, position);
    def(file, "close*", 1, 1, close);
    def(file, "open-count", 0, 0, open_count);
    def(file, "slurp*", 1, 1, slurp);
    def(file, "spit*", 3, 3, spit);
    def(file, "list-dir*", 1, 1, list_dir);
    def(file, "exists?*", 1, 1, exists);
    def(file, "delete*", 1, 1, delete);
    def(file, "read-lines*", 1, 1, read_lines);
    def(file, "read-line*", 0, 1, read_line);
}
