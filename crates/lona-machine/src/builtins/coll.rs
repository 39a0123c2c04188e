//! Collections: lists, vectors, maps, sets (leaf functions only).

use lona_term::{Heap, RawTerm, Term, View};

use super::{def, get, ANY};
use crate::native::{BuiltinCx, NResult, Raise};
use crate::var::Namespace;

fn t<'a>(cx: &BuiltinCx<'a, '_>, r: RawTerm) -> Term<'a> {
    cx.term(r)
}

/// The elements of a list, vector, map (as `[k v]` entries), set (in
/// term order, a sorted one in its own), string (one-character strings) or `nil`.
pub(crate) fn items<'h>(heap: &'h Heap, x: Term<'h>) -> Result<Vec<Term<'h>>, Raise> {
    match x.view() {
        View::Nil | View::EmptyList => Ok(Vec::new()),
        View::Vector(v) => Ok(v.to_vec()),
        View::Cons(..) => {
            let mut it = x.list_iter();
            let v: Vec<Term<'h>> = (&mut it).collect();
            if !it.tail().same(Term::EMPTY_LIST) {
                return Err(Raise::badarg());
            }
            Ok(v)
        }
        View::Map(m) => Ok(m.iter().map(|(k, v)| heap.vector(&[k, v])).collect()),
        View::Set(m) => Ok(m.ordered_pairs().into_iter().map(|(k, _)| k).collect()),
        View::Str(s) => Ok(s
            .chars()
            .map(|c| heap.string(c.encode_utf8(&mut [0; 4])))
            .collect()),
        _ => Err(Raise::badarg()),
    }
}

fn seq_items<'a>(cx: &mut BuiltinCx<'a, '_>, r: RawTerm) -> Result<Vec<Term<'a>>, Raise> {
    let v = items(cx.heap, t(cx, r))?;
    cx.charge(v.len() / 8);
    Ok(v)
}

fn list(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v: Vec<Term<'_>> = a.iter().map(|r| t(cx, *r)).collect();
    Ok(cx.heap.list(&v).raw())
}
fn vector(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v: Vec<Term<'_>> = a.iter().map(|r| t(cx, *r)).collect();
    Ok(cx.heap.vector(&v).raw())
}
fn hash_map(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if !a.len().is_multiple_of(2) {
        return Err(Raise::badarg());
    }
    let pairs: Vec<(Term<'_>, Term<'_>)> =
        a.chunks(2).map(|p| (t(cx, p[0]), t(cx, p[1]))).collect();
    Ok(cx.heap.map(&pairs).raw())
}
fn vec(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v = seq_items(cx, a[0])?;
    Ok(cx.heap.vector(&v).raw())
}
pub(super) fn seq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    match x.view() {
        View::Cons(..) => Ok(x.raw()),
        _ => {
            let v = seq_items(cx, a[0])?;
            if v.is_empty() {
                Ok(Term::NIL.raw())
            } else {
                Ok(cx.heap.list(&v).raw())
            }
        }
    }
}

fn count(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    let n = match x.view() {
        View::Nil | View::EmptyList => 0,
        View::Vector(v) => v.len(),
        View::Map(m) | View::Set(m) => m.len(),
        View::Str(s) => s.chars().count(),
        View::Cons(..) => {
            let mut it = x.list_iter();
            let n = (&mut it).count();
            if !it.tail().same(Term::EMPTY_LIST) {
                return Err(Raise::badarg());
            }
            cx.charge(n / 16);
            n
        }
        _ => return Err(Raise::badarg()),
    };
    Ok(cx.heap.int(n as i64).raw())
}

pub(super) fn is_empty(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let e = match t(cx, a[0]).view() {
        View::Nil | View::EmptyList => true,
        View::Cons(..) => false,
        View::Vector(v) => v.is_empty(),
        View::Map(m) | View::Set(m) => m.is_empty(),
        View::Str(s) => s.is_empty(),
        _ => return Err(Raise::badarg()),
    };
    Ok(Term::bool(e).raw())
}

