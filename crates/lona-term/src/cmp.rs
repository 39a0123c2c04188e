//! Structural equality, the total term order, and hashing.
//!
//! The order across kinds (`docs/design.md`, "Values", extended for the kinds it does not
//! name) is:
//!
//! ```text
//! numbers < booleans < keywords < symbols < refs < functions < pids
//!         < sequentials (vectors and lists) < maps < sets < nil
//!         < strings < binaries < regexes
//! ```
//!
//! * Numbers compare numerically; an integer and a float that are
//!   numerically equal order the integer first (so `1 < 1.0` and
//!   `(= 1 1.0)` is false, as Erlang's exact order). Floats among themselves
//!   use IEEE total order (`-0.0 < 0.0`; NaN, always canonical, above
//!   `+inf`).
//! * `false < true`; keywords and symbols by name (byte order); refs by id;
//!   pids by (index, generation); functions by code id, then captured count,
//!   then captured values. Pids and refs of other nodes (`ExtPid`,
//!   `ExtRef`) rank with the local ones but after all of them, and among
//!   themselves by node name, then (id, serial, creation) for a pid,
//!   (creation, number of id words, id words) for a ref.
//! * Sequentials (vectors and lists, as Clojure's `=`: `[1 2]` equals
//!   `'(1 2)`, `[]` equals `()`) by length (a list's cons cells), then
//!   element-wise, then by the tail of an improper list; maps by size,
//!   then keys in order, then values (Erlang); sets by size, then
//!   elements in order; regexes by source; strings and binaries by bytes.
//!
//! Equality is `compare(a, b) == Equal`, so equal terms are exactly those
//! the order cannot tell apart (a vector and a list of the same elements
//! are one key of a map), and [`term_hash`] hashes a canonical pre-order
//! stream of the term, equal for equal terms (a vector hashes as the list
//! of its elements). [`equal_exact`] is the equality of patterns, which
//! also tells a vector from a list at any depth. All walk with an
//! explicit stack, so a ten-million-element list cannot overflow the
//! native stack.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use num_bigint::BigInt;
use num_traits::FromPrimitive;

use crate::term::Term;
use crate::view::{MapView, View};

/// The rank of vectors and lists (one: they compare with each other).
const SEQ_RANK: u8 = 7;

fn rank(v: &View<'_>) -> u8 {
    match v {
        View::Int(_) | View::BigInt(_) | View::Float(_) => 0,
        View::Bool(_) => 1,
        View::Keyword(_) => 2,
        View::Symbol(_) => 3,
        View::Ref(_) | View::ExtRef { .. } => 4,
        View::Closure { .. } => 5,
        View::Pid(_) | View::ExtPid { .. } => 6,
        View::Vector(_) | View::EmptyList | View::Cons(..) => SEQ_RANK,
        View::Map(_) => 8,
        View::Set(_) => 9,
        View::Nil => 10,
        View::Str(_) => 12,
        View::Binary(_) => 13,
        View::Regex(_) => 14,
        View::Cell(_) => 15,
        View::Meta { value, .. } => rank(&value.view()),
    }
}

/// The rest of a sequential being walked: a vector's remaining elements,
/// or a list (its remaining cells; any other term is an improper tail).
#[derive(Clone, Copy)]
enum Cursor<'a> {
    Vec(&'a [Term<'a>]),
    List(Term<'a>),
}

impl<'a> Cursor<'a> {
    /// A cursor over `v` and its length (cons cells for a list), if `v`
    /// is a sequential.
    fn of(t: Term<'a>, v: &View<'a>) -> Option<(Cursor<'a>, usize)> {
        match v {
            View::Vector(items) => Some((Cursor::Vec(items), items.len())),
            View::EmptyList => Some((Cursor::List(t), 0)),
            View::Cons(_, tail) => {
                let mut n = 1;
                let mut c = *tail;
                while let View::Cons(_, next) = c.view() {
                    n += 1;
                    c = next;
                }
                Some((Cursor::List(t), n))
            }
            _ => None,
        }
    }

