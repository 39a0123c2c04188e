//! Files for Lonala: each built-in queues its work on the runtime's
//! blocking pool and returns a reference at once; the pool thread sends
//! the caller `[:lona.io/done ref [:ok value]]` or `[:lona.io/done ref
//! [:error reason]]`, which the Lonala functions (`slurp`, `spit`,
//! `read-line` in the prelude, the `file` namespace in `lonala/file.lona`)
//! receive. No scheduler worker ever waits on a disk.
//!
//! Handles (`file/open` and the operations on what it gives) queue their
//! work on the handle (`files.rs`: the order, the owner, the closing);
//! their built-ins answer a tag to wait for, or at once an error value
//! (`[:error :closed]`, `[:error :not-owner]`).
//!
//! Every read has a bound, so that no file and no standard input can make
//! the node allocate without end (`/dev/zero`, a FIFO a writer keeps
//! filling, a line of a gigabyte): a line at most [`MAX_LINE`] bytes
//! (`:line-too-long` past it, the reason `file/read-line` answers), a
//! whole file (`slurp`, `file/read-lines`) at most [`MAX_WHOLE`] bytes
//! and [`MAX_LINES`] lines (`:file-too-large` past them). The whole-file
//! functions and `read-line` raise those reasons, as they raise `:enoent`.

use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};

use std::sync::Arc;

use lona_runtime::io::run_detached;
use lona_runtime::{native_process, Ref, SpawnOpts};
use lona_term::{Fragment, Heap, RawTerm, Term, View};

use super::def;
use crate::files::{self, over, read_whole, FileRec, Op, Refused, MAX_LINE, MAX_WHOLE};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::net::error_name;
use crate::var::Namespace;

/// The most lines `file/read-lines` gives (each is a string and a cell of
/// the list however short it is): past it, `:file-too-large`.
pub(crate) const MAX_LINES: usize = 1 << 20;

/// The keyword for a job's error: a bound's reason, or the error's name.
fn reason(e: &std::io::Error) -> &'static str {
    files::limit_reason(e).unwrap_or_else(|| error_name(e))
}

/// What [`next_line`] read.
#[derive(Debug, PartialEq)]
enum Next {
    /// The end of the input.
    End,
    /// A line without its end, and how many bytes it took.
    Line(String, usize),
    /// A line longer than [`MAX_LINE`]; `rest_unread`: its end is not
    /// read yet (at most `MAX_LINE + 2` bytes of it were).
    TooLong { rest_unread: bool },
}

