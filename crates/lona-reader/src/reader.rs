//! The reader: Lonala source text to [`Form`]s.
//!
//! Grammar (lonala.md, "Reading"):
//!
//! ```text
//! form     = atom | list | vector | map | set | anon-fn | prefix form
//! list     = "(" form* ")"      vector = "[" form* "]"     map = "{" (form form)* "}"
//! set      = "#{" form* "}"     anon-fn = "#(" form* ")"  (% %1 %2 .. %& its parameters)
//! prefix   = "'" (quote) | "`" (syntax-quote) | "~" (unquote) | "~@" (unquote-splicing)
//!          | "@" (deref) | "#_" (discard the next form)
//!          | "^" form (metadata: `^{:k v}`, `^:kw`, `^Sym`; read and dropped)
//! atom     = nil | true | false | integer | float | string | keyword | symbol
//!          | regex | char | binary
//! regex    = '#"' (char | '\' char)* '"'     the source as written, backslashes kept
//! binary   = '#bin' string | '#bin[' (0..255)* ']'   a binary: the string's UTF-8, or the bytes
//! char     = '\' char | '\' name | '\u' hex{4}   (newline space tab return
//!            backspace formfeed): the one-character string
//! integer  = [+-]? digits N? | [+-]? 0x hexdigits N?    (any size: big integers;
//!            the `N` of Clojure's big-integer literals changes nothing)
//!          | [+-]? 0 octdigits N?                        (octal, as Clojure's: `017` is 15)
//!          | [+-]? radix [rR] alnum+                     (radix 2 to 36: `2r1010`, `-16rFF`)
//! float    = [+-]? digits ("." digits)? ([eE] [+-]? digits)?  | ##Inf | ##-Inf | ##NaN
//! string   = '"' (char | \n \t \r \" \\ \0 \uXXXX)* '"'
//! keyword  = ":" symbol-char+   symbol = symbol-char+ (not a number, not nil/true/false)
//!          | "::" symbol-char+  (auto-resolved: the keyword `:name` with a leading
//!                                `:` in its name, which the compiler resolves to
//!                                the current namespace, or `::alias/a` to the alias's)
//! symbol-char = letter | digit | one of * + ! - _ ' ? < > = / . & % $
//!             | "#" (not first: `x#`, syntax quote's fresh names)
//!             | ":" (not first or last, not two together: `a:b:c`, as Clojure's)
//! ```
//!
//! A token (atom) runs to the next whitespace, comma, bracket, `"`, `;`,
//! `` ` `` or `~`; a `'` inside a token is part of it (`x'`), only a
//! leading one is `quote`. A token that starts with a digit, or with `+` or
//! `-` and a digit, is a number: with `.`, `e` or `E` (and no `0x`) a
//! float, otherwise an integer (`i64` if it fits, else a big integer of at
//! most [`MAX_INT_BITS`] bits; leading zeros do not count).
//!
//! Whitespace and commas separate forms; `;` starts a comment to the end of
//! the line. Collections are read with an explicit stack (no recursion on
//! the Rust stack), nested at most [`MAX_DEPTH`] deep. Every error names
//! file:line:column and what was expected; [`ReadError::incomplete`] says
//! whether more input could complete the form (the REPL asks for another
//! line then): it is set for an unclosed collection, an unterminated string
//! and a prefix with no form after it, all at the end of the input. A token
//! is complete at the end of the input (the REPL continues with a newline,
//! which would end it), so a bad token is never incomplete.

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::Num;

use crate::form::{Form, FormKind, Pos, Source};

/// Deepest nesting of collections and prefixes.
pub const MAX_DEPTH: usize = 4096;

/// Largest integer literal, in bits (its magnitude: `-2^4096 + 1` to
/// `2^4096 - 1`).
pub const MAX_INT_BITS: u64 = 4096;

/// A reader error. Displayed as `file:line:col: message`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    /// The source's name.
    pub file: Arc<str>,
    /// Where: the offending character or token, or the end of the input
    /// when `incomplete`.
    pub pos: Pos,
    /// What was expected, or what was found.
    pub message: String,
    /// Whether more input could complete the form: an unclosed
    /// collection, string or prefix at the end of the input.
    pub incomplete: bool,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.pos.line, self.pos.col, self.message
        )
    }
}