    /// A cursor over `v`, if it is a sequential (not measured).
    fn start(t: Term<'a>, v: &View<'a>) -> Option<Cursor<'a>> {
        match v {
            View::Vector(items) => Some(Cursor::Vec(items)),
            View::EmptyList | View::Cons(..) => Some(Cursor::List(t)),
            _ => None,
        }
    }

    /// The first element and the rest, or `None` at the end.
    fn step(self) -> Option<(Term<'a>, Cursor<'a>)> {
        match self {
            Cursor::Vec(items) => items.split_first().map(|(h, r)| (*h, Cursor::Vec(r))),
            // (Through a tail with metadata: `meta.rs`.)
            Cursor::List(t) => t.cons_parts().map(|(h, tail)| (h, Cursor::List(tail))),
        }
    }

    /// What is left at the end: `()` for a vector or a proper list.
    fn tail(self) -> Term<'a> {
        match self {
            Cursor::Vec(_) => Term::EMPTY_LIST,
            Cursor::List(t) => t,
        }
    }
}

/// A pair still to compare: two terms, or the rests of two sequentials of
/// equal length.
enum Todo<'a, 'b> {
    Pair(Term<'a>, Term<'b>),
    Seqs(Cursor<'a>, Cursor<'b>),
}

/// What a walk answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The order: sequentials by length first.
    Order,
    /// Only whether equal (`Equal` or not): two lists are walked once, in
    /// step, not measured first.
    Equal,
    /// As `Equal`, and a vector never equals a list.
    Exact,
}

/// The total order of terms (see the module docs).
pub fn compare(a: Term<'_>, b: Term<'_>) -> Ordering {
    walk(a, b, Mode::Order)
}

/// Structural equality (`=`): a vector equals a list of equal elements.
/// The same as `compare(a, b) == Equal`.
pub fn equal(a: Term<'_>, b: Term<'_>) -> bool {
    walk(a, b, Mode::Equal) == Ordering::Equal
}

/// The equality of patterns (`match`, `receive`, a quoted literal in a
/// pattern): as [`equal`], but a vector never equals a list, at any depth.
pub fn equal_exact(a: Term<'_>, b: Term<'_>) -> bool {
    walk(a, b, Mode::Exact) == Ordering::Equal
}

fn walk(a: Term<'_>, b: Term<'_>, mode: Mode) -> Ordering {
    let mut todo: Vec<Todo<'_, '_>> = Vec::new();
    let mut next = Todo::Pair(a, b);
    loop {
        let o = match next {
            Todo::Pair(x, y) if x.bits() == y.bits() => Ordering::Equal,
            Todo::Pair(x, y) => shallow(x, y, &mut todo, mode),
            Todo::Seqs(c1, c2) => match (c1.step(), c2.step()) {
                (Some((h1, r1)), Some((h2, r2))) => {
                    todo.push(Todo::Seqs(r1, r2));
                    todo.push(Todo::Pair(h1, h2));
                    Ordering::Equal
                }
                // Equal lengths: both end together; then the tails.
                (None, None) => {
                    todo.push(Todo::Pair(c1.tail(), c2.tail()));
                    Ordering::Equal
                }
                // Only when not measured first (equality): not equal.
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
            },
        };
        if o != Ordering::Equal {
            return o;
        }
        match todo.pop() {
            Some(t) => next = t,
            None => return Ordering::Equal,
        }
    }
}

