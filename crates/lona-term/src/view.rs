//! Reading terms: [`View`] is a term's contents, borrowed from its heap.

use num_bigint::{BigInt, BigUint, Sign};

use crate::atom::Atom;
use crate::binary::SharedBytes;
use crate::term::{Kind, Pid, Term, EMPTY_LIST, FALSE, MAX_REF_IDS, NIL, TRUE};

/// What a term is, with its contents borrowed for the heap's lifetime.
#[derive(Clone, Debug)]
pub enum View<'h> {
    /// `nil`
    Nil,
    /// `true` / `false`
    Bool(bool),
    /// `()`
    EmptyList,
    /// An integer held in an immediate.
    Int(i64),
    /// An integer outside the immediate range.
    BigInt(BigInt),
    /// A float (NaN is always the canonical `f64::NAN`).
    Float(f64),
    /// `:name`
    Keyword(Atom),
    /// `name`
    Symbol(Atom),
    /// A local pid.
    Pid(Pid),
    /// A reference.
    Ref(u64),
    /// A pid of another node (the distribution's `NEW_PID_EXT`).
    ExtPid {
        /// The node's name (`name@host`).
        node: Atom,
        /// The pid's id on that node.
        id: u32,
        /// Its serial.
        serial: u32,
        /// The node's creation (which incarnation of the node).
        creation: u32,
    },
    /// A reference of another node (the distribution's
    /// `NEWER_REFERENCE_EXT`).
    ExtRef {
        /// The node's name.
        node: Atom,
        /// The node's creation.
        creation: u32,
        /// The id words (1 to [`crate::MAX_REF_IDS`]).
        ids: RefIds,
    },
    /// A string (UTF-8).
    Str(&'h str),
    /// A binary.
    Binary(&'h [u8]),
    /// A cons cell: first element and the rest of the list.
    Cons(Term<'h>, Term<'h>),
    /// A vector.
    Vector(&'h [Term<'h>]),
    /// A map.
    Map(MapView<'h>),
    /// A set: its elements are the keys of the map (whose values are the
    /// keys themselves, so `get` on it gives the element).
    Set(MapView<'h>),
    /// A regular expression literal `#"..."`: its source. Compiling it is
    /// the regex functions' business (the `regex` crate's syntax).
    Regex(&'h str),
    /// A closure: opaque code id and captured values.
    Closure {
        /// The code reference the VM gave when creating it.
        code: u64,
        /// Captured values.
        captured: &'h [Term<'h>],
    },
    /// A cell (Lonala's atom): a value every holder shares and may
    /// replace (`cell.rs`).
    Cell(crate::binary::CellRef<'h>),
    /// A value with metadata (`with-meta`): a vector, list, map or set,
    /// and a map. Equality, order, hashing, printing and the encoders look
    /// through it; anything else sees it as itself, so code that cares
    /// takes [`Term::unmeta`] first.
    Meta {
        /// The value (never itself a `Meta`).
        value: Term<'h>,
        /// Its metadata (a map).
        meta: Term<'h>,
    },
}

/// The id words of a reference of another node ([`View::ExtRef`]): 1 to
/// [`crate::MAX_REF_IDS`] `u32`s, read as a slice.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RefIds {
    len: u8,
    words: [u32; MAX_REF_IDS],
}

impl RefIds {
    /// The id words.
    pub fn as_slice(&self) -> &[u32] {
        &self.words[..usize::from(self.len)]
    }
}

impl std::ops::Deref for RefIds {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl std::fmt::Debug for RefIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// A map's contents. Small maps (at most [`crate::MAP_SMALL_MAX`] keys)
/// are sorted arrays and iterate in key order; larger ones are tries and
/// iterate in trie order ([`MapView::sorted_pairs`] gives key order).
/// A sorted map or set (`sorted-map`, `sorted-set-by`) is a tree
/// (`tree.rs`) and iterates in its comparator's order.
/// Reading the entries needs no comparison; the methods that compare keys
/// live above the term order: [`MapView::get`] in `map.rs`,
/// [`MapView::sorted_pairs`] in `cmp.rs`.
#[derive(Clone, Copy, Debug)]
pub struct MapView<'h> {
    repr: MapRepr<'h>,
}

#[derive(Clone, Copy, Debug)]
enum MapRepr<'h> {
    Flat {
        keys: &'h [Term<'h>],
        values: &'h [Term<'h>],
    },
    Hamt(Term<'h>),
    /// A sorted collection: its comparator (`nil`: the term order) and
    /// its tree's root (`nil` when empty).
    Tree {
        cmp: Term<'h>,
        root: Term<'h>,
    },
}