impl std::error::Error for ReadError {}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    List,
    Vector,
    Map,
    Set,
    AnonFn,
}

impl Open {
    fn close(self) -> char {
        match self {
            Open::List | Open::AnonFn => ')',
            Open::Vector => ']',
            Open::Map | Open::Set => '}',
        }
    }
    fn open(self) -> &'static str {
        match self {
            Open::List => "(",
            Open::Vector => "[",
            Open::Map => "{",
            Open::Set => "#{",
            Open::AnonFn => "#(",
        }
    }
}

/// What a prefix does with the form after it.
#[derive(Clone, Copy)]
enum Act {
    /// Wraps it: `(quote form)`.
    Wrap(&'static str),
    /// Drops it (`#_`, and the metadata of `^`).
    Discard,
    /// Keeps it as the metadata of the next form (`^meta`).
    Meta,
    /// Gives it the metadata kept last (the form after `^meta`).
    Attach,
}

enum Frame {
    Coll(Open, Pos, Vec<Form>),
    /// A prefix waiting for its form: what it does with it, what it is
    /// called in messages, and where it is.
    Prefix(Act, &'static str, Pos),
}

/// `form` with the metadata `m` of a `^` before it: `m` as a map (`^:k`
/// is `{:k true}`, `^T` and `^"T"` `{:tag T}`), merged over what the form
/// had (`^:a ^:b x`: both, the outer winning a key they share).
fn attach_meta(mut form: Form, m: Form) -> Result<Form, String> {
    let pairs = match m.kind {
        FormKind::Map(pairs) => pairs,
        FormKind::Keyword(_) => vec![(m, Form::new(FormKind::Bool(true), form.pos))],
        FormKind::Symbol(_) | FormKind::Str(_) => {
            vec![(Form::new(FormKind::Keyword("tag".into()), m.pos), m)]
        }
        _ => return Err("metadata must be a map, keyword, symbol or string".into()),
    };
    let pos = form.pos;
    let mut all = match form.meta.take().map(|b| b.kind) {
        Some(FormKind::Map(old)) => old,
        _ => Vec::new(),
    };
    for (k, v) in pairs {
        all.retain(|(k2, _)| !k2.same_as(&k));
        all.push((k, v));
    }
    form.meta = Some(Box::new(Form::new(FormKind::Map(all), pos)));
    Ok(form)
}

/// Reads the forms of one source, one at a time.
pub struct Reader<'s> {
    src: &'s Source,
    text: &'s str,
    i: usize,
    line: u32,
    col: u32,
}

impl<'s> Reader<'s> {
    /// A reader at the start of `src`.
    pub fn new(src: &'s Source) -> Reader<'s> {
        Reader {
            src,
            text: &src.text,
            i: 0,
            line: 1,
            col: 1,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    fn err(&self, pos: Pos, message: impl Into<String>, incomplete: bool) -> ReadError {
        ReadError {
            file: self.src.name.clone(),
            pos,
            message: message.into(),
            incomplete,
        }
    }

    fn check_depth(&self, depth: usize, pos: Pos) -> Result<(), ReadError> {
        if depth >= MAX_DEPTH {
            return Err(self.err(pos, format!("nesting deeper than {MAX_DEPTH}"), false));
        }
        Ok(())
    }

    fn peek(&self) -> Option<char> {
        match *self.text.as_bytes().get(self.i)? {
            b if b.is_ascii() => Some(char::from(b)),
            _ => self.text[self.i..].chars().next(),
        }
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.text[self.i..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
            self.col = 1;
        } else {
            self.col = self.col.saturating_add(1);
        }
        Some(c)
    }

    /// Moves over the characters before the first one for which `stop`
    /// holds (or the end), and returns them.
    fn take_until(&mut self, stop: impl Fn(char) -> bool) -> &'s str {
        let text: &'s str = self.text;
        let rest = &text[self.i..];
        // ASCII byte by byte; from the first other character on, by chars.
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii() || stop(char::from(b)))
            .unwrap_or(rest.len());
        let end = match rest.as_bytes().get(ascii) {
            Some(b) if !b.is_ascii() => rest[ascii..].find(stop).map_or(rest.len(), |n| ascii + n),
            _ => ascii,
        };
        let taken = &rest[..end];
        self.i += end;
        let mut lines = 0usize;
        let mut line_start = 0;
        for (i, b) in taken.bytes().enumerate() {
            if b == b'\n' {
                lines += 1;
                line_start = i + 1;
            }
        }
        let last_line = &taken[line_start..];
        // Columns count characters: bytes, if all were ASCII.
        let chars = if end == ascii {
            last_line.len()
        } else {
            last_line.chars().count()
        };
        let chars = u32::try_from(chars).unwrap_or(u32::MAX);
        if lines == 0 {
            self.col = self.col.saturating_add(chars);
        } else {
            self.line = self
                .line
                .saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
            self.col = 1u32.saturating_add(chars);
        }
        taken
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.bump();
            } else if c == ';' {
                self.take_until(|c| c == '\n');
            } else {
                break;
            }
        }
    }