/// Compares what can be compared without descending; pushes the child pairs
/// still to compare (first child last) when that part is equal.
fn shallow<'a, 'b>(x: Term<'a>, y: Term<'b>, todo: &mut Vec<Todo<'a, 'b>>, mode: Mode) -> Ordering {
    // Metadata is not part of a value (`meta.rs`, rule 1).
    let (x, y) = (x.unmeta(), y.unmeta());
    // Two integers, one of them big: by their limbs, without the `BigInt`
    // a view makes.
    if let (Some(p), Some(q)) = (x.int_ref(), y.int_ref()) {
        return p.compare(q);
    }
    let (vx, vy) = (x.view(), y.view());
    let (rx, ry) = (rank(&vx), rank(&vy));
    if rx != ry {
        return rx.cmp(&ry);
    }
    if mode != Mode::Order {
        if let (Some(c1), Some(c2)) = (Cursor::start(x, &vx), Cursor::start(y, &vy)) {
            if mode == Mode::Exact && matches!(vx, View::Vector(_)) != matches!(vy, View::Vector(_))
            {
                return Ordering::Less;
            }
            if let (View::Vector(a1), View::Vector(a2)) = (&vx, &vy) {
                if a1.len() != a2.len() {
                    return Ordering::Less;
                }
            }
            todo.push(Todo::Seqs(c1, c2));
            return Ordering::Equal;
        }
    }
    if let (Some((c1, n1)), Some((c2, n2))) = (Cursor::of(x, &vx), Cursor::of(y, &vy)) {
        return n1.cmp(&n2).then_with(|| {
            todo.push(Todo::Seqs(c1, c2));
            Ordering::Equal
        });
    }
    match (vx, vy) {
        (View::Bool(p), View::Bool(q)) => p.cmp(&q),
        (View::Keyword(p), View::Keyword(q)) | (View::Symbol(p), View::Symbol(q)) => {
            if p == q {
                Ordering::Equal
            } else {
                p.name().cmp(q.name())
            }
        }
        (View::Ref(p), View::Ref(q)) => p.cmp(&q),
        (View::Cell(p), View::Cell(q)) => p.serial().cmp(&q.serial()),
        (View::Ref(_), View::ExtRef { .. }) | (View::Pid(_), View::ExtPid { .. }) => Ordering::Less,
        (View::ExtRef { .. }, View::Ref(_)) | (View::ExtPid { .. }, View::Pid(_)) => {
            Ordering::Greater
        }
        (
            View::ExtRef {
                node: n1,
                creation: c1,
                ids: i1,
            },
            View::ExtRef {
                node: n2,
                creation: c2,
                ids: i2,
            },
        ) => n1
            .name()
            .cmp(n2.name())
            .then(c1.cmp(&c2))
            .then(i1.len().cmp(&i2.len()))
            .then_with(|| i1.as_slice().cmp(i2.as_slice())),
        (View::Pid(p), View::Pid(q)) => {
            (p.index(), p.generation()).cmp(&(q.index(), q.generation()))
        }
        (
            View::ExtPid {
                node: n1,
                id: i1,
                serial: s1,
                creation: c1,
            },
            View::ExtPid {
                node: n2,
                id: i2,
                serial: s2,
                creation: c2,
            },
        ) => n1
            .name()
            .cmp(n2.name())
            .then((i1, s1, c1).cmp(&(i2, s2, c2))),
        (
            View::Closure {
                code: c1,
                captured: a1,
            },
            View::Closure {
                code: c2,
                captured: a2,
            },
        ) => c1.cmp(&c2).then(a1.len().cmp(&a2.len())).then_with(|| {
            push_pairs(todo, a1, a2);
            Ordering::Equal
        }),
        (View::Set(m1), View::Set(m2)) => m1.len().cmp(&m2.len()).then_with(|| {
            match (m1.flat(), m2.flat()) {
                (Some((k1, _)), Some((k2, _))) => push_pairs(todo, k1, k2),
                _ => {
                    let (p1, p2) = (m1.sorted_pairs(), m2.sorted_pairs());
                    for (a, b) in p1.iter().zip(&p2).rev() {
                        todo.push(Todo::Pair(a.0, b.0));
                    }
                }
            }
            Ordering::Equal
        }),
        (View::Regex(s1), View::Regex(s2)) => s1.as_bytes().cmp(s2.as_bytes()),
        (View::Map(m1), View::Map(m2)) => m1.len().cmp(&m2.len()).then_with(|| {
            match (m1.flat(), m2.flat()) {
                (Some((k1, v1)), Some((k2, v2))) => {
                    push_pairs(todo, v1, v2);
                    push_pairs(todo, k1, k2);
                }
                _ => {
                    // Large maps: in key order (same size, so both are
                    // tries, or both flat).
                    let (p1, p2) = (m1.sorted_pairs(), m2.sorted_pairs());
                    for (a, b) in p1.iter().zip(&p2).rev() {
                        todo.push(Todo::Pair(a.1, b.1));
                    }
                    for (a, b) in p1.iter().zip(&p2).rev() {
                        todo.push(Todo::Pair(a.0, b.0));
                    }
                }
            }
            Ordering::Equal
        }),
        (View::Nil, View::Nil) => Ordering::Equal,
        (View::Str(s1), View::Str(s2)) => s1.as_bytes().cmp(s2.as_bytes()),
        (View::Binary(b1), View::Binary(b2)) => b1.cmp(b2),
        (n1, n2) => compare_numbers(&n1, &n2),
    }
}

