//! Exit reasons across the wire: the runtime's own reasons under
//! Erlang's names. Lonala spells its keywords with hyphens
//! (`:case-clause`), Erlang its atoms with underscores (`case_clause`);
//! Erlang code and tools match the standard reasons by name
//! (`{'EXIT', {case_clause, X}, _}`, a supervisor's `shutdown`), so the
//! reasons a Lona node sends another node (`EXIT` of a link, `EXIT2`,
//! `MONITOR_P_EXIT`) name them as Erlang does, and those that come are
//! turned back (`docs/design.md`, D22).
//!
//! Only the names in [`NAMES`] are turned, and only in reasons: a
//! keyword standing for itself, or an element of a vector (Erlang's
//! tuple) in one, down to [`DEPTH`] vectors deep (`[:case-clause 5]`,
//! `[[:case-clause 5] trace]`, `[:error [:bad-return-value x]]`). Messages
//! are data and cross as they are; so do the reasons whose names are the
//! same on both sides (`normal`, `shutdown`, `killed`, `noproc`,
//! `noconnection`, `timeout`, `badarg`, `badarith`, `badarity`, `badfun`,
//! `badmatch`, `undef`). A Lona node reads back what another sends, so a
//! reason crosses between two Lona nodes unchanged.

use lona_term::{Atom, Heap, Term, View};

/// Lonala's name, Erlang's name.
pub(super) const NAMES: &[(&str, &str)] = &[
    ("case-clause", "case_clause"),
    ("function-clause", "function_clause"),
    ("system-limit", "system_limit"),
    ("timeout-value", "timeout_value"),
    ("already-started", "already_started"),
    ("bad-return-value", "bad_return_value"),
    // Erlang's own, which no Lonala code raises: named as Lonala names
    // its keywords when they come.
    ("if-clause", "if_clause"),
    ("try-clause", "try_clause"),
    ("else-clause", "else_clause"),
    ("bad-generator", "bad_generator"),
    ("bad-filter", "bad_filter"),
];

/// How many vectors deep a reason is looked into.
pub(super) const DEPTH: usize = 4;

/// Which way a reason goes.
#[derive(Clone, Copy)]
enum Way {
    ToErlang,
    FromErlang,
}

/// `t`, a reason of this node, under Erlang's names. Vectors are made
/// again on `heap` only where something is renamed; `t`'s own must be on
/// `heap` too (or immediate).
pub(super) fn to_erlang<'h>(heap: &'h Heap, t: Term<'h>) -> Term<'h> {
    turn(heap, t, Way::ToErlang, DEPTH).unwrap_or(t)
}

/// `t`, a reason from another node (decoded onto `heap`), under
/// Lonala's names.
pub(super) fn from_erlang<'h>(heap: &'h Heap, t: Term<'h>) -> Term<'h> {
    turn(heap, t, Way::FromErlang, DEPTH).unwrap_or(t)
}

/// Erlang's atom for keyword `a`, or Lonala's keyword for atom `a`.
fn rename(a: Atom, way: Way) -> Option<Term<'static>> {
    let name = a.name();
    let to = NAMES.iter().find_map(|&(lona, erl)| match way {
        Way::ToErlang => (lona == name).then_some(erl),
        Way::FromErlang => (erl == name).then_some(lona),
    })?;
    Some(Term::keyword_atom(Atom::new(to)))
}

/// `t` renamed, or `None` when nothing in it is.
fn turn<'h>(heap: &'h Heap, t: Term<'h>, way: Way, depth: usize) -> Option<Term<'h>> {
    match t.view() {
        View::Keyword(a) => rename(a, way),
        View::Vector(items) if depth > 0 => {
            let mut new: Option<Vec<Term<'h>>> = None;
            for (i, &x) in items.iter().enumerate() {
                if let Some(y) = turn(heap, x, way, depth - 1) {
                    new.get_or_insert_with(|| items.to_vec())[i] = y;
                }
            }
            new.map(|v| heap.vector(&v))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(name: &str) -> Term<'static> {
        Term::keyword_atom(Atom::new(name))
    }

    fn show(t: Term<'_>) -> String {
        format!("{t}")
    }

    #[test]
    fn standard_reasons_take_erlangs_names_and_come_back() {
        let heap = Heap::new();
        let r = heap.vector(&[k("case-clause"), Term::small_int(5).unwrap()]);
        let e = to_erlang(&heap, r);
        assert_eq!(show(e), "[:case_clause 5]");
        assert_eq!(show(from_erlang(&heap, e)), "[:case-clause 5]");
        assert_eq!(
            show(to_erlang(&heap, k("function-clause"))),
            ":function_clause"
        );
        assert_eq!(show(from_erlang(&heap, k("if_clause"))), ":if-clause");
        // Nested, as a server's reason wraps a callback's.
        let inner = heap.vector(&[k("bad-return-value"), k("x")]);
        let r = heap.vector(&[k("error"), inner]);
        assert_eq!(show(to_erlang(&heap, r)), "[:error [:bad_return_value :x]]");
    }

    #[test]
    fn other_keywords_and_data_are_left_alone() {
        let heap = Heap::new();
        for t in [
            k("normal"),
            k("my-reason"),
            k("badarith"),
            Term::small_int(3).unwrap(),
        ] {
            assert_eq!(to_erlang(&heap, t).bits(), t.bits());
            assert_eq!(from_erlang(&heap, t).bits(), t.bits());
        }
        // A vector with nothing to rename is the same vector, not a copy.
        let v = heap.vector(&[k("badmatch"), k("my-key")]);
        assert_eq!(to_erlang(&heap, v).bits(), v.bits());
        // Lists are data, not looked into; nor is anything past DEPTH.
        let l = heap.list(&[k("case-clause")]);
        assert_eq!(to_erlang(&heap, l).bits(), l.bits());
        let mut deep = k("case-clause");
        for _ in 0..=DEPTH {
            deep = heap.vector(&[deep]);
        }
        assert_eq!(to_erlang(&heap, deep).bits(), deep.bits());
    }
}
