//! Printing terms in Lonala syntax (`Display` and `Debug` for [`Term`]).
//!
//! `nil true false`, `42`, `1.5`, `##Inf` `##-Inf` `##NaN`, `:ok`, `sym`,
//! `"a\n\"b\""` (escapes `\" \\ \n \t \r`, other control characters as
//! `\uXXXX`), `[1 2]`, `{:a 1, :b 2}`, `(1 2 3)`, `(1 2 . 3)` for an improper
//! list, `()`, `#pid<0.INDEX.GENERATION>`, `#ref<0.ID>`, a pid of another
//! node `#pid<NODE/ID.SERIAL.CREATION>` and its reference
//! `#ref<NODE/CREATION.W0.W1...>` (the node name may hold any character,
//! so the fields are the numbers after its last `/`), `#fn<CODE>`,
//! a binary `#bin"text"` when its bytes are printable UTF-8 (as a
//! string prints; otherwise `#bin[1 2 255]`; both read back), sets `#{1 2}` (elements in term order), regexes
//! `#"a+"`. Printing walks with an explicit stack, so any depth and
//! length prints.

use std::fmt::{self, Write};

use crate::term::Term;
use crate::view::View;

/// How closures print: the VM names a code id (`#fn<user/f>`); without
/// one, the number is printed.
static CLOSURE_NAMER: std::sync::OnceLock<fn(u64) -> String> = std::sync::OnceLock::new();

/// Sets how closures print (once per process; later calls are ignored).
pub fn set_closure_namer(f: fn(u64) -> String) {
    let _ = CLOSURE_NAMER.set(f);
}

enum Task<'h> {
    Term(Term<'h>),
    Text(&'static str),
    /// The rest of a list after an element.
    Rest(Term<'h>),
}

/// A binary's bytes as text when they print as text (as Elixir's
/// `inspect` shows a printable binary as a string): valid UTF-8 with no
/// control character but newline, tab and carriage return.
fn printable(b: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(b).ok()?;
    s.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\t' | '\r'))
        .then_some(s)
}

impl fmt::Display for Term<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_term(f, *self, true)
    }
}

/// A term as `print` shows it (Clojure's `*print-readably*` false):
/// strings without quotes or escapes, also inside collections
/// (`[:a b]` for `[:a "b"]`); everything else as `Display`.
pub struct Plain<'h>(pub Term<'h>);

impl fmt::Display for Plain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_term(f, self.0, false)
    }
}

fn write_term(f: &mut fmt::Formatter<'_>, term: Term<'_>, readable: bool) -> fmt::Result {
    {
        let mut todo = vec![Task::Term(term)];
        while let Some(task) = todo.pop() {
            match task {
                Task::Text(s) => f.write_str(s)?,
                Task::Rest(t) => match t.view() {
                    View::EmptyList => {}
                    View::Cons(h, rest) => {
                        f.write_char(' ')?;
                        todo.push(Task::Rest(rest));
                        todo.push(Task::Term(h));
                    }
                    // A tail with metadata is still the list's rest.
                    View::Meta { value, .. } => todo.push(Task::Rest(value)),
                    _ => {
                        f.write_str(" . ")?;
                        todo.push(Task::Term(t));
                    }
                },
                Task::Term(t) => match t.view() {
                    View::Nil => f.write_str("nil")?,
                    View::Bool(b) => write!(f, "{b}")?,
                    View::EmptyList => f.write_str("()")?,
                    View::Int(i) => write!(f, "{i}")?,
                    View::BigInt(b) => write!(f, "{b}")?,
                    View::Float(x) => write_float(f, x)?,
                    View::Keyword(a) => write!(f, ":{}", a.name())?,
                    View::Symbol(a) => f.write_str(a.name())?,
                    View::Pid(p) => write!(f, "#pid<0.{}.{}>", p.index(), p.generation())?,
                    View::Ref(r) => write!(f, "#ref<0.{r}>")?,
                    View::ExtPid {
                        node,
                        id,
                        serial,
                        creation,
                    } => write!(f, "#pid<{}/{id}.{serial}.{creation}>", node.name())?,
                    View::ExtRef {
                        node,
                        creation,
                        ids,
                    } => {
                        write!(f, "#ref<{}/{creation}", node.name())?;
                        for w in ids.iter() {
                            write!(f, ".{w}")?;
                        }
                        f.write_char('>')?;
                    }
                    View::Cell(c) => write!(f, "#atom<{}>", c.serial())?,
                    // Printed without it, as Clojure's `*print-meta*` false.
                    View::Meta { value, .. } => todo.push(Task::Term(value)),
                    View::Closure { code, .. } => match CLOSURE_NAMER.get() {
                        Some(name) => write!(f, "#fn<{}>", name(code))?,
                        None => write!(f, "#fn<{code}>")?,
                    },
                    View::Str(s) if readable => write_string(f, s)?,
                    View::Str(s) => f.write_str(s)?,
                    View::Binary(b) => match printable(b) {
                        Some(s) => {
                            f.write_str("#bin")?;
                            write_string(f, s)?;
                        }
                        None => {
                            f.write_str("#bin[")?;
                            for (i, byte) in b.iter().enumerate() {
                                if i > 0 {
                                    f.write_char(' ')?;
                                }
                                write!(f, "{byte}")?;
                            }
                            f.write_char(']')?;
                        }
                    },
                    View::Cons(h, rest) => {
                        f.write_char('(')?;
                        todo.push(Task::Text(")"));
                        todo.push(Task::Rest(rest));
                        todo.push(Task::Term(h));
                    }
                    View::Vector(items) => {
                        f.write_char('[')?;
                        todo.push(Task::Text("]"));
                        for (i, x) in items.iter().enumerate().rev() {
                            todo.push(Task::Term(*x));
                            if i > 0 {
                                todo.push(Task::Text(" "));
                            }
                        }
                    }
                    View::Regex(s) => {
                        // As read: the source between `#"` and `"`, with
                        // only `"` escaped (a regex's `\` is its own).
                        f.write_str("#\"")?;
                        let mut prev_backslash = false;
                        for c in s.chars() {
                            if c == '"' && !prev_backslash {
                                f.write_char('\\')?;
                            }
                            prev_backslash = c == '\\' && !prev_backslash;
                            f.write_char(c)?;
                        }
                        f.write_char('"')?;
                    }
                    View::Set(m) => {
                        f.write_str("#{")?;
                        todo.push(Task::Text("}"));
                        let keys: Vec<Term<'_>> =
                            m.ordered_pairs().into_iter().map(|p| p.0).collect();
                        for (i, k) in keys.into_iter().enumerate().rev() {
                            todo.push(Task::Term(k));
                            if i > 0 {
                                todo.push(Task::Text(" "));
                            }
                        }
                    }
                    View::Map(m) => {
                        f.write_char('{')?;
                        todo.push(Task::Text("}"));
                        for (i, (k, v)) in
                            m.iter().enumerate().collect::<Vec<_>>().into_iter().rev()
                        {
                            todo.push(Task::Term(v));
                            todo.push(Task::Text(" "));
                            todo.push(Task::Term(k));
                            if i > 0 {
                                todo.push(Task::Text(", "));
                            }
                        }
                    }
                },
            }
        }
        Ok(())
    }
}

