//! The tagged 64-bit term word and its bit layout.
//!
//! Every Lonala value is one 64-bit word. The low three bits (the *primary
//! tag*) say what the rest of the word means:
//!
//! ```text
//!  63                                                       3 2  0
//! +----------------------------------------------------------+----+
//! | address of a header word (8-byte aligned)                | 000|  boxed pointer
//! | address of a cons cell  (8-byte aligned)                 | 001|  cons pointer
//! | arity (56 bits)                           | kind (5 bits)| 010|  header (heap only)
//! | signed integer, 61 bits                                  | 011|  small integer
//! | pid: generation (29 bits) << 32 | index (32 bits)        | 100|  local pid
//! | (reserved)                                               | 101|
//! | (reserved)                                               | 110|
//! | payload                                    | sub (3 bits)| 111|  other immediates
//! +----------------------------------------------------------+----+
//! ```
//!
//! Other immediates (primary tag `111`) carry a secondary tag in bits 3..=5:
//!
//! ```text
//!  63                32 31               6 5   3 2  0
//! +--------------------+------------------+-----+----+
//! |         0          | 0 nil, 1 false,  | 000 | 111|  special constants
//! |                    | 2 true, 3 ()     |     |    |
//! | atom index (u32)   |        0         | 001 | 111|  keyword
//! | atom index (u32)   |        0         | 010 | 111|  symbol
//! +--------------------+------------------+-----+----+
//! ```
//!
//! * **Small integers** span `-2^60 ..= 2^60 - 1`. Integers outside that range
//!   are boxed big integers; an integer is *always* stored in the smallest
//!   form (so structural equality can compare representations).
//! * **Pids** are the runtime's `u64` (index in the low 32 bits, generation
//!   in the high 32 bits). A pid whose value fits in 61 bits (generation below
//!   `2^29`) is an immediate: the word is `pid << 3 | 0b100`. Any other pid is
//!   boxed (kind [`Kind::Pid`]). A pid of another node (the distribution's
//!   node name, id, serial and creation) is boxed as kind [`Kind::ExtPid`],
//!   a reference of another node as [`Kind::ExtRef`].
//! * `nil` and the empty list `()` are distinct values, as in Clojure: a
//!   proper list ends in `()`.
//!
//! **Boxed objects** live on a heap (or in a fragment) and start with a
//! header word: `arity << 8 | kind << 3 | 0b010`, where `arity` is the number
//! of words that follow the header:
//!
//! | kind | payload after the header | arity |
//! | --- | --- | --- |
//! | `Float` | `f64` bits | 1 |
//! | `BigPos`/`BigNeg` | magnitude, `u64` limbs, least significant first | limbs |
//! | `Str`/`Bin` (< 64 bytes) | byte length, then the bytes, zero padded | 1 + ⌈len/8⌉ |
//! | `SharedStr`/`SharedBin` (≥ 64 bytes) | pointer to the refcounted off-heap block, byte length | 2 |
//! | `Vector` | the elements | n |
//! | `Map` | n keys in term order, then the n values (at most 32 keys) | 2n |
//! | `HamtMap` | count, root node (a map of more than 32 keys, `hamt.rs`) | 2 |
//! | `HamtNode` | datamap, nodemap (small ints), key/value pairs, child nodes | 2 + 2d + c |
//! | `HamtColl` | key/value pairs whose keys' hashes are equal | 2n |
//! | `Closure` | code id (opaque `u64`), then the captured terms | 1 + n |
//! | `Set` | a map (either form) whose every value is its key | 1 |
//! | `Regex` | the pattern's source, a string term | 1 |
//! | `SortedMap`/`SortedSet` | the comparator (`nil`: the term order), the tree's root (`nil` or a node, `tree.rs`) | 2 |
//! | `Ref` | reference id (`u64`) | 1 |
//! | `Pid` | pid (`u64`) | 1 |
//! | `ExtPid` | a pid of another node: node atom index, id, serial, creation (each a `u32` in a word) | 4 |
//! | `ExtRef` | a reference of another node: node atom index, creation, then its 1..=5 id words (each a `u32` in a word) | 2 + n |
//!
//! **Cons cells** have no header: two words, car then cdr, pointed to by a
//! `001`-tagged word. A car is always a term, and a term word is never a
//! header, so a heap can still be walked object by object.
//!
//! During a collection a moved boxed object's header is overwritten with the
//! new boxed pointer (tag `000`, never a header), and a moved cons cell's car
//! is overwritten with [`FORWARD_CONS`] (a header of kind `Forward`, which no
//! term can equal) and its cdr with the new cons pointer.