pub(super) fn first(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    Ok(match x.view() {
        View::Cons(h, _) => h.raw(),
        View::Nil | View::EmptyList => Term::NIL.raw(),
        View::Vector(v) => v.first().map_or(Term::NIL.raw(), |x| x.raw()),
        _ => seq_items(cx, a[0])?
            .first()
            .map_or(Term::NIL.raw(), |x| x.raw()),
    })
}
fn second(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    nth_or_nil(cx, a[0], 1)
}
fn nth_or_nil(cx: &mut BuiltinCx<'_, '_>, r: RawTerm, i: usize) -> NResult {
    let x = t(cx, r);
    Ok(match x.view() {
        View::Vector(v) => v.get(i).map_or(Term::NIL.raw(), |x| x.raw()),
        View::Cons(..) => x.list_iter().nth(i).map_or(Term::NIL.raw(), |x| x.raw()),
        _ => seq_items(cx, r)?
            .get(i)
            .map_or(Term::NIL.raw(), |x| x.raw()),
    })
}
pub(super) fn rest(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    Ok(match x.view() {
        View::Cons(_, tl) => tl.raw(),
        View::Nil | View::EmptyList => Term::EMPTY_LIST.raw(),
        _ => {
            let v = seq_items(cx, a[0])?;
            cx.heap.list(v.get(1..).unwrap_or(&[])).raw()
        }
    })
}
pub(super) fn next(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let r = rest(cx, a)?;
    Ok(if r == Term::EMPTY_LIST.raw() {
        Term::NIL.raw()
    } else {
        r
    })
}
fn last(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v = seq_items(cx, a[0])?;
    Ok(v.last().map_or(Term::NIL.raw(), |x| x.raw()))
}
fn nth(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let Some(i) = t(cx, a[1]).as_i64().filter(|i| *i >= 0) else {
        return Err(Raise::badarg());
    };
    let x = t(cx, a[0]);
    let found = match x.view() {
        View::Vector(v) => v.get(i as usize).copied(),
        View::Cons(..) | View::EmptyList => {
            cx.charge(i as usize / 16);
            x.list_iter().nth(i as usize)
        }
        // A string's `i`th character, a one-character string (Lonala's
        // characters).
        View::Str(s) => {
            cx.charge(i as usize / 16);
            let c = s.chars().nth(i as usize);
            c.map(|c| cx.heap.string(c.encode_utf8(&mut [0u8; 4])))
        }
        _ => return Err(Raise::badarg()),
    };
    match (found, a.get(2)) {
        (Some(v), _) => Ok(v.raw()),
        (None, Some(d)) => Ok(*d),
        (None, None) => Err(Raise::badarg()),
    }
}
/// The prelude's function `name` (`lonala/sorted.lona`) with the same
/// arguments, when `a[0]` is a sorted collection (`by`: only when it has
/// a comparator of its own, which only Lonala can call): changing a tree,
/// or searching one by its comparator. `None` for anything else.
#[inline]
fn to_sorted(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm], name: &str, by: bool) -> Option<NResult> {
    let c = t(cx, *a.first()?);
    if !c.is_sorted() {
        return None;
    }
    let (_, cmp, _) = c.sorted_parts()?;
    if by && cmp.same(Term::NIL) {
        return None;
    }
    Some(super::seq::redirect(cx, name))
}

/// `(sorted* set? cmp root)`: the sorted collection of a tree
/// (`sorted.lona` makes the tree; lona-term's `tree.rs` has its layout).
fn sorted_make(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let set = match t(cx, a[0]).view() {
        View::Bool(b) => b,
        _ => return Err(Raise::badarg()),
    };
    Ok(cx.heap.sorted(set, t(cx, a[1]), t(cx, a[2])).raw())
}