impl<'h> MapView<'h> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        match self.repr {
            MapRepr::Flat { keys, .. } => keys.len(),
            // SAFETY: a HamtMap term borrowed for 'h.
            MapRepr::Hamt(m) => unsafe { crate::trie::len(m.bits()) },
            MapRepr::Tree { root, .. } => crate::tree::size(root),
        }
    }
    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every entry (key order for small maps, trie order for large ones).
    pub fn iter(&self) -> impl Iterator<Item = (Term<'h>, Term<'h>)> + 'h {
        let pairs: Vec<(Term<'h>, Term<'h>)> = match self.repr {
            MapRepr::Flat { keys, values } => {
                keys.iter().copied().zip(values.iter().copied()).collect()
            }
            MapRepr::Hamt(m) => {
                let mut raw = Vec::with_capacity(self.len());
                // SAFETY: a HamtMap term borrowed for 'h.
                unsafe { crate::trie::collect(crate::trie::root(m.bits()), &mut raw) };
                // SAFETY: words of live terms borrowed for 'h.
                raw.into_iter()
                    .map(|(k, v)| unsafe { (Term::from_bits(k), Term::from_bits(v)) })
                    .collect()
            }
            MapRepr::Tree { root, .. } => crate::tree::entries(root, false),
        };
        pairs.into_iter()
    }
    /// Every entry in reverse order: a sorted collection's from its last
    /// (`rseq`); another map's, the reverse of [`MapView::iter`].
    pub fn iter_rev(&self) -> impl Iterator<Item = (Term<'h>, Term<'h>)> + 'h {
        let pairs: Vec<(Term<'h>, Term<'h>)> = match self.repr {
            MapRepr::Tree { root, .. } => crate::tree::entries(root, true),
            _ => {
                let mut v: Vec<_> = self.iter().collect();
                v.reverse();
                v
            }
        };
        pairs.into_iter()
    }
    /// A sorted collection's comparator (`nil`: the term order) and tree
    /// root; `None` for a hash map or set.
    pub fn sorted(&self) -> Option<(Term<'h>, Term<'h>)> {
        match self.repr {
            MapRepr::Tree { cmp, root } => Some((cmp, root)),
            _ => None,
        }
    }
    /// The keys and values of a small map, in key order (`None` for a
    /// large one).
    pub fn flat(&self) -> Option<(&'h [Term<'h>], &'h [Term<'h>])> {
        match self.repr {
            MapRepr::Flat { keys, values } => Some((keys, values)),
            MapRepr::Hamt(_) | MapRepr::Tree { .. } => None,
        }
    }
    /// The `HamtMap` term of a large map (`None` for a small one).
    pub(crate) fn trie(&self) -> Option<Term<'h>> {
        match self.repr {
            MapRepr::Flat { .. } | MapRepr::Tree { .. } => None,
            MapRepr::Hamt(m) => Some(m),
        }
    }
}

impl<'h> Term<'h> {
    /// The code id of a closure, without building a [`View`] (one tag test
    /// for anything that is not boxed: the lazy-sequence check that every
    /// `first`/`rest` makes).
    #[inline]
    pub fn closure_code(self) -> Option<u64> {
        let h = self.boxed_header()?;
        if Kind::from_header(h) == Kind::Closure {
            // SAFETY: a closure's first payload word is its code id.
            Some(unsafe { self.payload(0) })
        } else {
            None
        }
    }

