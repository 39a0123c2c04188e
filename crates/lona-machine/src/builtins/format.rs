//! `format`: Java's `String.format` (Clojure's `format`) for the common
//! conversions. A specifier is `%[flags][width][.precision]conversion`:
//!
//! - conversions: `s` (as `str`; nil as `nil`), `d` (an integer of any size), `f` and
//!   `e` (a number; precision 6 unless given), `x`/`X` (hexadecimal), `o`
//!   (octal), `b` (true unless nil or false), `c` (a one-character
//!   string or a code point), `%`, `n` (a newline);
//! - flags: `-` left-justify in the width, `0` pad numbers with zeros,
//!   `+` a sign for positive numbers, ` ` a space for positive numbers,
//!   `,` group thousands (`d` and `f`);
//! - a negative number in `x`/`o` is a minus sign and the magnitude (as
//!   Erlang and Java's BigInteger, not Java's two's complement of a long).
//!
//! A wrong argument, a missing one or an unknown conversion raises
//! `[:bad-format message]`. The width and precision are at most
//! `MAX_WIDTH` (a guard against one call filling the heap).

use std::fmt::Write;

use lona_term::{RawTerm, Term, View};

use super::{def, ANY};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::num::{self, Num};
use crate::var::Namespace;

const MAX_WIDTH: usize = 1 << 16;

fn bad(cx: &BuiltinCx<'_, '_>, msg: &str) -> Raise {
    let m = cx.heap.string(msg);
    Raise::error(cx.heap.vector(&[lona_term::kw!("bad-format"), m]))
}

#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    group: bool,
    width: usize,
    prec: Option<usize>,
}

/// Groups the digits of `int` (no sign) by thousands.
fn grouped(int: &str) -> String {
    let n = int.len();
    let mut out = String::with_capacity(n + n / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Lays out a number: its sign (from the flags), zero padding, width.
fn number(out: &mut String, sp: &Spec, negative: bool, digits: &str) {
    let sign = if negative {
        "-"
    } else if sp.plus {
        "+"
    } else if sp.space {
        " "
    } else {
        ""
    };
    let len = sign.len() + digits.chars().count();
    let pad = sp.width.saturating_sub(len);
    if sp.left {
        out.push_str(sign);
        out.push_str(digits);
        out.extend(std::iter::repeat_n(' ', pad));
    } else if sp.zero {
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', pad));
        out.push_str(digits);
    } else {
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(sign);
        out.push_str(digits);
    }
}

/// Lays out text in the width.
fn text(out: &mut String, sp: &Spec, s: &str) {
    let s: String = match sp.prec {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    let pad = sp.width.saturating_sub(s.chars().count());
    if sp.left {
        out.push_str(&s);
        out.extend(std::iter::repeat_n(' ', pad));
    } else {
        out.extend(std::iter::repeat_n(' ', pad));
        out.push_str(&s);
    }
}

/// `m` in Java's `%e`: `d.ddddde+xx`.
fn scientific(m: f64, prec: usize) -> String {
    let s = format!("{m:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn format(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let f = cx.term(a[0]).as_str().ok_or_else(Raise::badarg)?;
    let mut out = String::new();
    let mut args = a[1..].iter();
    let mut chars = f.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut sp = Spec::default();
        while let Some(&c) = chars.peek() {
            match c {
                '-' => sp.left = true,
                '0' => sp.zero = true,
                '+' => sp.plus = true,
                ' ' => sp.space = true,
                ',' => sp.group = true,
                _ => break,
            }
            chars.next();
        }
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            sp.width = sp.width.saturating_mul(10).saturating_add(d as usize);
            chars.next();
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut n = 0usize;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(d as usize);
                chars.next();
            }
            sp.prec = Some(n);
        }
        if sp.width > MAX_WIDTH || sp.prec.unwrap_or(0) > MAX_WIDTH {
            return Err(bad(cx, "width or precision too large"));
        }
        let conv = chars.next();
        match conv {
            Some('%') => {
                text(&mut out, &sp, "%");
                continue;
            }
            Some('n') => {
                out.push('\n');
                continue;
            }
            _ => {}
        }
        let Some(conv) = conv else {
            return Err(bad(cx, "format ends in %"));
        };
        let Some(x) = args.next() else {
            return Err(bad(cx, &format!("no argument for %{conv}")));
        };
        let x = cx.term(*x);
        match conv {
            's' | 'S' => {
                let mut s = String::new();
                if x.same(Term::NIL) {
                    // As `print` (Java prints "null").
                    s.push_str("nil");
                } else {
                    crate::print::display_into(&mut s, x);
                }
                if conv == 'S' {
                    s = s.to_uppercase();
                }
                text(&mut out, &sp, &s);
            }
            'b' => text(
                &mut out,
                &sp,
                if crate::tag::truthy(x.bits()) {
                    "true"
                } else {
                    "false"
                },
            ),
            'c' => {
                let ch = match x.view() {
                    View::Str(s) if s.chars().count() == 1 => s.to_string(),
                    View::Int(i) => match u32::try_from(i).ok().and_then(char::from_u32) {
                        Some(c) => c.to_string(),
                        None => return Err(bad(cx, "%c needs a character")),
                    },
                    _ => return Err(bad(cx, "%c needs a character")),
                };
                text(&mut out, &sp, &ch);
            }
            'd' | 'x' | 'X' | 'o' => {
                let b = match x.view() {
                    View::Int(i) => num_bigint::BigInt::from(i),
                    View::BigInt(b) => b,
                    _ => return Err(bad(cx, &format!("%{conv} needs an integer"))),
                };
                let mag = b.magnitude();
                let digits = match conv {
                    'd' if sp.group => grouped(&mag.to_string()),
                    'd' => mag.to_string(),
                    'x' => mag.to_str_radix(16),
                    'X' => mag.to_str_radix(16).to_uppercase(),
                    _ => mag.to_str_radix(8),
                };
                number(&mut out, &sp, b.sign() == num_bigint::Sign::Minus, &digits);
            }
            'f' | 'e' | 'E' => {
                let v = match num::num_of(x) {
                    Some(Num::Float(f)) => f,
                    Some(Num::Small(i)) => i as f64,
                    Some(Num::Int(b)) => num_traits::ToPrimitive::to_f64(&b).unwrap_or(f64::NAN),
                    None => return Err(bad(cx, &format!("%{conv} needs a number"))),
                };
                let prec = sp.prec.unwrap_or(6);
                let mag = v.abs();
                let digits = match conv {
                    'f' => {
                        let s = format!("{mag:.prec$}");
                        if sp.group {
                            let (i, f) = s.split_once('.').unwrap_or((&s, ""));
                            if f.is_empty() {
                                grouped(i)
                            } else {
                                format!("{}.{f}", grouped(i))
                            }
                        } else {
                            s
                        }
                    }
                    'e' => scientific(mag, prec),
                    _ => scientific(mag, prec).to_uppercase(),
                };
                number(&mut out, &sp, v.is_sign_negative() && v != 0.0, &digits);
            }
            c => return Err(bad(cx, &format!("unknown conversion %{c}"))),
        }
        cx.charge(1);
    }
    cx.charge(out.len() / 64);
    let _ = write!(out, "");
    Ok(cx.heap.string(&out).raw())
}

pub(super) fn install(core: &'static Namespace) {
    def(core, "format", 1, ANY, format);
}
