//! The reader: Lonala source text to [`Form`]s.
//!
//! Grammar (lonala.md, "Reading"):
//!
//! ```text
//! form     = atom | list | vector | map | prefix form
//! list     = "(" form* ")"      vector = "[" form* "]"     map = "{" (form form)* "}"
//! prefix   = "'" (quote) | "`" (syntax-quote) | "~" (unquote) | "~@" (unquote-splicing)
//!          | "#_" (discard the next form)
//! atom     = nil | true | false | integer | float | string | keyword | symbol
//! integer  = [+-]? digits | [+-]? 0x hexdigits          (any size: big integers)
//! float    = [+-]? digits ("." digits)? ([eE] [+-]? digits)?  | ##Inf | ##-Inf | ##NaN
//! string   = '"' (char | \n \t \r \" \\ \0 \uXXXX)* '"'
//! keyword  = ":" symbol-chars       symbol = symbol-chars (not starting with a digit)
//! ```
//!
//! Whitespace and commas separate forms; `;` starts a comment to the end of
//! the line. Collections are read with an explicit stack (no recursion on
//! the Rust stack), nested at most [`MAX_DEPTH`] deep. Every error names
//! file:line:column and what was expected; [`ReadError::incomplete`] says
//! whether more input could complete the form (the REPL asks for another
//! line then).

use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::Num;

use crate::form::{Form, FormKind, Pos, Source};

/// Deepest nesting of collections and prefixes.
pub const MAX_DEPTH: usize = 4096;

/// Largest integer literal, in bits.
pub const MAX_INT_BITS: u64 = 4096;

/// A reader error.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadError {
    /// The file.
    pub file: Arc<str>,
    /// Where.
    pub pos: Pos,
    /// What was expected or found.
    pub message: String,
    /// Whether more input could complete the form.
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
}

impl Open {
    fn close(self) -> char {
        match self {
            Open::List => ')',
            Open::Vector => ']',
            Open::Map => '}',
        }
    }
    fn open(self) -> char {
        match self {
            Open::List => '(',
            Open::Vector => '[',
            Open::Map => '{',
        }
    }
}