/// `(sorted-parts x)`: `[set? cmp root]` of a sorted collection, else nil.
fn sorted_parts(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(match t(cx, a[0]).sorted_parts() {
        Some((set, cmp, root)) => cx.heap.vector(&[Term::bool(set), cmp, root]).raw(),
        None => Term::NIL.raw(),
    })
}

/// `(rseq* c)`: a sorted collection's entries (a set's elements) from
/// the last, or nil when it is empty.
fn rseq(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let c = t(cx, a[0]);
    let items: Vec<Term<'_>> = match c.view() {
        View::Set(m) if m.sorted().is_some() => m.iter_rev().map(|(k, _)| k).collect(),
        View::Map(m) if m.sorted().is_some() => {
            m.iter_rev().map(|(k, v)| cx.heap.vector(&[k, v])).collect()
        }
        _ => return Err(Raise::badarg()),
    };
    cx.charge(items.len() / 8);
    if items.is_empty() {
        return Ok(Term::NIL.raw());
    }
    Ok(cx.heap.list(&items).raw())
}

fn get_fn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-get", true) {
        return r;
    }
    let d = a.get(2).copied().unwrap_or(Term::NIL.raw());
    Ok(get(t(cx, a[0]), t(cx, a[1])).map_or(d, |v| v.raw()))
}
fn contains(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-contains?", true) {
        return r;
    }
    let c = t(cx, a[0]);
    let found = match c.view() {
        View::Map(_) | View::Set(_) | View::Vector(_) => get(c, t(cx, a[1])).is_some(),
        View::Nil => false,
        _ => return Err(Raise::badarg()),
    };
    Ok(Term::bool(found).raw())
}
fn keys(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    column(cx, a[0], |(k, _)| k)
}
fn vals(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    column(cx, a[0], |(_, v)| v)
}

/// `keys` or `vals`: one side of a map's entries as a list (Clojure's
/// `nil` for an empty map or `nil`).
fn column<'a>(
    cx: &mut BuiltinCx<'a, '_>,
    m: RawTerm,
    side: fn((Term<'a>, Term<'a>)) -> Term<'a>,
) -> NResult {
    match t(cx, m).view() {
        View::Map(m) => {
            let v: Vec<Term<'_>> = m.iter().map(side).collect();
            cx.charge(v.len() / 8);
            if v.is_empty() {
                return Ok(Term::NIL.raw());
            }
            Ok(cx.heap.list(&v).raw())
        }
        View::Nil => Ok(Term::NIL.raw()),
        _ => Err(Raise::badarg()),
    }
}

/// `(assoc m k v ...)` on maps (and `nil`), `(assoc v i x)` on vectors.
fn assoc(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-assoc", false) {
        return r;
    }
    if a.len().is_multiple_of(2) {
        return Err(Raise::badarg());
    }
    let mut acc = t(cx, a[0]);
    for kv in a[1..].chunks(2) {
        acc = assoc1(cx.heap, acc, t(cx, kv[0]), t(cx, kv[1]))?;
    }
    Ok(acc.raw())
}

pub(crate) fn assoc1<'h>(
    heap: &'h Heap,
    c: Term<'h>,
    k: Term<'h>,
    v: Term<'h>,
) -> Result<Term<'h>, Raise> {
    match c.view() {
        View::Nil => Ok(heap.map(&[(k, v)])),
        View::Map(_) => heap.map_assoc(c, k, v).ok_or_else(Raise::badarg),
        View::Vector(items) => match k.as_i64() {
            Some(i) if i >= 0 && (i as usize) < items.len() => {
                let mut n = items.to_vec();
                n[i as usize] = v;
                Ok(heap.vector(&n))
            }
            Some(i) if i >= 0 && i as usize == items.len() => {
                let mut n = items.to_vec();
                n.push(v);
                Ok(heap.vector(&n))
            }
            _ => Err(Raise::badarg()),
        },
        _ => Err(Raise::badarg()),
    }
}

