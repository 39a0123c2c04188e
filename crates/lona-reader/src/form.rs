//! Forms: what the reader produces and the compiler consumes.
//!
//! A form is plain Rust data (no heap, no lifetime), so reading needs no
//! process and a form can be kept, printed or compiled anywhere. Every
//! form carries the position where it starts; the file name is kept once
//! per read, in [`Source`].

use std::sync::Arc;

use num_bigint::BigInt;

/// Where a form starts: 1-based line and column (columns count
/// characters, not bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub col: u32,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A source text and the name it is reported under (a path, `<eval>`,
/// `<repl>`).
#[derive(Clone, Debug)]
pub struct Source {
    /// The name in messages: `app/util.lona`.
    pub name: Arc<str>,
    /// The text.
    pub text: Arc<str>,
}

impl Source {
    /// A source from a name and its text.
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// One form and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    /// What was read.
    pub kind: FormKind,
    /// Where it starts.
    pub pos: Pos,
    /// The metadata `^` gave it: a map form (`^:k` is `{:k true}`, `^T`
    /// and `^"T"` are `{:tag T}`), or `None`. The compiler gives it to
    /// the value of a vector, map or set literal (`with-meta`) and to a
    /// quoted one; elsewhere (names, parameter lists, calls) it is
    /// ignored, as a type hint is.
    pub meta: Option<Box<Form>>,
}

/// The kinds of form. Reader macros expand to lists: `'x` is
/// `(quote x)`, `@x` is `(deref x)`, `` `x `` is `(syntax-quote x)`, `~x` is `(unquote x)`,
/// `~@x` is `(unquote-splicing x)`, `#(f %)` is `(fn [%1] (f %1))`. A
/// character literal `\a` is the one-character string `"a"`.
#[derive(Clone, Debug, PartialEq)]
pub enum FormKind {
    /// `nil`
    Nil,
    /// `true` / `false`
    Bool(bool),
    /// An integer that fits an `i64`.
    Int(i64),
    /// An integer that does not fit an `i64`.
    BigInt(BigInt),
    /// A float.
    Float(f64),
    /// A string, escapes resolved.
    Str(String),
    /// A keyword, without its colon: `ok`, `app/ready`. An
    /// auto-resolved keyword (`::a`, `::alias/a`) keeps its second colon
    /// (`:a`, `:alias/a`): the reader knows no namespace, the compiler
    /// resolves it.
    Keyword(String),
    /// A symbol: `foo`, `app.util/parse`, `+`.
    Symbol(String),
    /// `(...)`
    List(Vec<Form>),
    /// `[...]`
    Vector(Vec<Form>),
    /// `{...}`: key/value pairs in source order (duplicates are kept here;
    /// the compiler reports them).
    Map(Vec<(Form, Form)>),
    /// `#{...}`: the elements in source order.
    Set(Vec<Form>),
    /// `#"..."`: a regular expression's source, exactly as written
    /// between the quotes (backslashes kept: `#"\d+"` is `\d+`).
    Regex(String),
    /// `#bin"..."` or `#bin[1 2 255]`: a binary's bytes.
    Binary(Vec<u8>),
}

impl Form {
    /// A form at a position.
    pub fn new(kind: FormKind, pos: Pos) -> Form {
        Form {
            kind,
            pos,
            meta: None,
        }
    }

    /// Whether two forms are the same apart from positions (NaN equals
    /// NaN): what a printed form must read back as.
    pub fn same_as(&self, other: &Form) -> bool {
        match (&self.kind, &other.kind) {
            (FormKind::List(x), FormKind::List(y))
            | (FormKind::Vector(x), FormKind::Vector(y))
            | (FormKind::Set(x), FormKind::Set(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same_as(q))
            }
            (FormKind::Map(x), FormKind::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((k, v), (k2, v2))| k.same_as(k2) && v.same_as(v2))
            }
            (FormKind::Float(x), FormKind::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
            (p, q) => p == q,
        }
    }

    /// The symbol's name, if this is a symbol.
    pub fn as_symbol(&self) -> Option<&str> {
        match &self.kind {
            FormKind::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// The keyword's name (without `:`), if this is a keyword.
    pub fn as_keyword(&self) -> Option<&str> {
        match &self.kind {
            FormKind::Keyword(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is a list.
    pub fn as_list(&self) -> Option<&[Form]> {
        match &self.kind {
            FormKind::List(v) => Some(v),
            _ => None,
        }
    }

    /// The items, if this is a vector.
    pub fn as_vector(&self) -> Option<&[Form]> {
        match &self.kind {
            FormKind::Vector(v) => Some(v),
            _ => None,
        }
    }
}