fn write_float(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if x.is_nan() {
        f.write_str("##NaN")
    } else if x.is_infinite() {
        f.write_str(if x > 0.0 { "##Inf" } else { "##-Inf" })
    } else {
        write!(f, "{x:?}")
    }
}

fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// `Debug` prints as `Display` does (Lonala syntax).
impl fmt::Debug for Term<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Heap, Pid, Term};

    #[test]
    fn lonala_syntax() {
        let h = Heap::new();
        let ok = Term::keyword("ok");
        assert_eq!(h.vector(&[ok, h.int(42)]).to_string(), "[:ok 42]");
        assert_eq!(
            h.map(&[(Term::keyword("a"), h.int(1))]).to_string(),
            "{:a 1}"
        );
        assert_eq!(
            h.map(&[
                (Term::keyword("b"), h.int(2)),
                (Term::keyword("a"), h.int(1))
            ])
            .to_string(),
            "{:a 1, :b 2}"
        );
        assert_eq!(
            h.string("a\n\"b\"\\\u{1}").to_string(),
            r#""a\n\"b\"\\\u0001""#
        );
        assert_eq!(
            h.list(&[h.int(1), h.int(2), h.int(3)]).to_string(),
            "(1 2 3)"
        );
        assert_eq!(
            h.list_with_tail(&[h.int(1), h.int(2)], h.int(3))
                .to_string(),
            "(1 2 . 3)"
        );
        assert_eq!(Term::EMPTY_LIST.to_string(), "()");
        assert_eq!(h.pid(Pid::new(42, 0)).to_string(), "#pid<0.42.0>");
        assert_eq!(
            h.pid(Pid::new(42, u32::MAX)).to_string(),
            format!("#pid<0.42.{}>", u32::MAX)
        );
        assert_eq!(h.reference(1234).to_string(), "#ref<0.1234>");
        let node = crate::Atom::new("a@b.c");
        assert_eq!(h.ext_pid(node, 12, 0, 3).to_string(), "#pid<a@b.c/12.0.3>");
        assert_eq!(
            h.ext_ref(node, 3, &[1, 2, 0]).to_string(),
            "#ref<a@b.c/3.1.2.0>"
        );
        assert_eq!(h.float(1.0).to_string(), "1.0");
        assert_eq!(h.float(f64::NEG_INFINITY).to_string(), "##-Inf");
        assert_eq!(h.int(i64::MIN).to_string(), i64::MIN.to_string());
        assert_eq!(Term::symbol("foo").to_string(), "foo");
        assert_eq!(Term::NIL.to_string(), "nil");
        assert_eq!(h.binary(&[1, 2, 255]).to_string(), "#bin[1 2 255]");
        assert_eq!(
            h.binary("hé\n\"x\"".as_bytes()).to_string(),
            "#bin\"hé\\n\\\"x\\\"\""
        );
        assert_eq!(h.binary(b"").to_string(), "#bin\"\"");
        assert_eq!(h.binary(&[104, 0]).to_string(), "#bin[104 0]");
        assert_eq!(h.binary(&[195]).to_string(), "#bin[195]");
        assert_eq!(h.vector(&[]).to_string(), "[]");
        // SAFETY: no closure namer is set in this crate's tests, so the
        // printer shows the code word without following it.
        let f = unsafe { h.closure(7, &[h.int(1)]) };
        assert_eq!(f.to_string(), "#fn<7>");
        let nested = h.vector(&[h.list(&[h.vector(&[Term::TRUE])]), Term::NIL]);
        assert_eq!(nested.to_string(), "[([true]) nil]");
    }
}
