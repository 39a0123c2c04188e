//! Atoms: the built-ins under `lona.core`'s `atom`, `deref`, `swap!` and
//! the rest (`lonala/atom.lona` in `lona-vm`), over `lona_term`'s cells.
//!
//! An atom is a cell of two slots: 0 its value, 1 a map of what Clojure
//! keeps beside it (`:validator`, `:watches`, `:meta`), nil until one is
//! set. Every function that changes an atom is a loop of `cell-read`,
//! its work, and `cell-cas!`, which succeeds only if nobody changed the
//! slot since the read (`lona_term`'s `cell.rs`, rule 2).
//!
//! | built-in | value |
//! | --- | --- |
//! | `(atom* x attrs)` | a new atom holding copies of `x` and `attrs` |
//! | `(deref a)`, `@a` | a copy of the atom's value |
//! | `(cell-read a slot)` | `[version value]` of slot 0 or 1 |
//! | `(cell-cas! a slot version new)` | whether `new` replaced the slot |
//! | `(atom? x)` | whether `x` is an atom |

use lona_term::{CellRef, RawTerm, Term, View, CELL_SLOTS};

use super::def;
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

/// The atom `a`, or `:badarg`.
fn cell<'a>(cx: &BuiltinCx<'a, '_>, a: RawTerm) -> Result<CellRef<'a>, Raise> {
    match cx.term(a).view() {
        View::Cell(c) => Ok(c),
        _ => Err(Raise::badarg()),
    }
}

/// A slot number below `CELL_SLOTS`, or `:badarg`.
fn slot(cx: &BuiltinCx<'_, '_>, a: RawTerm) -> Result<usize, Raise> {
    match cx.term(a).as_i64() {
        Some(i) if (0..CELL_SLOTS as i64).contains(&i) => Ok(i as usize),
        _ => Err(Raise::badarg()),
    }
}

fn atom_make(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (x, attrs) = (cx.term(a[0]), cx.term(a[1]));
    Ok(cx.heap.cell([x, attrs]).raw())
}

fn deref(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let c = cell(cx, a[0])?;
    Ok(c.read(0, cx.heap).1.raw())
}

fn cell_read(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (c, s) = (cell(cx, a[0])?, slot(cx, a[1])?);
    let (version, value) = c.read(s, cx.heap);
    let version = cx.heap.int(version as i64);
    Ok(cx.heap.vector(&[version, value]).raw())
}

fn cell_cas(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (c, s) = (cell(cx, a[0])?, slot(cx, a[1])?);
    // Versions are counted from 0 and read back as integers: one that is
    // not an integer (or negative) was never a version of this slot.
    let Some(version) = cx.term(a[2]).as_i64().and_then(|v| u64::try_from(v).ok()) else {
        return Err(Raise::badarg());
    };
    Ok(Term::bool(c.compare_and_set(s, version, cx.term(a[3]))).raw())
}

fn is_atom(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(Term::bool(matches!(cx.term(a[0]).view(), View::Cell(_))).raw())
}

pub(super) fn install(ns: &'static Namespace) {
    def(ns, "atom*", 2, 2, atom_make);
    def(ns, "deref", 1, 1, deref);
    def(ns, "cell-read", 2, 2, cell_read);
    def(ns, "cell-cas!", 4, 4, cell_cas);
    def(ns, "atom?", 1, 1, is_atom);
}