    /// The next top-level form; `Ok(None)` at the end of the input. After
    /// an error the reader is somewhere inside the bad form: read no
    /// further.
    pub fn next_form(&mut self) -> Result<Option<Form>, ReadError> {
        let mut stack: Vec<Frame> = Vec::new();
        // The metadata of each `^` whose form is still being read
        // (innermost last: `Act::Meta` pushes, `Act::Attach` pops).
        let mut metas: Vec<Form> = Vec::new();
        loop {
            self.skip_ws();
            let pos = self.pos();
            let Some(c) = self.peek() else {
                return match stack.pop() {
                    None => Ok(None),
                    Some(Frame::Coll(open, at, _)) => Err(self.err(
                        pos,
                        format!(
                            "expected '{}' to close '{}' opened at {}",
                            open.close(),
                            open.open(),
                            at
                        ),
                        true,
                    )),
                    Some(Frame::Prefix(_, text, at)) => {
                        Err(self.err(pos, format!("expected a form after {text} at {at}"), true))
                    }
                };
            };
            let mut form: Form;
            match c {
                '(' | '[' | '{' => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    let open = match c {
                        '(' => Open::List,
                        '[' => Open::Vector,
                        _ => Open::Map,
                    };
                    stack.push(Frame::Coll(open, pos, Vec::new()));
                    continue;
                }
                '#' if matches!(self.peek2(), Some('{' | '(')) => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    let open = if self.bump() == Some('{') {
                        Open::Set
                    } else {
                        if stack
                            .iter()
                            .any(|f| matches!(f, Frame::Coll(Open::AnonFn, _, _)))
                        {
                            return Err(self.err(pos, "#() cannot be nested in #()", false));
                        }
                        Open::AnonFn
                    };
                    stack.push(Frame::Coll(open, pos, Vec::new()));
                    continue;
                }
                '#' if self.peek2() == Some('"') => form = self.regex()?,
                '#' if self.text[self.i..].starts_with("#bin\"")
                    || self.text[self.i..].starts_with("#bin[") =>
                {
                    form = self.binary()?
                }
                '\\' => form = self.character()?,
                '^' => {
                    self.check_depth(stack.len() + 1, pos)?;
                    self.bump();
                    stack.push(Frame::Prefix(Act::Attach, "metadata (^)", pos));
                    stack.push(Frame::Prefix(Act::Meta, "metadata (^)", pos));
                    continue;
                }
                ')' | ']' | '}' => {
                    self.bump();
                    match stack.pop() {
                        Some(Frame::Coll(open, at, items)) if open.close() == c => {
                            let kind = match open {
                                Open::List => FormKind::List(items),
                                Open::Vector => FormKind::Vector(items),
                                Open::Set => FormKind::Set(items),
                                Open::AnonFn => anon_fn(items, at),
                                Open::Map => {
                                    if items.len() % 2 != 0 {
                                        return Err(self.err(
                                            at,
                                            "map literal needs an even number of forms",
                                            false,
                                        ));
                                    }
                                    let mut pairs = Vec::with_capacity(items.len() / 2);
                                    let mut it = items.into_iter();
                                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                                        pairs.push((k, v));
                                    }
                                    FormKind::Map(pairs)
                                }
                            };
                            form = Form::new(kind, at);
                        }
                        Some(Frame::Coll(open, at, _)) => {
                            return Err(self.err(
                                pos,
                                format!(
                                    "expected '{}' to close '{}' opened at {}, found '{c}'",
                                    open.close(),
                                    open.open(),
                                    at
                                ),
                                false,
                            ))
                        }
                        Some(Frame::Prefix(_, text, at)) => {
                            return Err(self.err(
                                pos,
                                format!("expected a form after {text} at {at}, found '{c}'"),
                                false,
                            ))
                        }
                        None => return Err(self.err(pos, format!("unexpected '{c}'"), false)),
                    }
                }
                '\'' | '`' | '~' | '@' => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    let (head, text) = match c {
                        '\'' => ("quote", "quote (')"),
                        '`' => ("syntax-quote", "syntax-quote (`)"),
                        '@' => ("deref", "deref (@)"),
                        _ => {
                            if self.peek() == Some('@') {
                                self.bump();
                                ("unquote-splicing", "unquote-splicing (~@)")
                            } else {
                                ("unquote", "unquote (~)")
                            }
                        }
                    };
                    stack.push(Frame::Prefix(Act::Wrap(head), text, pos));
                    continue;
                }
                '#' if self.peek2() == Some('_') => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    self.bump();
                    stack.push(Frame::Prefix(Act::Discard, "discard (#_)", pos));
                    continue;
                }
                '"' => form = self.string()?,
                _ => form = self.atom()?,
            }
            // A finished form: give it to the innermost open frame.
            loop {
                match stack.last_mut() {
                    None => return Ok(Some(form)),
                    Some(Frame::Coll(_, _, items)) => {
                        items.push(form);
                        break;
                    }
                    Some(&mut Frame::Prefix(act, _, at)) => {
                        stack.pop();
                        let head = match act {
                            // `#_`: the form is dropped.
                            Act::Discard => break,
                            Act::Meta => {
                                metas.push(form);
                                break;
                            }
                            Act::Attach => {
                                let m = metas.pop().expect("an Act::Meta came first");
                                form =
                                    attach_meta(form, m).map_err(|msg| self.err(at, msg, false))?;
                                continue;
                            }
                            Act::Wrap(head) => head,
                        };
                        form = Form::new(
                            FormKind::List(vec![
                                Form::new(FormKind::Symbol(head.to_string()), at),
                                form,
                            ]),
                            at,
                        );
                    }
                }
            }
        }
    }

    fn string(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        self.bump();
        let mut s = String::new();
        loop {
            s.push_str(self.take_until(|c| c == '"' || c == '\\'));
            let here = self.pos();
            let Some(c) = self.bump() else {
                return Err(self.err(
                    here,
                    format!("expected '\"' to close the string opened at {start}"),
                    true,
                ));
            };
            match c {
                '"' => return Ok(Form::new(FormKind::Str(s), start)),
                '\\' => {
                    let Some(e) = self.bump() else {
                        return Err(self.err(
                            self.pos(),
                            format!("expected '\"' to close the string opened at {start}"),
                            true,
                        ));
                    };
                    match e {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        '0' => s.push('\0'),
                        '"' => s.push('"'),
                        '\\' => s.push('\\'),
                        'u' => {
                            let mut code = 0u32;
                            for _ in 0..4 {
                                let d = self.peek().and_then(|c| c.to_digit(16));
                                match d {
                                    Some(d) => {
                                        code = code * 16 + d;
                                        self.bump();
                                    }
                                    None if self.peek().is_none() => {
                                        return Err(self.err(
                                            self.pos(),
                                            "expected 4 hex digits after \\u",
                                            true,
                                        ))
                                    }
                                    None => {
                                        return Err(self.err(
                                            here,
                                            "expected 4 hex digits after \\u",
                                            false,
                                        ))
                                    }
                                }
                            }
                            match char::from_u32(code) {
                                Some(ch) => s.push(ch),
                                None => {
                                    return Err(self.err(
                                        here,
                                        format!("\\u{code:04x} is not a character"),
                                        false,
                                    ))
                                }
                            }
                        }
                        other => {
                            let message = if other.is_control() || other.is_whitespace() {
                                let code = u32::from(other);
                                format!("unknown escape: \\ followed by U+{code:04X} in a string")
                            } else {
                                format!("unknown escape \\{other} in a string")
                            };
                            return Err(self.err(here, message, false));
                        }
                    }
                }
                c => s.push(c),
            }
        }
    }

    /// `#bin"..."` (a string's text, escapes as in a string, as UTF-8
    /// bytes) or `#bin[1 2 255]` (the bytes as integers 0 to 255): a
    /// binary, as binaries print.
    fn binary(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        for _ in 0..4 {
            self.bump();
        }
        if self.peek() == Some('"') {
            let form = self.string()?;
            let FormKind::Str(s) = form.kind else {
                unreachable!("a string reads as a string")
            };
            return Ok(Form::new(FormKind::Binary(s.into_bytes()), start));
        }
        self.bump();
        let mut bytes = Vec::new();
        loop {
            self.skip_ws();
            let here = self.pos();
            match self.peek() {
                Some(']') => {
                    self.bump();
                    return Ok(Form::new(FormKind::Binary(bytes), start));
                }
                None => {
                    return Err(self.err(
                        here,
                        format!("expected ']' to close the binary opened at {start}"),
                        true,
                    ))
                }
                Some(_) => {
                    let tok = self.take_until(|c| c.is_whitespace() || c == ',' || c == ']');
                    match tok.parse::<u8>() {
                        Ok(b) => bytes.push(b),
                        Err(_) => {
                            return Err(self.err(
                                here,
                                format!(
                                    "a byte in #bin[...] is an integer from 0 to 255, not {tok}"
                                ),
                                false,
                            ))
                        }
                    }
                }
            }
        }
    }

    /// `#"..."`: the source up to the first `"` not after a `\\`, kept
    /// as written (a regex has its own escapes).
    fn regex(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        self.bump();
        self.bump();
        let mut s = String::new();
        loop {
            s.push_str(self.take_until(|c| c == '"' || c == '\\'));
            match self.bump() {
                Some('"') => return Ok(Form::new(FormKind::Regex(s), start)),
                Some('\\') => {
                    s.push('\\');
                    if let Some(c) = self.bump() {
                        s.push(c);
                    }
                }
                _ => {
                    return Err(self.err(
                        self.pos(),
                        format!("expected '\"' to close the regex opened at {start}"),
                        true,
                    ))
                }
            }
        }
    }

    /// `\a`, `\newline`, `\u00e9`: a one-character string.
    fn character(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        self.bump();
        let Some(first) = self.bump() else {
            return Err(self.err(self.pos(), "expected a character after \\", true));
        };
        let mut name = String::from(first);
        if first.is_alphanumeric() {
            name.push_str(self.take_until(ends_token));
        }
        let c = if name.chars().count() == 1 {
            first
        } else {
            match name.as_str() {
                "newline" => '\n',
                "space" => ' ',
                "tab" => '\t',
                "return" => '\r',
                "backspace" => '\u{8}',
                "formfeed" => '\u{c}',
                _ => match name
                    .strip_prefix('u')
                    .filter(|h| h.len() == 4)
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                {
                    Some(code) => char::from_u32(code).ok_or_else(|| {
                        self.err(start, format!("\\{name} is not a character"), false)
                    })?,
                    None => {
                        return Err(self.err(
                            start,
                            format!(
                                "unknown character literal \\{} (expected \\a, \\newline, \\space, \\tab, \\return, \\uXXXX...)",
                                shown(&name)
                            ),
                            false,
                        ))
                    }
                },
            }
        };
        Ok(Form::new(FormKind::Str(c.to_string()), start))
    }

    fn atom(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        let tok = self.take_until(ends_token);
        let kind = match tok {
            "nil" => FormKind::Nil,
            "true" => FormKind::Bool(true),
            "false" => FormKind::Bool(false),
            "##Inf" => FormKind::Float(f64::INFINITY),
            "##-Inf" => FormKind::Float(f64::NEG_INFINITY),
            "##NaN" => FormKind::Float(f64::NAN),
            _ => {
                let mut chars = tok.chars();
                let first = chars.next().unwrap_or(' ');
                let second = chars.next();
                if first.is_ascii_digit()
                    || ((first == '-' || first == '+')
                        && second.is_some_and(|c| c.is_ascii_digit()))
                {
                    self.number(tok, start)?
                } else if let Some(name) = tok.strip_prefix(':') {
                    // `::a`, `::alias/a`: auto-resolved, kept as the name
                    // `:a` / `:alias/a` for the compiler to resolve.
                    let (auto, name) = match name.strip_prefix(':') {
                        Some(n) => (true, n),
                        None => (false, name),
                    };
                    if name.is_empty() {
                        return Err(self.err(
                            start,
                            format!(
                                "expected a keyword name after '{}'",
                                if auto { "::" } else { ":" }
                            ),
                            false,
                        ));
                    }
                    if auto && (name.starts_with('/') || name.ends_with('/')) {
                        return Err(self.err(
                            start,
                            format!("bad auto-resolved keyword {}", shown(tok)),
                            false,
                        ));
                    }
                    let bad = name.char_indices().find(|&(i, c)| {
                        !(symbol_char(c)
                            || ((c == '#' || c == '@') && i > 0)
                            || inner_colon(name, i))
                    });
                    if let Some((_, bad)) = bad {
                        return Err(self.err(
                            start,
                            format!("unexpected '{bad}' in keyword {}", shown(tok)),
                            false,
                        ));
                    }
                    FormKind::Keyword(if auto {
                        format!(":{name}")
                    } else {
                        name.to_string()
                    })
                } else if first == '#' {
                    return Err(self.err(
                        start,
                        format!(
                            "unknown reader form {} (expected #{{...}}, #(...), #\"regex\", #_, ##Inf, ##-Inf or ##NaN)",
                            shown(tok)
                        ),
                        false,
                    ));
                } else if let Some((_, bad)) = tok
                    .char_indices()
                    .find(|&(i, c)| !symbol_char(c) && c != '#' && !inner_colon(tok, i))
                {
                    return Err(self.err(
                        start,
                        format!("unexpected '{bad}' in symbol {}", shown(tok)),
                        false,
                    ));
                } else {
                    FormKind::Symbol(tok.to_string())
                }
            }
        };
        Ok(Form::new(kind, start))
    }

    fn number(&self, tok: &str, start: Pos) -> Result<FormKind, ReadError> {
        let (neg, body) = match tok.as_bytes().first() {
            Some(b'-') => (true, &tok[1..]),
            Some(b'+') => (false, &tok[1..]),
            _ => (false, tok),
        };
        // `NNrDIGITS`: Clojure's radix literal, radix 2 to 36.
        let radix_split = body
            .find(['r', 'R'])
            .filter(|&i| (1..=2).contains(&i) && body[..i].bytes().all(|b| b.is_ascii_digit()));
        if let Some(i) = radix_split {
            let radix: u32 = body[..i].parse().unwrap_or(0);
            if !(2..=36).contains(&radix) || body.starts_with('0') {
                return Err(self.err(
                    start,
                    format!("radix must be 2 to 36 in {}", shown(tok)),
                    false,
                ));
            }
            let digits = &body[i + 1..];
            return self.integer(tok, start, neg, radix, digits, "a digit of the radix");
        }
        let (radix, digits, what) =
            match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                Some(h) => (16, h, "a hex digit"),
                None => (10, body, "a decimal digit"),
            };
        // `1N`, `0xffN`: Clojure's big-integer suffix (Lonala's integers
        // are one kind, of any size: the value is the same).
        let digits = match digits.strip_suffix('N') {
            Some(d) if !d.is_empty() => d,
            _ => digits,
        };
        let is_float = radix == 10 && digits.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
        if !is_float && radix == 10 && digits.len() > 1 && digits.starts_with('0') {
            // `017`: octal, as in Clojure (and C); `08` is no number.
            return self.integer(tok, start, neg, 8, &digits[1..], "an octal digit");
        }
        if is_float {
            return match tok.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(FormKind::Float(x)),
                Ok(_) => Err(self.err(
                    start,
                    format!("float literal out of range: {}", shown(tok)),
                    false,
                )),
                Err(_) => Err(self.err(
                    start,
                    format!(
                        "expected a float like 1.5, -2.0 or 1e-3, found {}",
                        shown(tok)
                    ),
                    false,
                )),
            };
        }
        self.integer(tok, start, neg, radix, digits, what)
    }

    /// The integer of `digits` in `radix` (`tok` the whole token, for
    /// messages).
    fn integer(
        &self,
        tok: &str,
        start: Pos,
        neg: bool,
        radix: u32,
        digits: &str,
        what: &str,
    ) -> Result<FormKind, ReadError> {
        // Check the digits, and take the value while it fits a u64 (most
        // literals: no big integer for them).
        let mut small = Some(0u64);
        for c in digits.chars() {
            let Some(d) = c.to_digit(radix) else {
                return Err(self.err(
                    start,
                    format!("expected {what}, found '{c}' in {}", shown(tok)),
                    false,
                ));
            };
            small = small
                .and_then(|v| v.checked_mul(u64::from(radix)))
                .and_then(|v| v.checked_add(u64::from(d)));
        }
        if digits.is_empty() {
            return Err(self.err(start, format!("expected {what} after {tok}"), false));
        }
        if let Some(v) = small {
            let v = if neg { -i128::from(v) } else { i128::from(v) };
            return Ok(match i64::try_from(v) {
                Ok(i) => FormKind::Int(i),
                Err(_) => FormKind::BigInt(BigInt::from(v)),
            });
        }
        // Leading zeros carry no bits; a quick bound before parsing keeps a
        // megabyte of digits from being parsed at all (a decimal digit
        // carries log2(10) < 10/3 bits; the exact check is after parsing).
        let significant = digits.trim_start_matches('0');
        let bits_estimate = (significant.len() as f64 * f64::from(radix).log2()) as u64;
        let too_large = || self.err(start, "integer literal too large", false);
        if bits_estimate > MAX_INT_BITS + 64 {
            return Err(too_large());
        }
        let mut v = BigInt::from_str_radix(significant, radix)
            .map_err(|_| self.err(start, format!("expected {what} in {}", shown(tok)), false))?;
        if v.bits() > MAX_INT_BITS {
            return Err(too_large());
        }
        if neg {
            v = -v;
        }
        Ok(match i64::try_from(&v) {
            Ok(i) => FormKind::Int(i),
            Err(_) => FormKind::BigInt(v),
        })
    }
}