    /// The term's contents.
    pub fn view(self) -> View<'h> {
        if let Some(v) = self.small_value() {
            return View::Int(v);
        }
        if let Some((a, sym)) = self.atom_parts() {
            return if sym {
                View::Symbol(a)
            } else {
                View::Keyword(a)
            };
        }
        if let Some((h, t)) = self.cons_parts() {
            return View::Cons(h, t);
        }
        if let Some(p) = self.imm_pid() {
            return View::Pid(p);
        }
        match self.bits() {
            NIL => return View::Nil,
            TRUE => return View::Bool(true),
            FALSE => return View::Bool(false),
            EMPTY_LIST => return View::EmptyList,
            _ => {}
        }
        let h = self
            .boxed_header()
            .unwrap_or_else(|| unreachable!("unknown immediate {:#x}", self.bits()));
        let arity = crate::term::header_arity(h);
        // SAFETY: (all payload reads below) the header says the object has
        // `arity` payload words laid out as documented in term.rs, and
        // Term<'h> guarantees it is alive and immutable for 'h.
        unsafe {
            match Kind::from_header(h) {
                Kind::Float => View::Float(f64::from_bits(self.payload(0))),
                k @ (Kind::BigPos | Kind::BigNeg) => {
                    let mut halves = Vec::with_capacity(arity * 2);
                    for i in 0..arity {
                        let limb = self.payload(i);
                        halves.extend_from_slice(&[limb as u32, (limb >> 32) as u32]);
                    }
                    let sign = if k == Kind::BigPos {
                        Sign::Plus
                    } else {
                        Sign::Minus
                    };
                    View::BigInt(BigInt::from_biguint(sign, BigUint::new(halves)))
                }
                Kind::Str => View::Str(std::str::from_utf8_unchecked(self.inline_bytes())),
                Kind::Bin => View::Binary(self.inline_bytes()),
                Kind::SharedStr => View::Str(std::str::from_utf8_unchecked(self.shared_bytes())),
                Kind::SharedBin => View::Binary(self.shared_bytes()),
                Kind::Vector => View::Vector(self.payload_terms(0, arity)),
                Kind::Map => View::Map(MapView {
                    repr: MapRepr::Flat {
                        keys: self.payload_terms(0, arity / 2),
                        values: self.payload_terms(arity / 2, arity / 2),
                    },
                }),
                Kind::HamtMap => View::Map(MapView {
                    repr: MapRepr::Hamt(self),
                }),
                Kind::HamtNode | Kind::HamtColl => unreachable!("a trie node is not a term"),
                Kind::SortedMap => View::Map(MapView {
                    repr: MapRepr::Tree {
                        cmp: Term::from_bits(self.payload(0)),
                        root: Term::from_bits(self.payload(1)),
                    },
                }),
                Kind::SortedSet => View::Set(MapView {
                    repr: MapRepr::Tree {
                        cmp: Term::from_bits(self.payload(0)),
                        root: Term::from_bits(self.payload(1)),
                    },
                }),
                Kind::Set => match Term::<'h>::from_bits(self.payload(0)).view() {
                    View::Map(m) => View::Set(m),
                    _ => unreachable!("a set holds a map"),
                },
                Kind::Regex => match Term::<'h>::from_bits(self.payload(0)).view() {
                    View::Str(s) => View::Regex(s),
                    _ => unreachable!("a regex holds a string"),
                },
                Kind::Closure => View::Closure {
                    code: self.payload(0),
                    captured: self.payload_terms(1, arity - 1),
                },
                Kind::Ref => View::Ref(self.payload(0)),
                Kind::Meta => View::Meta {
                    value: Term::from_bits(self.payload(0)),
                    meta: Term::from_bits(self.payload(1)),
                },
                Kind::Cell => View::Cell(crate::binary::CellRef::new(
                    self.payload(0) as usize as *const SharedBytes
                )),
                Kind::Pid => View::Pid(Pid(self.payload(0))),
                // The constructors store each field as a u32 in a word.
                Kind::ExtPid => View::ExtPid {
                    node: Atom::from_index(self.payload(0) as u32),
                    id: self.payload(1) as u32,
                    serial: self.payload(2) as u32,
                    creation: self.payload(3) as u32,
                },
                Kind::ExtRef => {
                    let mut ids = RefIds {
                        len: (arity - 2) as u8,
                        words: [0; MAX_REF_IDS],
                    };
                    for (i, w) in ids.words[..arity - 2].iter_mut().enumerate() {
                        *w = self.payload(2 + i) as u32;
                    }
                    View::ExtRef {
                        node: Atom::from_index(self.payload(0) as u32),
                        creation: self.payload(1) as u32,
                        ids,
                    }
                }
                Kind::Forward => unreachable!("forwarding marker outside a collection"),
            }
        }
    }

    /// # Safety
    /// `self` must be a boxed `Str` or `Bin`.
    unsafe fn inline_bytes(self) -> &'h [u8] {
        // SAFETY: per the caller; payload word 0 is the length, the bytes
        // follow and lie inside the object.
        unsafe {
            let len = self.payload(0) as usize;
            let p = crate::term::ptr_of(self.bits()).add(2) as *const u8;
            std::slice::from_raw_parts(p, len)
        }
    }

    /// # Safety
    /// `self` must be a boxed `SharedStr` or `SharedBin`.
    unsafe fn shared_bytes(self) -> &'h [u8] {
        // SAFETY: the object owns a count on the SharedBytes for as long as
        // it lives, which is at least 'h; payload word 1 is its length.
        unsafe {
            SharedBytes::bytes(
                self.payload(0) as usize as *const SharedBytes,
                self.payload(1) as usize,
            )
        }
    }

    /// The integer, if the term is one that fits an `i64`.
    pub fn as_i64(self) -> Option<i64> {
        match self.small_value() {
            Some(v) => Some(v),
            None => match self.view() {
                View::BigInt(b) => i64::try_from(b).ok(),
                _ => None,
            },
        }
    }

    /// The number of entries, if the term is a map.
    pub fn map_len(self) -> Option<usize> {
        match self.view() {
            View::Map(m) => Some(m.len()),
            _ => None,
        }
    }

    /// The string's text, if the term is a string.
    pub fn as_str(self) -> Option<&'h str> {
        match self.view() {
            View::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The float, if the term is one.
    pub fn as_f64(self) -> Option<f64> {
        match self.view() {
            View::Float(f) => Some(f),
            _ => None,
        }
    }

    /// Iterates the elements of a list; the iterator ends at the first
    /// non-cons tail, which [`ListIter::tail`] then gives.
    pub fn list_iter(self) -> ListIter<'h> {
        ListIter { cur: self }
    }

    /// A counted reference to the bytes of a shared (≥ 64 byte) binary
    /// or string, which outlives this term and its heap; `None` for any
    /// other term (a small binary lives on its heap: copy its bytes).
    pub fn shared_binary(self) -> Option<crate::binary::SharedBinary> {
        let h = self.boxed_header()?;
        match Kind::from_header(h) {
            // SAFETY: a shared object's payload word 0 is a live SharedBytes
            // (the object holds a count while the term lives) and word 1
            // the length it sees.
            Kind::SharedStr | Kind::SharedBin => unsafe {
                Some(crate::binary::SharedBinary::retain(
                    self.payload(0) as usize as *const SharedBytes,
                    self.payload(1) as usize,
                ))
            },
            _ => None,
        }
    }

    /// The number of references to a shared (≥ 64 byte) binary or string,
    /// or `None` for any other term. For tests and diagnostics.
    pub fn shared_refcount(self) -> Option<usize> {
        let h = self.boxed_header()?;
        match Kind::from_header(h) {
            // SAFETY: a shared object's payload word 0 is a live SharedBytes.
            Kind::SharedStr | Kind::SharedBin | Kind::Cell => unsafe {
                Some(SharedBytes::count(
                    self.payload(0) as usize as *const SharedBytes
                ))
            },
            _ => None,
        }
    }
}