fn dissoc(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-dissoc", false) {
        return r;
    }
    let mut m = t(cx, a[0]);
    match m.view() {
        View::Nil => return Ok(Term::NIL.raw()),
        View::Map(_) => {}
        _ => return Err(Raise::badarg()),
    }
    for k in &a[1..] {
        m = cx.heap.map_dissoc(m, t(cx, *k)).ok_or_else(Raise::badarg)?;
    }
    Ok(m.raw())
}

fn conj(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-conj", false) {
        return r;
    }
    let mut c = t(cx, a[0]);
    for x in &a[1..] {
        let x = t(cx, *x);
        c = match c.view() {
            View::Nil | View::EmptyList | View::Cons(..) => cx.heap.cons(
                x,
                if c.same(Term::NIL) {
                    Term::EMPTY_LIST
                } else {
                    c
                },
            ),
            View::Vector(v) => {
                let mut n: Vec<RawTerm> = Vec::with_capacity(v.len() + 1);
                n.extend(v.iter().map(|e| e.raw()));
                n.push(x.raw());
                cx.charge(n.len() / 16);
                // SAFETY: the elements of a vector this heap may hold
                // (its own, or permanent) and an argument: each a word
                // valid for this heap, so none needs the store check
                // (which, per element, made a line built by `conj`
                // quadratic in permanent-range lookups: fasta).
                unsafe { cx.heap.term(cx.heap.vector_raw(&n)) }
            }
            View::Set(_) => cx.heap.set_conj(c, x).ok_or_else(Raise::badarg)?,
            View::Map(_) => match x.view() {
                View::Vector([k, v]) => cx.heap.map_assoc(c, *k, *v).ok_or_else(Raise::badarg)?,
                View::Map(m) => {
                    let mut acc = c;
                    for (k, v) in m.iter() {
                        acc = cx.heap.map_assoc(acc, k, v).ok_or_else(Raise::badarg)?;
                    }
                    acc
                }
                _ => return Err(Raise::badarg()),
            },
            _ => return Err(Raise::badarg()),
        };
    }
    Ok(c.raw())
}

/// `(disj set x ...)`: the set without the `x`s; `(disj nil x)` is nil.
fn disj(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-disj", false) {
        return r;
    }
    let mut s = t(cx, a[0]);
    match s.view() {
        View::Nil => return Ok(Term::NIL.raw()),
        View::Set(_) => {}
        _ => return Err(Raise::badarg()),
    }
    for x in &a[1..] {
        s = cx.heap.set_disj(s, t(cx, *x)).ok_or_else(Raise::badarg)?;
    }
    Ok(s.raw())
}

/// `(hash-set x ...)`: a set of the arguments.
fn hash_set(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v: Vec<Term<'_>> = a.iter().map(|r| t(cx, *r)).collect();
    cx.charge(v.len() / 8);
    Ok(cx.heap.set(&v).raw())
}

/// `(set coll)`: a set of the collection's elements.
fn set(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let View::Set(_) = t(cx, a[0]).view() {
        return Ok(a[0]);
    }
    let v = seq_items(cx, a[0])?;
    Ok(cx.heap.set(&v).raw())
}

fn cons(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    Ok(cons_any(cx.heap, t(cx, a[0]), t(cx, a[1]))?.raw())
}

/// `(cons x coll)` for any collection: a list of `x` then `coll`'s elements.
pub(crate) fn cons_any<'h>(heap: &'h Heap, x: Term<'h>, c: Term<'h>) -> Result<Term<'h>, Raise> {
    match c.view() {
        View::Cons(..) | View::EmptyList => Ok(heap.cons(x, c)),
        // A lazy tail stays lazy: how infinite sequences are built.
        _ if super::seq::lazy_thunk(c).is_some() => Ok(heap.cons(x, c)),
        _ => {
            let v = items(heap, c)?;
            let tail = heap.list(&v);
            Ok(heap.cons(x, tail))
        }
    }
}