fn push_pairs<'a, 'b>(todo: &mut Vec<Todo<'a, 'b>>, a: &[Term<'a>], b: &[Term<'b>]) {
    for (p, q) in a.iter().zip(b.iter()).rev() {
        todo.push(Todo::Pair(*p, *q));
    }
}

fn compare_numbers(a: &View<'_>, b: &View<'_>) -> Ordering {
    match (a, b) {
        (View::Int(p), View::Int(q)) => p.cmp(q),
        (View::BigInt(p), View::BigInt(q)) => p.cmp(q),
        (View::Int(p), View::BigInt(q)) => BigInt::from(*p).cmp(q),
        (View::BigInt(p), View::Int(q)) => p.cmp(&BigInt::from(*q)),
        (View::Float(p), View::Float(q)) => p.total_cmp(q),
        (View::Int(i), View::Float(f)) => int_vs_float(*i, *f).then(Ordering::Less),
        (View::Float(f), View::Int(i)) => int_vs_float(*i, *f).reverse().then(Ordering::Greater),
        (View::BigInt(i), View::Float(f)) => big_vs_float(i, *f).then(Ordering::Less),
        (View::Float(f), View::BigInt(i)) => big_vs_float(i, *f).reverse().then(Ordering::Greater),
        _ => unreachable!("compare_numbers on non-numbers"),
    }
}

/// Exact numeric comparison of an integer with a float (NaN is above all).
fn int_vs_float(i: i64, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Less;
    }
    let r = i as f64;
    if r < f {
        Ordering::Less
    } else if r > f {
        Ordering::Greater
    } else {
        // r == f, so f is integral and within ±2^63: compare exactly.
        (i as i128).cmp(&(f as i128))
    }
}

fn big_vs_float(b: &BigInt, f: f64) -> Ordering {
    if f.is_nan() {
        return Ordering::Less;
    }
    if f.is_infinite() {
        return if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let t = f.trunc();
    let bt = BigInt::from_f64(t).expect("finite float");
    match b.cmp(&bt) {
        Ordering::Equal => t.partial_cmp(&f).expect("finite"),
        o => o,
    }
}

/// A hash of the term, equal for equal terms (`compare == Equal`).
pub fn term_hash(t: Term<'_>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    hash_into(t, &mut h);
    h.finish()
}

/// A term to hash, or the elements of a vector still to hash (hashed as
/// the cells of a list, so a vector and an equal list hash alike).
enum HashTodo<'a> {
    Term(Term<'a>),
    Vec(&'a [Term<'a>]),
}

fn hash_into<H: Hasher>(t: Term<'_>, h: &mut H) {
    let mut todo = vec![HashTodo::Term(t)];
    while let Some(next) = todo.pop() {
        let x = match next {
            // Metadata is not part of a value (`meta.rs`, rule 1).
            HashTodo::Term(x) => x.unmeta(),
            HashTodo::Vec(items) => {
                h.write_u8(SEQ_RANK);
                match items.split_first() {
                    None => h.write_u8(0),
                    Some((first, rest)) => {
                        h.write_u8(1);
                        todo.push(HashTodo::Vec(rest));
                        todo.push(HashTodo::Term(*first));
                    }
                }
                continue;
            }
        };
        let v = x.view();
        if let View::Vector(items) = v {
            todo.push(HashTodo::Vec(items));
            continue;
        }
        h.write_u8(rank(&v));
        match v {
            View::Nil | View::EmptyList => h.write_u8(0),
            View::Bool(b) => h.write_u8(b as u8 + 1),
            View::Int(i) => {
                h.write_u8(1);
                h.write_i64(i);
            }
            View::BigInt(b) => {
                h.write_u8(2);
                h.write(&b.to_signed_bytes_le());
            }
            View::Float(f) => {
                h.write_u8(3);
                h.write_u64(f.to_bits());
            }
            View::Keyword(a) | View::Symbol(a) => h.write(a.name().as_bytes()),
            View::Ref(r) => h.write_u64(r),
            View::Cell(c) => h.write_u64(c.serial()),
            // `Heap::with_meta` never wraps a wrapper.
            View::Meta { .. } => unreachable!("unwrapped above"),
            View::Pid(p) => h.write_u64(p.0),
            View::ExtPid {
                node,
                id,
                serial,
                creation,
            } => {
                h.write_u8(1);
                h.write(node.name().as_bytes());
                h.write_u32(id);
                h.write_u32(serial);
                h.write_u32(creation);
            }
            View::ExtRef {
                node,
                creation,
                ids,
            } => {
                h.write_u8(1);
                h.write(node.name().as_bytes());
                h.write_u32(creation);
                ids.as_slice().hash(h);
            }
            View::Str(s) | View::Regex(s) => s.as_bytes().hash(h),
            View::Set(m) => {
                h.write_usize(m.len());
                let pairs = m.sorted_pairs();
                todo.extend(pairs.iter().rev().map(|p| HashTodo::Term(p.0)));
            }
            View::Binary(b) => b.hash(h),
            View::Cons(head, tail) => {
                h.write_u8(1);
                todo.push(HashTodo::Term(tail));
                todo.push(HashTodo::Term(head));
            }
            View::Vector(_) => unreachable!("vectors are hashed above"),
            View::Map(m) => {
                h.write_usize(m.len());
                let pairs = m.sorted_pairs();
                todo.extend(pairs.iter().rev().map(|p| HashTodo::Term(p.1)));
                todo.extend(pairs.iter().rev().map(|p| HashTodo::Term(p.0)));
            }
            View::Closure { code, captured } => {
                h.write_u64(code);
                h.write_usize(captured.len());
                todo.extend(captured.iter().rev().map(|t| HashTodo::Term(*t)));
            }
        }
    }
}