/// Iterator over a list's elements.
pub struct ListIter<'h> {
    cur: Term<'h>,
}

impl<'h> ListIter<'h> {
    /// What is left: `()` after a proper list, the improper tail otherwise.
    pub fn tail(&self) -> Term<'h> {
        self.cur
    }
}

impl<'h> Iterator for ListIter<'h> {
    type Item = Term<'h>;
    fn next(&mut self) -> Option<Term<'h>> {
        let (h, t) = self.cur.cons_parts()?;
        self.cur = t;
        Some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::View;
    use crate::{Atom, Fragment, Heap, Pid, Term};

    fn fields(t: Term<'_>) -> (String, u32, u32, u32, Vec<u32>) {
        match t.view() {
            View::ExtPid {
                node,
                id,
                serial,
                creation,
            } => (node.name().to_owned(), id, serial, creation, vec![]),
            View::ExtRef {
                node,
                creation,
                ids,
            } => (node.name().to_owned(), 0, 0, creation, ids.to_vec()),
            v => panic!("not another node's pid or reference: {v:?}"),
        }
    }

    /// Pids and references of other nodes are raw words after a header:
    /// copies (to a heap, to a fragment) and collections (minor, which
    /// promotes, and major) keep every field.
    #[test]
    fn ext_pids_and_refs_survive_copies_and_collections() {
        let node = Atom::new("view-test@host");
        let mut h = Heap::new();
        let want = [
            (node.name().to_owned(), u32::MAX, 1, 2, vec![]),
            (node.name().to_owned(), 0, 0, u32::MAX, vec![u32::MAX]),
            (node.name().to_owned(), 0, 0, 9, vec![1, 2, 3, 4, 5]),
        ];
        let root = {
            let v = h.vector(&[
                h.ext_pid(node, u32::MAX, 1, 2),
                h.ext_ref(node, u32::MAX, &[u32::MAX]),
                h.ext_ref(node, 9, &[1, 2, 3, 4, 5]),
                h.pid(Pid::new(1, 1)),
            ]);
            // through a fragment into the heap, as a message
            let got = h.attach(Fragment::new(v));
            let other = Heap::new();
            let copy = other.copy_from(got);
            assert!(crate::equal(copy, v));
            h.add_root(got)
        };
        for i in 0..3 {
            let _garbage = h.vector(&[h.int(i), h.float(0.5)]);
            match i {
                0 => h.collect(0).unwrap(),
                1 => h.collect_major(0).unwrap(),
                _ => h.collect(0).unwrap(),
            };
            let View::Vector(items) = h.root(root).view() else {
                panic!("a vector")
            };
            for (t, w) in items.iter().zip(&want) {
                assert_eq!(&fields(*t), w);
            }
            assert!(matches!(items[3].view(), View::Pid(p) if p == Pid::new(1, 1)));
        }
    }

    #[test]
    #[should_panic(expected = "1 to 5 id words")]
    fn a_reference_has_at_most_five_id_words() {
        Heap::new().ext_ref(Atom::new("a@b"), 0, &[0; 6]);
    }
}