/// `#(body...)` as `(fn [%1 .. %n & %&] (body...))`: `%` is `%1`, the
/// highest `%n` used gives the arity, `%&` the rest.
fn anon_fn(items: Vec<Form>, at: Pos) -> FormKind {
    let mut body = Form::new(FormKind::List(items), at);
    let mut max = 0u32;
    let mut rest = false;
    let mut todo: Vec<&mut Form> = vec![&mut body];
    while let Some(f) = todo.pop() {
        match &mut f.kind {
            FormKind::Symbol(s) if s == "%" => {
                *s = "%1".into();
                max = max.max(1);
            }
            FormKind::Symbol(s) if s == "%&" => rest = true,
            FormKind::Symbol(s) => {
                if let Some(n) = s.strip_prefix('%').and_then(|n| n.parse::<u32>().ok()) {
                    max = max.max(n.min(200));
                }
            }
            FormKind::List(v) | FormKind::Vector(v) | FormKind::Set(v) => todo.extend(v.iter_mut()),
            FormKind::Map(pairs) => {
                for (k, v) in pairs.iter_mut() {
                    todo.push(k);
                    todo.push(v);
                }
            }
            _ => {}
        }
    }
    let sym = |s: String| Form::new(FormKind::Symbol(s), at);
    let mut params: Vec<Form> = (1..=max).map(|i| sym(format!("%{i}"))).collect();
    if rest {
        params.push(sym("&".into()));
        params.push(sym("%&".into()));
    }
    FormKind::List(vec![
        sym("fn".into()),
        Form::new(FormKind::Vector(params), at),
        body,
    ])
}