fn concat(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut all = Vec::new();
    for x in a {
        all.extend(seq_items(cx, *x)?);
    }
    cx.charge(all.len() / 8);
    Ok(cx.heap.list(&all).raw())
}

fn into(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    if let Some(r) = to_sorted(cx, a, "sorted-into", false) {
        return r;
    }
    let mut args = vec![a[0]];
    for x in seq_items(cx, a[1])? {
        args.push(x.raw());
    }
    conj(cx, &args)
}

fn merge(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    // Into a sorted map (the first map given) by its comparator.
    if let Some(i) = a.iter().position(|m| !t(cx, *m).same(Term::NIL)) {
        if let Some(r) = to_sorted(cx, &a[i..], "sorted-merge", false) {
            return r;
        }
    }
    let mut acc = Term::NIL;
    for m in a {
        let m = t(cx, *m);
        match m.view() {
            View::Nil => {}
            View::Map(mv) => {
                if acc.same(Term::NIL) {
                    acc = m;
                } else {
                    cx.charge(mv.len() / 8);
                    for (k, v) in mv.iter() {
                        acc = cx.heap.map_assoc(acc, k, v).ok_or_else(Raise::badarg)?;
                    }
                }
            }
            _ => return Err(Raise::badarg()),
        }
    }
    Ok(acc.raw())
}

fn reverse(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let x = t(cx, a[0]);
    if let View::Cons(..) = x.view() {
        // A proper list: its length first, then its cells at once.
        let mut n = 0;
        let mut it = x.list_iter();
        for _ in &mut it {
            n += 1;
        }
        if !it.tail().same(Term::EMPTY_LIST) {
            return Err(Raise::badarg());
        }
        cx.charge(n / 8);
        let items = ExactLen(x.list_iter().map(|e| e.raw()), n);
        // SAFETY: the elements are words of this heap (an argument) or
        // permanent.
        return Ok(unsafe { cx.heap.list_raw_rev(items, Term::EMPTY_LIST.raw()) });
    }
    let mut v = seq_items(cx, a[0])?;
    v.reverse();
    Ok(cx.heap.list(&v).raw())
}

/// An iterator of a known length (for `Heap::list_raw_rev`).
struct ExactLen<I>(I, usize);

impl<I: Iterator> Iterator for ExactLen<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for ExactLen<I> {}

/// The word of small integer `v` (in the small range).
fn small_raw(v: i64) -> RawTerm {
    crate::tag::raw(crate::tag::small(v))
}

fn int_arg(cx: &BuiltinCx<'_, '_>, r: RawTerm) -> Result<i64, Raise> {
    t(cx, r).as_i64().ok_or_else(Raise::badarg)
}

/// Most elements `range` and `repeat` build at once.
const MAX_BUILD: i64 = 1 << 27;

fn range(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (from, to, step) = match a.len() {
        1 => (0, int_arg(cx, a[0])?, 1),
        2 => (int_arg(cx, a[0])?, int_arg(cx, a[1])?, 1),
        _ => (int_arg(cx, a[0])?, int_arg(cx, a[1])?, int_arg(cx, a[2])?),
    };
    range_onto(cx, from, to, step, Term::EMPTY_LIST.raw())
}

/// `(range-onto* start end step tail)`: the cells of `(range start end
/// step)` ending in `tail` (the prelude's lazy `range` puts each chunk
/// before the lazy rest this way).
fn range_onto_fn(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let (from, to, step) = (int_arg(cx, a[0])?, int_arg(cx, a[1])?, int_arg(cx, a[2])?);
    range_onto(cx, from, to, step, a[3])
}

