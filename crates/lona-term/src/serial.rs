//! What the two serialized forms share: Lona's own (`codec.rs`) and
//! Erlang's external term format (`etf.rs`).
//!
//! * [`DecodeError`]: why input is refused, one type for both decoders.
//! * [`AtomBudget`]: how many new atoms a source may add to the node's
//!   never-freed atom table.
//! * `Reader`: the input, read without trusting a declared length (the
//!   encodings of numbers differ, so each form adds its own: varints in
//!   `codec.rs`, big-endian integers in `etf.rs`).
//! * `Stack`: a decoder's open containers and their elements so far, on
//!   one shared item stack, building each container once it is complete.
//! * `Walk`: an encoder's walk over a term with an explicit stack, so that
//!   no depth or length overflows the native stack.
//!
//! The rules both decoders follow (nothing trusted, no memory reserved
//! from a declared length, no recursion, new atoms only within a budget)
//! are in `codec.rs`'s module documentation.

use num_bigint::{BigInt, BigUint, Sign};

use crate::atom::{check_len, Atom, AtomError};
use crate::cmp::{compare, equal};
use crate::heap::Heap;
use crate::term::{Term, MAX_REF_IDS};
use crate::view::MapView;

/// Why a byte string is not a term this crate decodes: Lona's own form
/// ([`crate::decode`], [`crate::decode_with`]) or Erlang's external term
/// format ([`crate::etf::decode`] and the rest). Variants only one of them
/// gives say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ended in the middle of a term.
    UnexpectedEnd,
    /// Lona's form: the input does not start with the magic bytes and
    /// version.
    BadMagic,
    /// Erlang's: the first byte is not the version, 131.
    BadVersion,
    /// A tag the format does not define.
    UnknownTag(u8),
    /// Erlang's: a tag the format defines that Lonala cannot take (yet):
    /// its name.
    Unsupported(&'static str),
    /// Erlang's: a compressed term (tag 80): not accepted.
    Compressed,
    /// Lona's form: a varint longer than 64 bits.
    VarintOverflow,
    /// A length or arity larger than the remaining input could hold.
    LengthTooLarge,
    /// A string, keyword, symbol or UTF-8 atom that is not UTF-8.
    InvalidUtf8,
    /// Lona's form: a list entry with zero elements (must be encoded as
    /// `()`).
    EmptyList,
    /// A map with two equal keys, or a set with two equal elements.
    DuplicateKey,
    /// A big integer with a sign byte other than 0 or 1.
    BadSign,
    /// Erlang's: a float that is not finite, or a `FLOAT_EXT` that is no
    /// number.
    BadFloat,
    /// Erlang's: a bit string with 0 or more than 8 bits in its last
    /// byte, or bits and no byte.
    NotWholeBytes,
    /// Bytes after the term.
    TrailingBytes,
    /// The node's atom table is full.
    AtomTableFull,
    /// A keyword, symbol or atom that does not exist, and the decoder may
    /// make no new one (see [`AtomBudget`]).
    UnknownAtom,
    /// A keyword, symbol or atom name longer than 255 characters.
    AtomTooLong,
    /// Lona's form: tag 14, a function: functions never cross the codec.
    Function,
    /// Lona's form: a pid or reference of another node with a number over
    /// 2^32 - 1, or a reference with no id word or more than
    /// [`MAX_REF_IDS`].
    BadNodeId,
    /// Erlang's: a pid's or reference's node that is not an atom.
    BadNode,
    /// Erlang's: a reference with no id word or more than
    /// [`MAX_REF_IDS`].
    BadRefLength,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Unsupported(what) => {
                write!(f, "external term format: {what} is not supported")
            }
            DecodeError::Compressed => {
                f.write_str("external term format: compressed terms are not accepted")
            }
            DecodeError::BadNode => {
                f.write_str("malformed external term: a pid's or reference's node is not an atom")
            }
            DecodeError::BadRefLength => write!(
                f,
                "malformed external term: a reference has 1 to {MAX_REF_IDS} id words"
            ),
            e @ (DecodeError::BadVersion | DecodeError::BadFloat | DecodeError::NotWholeBytes) => {
                write!(f, "malformed external term: {e:?}")
            }
            e => write!(f, "malformed term encoding: {e:?}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// How many new keywords and symbols a decoder may add to the node's atom
/// table (which is never freed). Keep one per outside source, across its
/// messages, so that source can add at most that many.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomBudget {
    left: usize,
}

impl AtomBudget {
    /// No new atoms: only names that already exist decode (what
    /// [`crate::decode`] uses).
    pub fn none() -> AtomBudget {
        AtomBudget { left: 0 }
    }

    /// At most `n` new atoms.
    pub fn new(n: usize) -> AtomBudget {
        AtomBudget { left: n }
    }

    /// As many as the table takes: for input this node made itself.
    pub fn unlimited() -> AtomBudget {
        AtomBudget { left: usize::MAX }
    }

    /// New atoms still allowed.
    pub fn remaining(&self) -> usize {
        self.left
    }

    /// The atom `name`, new only if the budget allows it.
    pub(crate) fn atom(&mut self, name: &str) -> Result<Atom, DecodeError> {
        if let Some(a) = Atom::existing(name) {
            return Ok(a);
        }
        if self.left == 0 {
            // A too long name would fail anyway: say so.
            return Err(match check_len(name) {
                Err(_) => DecodeError::AtomTooLong,
                Ok(()) => DecodeError::UnknownAtom,
            });
        }
        match Atom::try_new_counted(name) {
            Ok((a, created)) => {
                if created {
                    self.left -= 1;
                }
                Ok(a)
            }
            Err(AtomError::TooLong) => Err(DecodeError::AtomTooLong),
            Err(AtomError::TableFull) => Err(DecodeError::AtomTableFull),
        }
    }
}

/// The input of a decoder. Every read checks that its bytes are there;
/// nothing is reserved from a length before [`Reader::fits`] says the
/// input can hold what it declares.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    /// Bytes read so far.
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// The next `n` bytes ([`DecodeError::UnexpectedEnd`] if fewer are
    /// left).
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(DecodeError::UnexpectedEnd);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    /// Checks that `n` items of at least `per` bytes each, plus `extra`
    /// bytes, can still be in the input ([`DecodeError::LengthTooLarge`]
    /// if not).
    pub(crate) fn fits(&self, n: usize, per: usize, extra: usize) -> Result<usize, DecodeError> {
        let bytes = n
            .checked_mul(per)
            .and_then(|b| b.checked_add(extra))
            .ok_or(DecodeError::LengthTooLarge)?;
        if bytes > self.remaining() {
            return Err(DecodeError::LengthTooLarge);
        }
        Ok(n)
    }
    /// `n` bytes, after checking that they are there.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        self.fits(n, 1, 0)?;
        self.take(n)
    }
}