use std::marker::PhantomData;

use crate::atom::Atom;

pub(crate) const TAG_MASK: u64 = 0b111;
pub(crate) const TAG_BOXED: u64 = 0b000;
pub(crate) const TAG_CONS: u64 = 0b001;
pub(crate) const TAG_HEADER: u64 = 0b010;
pub(crate) const TAG_SMALL: u64 = 0b011;
pub(crate) const TAG_PID: u64 = 0b100;
pub(crate) const TAG_IMM: u64 = 0b111;

const SUB_MASK: u64 = 0b11_1111;
const SUB_SPECIAL: u64 = TAG_IMM;
const SUB_KEYWORD: u64 = (1 << 3) | TAG_IMM;
const SUB_SYMBOL: u64 = (2 << 3) | TAG_IMM;

pub(crate) const NIL: u64 = SUB_SPECIAL;
pub(crate) const FALSE: u64 = (1 << 6) | SUB_SPECIAL;
pub(crate) const TRUE: u64 = (2 << 6) | SUB_SPECIAL;
pub(crate) const EMPTY_LIST: u64 = (3 << 6) | SUB_SPECIAL;

/// Smallest integer held in an immediate.
pub const SMALL_INT_MIN: i64 = -(1 << 60);
/// Largest integer held in an immediate.
pub const SMALL_INT_MAX: i64 = (1 << 60) - 1;
/// Largest pid value held in an immediate (generation below `2^29`).
pub const IMMEDIATE_PID_MAX: u64 = (1 << 61) - 1;

/// The most id words a reference of another node has (Erlang's
/// `NEWER_REFERENCE_EXT` allows up to 5; kind `ExtRef` above).
pub const MAX_REF_IDS: usize = 5;

/// Largest arity a header can describe.
pub(crate) const MAX_ARITY: u64 = (1 << 56) - 1;

/// The kind of a boxed object, stored in bits 3..=7 of its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Float = 1,
    BigPos = 2,
    BigNeg = 3,
    Str = 4,
    Bin = 5,
    SharedStr = 6,
    SharedBin = 7,
    Vector = 8,
    Map = 9,
    Closure = 10,
    Ref = 11,
    Pid = 12,
    /// A map of more than 32 keys: count and root node (`hamt.rs`).
    HamtMap = 13,
    /// A trie node of a large map.
    HamtNode = 14,
    /// Entries of a large map whose keys' hashes collide.
    HamtColl = 15,
    /// A set: one word, a map whose values are its keys (`#{1 2}`).
    Set = 16,
    /// A regular expression: one word, its source string (`#"a+"`).
    Regex = 17,
    /// A pid of another node: node atom, id, serial, creation.
    ExtPid = 18,
    /// A reference of another node: node atom, creation, 1..=5 id words.
    ExtRef = 19,
    /// A sorted map: comparator and tree (`tree.rs`).
    SortedMap = 20,
    /// A sorted set: comparator and tree, each node's value its key.
    SortedSet = 21,
    /// A cell (an atom): its off-heap block and 0, as a large binary's
    /// object (`cell.rs`).
    Cell = 22,
    /// A value with metadata: the value and the map (`meta.rs`).
    Meta = 23,
    /// Only in the car of a forwarded cons cell during a collection.
    Forward = 31,
}