/// Whether `c` ends a token: whitespace, a comma, a bracket, `"`, `;`,
/// `` ` `` or `~`.
fn ends_token(c: char) -> bool {
    /// The ASCII characters that end a token (`char::is_whitespace` and
    /// the delimiters), as a table: the reader's innermost loop.
    const ENDS: [bool; 128] = {
        let mut t = [false; 128];
        let ends = b"\t\n\x0b\x0c\r ()[]{}\";,`~";
        let mut i = 0;
        while i < ends.len() {
            t[ends[i] as usize] = true;
            i += 1;
        }
        t
    };
    match ENDS.get(c as usize) {
        Some(&end) => end,
        None => c.is_whitespace(),
    }
}

/// A token as shown in a message: at most 40 characters.
fn shown(tok: &str) -> String {
    match tok.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &tok[..i]),
        None => tok.to_string(),
    }
}

/// Characters a symbol or keyword may contain. Either may also contain
/// `#` (syntax quote's fresh names end in it), but not start with it.
/// Whether byte `i` of the name `s` is a `:` a symbol or keyword may hold,
/// as Clojure's reader allows it: not first or last, and not beside
/// another (`a:b:c` is one name; `a:`, `a::b` are not).
fn inner_colon(s: &str, i: usize) -> bool {
    let b = s.as_bytes();
    b[i] == b':' && i > 0 && i + 1 < b.len() && b[i - 1] != b':' && b[i + 1] != b':'
}