/// The sign of a big integer from its sign byte (0 or 1).
pub(crate) fn sign(b: u8) -> Result<Sign, DecodeError> {
    match b {
        0 => Ok(Sign::Plus),
        1 => Ok(Sign::Minus),
        _ => Err(DecodeError::BadSign),
    }
}

/// The integer of `sign` and magnitude `le` (little-endian bytes), in its
/// canonical form.
pub(crate) fn bigint<'h>(heap: &'h Heap, sign: Sign, le: &[u8]) -> Term<'h> {
    heap.bigint(&BigInt::from_biguint(sign, BigUint::from_bytes_le(le)))
}

/// The kind of a container being decoded.
pub(crate) enum Open {
    /// A vector (Erlang's tuple).
    Vector,
    /// A list: its elements, then its tail.
    List,
    /// A map: keys and values alternating.
    Map,
    /// A set (Lona's form only).
    Set,
}

/// A container whose elements are still being read. Its elements so far are
/// `items[start..]` of the decoder's single item stack, shared by all open
/// containers, and it is complete when there are `need` of them.
///
/// No memory is reserved from a declared length: a frame takes a fixed
/// number of bytes, and the item stack grows only as elements are actually
/// decoded, each from at least one byte of input. Nested containers each
/// pass the length check against the same remaining bytes, so reserving
/// even a capped amount per container would multiply (a truncated input of
/// 4-byte headers once reserved 8 KiB per header).
struct Frame {
    open: Open,
    need: usize,
    start: usize,
}

/// A decoder's open containers (innermost last) and their elements so far.
pub(crate) struct Stack<'h> {
    open: Vec<Frame>,
    items: Vec<Term<'h>>,
}