impl<'h> MapView<'h> {
    /// Every entry in key term order (the order that equality, order and
    /// hashing walk a map in).
    pub fn sorted_pairs(&self) -> Vec<(Term<'h>, Term<'h>)> {
        let mut v: Vec<(Term<'h>, Term<'h>)> = self.iter().collect();
        if self.flat().is_none() {
            v.sort_by(|a, b| compare(a.0, b.0));
        }
        v
    }

    /// The entries in the order a user sees them (`seq`, printing): a
    /// sorted collection's own order, else the term order of the keys.
    pub fn ordered_pairs(&self) -> Vec<(Term<'h>, Term<'h>)> {
        if self.sorted().is_some() {
            return self.iter().collect();
        }
        self.sorted_pairs()
    }
}

impl<'b> PartialEq<Term<'b>> for Term<'_> {
    fn eq(&self, other: &Term<'b>) -> bool {
        equal(*self, *other)
    }
}

impl Eq for Term<'_> {}

impl<'b> PartialOrd<Term<'b>> for Term<'_> {
    fn partial_cmp(&self, other: &Term<'b>) -> Option<Ordering> {
        Some(compare(*self, *other))
    }
}

impl Ord for Term<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(*self, *other)
    }
}

impl Hash for Term<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_into(*self, state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Heap;

    #[test]
    fn numbers_order() {
        let h = Heap::new();
        let one = h.int(1);
        let onef = h.float(1.0);
        assert!(one < onef);
        assert_ne!(one, onef);
        assert!(h.float(0.5) < one);
        assert!(h.float(1.5) > one);
        assert!(h.int(i64::MAX) > h.float(9.2e18));
        assert!(h.int(i64::MAX) < h.float(9.3e18));
        assert!(h.float(f64::NAN) > h.float(f64::INFINITY));
        assert!(h.int(0) < h.float(-0.0));
        assert!(h.float(-0.0) < h.float(0.0));
        let big: BigInt = BigInt::from(1u8) << 100;
        let b = h.bigint(&big);
        assert!(b > h.int(i64::MAX));
        // Exact powers of two (Miri makes `powi` deliberately inexact).
        let (p100, p99, p60) = (
            (1u128 << 100) as f64,
            (1u128 << 99) as f64,
            (1u64 << 60) as f64,
        );
        assert!(b < h.float(p100 + p60));
        assert!(b < h.float(p100));
        assert!(b > h.float(p99));
        assert!(h.bigint(&-big.clone()) < h.float(-p99));
    }

    #[test]
    fn kinds_order() {
        let h = Heap::new();
        let seq = [
            h.int(5),
            Term::FALSE,
            Term::TRUE,
            Term::keyword("a"),
            Term::symbol("a"),
            h.reference(1),
            h.ext_ref(crate::Atom::new("a@b"), 0, &[0]),
            // SAFETY: no interpreter here; the code word is only compared.
            unsafe { h.closure(1, &[]) },
            h.pid(crate::Pid::new(1, 0)),
            h.ext_pid(crate::Atom::new("a@b"), 0, 0, 0),
            Term::EMPTY_LIST,
            h.vector(&[h.int(2)]),
            h.list(&[h.int(1), h.int(2)]),
            h.vector(&[h.int(1), h.int(3)]),
            h.map(&[]),
            h.set(&[]),
            Term::NIL,
            h.string(""),
            h.binary(b""),
            h.regex(""),
        ];
        for w in seq.windows(2) {
            assert!(w[0] < w[1], "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn deep_list_compare_does_not_overflow() {
        let h = Heap::new();
        let n = if cfg!(miri) { 500 } else { 200_000 };
        let items: Vec<Term<'_>> = (0..n).map(|i| h.int(i)).collect();
        let a = h.list(&items);
        let b = h.list(&items);
        assert_eq!(a, b);
        assert_eq!(term_hash(a), term_hash(b));
    }

    #[test]
    fn vectors_and_lists_are_equal_sequentials() {
        let h = Heap::new();
        let (one, two) = (h.int(1), h.int(2));
        let v = h.vector(&[one, h.vector(&[two])]);
        let l = h.list(&[one, h.list(&[two])]);
        assert_eq!(v, l);
        assert_eq!(term_hash(v), term_hash(l));
        assert!(!equal_exact(v, l));
        assert!(equal_exact(v, h.vector(&[one, h.vector(&[two])])));
        // Nested shapes differ: exact equality looks at every depth.
        assert!(!equal_exact(v, h.vector(&[one, h.list(&[two])])));
        assert_eq!(h.vector(&[]), Term::EMPTY_LIST);
        assert_eq!(term_hash(h.vector(&[])), term_hash(Term::EMPTY_LIST));
        assert!(!equal_exact(h.vector(&[]), Term::EMPTY_LIST));
        assert_ne!(h.vector(&[]), Term::NIL);
        assert_ne!(h.vector(&[]), h.map(&[]));
        assert_ne!(h.vector(&[one]), h.list(&[one, two]));
        assert_ne!(h.list(&[one, two]), h.vector(&[one]));
        assert_ne!(h.vector(&[one, one]), l);
        // Length first, then the elements (Clojure's vector order).
        assert!(h.list(&[two]) < h.vector(&[one, one]));
        assert!(h.vector(&[one, one]) < h.list(&[one, two]));
        // Equality walks in step; it agrees with the order.
        let l3 = h.list(&[one, two, one]);
        assert!(!equal(l, l3) && compare(l, l3) == Ordering::Less);
        assert!(!equal(l3, h.list(&[one, two])));
        assert!(equal(l3, h.vector(&[one, two, one])));
        // An improper tail counts after the elements.
        let improper = h.cons(one, two);
        assert_ne!(improper, h.vector(&[one]));
        assert_ne!(improper, h.list(&[one]));
    }

    #[test]
    fn a_vector_key_finds_an_equal_list_key() {
        let h = Heap::new();
        let key = |i: i64| h.vector(&[h.int(i), h.int(i + 1)]);
        let lkey = |i: i64| h.list(&[h.int(i), h.int(i + 1)]);
        for n in [3, 100] {
            let pairs: Vec<_> = (0..n).map(|i| (key(i), h.int(i))).collect();
            let m = h.map(&pairs);
            for i in 0..n {
                assert_eq!(m.map_get(lkey(i)).and_then(|t| t.as_i64()), Some(i), "{n}");
            }
            let m2 = h.map_assoc(m, lkey(1), h.int(-1)).unwrap();
            assert_eq!(m2.map_get(key(1)).and_then(|t| t.as_i64()), Some(-1));
            assert_eq!(h.map_dissoc(m2, key(1)).unwrap().map_get(lkey(1)), None);
        }
        let m = h.map(&[(h.vector(&[]), h.int(7)), (Term::keyword("a"), h.int(1))]);
        assert_eq!(
            m.map_get(Term::EMPTY_LIST).and_then(|t| t.as_i64()),
            Some(7)
        );
        let s = h.set(&[h.vector(&[h.int(1)]), h.list(&[h.int(1)])]);
        let View::Set(sm) = s.view() else { panic!() };
        assert_eq!(sm.len(), 1);
    }
}
