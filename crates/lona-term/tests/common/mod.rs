//! Test support: an independent Rust-side model of terms, a generator of
//! term graphs with sharing, and helpers.
#![allow(dead_code)]

use lona_term::{Atom, Heap, Pid, Term, View};
use num_bigint::BigInt;
use proptest::prelude::*;

/// A term as plain Rust data, independent of any heap.
#[derive(Clone, Debug, PartialEq)]
pub enum M {
    Nil,
    Bool(bool),
    EmptyList,
    Int(i64),
    Big(BigInt),
    Float(u64),
    Kw(String),
    Sym(String),
    Pid(u64),
    Ref(u64),
    /// node, id, serial, creation
    ExtPid(String, u32, u32, u32),
    /// node, creation, ids
    ExtRef(String, u32, Vec<u32>),
    Str(String),
    Bin(Vec<u8>),
    /// elements, tail
    List(Vec<M>, Box<M>),
    Vector(Vec<M>),
    /// pairs in stored (sorted) order
    Map(Vec<(M, M)>),
    Closure(u64, Vec<M>),
    /// a set: its (element, element) pairs in stored order
    Set(Vec<(M, M)>),
    Regex(String),
}

/// Reads a term into the model (iterative over list spines; recursion depth
/// is the nesting depth of the generated terms, which is small).
pub fn model(t: Term<'_>) -> M {
    match t.view() {
        View::Nil => M::Nil,
        View::Bool(b) => M::Bool(b),
        View::EmptyList => M::EmptyList,
        View::Int(i) => M::Int(i),
        View::BigInt(b) => M::Big(b),
        View::Float(f) => M::Float(f.to_bits()),
        View::Keyword(a) => M::Kw(a.name().to_owned()),
        View::Symbol(a) => M::Sym(a.name().to_owned()),
        View::Pid(p) => M::Pid(p.0),
        View::Ref(r) => M::Ref(r),
        View::ExtPid {
            node,
            id,
            serial,
            creation,
        } => M::ExtPid(node.name().to_owned(), id, serial, creation),
        View::ExtRef {
            node,
            creation,
            ids,
        } => M::ExtRef(node.name().to_owned(), creation, ids.to_vec()),
        View::Str(s) => M::Str(s.to_owned()),
        View::Binary(b) => M::Bin(b.to_vec()),
        View::Cons(..) => {
            let mut it = t.list_iter();
            let elems: Vec<M> = it.by_ref().map(model).collect();
            M::List(elems, Box::new(model(it.tail())))
        }
        View::Vector(items) => M::Vector(items.iter().map(|x| model(*x)).collect()),
        View::Map(m) => M::Map(m.iter().map(|(k, v)| (model(k), model(v))).collect()),
        View::Set(m) => M::Set(m.iter().map(|(k, v)| (model(k), model(v))).collect()),
        View::Regex(s) => M::Regex(s.to_owned()),
        View::Closure { code, captured } => {
            M::Closure(code, captured.iter().map(|x| model(*x)).collect())
        }
        View::Cell(_) => unreachable!("the generators make no cells"),
        View::Meta { value, .. } => model(value),
    }
}

/// A leaf value.
#[derive(Clone, Debug)]
pub enum Leaf {
    Nil,
    Bool(bool),
    Empty,
    Int(i64),
    Big(i128),
    Float(f64),
    Kw(u8),
    Sym(u8),
    Pid(u64),
    Ref(u64),
    /// node (an index into [`NODES`]), id, serial, creation
    ExtPid(u8, u32, u32, u32),
    /// node, creation, 1..=5 ids
    ExtRef(u8, u32, Vec<u32>),
    Str(String),
    Bin(Vec<u8>),
    /// a long list of small integers
    IntList(usize),
}

/// The node names of generated pids and references of other nodes.
pub const NODES: [&str; 3] = ["a@host", "b@host", "nonode@nohost"];

/// One step of building a term graph: operands are indices (modulo the
/// number of nodes built so far) of earlier nodes, so subterms are shared.
#[derive(Clone, Debug)]
pub enum Op {
    Leaf(Leaf),
    Vector(Vec<usize>),
    List(Vec<usize>, Option<usize>),
    Map(Vec<(usize, usize)>),
    Closure(u64, Vec<usize>),
    /// Allocate this many words of garbage.
    Garbage(usize),
    /// Drop the root of node i (it may stay reachable from others).
    Forget(usize),
    Minor,
    Major,
}

pub fn leaf() -> impl Strategy<Value = Leaf> {
    let long_list = if cfg!(miri) { 20usize } else { 3000 };
    prop_oneof![
        Just(Leaf::Nil),
        any::<bool>().prop_map(Leaf::Bool),
        Just(Leaf::Empty),
        any::<i64>().prop_map(Leaf::Int),
        (-1000i64..1000).prop_map(Leaf::Int),
        any::<i128>().prop_map(Leaf::Big),
        any::<f64>().prop_map(Leaf::Float),
        (0u8..6).prop_map(Leaf::Kw),
        (0u8..3).prop_map(Leaf::Sym),
        any::<u64>().prop_map(Leaf::Pid),
        any::<u64>().prop_map(Leaf::Ref),
        (0u8..3, any::<u32>(), 0u32..3, any::<u32>())
            .prop_map(|(n, i, s, c)| Leaf::ExtPid(n, i, s, c)),
        (0u8..3, 0u32..3, prop::collection::vec(any::<u32>(), 1..=5))
            .prop_map(|(n, c, ids)| Leaf::ExtRef(n, c, ids)),
        ".{0,10}".prop_map(Leaf::Str),
        ".{60,80}".prop_map(Leaf::Str),
        prop::collection::vec(any::<u8>(), 0..12).prop_map(Leaf::Bin),
        prop::collection::vec(any::<u8>(), 64..100).prop_map(Leaf::Bin),
        (0..long_list).prop_map(Leaf::IntList),
    ]
}

