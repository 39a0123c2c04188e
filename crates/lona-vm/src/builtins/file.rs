//! Files for Lonala: each built-in queues its work on the runtime's
//! blocking pool and returns a reference at once; the pool thread sends
//! the caller `[:lona.io/done ref [:ok value]]` or `[:lona.io/done ref
//! [:error reason]]`, which the Lonala functions (`slurp`, `spit`,
//! `read-line` in the prelude, the `file` namespace in `lib/file.lona`)
//! receive. No scheduler worker ever waits on a disk.

use std::io::BufRead;

use lona_runtime::io::run_detached;
use lona_runtime::Ref;
use lona_term::{Fragment, Heap, RawTerm, Term, View};

use super::def;
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
/// or nil at its end.
fn read_line(cx: &mut NativeCx<'_, '_>, _a: &[RawTerm]) -> NResult {
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

pub(super) fn install(file: &'static Namespace) {
    def(file, "slurp*", 1, 1, slurp);
    def(file, "spit*", 3, 3, spit);
    def(file, "list-dir*", 1, 1, list_dir);
    def(file, "exists?*", 1, 1, exists);
    def(file, "delete*", 1, 1, delete);
    def(file, "read-lines*", 1, 1, read_lines);
    def(file, "read-line*", 0, 0, read_line);
}