impl Kind {
    #[inline]
    pub(crate) fn from_header(h: u64) -> Kind {
        match (h >> 3) & 0x1f {
            1 => Kind::Float,
            2 => Kind::BigPos,
            3 => Kind::BigNeg,
            4 => Kind::Str,
            5 => Kind::Bin,
            6 => Kind::SharedStr,
            7 => Kind::SharedBin,
            8 => Kind::Vector,
            9 => Kind::Map,
            10 => Kind::Closure,
            11 => Kind::Ref,
            12 => Kind::Pid,
            13 => Kind::HamtMap,
            14 => Kind::HamtNode,
            15 => Kind::HamtColl,
            16 => Kind::Set,
            17 => Kind::Regex,
            18 => Kind::ExtPid,
            19 => Kind::ExtRef,
            20 => Kind::SortedMap,
            21 => Kind::SortedSet,
            22 => Kind::Cell,
            23 => Kind::Meta,
            31 => Kind::Forward,
            k => unreachable!("corrupt header kind {k}"),
        }
    }

    /// Which payload words (offset from the first word after the header,
    /// and count) hold terms, given the arity.
    #[inline]
    pub(crate) fn term_slots(self, arity: usize) -> (usize, usize) {
        match self {
            Kind::Vector
            | Kind::Map
            | Kind::HamtMap
            | Kind::HamtNode
            | Kind::HamtColl
            | Kind::Set
            | Kind::SortedMap
            | Kind::SortedSet
            | Kind::Meta
            | Kind::Regex => (0, arity),
            Kind::Closure => (1, arity - 1),
            _ => (0, 0),
        }
    }
}

/// The marker left in the car of a cons cell that a collection has moved.
pub(crate) const FORWARD_CONS: u64 = header(Kind::Forward, 0);

#[inline]
pub(crate) const fn header(kind: Kind, arity: usize) -> u64 {
    assert!(arity as u64 <= MAX_ARITY, "object too large");
    ((arity as u64) << 8) | ((kind as u64) << 3) | TAG_HEADER
}

#[inline]
pub(crate) fn header_arity(h: u64) -> usize {
    (h >> 8) as usize
}

#[inline]
pub(crate) fn is_header(w: u64) -> bool {
    w & TAG_MASK == TAG_HEADER
}

/// Whether a word is a pointer (boxed or cons).
#[inline]
pub(crate) fn is_ptr(w: u64) -> bool {
    w & 0b110 == 0
}

/// The address a pointer word refers to.
#[inline]
pub(crate) fn ptr_of(w: u64) -> *mut u64 {
    (w & !TAG_MASK) as usize as *mut u64
}

/// A process identifier as the runtime hands it over: an opaque `u64`,
/// by convention index in the low 32 bits and generation in the high 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pid(pub u64);

impl Pid {
    /// A pid from its slot index and generation.
    pub fn new(index: u32, generation: u32) -> Pid {
        Pid(((generation as u64) << 32) | index as u64)
    }
    /// The process-table slot.
    pub fn index(self) -> u32 {
        self.0 as u32
    }
    /// The slot's generation.
    pub fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// A term word with no lifetime attached.
///
/// It is what an interpreter may keep in a register file it owns itself. A
/// `RawTerm` that points into a heap is only meaningful until that heap's
/// next collection, unless it is passed to the collection as a root; turning
/// it back into a [`Term`] is therefore `unsafe` ([`crate::Heap::term`]).
///
/// Its word is private: safe code gets a `RawTerm` only from a real term
/// ([`Term::raw`]), and making one from bits is `unsafe`
/// ([`RawTerm::from_raw`]), so no safe path hands the VM a forged pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct RawTerm(pub(crate) u64);

impl RawTerm {
    /// A raw term from its word.
    ///
    /// # Safety
    /// `bits` must be a valid term word: an immediate (as the layout in
    /// the module docs defines it), or a pointer word into a live heap,
    /// fragment or the permanent area, tagged as the object it points to
    /// is. Every function that reads a `RawTerm` back (the VM, the
    /// collector's roots, [`crate::Heap::term`]) relies on it.
    #[inline(always)]
    pub const unsafe fn from_raw(bits: u64) -> RawTerm {
        RawTerm(bits)
    }