fn range_onto(cx: &mut BuiltinCx<'_, '_>, from: i64, to: i64, step: i64, tail: RawTerm) -> NResult {
    if step == 0 {
        return Err(Raise::badarg());
    }
    let n = if (step > 0 && to <= from) || (step < 0 && to >= from) {
        0
    } else {
        ((to as i128 - from as i128).abs() + step.unsigned_abs() as i128 - 1)
            / step.unsigned_abs() as i128
    };
    if n > MAX_BUILD as i128 {
        return Err(Raise::system_limit());
    }
    cx.charge(n as usize / 8);
    let n = n as i64;
    let last = from as i128 + (n as i128 - 1) * step as i128;
    if n > 0
        && Term::small_int(from).is_some()
        && i64::try_from(last).ok().and_then(Term::small_int).is_some()
    {
        // Small integers from end to end (and so between): the cells at once.
        let items = ExactLen((0..n).rev().map(|i| small_raw(from + i * step)), n as usize);
        // SAFETY: immediates, onto `tail`, an argument: a word of this heap.
        return Ok(unsafe { cx.heap.list_raw_rev(items, tail) });
    }
    let mut acc = tail;
    for i in (0..n).rev() {
        let v = Term::small_int(from + i * step)
            .map(|x| x.raw())
            .unwrap_or_else(|| cx.heap.int(from + i * step).raw());
        // SAFETY: v is an immediate or a fresh word of this heap; acc is a
        // word of this heap built here.
        acc = unsafe { cx.heap.cons_raw(v, acc) };
    }
    Ok(acc)
}

fn take(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let n = int_arg(cx, a[0])?.max(0) as usize;
    let x = t(cx, a[1]);
    let v: Vec<Term<'_>> = match x.view() {
        View::Cons(..) => x.list_iter().take(n).collect(),
        _ => seq_items(cx, a[1])?.into_iter().take(n).collect(),
    };
    cx.charge(v.len() / 8);
    Ok(cx.heap.list(&v).raw())
}
fn drop(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let n = int_arg(cx, a[0])?.max(0) as usize;
    let x = t(cx, a[1]);
    match x.view() {
        View::Cons(..) => {
            let mut cur = x;
            for _ in 0..n {
                match cur.view() {
                    View::Cons(_, tl) => cur = tl,
                    _ => break,
                }
            }
            cx.charge(n / 16);
            Ok(cur.raw())
        }
        _ => {
            let v = seq_items(cx, a[1])?;
            Ok(cx.heap.list(v.get(n..).unwrap_or(&[])).raw())
        }
    }
}
fn repeat(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let n = int_arg(cx, a[0])?;
    if n > MAX_BUILD {
        return Err(Raise::system_limit());
    }
    let x = t(cx, a[1]);
    let v = vec![x; n.max(0) as usize];
    cx.charge(v.len() / 8);
    Ok(cx.heap.list(&v).raw())
}

fn sort(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut v = seq_items(cx, a[0])?;
    let n = v.len();
    cx.charge(n * (usize::BITS - n.leading_zeros()) as usize / 16);
    v.sort_by(|x, y| crate::num::compare_values(*x, *y));
    Ok(cx.heap.list(&v).raw())
}

/// `(sort-pairs coll)`: sorts `[key value]` vectors by key (stable); the
/// core of `sort-by`.
fn sort_pairs(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let mut v = seq_items(cx, a[0])?;
    let n = v.len();
    cx.charge(n * (usize::BITS - n.leading_zeros()) as usize / 16);
    fn key<'h>(x: &Term<'h>) -> Result<Term<'h>, Raise> {
        match x.view() {
            View::Vector(p) if !p.is_empty() => Ok(p[0]),
            _ => Err(Raise::badarg()),
        }
    }
    for x in &v {
        key(x)?;
    }
    v.sort_by(|x, y| {
        crate::num::compare_values(key(x).unwrap_or(Term::NIL), key(y).unwrap_or(Term::NIL))
    });
    let out: Vec<Term<'_>> = v
        .iter()
        .map(|x| match x.view() {
            View::Vector(p) => p.get(1).copied().unwrap_or(Term::NIL),
            _ => Term::NIL,
        })
        .collect();
    Ok(cx.heap.list(&out).raw())
}