enum Frame {
    Coll(Open, Pos, Vec<Form>),
    /// A prefix waiting for its form: the symbol it wraps in, or None for
    /// `#_` (discard).
    Prefix(Option<&'static str>, Pos),
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
        self.text[self.i..].chars().next()
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
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
            } else {
                break;
            }
        }
    }

    /// The next top-level form; `Ok(None)` at the end of the input.
    pub fn next_form(&mut self) -> Result<Option<Form>, ReadError> {
        let mut stack: Vec<Frame> = Vec::new();
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
                    Some(Frame::Prefix(_, at)) => Err(self.err(
                        pos,
                        format!("expected a form after the prefix at {at}"),
                        true,
                    )),
                };
            };
            let done: Option<Form>;
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
                ')' | ']' | '}' => {
                    self.bump();
                    match stack.pop() {
                        Some(Frame::Coll(open, at, items)) if open.close() == c => {
                            let kind = match open {
                                Open::List => FormKind::List(items),
                                Open::Vector => FormKind::Vector(items),
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
                            done = Some(Form::new(kind, at));
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
                        Some(Frame::Prefix(_, at)) => {
                            return Err(self.err(
                                pos,
                                format!("expected a form after the prefix at {at}, found '{c}'"),
                                false,
                            ))
                        }
                        None => return Err(self.err(pos, format!("unexpected '{c}'"), false)),
                    }
                }
                '\'' | '`' | '~' => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    let head = match c {
                        '\'' => "quote",
                        '`' => "syntax-quote",
                        _ => {
                            if self.peek() == Some('@') {
                                self.bump();
                                "unquote-splicing"
                            } else {
                                "unquote"
                            }
                        }
                    };
                    stack.push(Frame::Prefix(Some(head), pos));
                    continue;
                }
                '#' if self.peek2() == Some('_') => {
                    self.check_depth(stack.len(), pos)?;
                    self.bump();
                    self.bump();
                    stack.push(Frame::Prefix(None, pos));
                    continue;
                }
                '"' => done = Some(self.string()?),
                _ => done = Some(self.atom()?),
            }
            // A finished form: give it to the innermost open frame.
            let mut form = done.expect("a form");
            loop {
                match stack.last_mut() {
                    None => return Ok(Some(form)),
                    Some(Frame::Coll(_, _, items)) => {
                        items.push(form);
                        break;
                    }
                    Some(Frame::Prefix(..)) => {
                        let Some(Frame::Prefix(head, at)) = stack.pop() else {
                            unreachable!()
                        };
                        match head {
                            Some(h) => {
                                form = Form::new(
                                    FormKind::List(vec![
                                        Form::new(FormKind::Symbol(h.to_string()), at),
                                        form,
                                    ]),
                                    at,
                                );
                            }
                            // `#_`: the form is dropped.
                            None => break,
                        }
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
                            here,
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
                            return Err(self.err(
                                here,
                                format!("unknown escape \\{other} in a string"),
                                false,
                            ))
                        }
                    }
                }
                c => s.push(c),
            }
        }
    }

    fn atom(&mut self) -> Result<Form, ReadError> {
        let start = self.pos();
        let from = self.i;
        while let Some(c) = self.peek() {
            if c.is_whitespace()
                || matches!(
                    c,
                    '(' | ')' | '[' | ']' | '{' | '}' | '"' | ';' | ',' | '\'' | '`' | '~'
                )
            {
                break;
            }
            self.bump();
        }
        let tok = &self.text[from..self.i];
        if tok.is_empty() {
            let c = self.peek().unwrap_or(' ');
            self.bump();
            return Err(self.err(start, format!("unexpected '{c}'"), false));
        }
        let kind = match tok {
            "nil" => FormKind::Nil,
            "true" => FormKind::Bool(true),
            "false" => FormKind::Bool(false),
            "##Inf" => FormKind::Float(f64::INFINITY),
            "##-Inf" => FormKind::Float(f64::NEG_INFINITY),
            "##NaN" => FormKind::Float(f64::NAN),
            _ => {
                let first = tok.chars().next().unwrap_or(' ');
                let second = tok.chars().nth(1);
                if first.is_ascii_digit()
                    || ((first == '-' || first == '+')
                        && second.is_some_and(|c| c.is_ascii_digit()))
                {
                    self.number(tok, start)?
                } else if let Some(k) = tok.strip_prefix(':') {
                    if k.is_empty() || k.starts_with(':') || !k.chars().all(symbol_char) {
                        return Err(self.err(start, format!("bad keyword {tok}"), false));
                    }
                    FormKind::Keyword(k.to_string())
                } else if tok.chars().all(|c| symbol_char(c) || c == '#') && first != '#' {
                    FormKind::Symbol(tok.to_string())
                } else {
                    let bad = tok.chars().find(|c| !symbol_char(*c)).unwrap_or(first);
                    return Err(self.err(start, format!("unexpected '{bad}' in {tok}"), false));
                }
            }
        };
        Ok(Form::new(kind, start))
    }

    fn number(&self, tok: &str, start: Pos) -> Result<FormKind, ReadError> {
        let (neg, body) = match tok.as_bytes()[0] {
            b'-' => (true, &tok[1..]),
            b'+' => (false, &tok[1..]),
            _ => (false, tok),
        };
        let (radix, digits) = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            Some(h) => (16, h),
            None => (10, body),
        };
        if radix == 10 && digits.contains(['.', 'e', 'E']) {
            return match tok.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(FormKind::Float(x)),
                Ok(_) => Err(self.err(start, format!("float literal out of range: {tok}"), false)),
                Err(_) => Err(self.err(start, format!("bad number {tok}"), false)),
            };
        }
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(self.err(start, format!("bad number {tok}"), false));
        }
        // A quick bound before parsing (decimal digits carry log2(10) < 10/3 bits).
        let bits_estimate = if radix == 16 {
            digits.len() as u64 * 4
        } else {
            digits.len() as u64 * 10 / 3
        };
        // Loose (leading zeros, the decimal estimate): the exact check is
        // after parsing; this only keeps a megabyte of digits from being
        // parsed at all.
        if bits_estimate > 2 * MAX_INT_BITS + 64 {
            return Err(self.err(
                start,
                format!("integer literal too large (over {MAX_INT_BITS} bits)"),
                false,
            ));
        }
        let mut v = BigInt::from_str_radix(digits, radix)
            .map_err(|_| self.err(start, format!("bad number {tok}"), false))?;
        if v.bits() > MAX_INT_BITS {
            return Err(self.err(
                start,
                format!("integer literal too large (over {MAX_INT_BITS} bits)"),
                false,
            ));
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

/// Characters a symbol or keyword may contain (a symbol may also end in
/// `#`, syntax quote's fresh names, but not start with it).
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