    /// The word.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// A Lonala value: one tagged 64-bit word (layout in the module docs).
///
/// The lifetime `'h` is a shared borrow of the heap (or fragment) that holds
/// the value's objects. A collection needs `&mut Heap`, so the borrow checker
/// refuses any use of a `Term<'h>` across a collection: values that must
/// survive are kept in the heap's roots, registers or stack and read back
/// afterwards. Immediates need no heap and are `Term<'static>`.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Term<'h> {
    bits: u64,
    _heap: PhantomData<&'h ()>,
}

impl Term<'static> {
    /// `nil`.
    pub const NIL: Term<'static> = Term::imm(NIL);
    /// `true`.
    pub const TRUE: Term<'static> = Term::imm(TRUE);
    /// `false`.
    pub const FALSE: Term<'static> = Term::imm(FALSE);
    /// The empty list `()`, the end of every proper list.
    pub const EMPTY_LIST: Term<'static> = Term::imm(EMPTY_LIST);

    const fn imm(bits: u64) -> Term<'static> {
        Term {
            bits,
            _heap: PhantomData,
        }
    }

    /// A boolean.
    pub fn bool(b: bool) -> Term<'static> {
        if b {
            Term::TRUE
        } else {
            Term::FALSE
        }
    }

    /// An integer if it fits an immediate (see [`SMALL_INT_MIN`]);
    /// [`crate::Heap::int`] takes any integer.
    pub fn small_int(v: i64) -> Option<Term<'static>> {
        if (SMALL_INT_MIN..=SMALL_INT_MAX).contains(&v) {
            Some(Term::imm(((v as u64) << 3) | TAG_SMALL))
        } else {
            None
        }
    }

    /// A keyword the code spells out (`Term::keyword("badarg")`), as
    /// [`Atom::new`] interns it: the runtime's own names exist from the
    /// start ([`crate::RUNTIME_ATOMS`]), so these never fail.
    ///
    /// # Panics
    /// If the atom table and its reserve are full; for names from data
    /// use [`Term::try_keyword`].
    pub fn keyword(name: &str) -> Term<'static> {
        Term::keyword_atom(Atom::new(name))
    }

    /// A keyword whose name comes from data: fails when the atom table is
    /// full or the name too long ([`Atom::try_new`]).
    pub fn try_keyword(name: &str) -> Result<Term<'static>, crate::AtomError> {
        Atom::try_new(name).map(Term::keyword_atom)
    }

    /// A symbol whose name comes from data (see [`Term::try_keyword`]).
    pub fn try_symbol(name: &str) -> Result<Term<'static>, crate::AtomError> {
        Atom::try_new(name).map(Term::symbol_atom)
    }

    /// A keyword from an interned atom.
    pub fn keyword_atom(a: Atom) -> Term<'static> {
        Term::imm(((a.index() as u64) << 32) | SUB_KEYWORD)
    }

    /// A symbol the code spells out (see [`Term::keyword`]).
    ///
    /// # Panics
    /// If the atom table and its reserve are full.
    pub fn symbol(name: &str) -> Term<'static> {
        Term::symbol_atom(Atom::new(name))
    }

    /// A symbol from an interned atom.
    pub fn symbol_atom(a: Atom) -> Term<'static> {
        Term::imm(((a.index() as u64) << 32) | SUB_SYMBOL)
    }

    /// A pid if it fits an immediate ([`IMMEDIATE_PID_MAX`]);
    /// [`crate::Heap::pid`] takes any pid.
    pub fn local_pid(p: Pid) -> Option<Term<'static>> {
        if p.0 <= IMMEDIATE_PID_MAX {
            Some(Term::imm((p.0 << 3) | TAG_PID))
        } else {
            None
        }
    }
}