fn symbol_char(c: char) -> bool {
    c.is_alphanumeric() || "*+!-_'?<>=/.&%$".contains(c)
}

/// Reads every form of `src`.
pub fn read_all(src: &Source) -> Result<Vec<Form>, ReadError> {
    let mut r = Reader::new(src);
    let mut v = Vec::new();
    while let Some(f) = r.next_form()? {
        v.push(f);
    }
    Ok(v)
}

impl std::fmt::Display for Form {
    /// Prints the form so that reading it gives an equal form.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // An explicit stack: any depth prints.
        enum T<'a> {
            F(&'a Form),
            S(&'static str),
        }
        let mut todo = vec![T::F(self)];
        while let Some(t) = todo.pop() {
            let form = match t {
                T::S(s) => {
                    f.write_str(s)?;
                    continue;
                }
                T::F(x) => x,
            };
            match &form.kind {
                FormKind::Nil => f.write_str("nil")?,
                FormKind::Bool(b) => write!(f, "{b}")?,
                FormKind::Int(i) => write!(f, "{i}")?,
                FormKind::BigInt(b) => write!(f, "{b}")?,
                FormKind::Float(x) => {
                    if x.is_nan() {
                        f.write_str("##NaN")?
                    } else if x.is_infinite() {
                        f.write_str(if *x > 0.0 { "##Inf" } else { "##-Inf" })?
                    } else {
                        write!(f, "{x:?}")?
                    }
                }
                FormKind::Str(s) => {
                    f.write_str("\"")?;
                    for c in s.chars() {
                        match c {
                            '"' => f.write_str("\\\"")?,
                            '\\' => f.write_str("\\\\")?,
                            '\n' => f.write_str("\\n")?,
                            '\t' => f.write_str("\\t")?,
                            '\r' => f.write_str("\\r")?,
                            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                            c => write!(f, "{c}")?,
                        }
                    }
                    f.write_str("\"")?
                }
                FormKind::Keyword(k) => write!(f, ":{k}")?,
                FormKind::Symbol(s) => f.write_str(s)?,
                FormKind::List(items) | FormKind::Vector(items) => {
                    let (open, close) = if matches!(form.kind, FormKind::List(_)) {
                        ("(", ")")
                    } else {
                        ("[", "]")
                    };
                    f.write_str(open)?;
                    todo.push(T::S(close));
                    for (i, it) in items.iter().enumerate().rev() {
                        todo.push(T::F(it));
                        if i > 0 {
                            todo.push(T::S(" "));
                        }
                    }
                }
                FormKind::Set(items) => {
                    f.write_str("#{")?;
                    todo.push(T::S("}"));
                    for (i, it) in items.iter().enumerate().rev() {
                        todo.push(T::F(it));
                        if i > 0 {
                            todo.push(T::S(" "));
                        }
                    }
                }
                FormKind::Binary(b) => {
                    f.write_str("#bin[")?;
                    for (i, byte) in b.iter().enumerate() {
                        if i > 0 {
                            f.write_str(" ")?;
                        }
                        write!(f, "{byte}")?;
                    }
                    f.write_str("]")?
                }
                FormKind::Regex(s) => {
                    f.write_str("#\"")?;
                    f.write_str(s)?;
                    f.write_str("\"")?
                }
                FormKind::Map(pairs) => {
                    f.write_str("{")?;
                    todo.push(T::S("}"));
                    for (i, (k, v)) in pairs.iter().enumerate().rev() {
                        todo.push(T::F(v));
                        todo.push(T::S(" "));
                        todo.push(T::F(k));
                        if i > 0 {
                            todo.push(T::S(", "));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