fn frequencies(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let v = seq_items(cx, a[0])?;
    // Counted off the heap and written once: no path of the trie copied
    // per item (`Heap::frequencies`).
    Ok(cx.heap.frequencies(&v).raw())
}
/// `(frequencies-into* counts items)`: `counts` with the items of the
/// list `items` counted in, last to first (`frequencies` of a lazy
/// sequence gathers a chunk in reverse: `lonala/prelude.lona`).
fn frequencies_into(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let counts = t(cx, a[0]);
    let mut v = seq_items(cx, a[1])?;
    v.reverse();
    cx.heap
        .frequencies_into(counts, &v)
        .map(|m| m.raw())
        .ok_or_else(Raise::badarg)
}
fn zipmap(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    let ks = seq_items(cx, a[0])?;
    let vs = seq_items(cx, a[1])?;
    let pairs: Vec<(Term<'_>, Term<'_>)> = ks.into_iter().zip(vs).collect();
    Ok(cx.heap.map(&pairs).raw())
}

/// The collection functions that keep their collection's metadata
/// (`meta.rs`).
fn assoc_kept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    super::meta::keeping(assoc, cx, a)
}
fn dissoc_kept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    super::meta::keeping(dissoc, cx, a)
}
fn conj_kept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    super::meta::keeping(conj, cx, a)
}
fn disj_kept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    super::meta::keeping(disj, cx, a)
}
fn into_kept(cx: &mut BuiltinCx<'_, '_>, a: &[RawTerm]) -> NResult {
    super::meta::keeping(into, cx, a)
}

pub(super) fn install(ns: &'static Namespace) {
    def(ns, "list", 0, ANY, list);
    def(ns, "vector", 0, ANY, vector);
    def(ns, "hash-map", 0, ANY, hash_map);
    def(ns, "vec", 1, 1, vec);
    def(ns, "seq", 1, 1, seq);
    def(ns, "count", 1, 1, count);
    def(ns, "empty?", 1, 1, is_empty);
    def(ns, "first", 1, 1, first);
    def(ns, "second", 1, 1, second);
    def(ns, "rest", 1, 1, rest);
    def(ns, "next", 1, 1, next);
    def(ns, "last", 1, 1, last);
    def(ns, "nth", 2, 3, nth);
    def(ns, "get", 2, 3, get_fn);
    def(ns, "contains?", 2, 2, contains);
    def(ns, "keys", 1, 1, keys);
    def(ns, "vals", 1, 1, vals);
    def(ns, "assoc", 3, ANY, assoc_kept);
    def(ns, "dissoc", 1, ANY, dissoc_kept);
    def(ns, "conj", 1, ANY, conj_kept);
    def(ns, "cons", 2, 2, cons);
    def(ns, "disj", 1, ANY, disj_kept);
    def(ns, "hash-set", 0, ANY, hash_set);
    def(ns, "set", 1, 1, set);
    def(ns, "concat", 0, ANY, concat);
    def(ns, "into", 2, 2, into_kept);
    def(ns, "merge", 0, ANY, merge);
    def(ns, "reverse", 1, 1, reverse);
    def(ns, "sorted*", 3, 3, sorted_make);
    def(ns, "sorted-parts", 1, 1, sorted_parts);
    def(ns, "rseq*", 1, 1, rseq);
    def(ns, "range", 1, 3, range);
    def(ns, "range-onto*", 4, 4, range_onto_fn);
    def(ns, "take", 2, 2, take);
    def(ns, "drop", 2, 2, drop);
    def(ns, "repeat", 2, 2, repeat);
    def(ns, "sort", 1, 1, sort);
    def(ns, "sort-pairs", 1, 1, sort_pairs);
    def(ns, "frequencies", 1, 1, frequencies);
    def(ns, "frequencies-into*", 2, 2, frequencies_into);
    def(ns, "zipmap", 2, 2, zipmap);
}