impl<'h> Term<'h> {
    /// Wraps a word.
    ///
    /// # Safety
    /// If `bits` is a pointer (primary tag `000` or `001`), it must point to a
    /// well-formed object that stays valid and unmoved for `'h`: in practice,
    /// a word read from a live heap or fragment that is borrowed for `'h`.
    #[inline]
    pub(crate) const unsafe fn from_bits(bits: u64) -> Term<'h> {
        Term {
            bits,
            _heap: PhantomData,
        }
    }

    /// The raw word.
    #[inline]
    pub fn bits(self) -> u64 {
        self.bits
    }

    /// The word without its lifetime, for storage the collector does not
    /// know about (see [`RawTerm`]).
    #[inline]
    pub fn raw(self) -> RawTerm {
        RawTerm(self.bits)
    }

    /// Whether the term needs no heap (not a pointer).
    #[inline]
    pub fn is_immediate(self) -> bool {
        !is_ptr(self.bits)
    }

    /// Whether two terms are the same word (identity, not equality).
    #[inline]
    pub fn same(self, other: Term<'_>) -> bool {
        self.bits == other.bits
    }

    #[inline]
    pub(crate) fn tag(self) -> u64 {
        self.bits & TAG_MASK
    }

    /// The value of a small integer immediate.
    #[inline]
    pub(crate) fn small_value(self) -> Option<i64> {
        (self.tag() == TAG_SMALL).then_some((self.bits as i64) >> 3)
    }

    /// The header of a boxed term.
    #[inline]
    pub(crate) fn boxed_header(self) -> Option<u64> {
        if self.tag() == TAG_BOXED {
            // SAFETY: a boxed Term<'h> points at a live header word for 'h
            // (invariant of `from_bits`).
            Some(unsafe { *ptr_of(self.bits) })
        } else {
            None
        }
    }

    /// Word `i` after the header of a boxed term.
    ///
    /// # Safety
    /// `self` must be boxed and `i` below its arity.
    #[inline]
    pub(crate) unsafe fn payload(self, i: usize) -> u64 {
        // SAFETY: by the caller's contract the word is inside the object.
        unsafe { *ptr_of(self.bits).add(1 + i) }
    }

    /// The payload words `[from, from + n)` as terms.
    ///
    /// # Safety
    /// `self` must be boxed and the range inside its payload and made of terms.
    #[inline]
    pub(crate) unsafe fn payload_terms(self, from: usize, n: usize) -> &'h [Term<'h>] {
        // SAFETY: caller guarantees the range is in the object, which lives
        // for 'h and is immutable while the heap is shared-borrowed; Term is
        // repr(transparent) over u64.
        unsafe { std::slice::from_raw_parts(ptr_of(self.bits).add(1 + from) as *const Term<'h>, n) }
    }

    /// Car and cdr of a cons term.
    #[inline]
    pub(crate) fn cons_parts(self) -> Option<(Term<'h>, Term<'h>)> {
        if self.tag() == TAG_CONS {
            let p = ptr_of(self.bits);
            // SAFETY: a cons Term<'h> points at two live term words for 'h.
            unsafe { Some((Term::from_bits(*p), Term::from_bits(*p.add(1)))) }
        } else {
            // A list with metadata (in a tail, too) is a list.
            let inner = self.unmeta();
            if inner.bits == self.bits {
                None
            } else {
                inner.cons_parts()
            }
        }
    }

    /// The atom of a keyword or symbol, and whether it is a symbol.
    #[inline]
    pub(crate) fn atom_parts(self) -> Option<(Atom, bool)> {
        match self.bits & SUB_MASK {
            SUB_KEYWORD => Some((Atom::from_index((self.bits >> 32) as u32), false)),
            SUB_SYMBOL => Some((Atom::from_index((self.bits >> 32) as u32), true)),
            _ => None,
        }
    }

    /// The pid of an immediate pid.
    #[inline]
    pub(crate) fn imm_pid(self) -> Option<Pid> {
        (self.tag() == TAG_PID).then_some(Pid(self.bits >> 3))
    }
}

// Reading a value with metadata (`meta.rs`): here, below every module
// that looks through it.
impl<'h> Term<'h> {
    /// Whether this is a value with metadata: one compare of the header's
    /// low byte (kind and tag), as every built-in argument asks it.
    #[inline(always)]
    fn is_meta(self) -> bool {
        const LOW: u64 = ((Kind::Meta as u64) << 3) | TAG_HEADER;
        self.boxed_header().is_some_and(|h| h & 0xff == LOW)
    }

    /// The value without its metadata (the term itself if it has none).
    #[inline(always)]
    pub fn unmeta(self) -> Term<'h> {
        if self.is_meta() {
            // SAFETY: a Meta object's payload word 0 is its value, a term
            // alive as long as it.
            unsafe { Term::from_bits(self.payload(0)) }
        } else {
            self
        }
    }

    /// The metadata (`nil` if the term has none).
    #[inline]
    pub fn meta(self) -> Term<'h> {
        if self.is_meta() {
            // SAFETY: a Meta object's payload word 1 is its map.
            unsafe { Term::from_bits(self.payload(1)) }
        } else {
            Term::NIL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<Term<'_>>(), 8);
        assert_eq!(std::mem::size_of::<Option<RawTerm>>(), 16);
        assert_eq!(std::mem::size_of::<RawTerm>(), 8);
    }

    #[test]
    fn small_int_range() {
        for v in [0, 1, -1, SMALL_INT_MIN, SMALL_INT_MAX, 42, -42] {
            assert_eq!(Term::small_int(v).unwrap().small_value(), Some(v));
        }
        assert!(Term::small_int(SMALL_INT_MAX + 1).is_none());
        assert!(Term::small_int(SMALL_INT_MIN - 1).is_none());
        // at least 60 bits of magnitude
        const { assert!(SMALL_INT_MAX >= (1 << 59)) };
    }

    #[test]
    fn tags_are_distinct() {
        let words = [
            Term::NIL.bits(),
            Term::TRUE.bits(),
            Term::FALSE.bits(),
            Term::EMPTY_LIST.bits(),
            Term::small_int(0).unwrap().bits(),
            Term::keyword("a").bits(),
            Term::symbol("a").bits(),
            Term::local_pid(Pid(0)).unwrap().bits(),
        ];
        for (i, a) in words.iter().enumerate() {
            assert!(!is_ptr(*a));
            assert!(!is_header(*a));
            for b in &words[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(is_header(FORWARD_CONS));
    }

    #[test]
    fn pid_immediate_holds_61_bits() {
        let p = Pid::new(u32::MAX, (1 << 29) - 1);
        assert_eq!(Term::local_pid(p).unwrap().imm_pid(), Some(p));
        assert!(Term::local_pid(Pid::new(0, 1 << 29)).is_none());
        assert_eq!(p.index(), u32::MAX);
        assert_eq!(p.generation(), (1 << 29) - 1);
    }

    #[test]
    fn header_roundtrip() {
        let h = header(Kind::Vector, 12345);
        assert!(is_header(h));
        assert_eq!(Kind::from_header(h), Kind::Vector);
        assert_eq!(header_arity(h), 12345);
        let h = header(Kind::Map, MAX_ARITY as usize);
        assert_eq!(header_arity(h), MAX_ARITY as usize);
        assert_eq!(Kind::from_header(h), Kind::Map);
    }
}