impl<'h> Stack<'h> {
    pub(crate) fn new() -> Stack<'h> {
        Stack {
            open: Vec::new(),
            items: Vec::new(),
        }
    }

    /// Opens a container complete after `need` (at least 1) elements (a
    /// list's tail counts as one, a map's key and value as two).
    pub(crate) fn open(&mut self, open: Open, need: usize) {
        self.open.push(Frame {
            open,
            need,
            start: self.items.len(),
        });
    }

    /// Adds a decoded value to the innermost open container, building each
    /// container it completes: the whole term once no container is left
    /// open, else `None` (more elements to read).
    pub(crate) fn add(
        &mut self,
        heap: &'h Heap,
        mut v: Term<'h>,
    ) -> Result<Option<Term<'h>>, DecodeError> {
        loop {
            let Some(top) = self.open.last() else {
                return Ok(Some(v));
            };
            self.items.push(v);
            if self.items.len() - top.start < top.need {
                return Ok(None);
            }
            let f = self.open.pop().expect("frame");
            v = build(heap, f.open, &self.items[f.start..])?;
            self.items.truncate(f.start);
        }
    }
}

/// The container `open` of its decoded elements.
fn build<'h>(heap: &'h Heap, open: Open, items: &[Term<'h>]) -> Result<Term<'h>, DecodeError> {
    Ok(match open {
        Open::Vector => heap.vector(items),
        Open::List => {
            let (elems, tail) = items.split_at(items.len() - 1);
            heap.list_with_tail(elems, tail[0])
        }
        Open::Set => {
            let mut v = items.to_vec();
            v.sort_by(|a, b| compare(*a, *b));
            if v.windows(2).any(|w| equal(w[0], w[1])) {
                return Err(DecodeError::DuplicateKey);
            }
            heap.set(&v)
        }
        Open::Map => {
            let mut pairs: Vec<(Term<'h>, Term<'h>)> =
                items.chunks_exact(2).map(|c| (c[0], c[1])).collect();
            pairs.sort_by(|a, b| compare(a.0, b.0));
            if pairs.windows(2).any(|w| equal(w[0].0, w[1].0)) {
                return Err(DecodeError::DuplicateKey);
            }
            heap.map(&pairs)
        }
    })
}

enum Task<'h> {
    Term(Term<'h>),
    /// Remaining `n` elements of a list starting at this cons, then its tail.
    List(Term<'h>, usize),
}

/// An encoder's walk over a term: each subterm once, a container before
/// its elements, a list's elements before its tail, with an explicit
/// stack. An encoder writes what [`Iterator::next`] gives, and for a
/// container its header, then asks the walk to visit the elements next
/// ([`Walk::items`], [`Walk::list`], [`Walk::entries`]).
pub(crate) struct Walk<'h> {
    todo: Vec<Task<'h>>,
}

impl<'h> Walk<'h> {
    pub(crate) fn new(t: Term<'h>) -> Walk<'h> {
        Walk {
            todo: vec![Task::Term(t)],
        }
    }

    /// Visits `items` next, in order.
    pub(crate) fn items(&mut self, items: &[Term<'h>]) {
        self.todo.extend(items.iter().rev().map(|x| Task::Term(*x)));
    }

    /// Visits the elements of the list `t` (a cons) next, in order, then
    /// its tail; returns how many elements it has.
    pub(crate) fn list(&mut self, t: Term<'h>) -> usize {
        let n = t.list_iter().count();
        self.todo.push(Task::List(t, n));
        n
    }

    /// Visits the entries of `m` next, in [`MapView::iter`] order: each
    /// key, then its value.
    pub(crate) fn entries(&mut self, m: MapView<'h>) {
        for (k, v) in m.iter().collect::<Vec<_>>().into_iter().rev() {
            self.todo.push(Task::Term(v));
            self.todo.push(Task::Term(k));
        }
    }
}

impl<'h> Iterator for Walk<'h> {
    type Item = Term<'h>;

    fn next(&mut self) -> Option<Term<'h>> {
        Some(match self.todo.pop()? {
            Task::List(cur, 0) => cur,
            Task::List(cur, n) => {
                let (h, rest) = cur.cons_parts().expect("counted cons");
                self.todo.push(Task::List(rest, n - 1));
                h
            }
            Task::Term(t) => t,
        })
    }
}
