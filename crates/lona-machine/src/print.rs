//! How values print as text: `str`'s display form, `pr-str`'s readable
//! form, and the names of closures. Below the VM: the built-ins, the
//! exit reasons of `msg` and the evaluator's errors all print through it.

use std::fmt::Write;

use lona_term::{Term, View};

use crate::bytecode::Proto;

/// Appends `x` as `str` shows it: a string's own text, `nil` as nothing,
/// anything else printed readably.
pub fn display_into(out: &mut String, x: Term<'_>) {
    if crate::tag::is_small(x.bits()) {
        // `itoa`: `write!`'s formatting machinery cost 300 instructions a
        // number (`str` of an integer in a loop).
        out.push_str(itoa::Buffer::new().format(crate::tag::small_value(x.bits())));
        return;
    }
    match x.view() {
        View::Str(s) => out.push_str(s),
        // As Clojure's `(str #"a+")`: the pattern's source.
        View::Regex(s) => out.push_str(s),
        View::Nil => {}
        View::Keyword(k) => {
            out.push(':');
            out.push_str(k.name());
        }
        _ => {
            let _ = write!(out, "{x}");
        }
    }
}

/// `pr-str` of one value (readable: strings quoted).
pub fn readable_into(out: &mut String, x: Term<'_>) {
    let _ = write!(out, "{x}");
}

/// Appends `t` printed readably (`pr-str`).
pub fn readable(out: &mut String, t: Term<'_>) {
    readable_into(out, t);
}

/// The closure's name for printing (`#fn<ns/name>`): the closure namer
/// `lona_term` calls ([`lona_term::set_closure_namer`]).
pub(crate) fn fn_name(code: u64) -> String {
    // SAFETY: closures are made only by this VM with leaked Proto addresses
    // (`Heap::closure` is `unsafe` for anyone else).
    let p = unsafe { Proto::from_code(code) };
    p.name.to_string()
}