pub fn op() -> impl Strategy<Value = Op> {
    let idx = any::<usize>();
    prop_oneof![
        4 => leaf().prop_map(Op::Leaf),
        2 => prop::collection::vec(idx, 0..5).prop_map(Op::Vector),
        2 => (prop::collection::vec(idx, 1..5), prop::option::of(idx)).prop_map(|(a, b)| Op::List(a, b)),
        2 => prop::collection::vec((idx, idx), 0..5).prop_map(Op::Map),
        1 => (any::<u64>(), prop::collection::vec(idx, 0..3)).prop_map(|(c, v)| Op::Closure(c, v)),
        1 => (0usize..400).prop_map(Op::Garbage),
        1 => idx.prop_map(Op::Forget),
        1 => Just(Op::Minor),
        1 => Just(Op::Major),
    ]
}

pub fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    let max = if cfg!(miri) { max.min(12) } else { max };
    prop::collection::vec(op(), 1..max)
}

pub fn build_leaf<'h>(h: &'h Heap, l: &Leaf) -> Term<'h> {
    match l {
        Leaf::Nil => Term::NIL,
        Leaf::Bool(b) => Term::bool(*b),
        Leaf::Empty => Term::EMPTY_LIST,
        Leaf::Int(i) => h.int(*i),
        Leaf::Big(i) => h.bigint(&BigInt::from(*i)),
        Leaf::Float(f) => h.float(*f),
        Leaf::Kw(k) => Term::keyword(&format!("k{k}")),
        Leaf::Sym(k) => Term::symbol(&format!("s{k}")),
        Leaf::Pid(p) => h.pid(Pid(*p)),
        Leaf::Ref(r) => h.reference(*r),
        Leaf::ExtPid(n, i, s, c) => h.ext_pid(Atom::new(NODES[*n as usize]), *i, *s, *c),
        Leaf::ExtRef(n, c, ids) => h.ext_ref(Atom::new(NODES[*n as usize]), *c, ids),
        Leaf::Str(s) => h.string(s),
        Leaf::Bin(b) => h.binary(b),
        Leaf::IntList(n) => {
            let mut t = Term::EMPTY_LIST;
            for i in (0..*n).rev() {
                t = h.cons(h.int(i as i64), t);
            }
            t
        }
    }
}

/// Builds a term of `h` from earlier terms; `None` for non-building ops.
pub fn build<'h>(h: &'h Heap, op: &Op, nodes: &[Term<'h>]) -> Option<Term<'h>> {
    let pick = |i: &usize| -> Term<'h> {
        if nodes.is_empty() {
            Term::NIL
        } else {
            nodes[*i % nodes.len()]
        }
    };
    Some(match op {
        Op::Leaf(l) => build_leaf(h, l),
        Op::Vector(v) => h.vector(&v.iter().map(pick).collect::<Vec<_>>()),
        Op::List(v, tail) => {
            let items: Vec<Term<'h>> = v.iter().map(pick).collect();
            match tail {
                Some(t) => h.list_with_tail(&items, pick(t)),
                None => h.list(&items),
            }
        }
        Op::Map(pairs) => h.map(
            &pairs
                .iter()
                .map(|(k, v)| (pick(k), pick(v)))
                .collect::<Vec<_>>(),
        ),
        // SAFETY: no interpreter in these tests; the code word is copied,
        // compared and collected, never followed.
        Op::Closure(c, v) => unsafe { h.closure(*c, &v.iter().map(pick).collect::<Vec<_>>()) },
        _ => return None,
    })
}

/// Builds every op's term into `h` without collecting (for copy, codec,
/// order and hash properties); returns the built terms.
pub fn build_all<'h>(h: &'h Heap, ops: &[Op]) -> Vec<Term<'h>> {
    let mut nodes = Vec::new();
    for op in ops {
        if let Some(t) = build(h, op, &nodes) {
            nodes.push(t);
        }
    }
    nodes
}

pub fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 2 } else { n },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The model as `=` sees it: a vector is the list of its elements (`[]`
/// is `()`), at any depth.
pub fn eq_model(m: M) -> M {
    let all = |v: Vec<M>| v.into_iter().map(eq_model).collect::<Vec<M>>();
    let pairs = |v: Vec<(M, M)>| {
        v.into_iter()
            .map(|(a, b)| (eq_model(a), eq_model(b)))
            .collect()
    };
    match m {
        M::Vector(items) if items.is_empty() => M::EmptyList,
        M::Vector(items) => M::List(all(items), Box::new(M::EmptyList)),
        M::List(items, tail) => M::List(all(items), Box::new(eq_model(*tail))),
        M::Map(p) => M::Map(pairs(p)),
        M::Set(p) => M::Set(pairs(p)),
        M::Closure(c, items) => M::Closure(c, all(items)),
        other => other,
    }
}

/// `[:erlang/bits bytes size]` for `b` whose last byte holds `n` bits
/// (the unused ones cleared, as the decoder clears them).
pub fn bits<'h>(h: &'h Heap, b: &[u8], n: u8) -> Term<'h> {
    let mut b = b.to_vec();
    let last = b.len() - 1;
    b[last] &= 0xffu8 << (8 - n);
    let size = last as i64 * 8 + i64::from(n);
    h.vector(&[Term::keyword("erlang/bits"), h.binary(&b), h.int(size)])
}