/// The next line of `r`, without its end (`\n` or `\r\n`; the last line
/// may have none), reading at most `MAX_LINE + 2` bytes (a line of
/// `MAX_LINE` and its `\r\n`). Not UTF-8: an `InvalidData` error, after
/// the line was read (`:badarg`).
fn next_line(r: &mut impl BufRead) -> std::io::Result<Next> {
    let mut buf = Vec::new();
    r.take(MAX_LINE as u64 + 2).read_until(b'\n', &mut buf)?;
    let taken = buf.len();
    if taken == 0 {
        return Ok(Next::End);
    }
    let ended = buf.last() == Some(&b'\n');
    if ended {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    if buf.len() > MAX_LINE {
        return Ok(Next::TooLong {
            rest_unread: !ended,
        });
    }
    match String::from_utf8(buf) {
        Ok(s) => Ok(Next::Line(s, taken)),
        Err(_) => Err(std::io::ErrorKind::InvalidData.into()),
    }
}

/// The lines of `r`, within [`MAX_LINE`], [`MAX_WHOLE`] and [`MAX_LINES`].
fn all_lines(r: &mut impl BufRead) -> std::io::Result<Vec<String>> {
    let (mut lines, mut bytes) = (Vec::new(), 0u64);
    loop {
        match next_line(r)? {
            Next::End => return Ok(lines),
            Next::TooLong { .. } => return Err(over("line-too-long")),
            Next::Line(s, taken) => {
                bytes += taken as u64;
                if bytes > MAX_WHOLE || lines.len() == MAX_LINES {
                    return Err(over("file-too-large"));
                }
                lines.push(s);
            }
        }
    }
}

/// The text of the file at `path`, within [`MAX_WHOLE`] (not UTF-8: an
/// `InvalidData` error).
pub(crate) fn read_text(path: &str) -> std::io::Result<String> {
    let f = std::fs::File::open(path)?;
    let hint = f.metadata().map_or(0, |m| m.len());
    String::from_utf8(read_whole(f, hint)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// What a job found.
enum Done {
    Str(String),
    Strs(Vec<String>),
    Bool(bool),
    Nil,
}

fn path_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<String, Raise> {
    cx.term(r)
        .as_str()
        .map(str::to_string)
        .ok_or_else(Raise::badarg)
}

/// Queues `f`; its result goes to the caller as `[:lona.io/done ref r]`.
fn job(
    cx: &mut BuiltinCx<'_, '_>,
    f: impl FnOnce() -> std::io::Result<Done> + Send + 'static,
) -> NResult {
    let rt = cx.rt()?;
    let (me, handle) = (rt.pid(), rt.handle());
    let id = Ref::new().to_bits();
    let started = run_detached(move || {
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
            Err(e) => h.vector(&[lona_term::kw!("error"), Term::keyword(reason(&e))]),
        };
        let msg = Fragment::vector(&[lona_term::kw!("lona.io/done"), h.reference(id), v]);
        handle.send(me, msg);
    });
    // No thread could run it (the system refuses one): raised now, as the
    // job's own error would be.
    started.map_err(|e| Raise::error(Term::keyword(reason(&e))))?;
    Ok(cx.heap.reference(id).raw())
}

/// `(file/slurp* path)`: the file's text (`:badarg` if not UTF-8,
/// `:file-too-large` past [`MAX_WHOLE`]).
fn slurp(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || read_text(&p).map(Done::Str))
}

/// `(file/spit* path text append?)`
fn spit(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
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
fn list_dir(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
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
fn exists(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || {
        std::path::Path::new(&p).try_exists().map(Done::Bool)
    })
}

/// `(file/delete* path)`
fn delete(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || std::fs::remove_file(p).map(|()| Done::Nil))
}

/// `(file/read-lines* path)`: the lines, without their ends
/// (`:line-too-long`, `:file-too-large`: [`all_lines`]).
fn read_lines(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let p = path_arg(cx, a[0])?;
    job(cx, move || {
        let mut f = std::io::BufReader::new(std::fs::File::open(p)?);
        all_lines(&mut f).map(Done::Strs)
    })
}

/// Standard input is in the middle of a line too long to give: the next
/// `read-line` skips to its end first. Read and written only while
/// standard input is locked.
static SKIP_LINE: AtomicBool = AtomicBool::new(false);

/// `(file/read-line*)`: the next line of standard input without its end,
/// or nil at its end; `:line-too-long` past [`MAX_LINE`] bytes, and the
/// next call goes on after that line. `(file/read-line* f)`: a handle's,
/// see [`read_line_of`].
fn read_line(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if !a.is_empty() {
        return read_line_of(cx, a);
    }
    job(cx, move || {
        let stdin = std::io::stdin();
        let mut r = stdin.lock();
        if SKIP_LINE.load(Ordering::Relaxed) {
            // What is left of the line too long: read, never kept.
            r.skip_until(b'\n')?;
            SKIP_LINE.store(false, Ordering::Relaxed);
        }
        match next_line(&mut r)? {
            Next::End => Ok(Done::Nil),
            Next::Line(s, _) => Ok(Done::Str(s)),
            Next::TooLong { rest_unread } => {
                SKIP_LINE.store(rest_unread, Ordering::Relaxed);
                Err(over("line-too-long"))
            }
        }
    })
}

/// The keywords of `file/open`'s modes, as `OpenOptions` (Erlang's
/// rules: `:write` truncates unless with `:read` or `:append`; `:write`,
/// `:append` and `:exclusive` create a missing file, `:exclusive` fails
/// with `:eexist` when it exists; no mode is `:read`).
fn open_options(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<std::fs::OpenOptions, Raise> {
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
fn open(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
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
fn handle(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<Option<Arc<FileRec>>, Raise> {
    match cx.term(r).view() {
        View::Ref(id) => Ok(files::get(id)),
        _ => Err(Raise::badarg()),
    }
}

/// Queues `op` on the handle `f`: the tag to wait for, or an error value.
fn submit(cx: &mut BuiltinCx<'_, '_>, f: RawTerm, op: Op) -> NResult {
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
fn read(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
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
fn read_line_of(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    submit(cx, a[0], Op::ReadLine)
}

/// `(file/write* f data)`: a string or a binary; answers `:ok`.
fn write(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let data = super::tcp::data_arg(cx, a[1])?.to_vec();
    cx.charge(data.len() / 4096);
    submit(cx, a[0], Op::Write(data))
}

/// `(file/position* f pos)`: `pos` an offset from the start, or `:bof`,
/// `:cur`, `:eof`, or `[:bof n]`, `[:cur n]`, `[:eof n]` (Erlang's);
/// answers `[:ok offset]`.
fn position(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
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
fn close(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    submit(cx, a[0], Op::Close)
}

/// `(file/open-count)`: how many handles of the node are open (tests).
fn open_count(cx: &mut BuiltinCx<'_, '_>, _a: &[RawTerm]) -> NResult {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn line(s: &str) -> Next {
        Next::Line(s.to_string(), 0)
    }

    /// The lines of `input` as `next_line` reads them (byte counts left
    /// out), to the first line too long or the end.
    fn lines(input: &[u8]) -> Vec<Next> {
        let mut r = Cursor::new(input);
        let mut out = Vec::new();
        loop {
            let n = match next_line(&mut r).unwrap() {
                Next::Line(s, _) => Next::Line(s, 0),
                other => other,
            };
            let stop = matches!(n, Next::End | Next::TooLong { .. });
            out.push(n);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn lines_end_in_lf_or_crlf_and_the_last_may_have_none() {
        assert_eq!(
            lines(b"a\r\nb\n\nc\rd"),
            [line("a"), line("b"), line(""), line("c\rd"), Next::End]
        );
        assert_eq!(lines(b""), [Next::End]);
    }

    #[test]
    fn a_line_has_at_most_max_line_bytes() {
        let max = vec![b'x'; MAX_LINE];
        let mut input = max.clone();
        input.extend_from_slice(b"\r\nnext");
        assert_eq!(
            lines(&input),
            [
                Next::Line(String::from_utf8(max.clone()).unwrap(), 0),
                line("next"),
                Next::End
            ]
        );
        // One byte more, with its end: too long, and nothing of it is left.
        let mut input = max.clone();
        input.extend_from_slice(b"x\nnext");
        let mut r = Cursor::new(&input[..]);
        assert_eq!(
            next_line(&mut r).unwrap(),
            Next::TooLong { rest_unread: false }
        );
        assert!(matches!(next_line(&mut r).unwrap(), Next::Line(s, 4) if s == "next"));
        // Longer, without its end yet: at most MAX_LINE + 2 bytes read.
        let mut input = vec![b'x'; 3 * MAX_LINE];
        input.extend_from_slice(b"\nnext");
        let mut r = Cursor::new(&input[..]);
        assert_eq!(
            next_line(&mut r).unwrap(),
            Next::TooLong { rest_unread: true }
        );
        assert_eq!(r.position(), MAX_LINE as u64 + 2);
        // What the next `read-line` of standard input does first.
        r.skip_until(b'\n').unwrap();
        assert!(matches!(next_line(&mut r).unwrap(), Next::Line(s, 4) if s == "next"));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_invalid_data_and_read() {
        let mut r = Cursor::new(&b"\xff\xfe\nok\n"[..]);
        let e = next_line(&mut r).unwrap_err();
        assert_eq!(reason(&e), "badarg");
        assert!(matches!(next_line(&mut r).unwrap(), Next::Line(s, 3) if s == "ok"));
    }

    #[test]
    fn read_lines_stops_at_its_bounds() {
        // As many empty lines as may be, then one more.
        let mut input = vec![b'\n'; MAX_LINES];
        assert_eq!(
            all_lines(&mut Cursor::new(&input[..])).unwrap().len(),
            MAX_LINES
        );
        input.push(b'\n');
        let e = all_lines(&mut Cursor::new(&input[..])).unwrap_err();
        assert_eq!(reason(&e), "file-too-large");
        // A line too long.
        let e = all_lines(&mut std::io::BufReader::new(std::io::repeat(b'y'))).unwrap_err();
        assert_eq!(reason(&e), "line-too-long");
        // Lines of 1 MB without end: past MAX_WHOLE bytes.
        let mut one = vec![b'z'; MAX_LINE];
        one.push(b'\n');
        let mut endless = std::io::BufReader::new(Forever(Cursor::new(one)));
        let e = all_lines(&mut endless).unwrap_err();
        assert_eq!(reason(&e), "file-too-large");
    }

    #[test]
    fn a_whole_file_has_at_most_max_whole_bytes() {
        let ok = read_whole(std::io::repeat(0).take(MAX_WHOLE), 0).unwrap();
        assert_eq!(ok.len() as u64, MAX_WHOLE);
        let e = read_whole(std::io::repeat(0), u64::MAX).unwrap_err();
        assert!(files::is_limit(&e));
        assert_eq!(reason(&e), "file-too-large");
        // Errors of the system keep their names.
        let e = read_text("/nonexistent/lona-test").unwrap_err();
        assert!(!files::is_limit(&e));
        assert_eq!(reason(&e), "enoent");
    }

    /// A reader that gives its bytes again and again.
    struct Forever(Cursor<Vec<u8>>);

    impl Read for Forever {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            self.0.set_position(0);
            self.0.read(buf)
        }
    }
}
