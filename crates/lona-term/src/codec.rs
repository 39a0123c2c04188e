//! A compact serialized form of terms, and a decoder that never trusts it.
//!
//! ```text
//! encoding := 'L' 0x01 term
//! term     := 0 nil | 1 false | 2 true | 3 ()
//!           | 4 zigzag-varint                      integer in i64 range
//!           | 5 sign:u8 n:varint byte*n             big integer, magnitude LE
//!           | 6 f64-le(8)                           float
//!           | 7 n:varint utf8*n                     keyword (by name)
//!           | 8 n:varint utf8*n                     symbol
//!           | 9 n:varint utf8*n                     string
//!           | 10 n:varint byte*n                    binary
//!           | 11 n:varint term*n                    vector
//!           | 12 n:varint term*n tail:term          list of n >= 1 elements
//!           | 13 n:varint (key value)*n             map, unique keys
//!           | 14                                    reserved: functions never cross
//!           | 15 varint                             pid
//!           | 16 varint                             reference
//!           | 17 n:varint utf8*n id serial creation  pid of another node (node
//!                                                  name, then three varints < 2^32)
//!           | 18 n:varint utf8*n creation k:varint id*k
//!                                                  reference of another node
//!                                                  (varints < 2^32, 1 <= k <= 5)
//!           | 20 n:varint term*n                    set, unique elements
//!           | 21 n:varint utf8*n                    regex (its source)
//! ```
//!
//! # What the decoder trusts: nothing
//!
//! Every term it makes is built with the heap's safe constructors from
//! values it checked; no word of the input is ever used as a pointer or an
//! address.
//!
//! * **Functions do not cross.** A function is code of this node (its
//!   word points at compiled code), so [`encode`] refuses a term holding
//!   one ([`EncodeError::Function`]) and [`decode`] rejects tag 14
//!   ([`DecodeError::Function`]). To ask another node or a stored record
//!   to run something, send data that names it: a var's qualified symbol
//!   and the arguments, resolved by the receiver (Erlang's `{M, F, A}`).
//! * **Pids and references** are plain numbers (a process-table index and
//!   generation, a reference id). Any value is harmless: a pid that names
//!   no live process reaches nobody, a reference matches only the equal
//!   one. They can be forged, as in Erlang's external term format.
//!   Pids and references of other nodes (tags 17, 18) carry their node's
//!   name, which is an atom like any keyword's (same [`AtomBudget`]), and
//!   numbers checked to fit 32 bits; a reference has 1 to
//!   [`crate::MAX_REF_IDS`] id words ([`DecodeError::BadNodeId`]).
//! * **Keywords and symbols** are names in the node's atom table
//!   (`atom.rs`), which is never freed. [`decode`] only accepts names that
//!   already exist ([`DecodeError::UnknownAtom`] otherwise), like Erlang's
//!   `binary_to_term(B, [safe])`; [`decode_with`] takes an [`AtomBudget`]
//!   of new atoms the caller lets this source create (one budget per peer
//!   or file, kept across its messages), so an outside source can add at
//!   most that many. A name longer than 255 characters is rejected
//!   ([`DecodeError::AtomTooLong`]), and a full table is an error
//!   ([`DecodeError::AtomTableFull`]), never a panic.
//! * **Lengths** never reserve memory: the decoder is iterative (an
//!   explicit stack of open containers, so deep nesting cannot overflow
//!   the native stack), checks every length against the bytes left, and
//!   copies strings, binaries and big integers only once their bytes are
//!   known to be present; container elements go on one shared stack that
//!   grows only as elements are decoded, so memory stays linear in the
//!   input even when it is truncated inside many nested containers that
//!   each claim the rest.
//! * It validates UTF-8, rejects duplicate map keys, empty `12` lists and
//!   trailing bytes, and reports every problem as a [`DecodeError`].

use num_bigint::Sign;

use crate::heap::Heap;
use crate::serial::{bigint, sign, AtomBudget, DecodeError, Open, Reader, Stack, Walk};
use crate::term::{Term, EMPTY_LIST, FALSE, MAX_REF_IDS, NIL, TRUE};
use crate::view::View;

const MAGIC: [u8; 2] = [b'L', 1];

/// Why a term cannot be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The term holds a function, which cannot leave the node (see the
    /// module documentation).
    Function,
    /// The term holds a cell (an atom), which is the node's alone.
    Cell,
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Function => f.write_str("a function cannot be encoded"),
            EncodeError::Cell => f.write_str("an atom cannot be encoded"),
        }
    }
}

impl std::error::Error for EncodeError {}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, tag: u8, b: &[u8]) {
    out.push(tag);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Serializes a term; a term holding a function cannot be serialized.
pub fn encode(t: Term<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut out = MAGIC.to_vec();
    let mut walk = Walk::new(t);
    while let Some(t) = walk.next() {
        match t.view() {
            View::Nil => out.push(0),
            View::Bool(false) => out.push(1),
            View::Bool(true) => out.push(2),
            View::EmptyList => out.push(3),
            View::Int(i) => {
                out.push(4);
                put_varint(&mut out, ((i << 1) ^ (i >> 63)) as u64);
            }
            View::BigInt(b) => match i64::try_from(&b) {
                Ok(i) => {
                    out.push(4);
                    put_varint(&mut out, ((i << 1) ^ (i >> 63)) as u64);
                }
                Err(_) => {
                    out.push(5);
                    out.push(u8::from(b.sign() == Sign::Minus));
                    let mag = b.magnitude().to_bytes_le();
                    put_varint(&mut out, mag.len() as u64);
                    out.extend_from_slice(&mag);
                }
            },
            View::Float(f) => {
                out.push(6);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            View::Keyword(a) => put_bytes(&mut out, 7, a.name().as_bytes()),
            View::Symbol(a) => put_bytes(&mut out, 8, a.name().as_bytes()),
            View::Str(s) => put_bytes(&mut out, 9, s.as_bytes()),
            View::Binary(b) => put_bytes(&mut out, 10, b),
            View::Vector(items) => {
                out.push(11);
                put_varint(&mut out, items.len() as u64);
                walk.items(items);
            }
            View::Cons(..) => {
                let n = walk.list(t);
                out.push(12);
                put_varint(&mut out, n as u64);
            }
            View::Map(m) => {
                out.push(13);
                put_varint(&mut out, m.len() as u64);
                walk.entries(m);
            }
            View::Closure { .. } => return Err(EncodeError::Function),
            View::Cell(_) => return Err(EncodeError::Cell),
            // Metadata stays on the node (`meta.rs`, rule 1).
            View::Meta { value, .. } => walk.items(&[value]),
            View::Pid(p) => {
                out.push(15);
                put_varint(&mut out, p.0);
            }
            View::Ref(r) => {
                out.push(16);
                put_varint(&mut out, r);
            }
            View::ExtPid {
                node,
                id,
                serial,
                creation,
            } => {
                put_bytes(&mut out, 17, node.name().as_bytes());
                for n in [id, serial, creation] {
                    put_varint(&mut out, n.into());
                }
            }
            View::ExtRef {
                node,
                creation,
                ids,
            } => {
                put_bytes(&mut out, 18, node.name().as_bytes());
                put_varint(&mut out, creation.into());
                put_varint(&mut out, ids.len() as u64);
                for n in ids.iter() {
                    put_varint(&mut out, (*n).into());
                }
            }
            View::Set(m) => {
                out.push(20);
                put_varint(&mut out, m.len() as u64);
                let keys: Vec<Term<'_>> = m.iter().map(|(k, _)| k).collect();
                walk.items(&keys);
            }
            View::Regex(s) => put_bytes(&mut out, 21, s.as_bytes()),
        }
    }
    Ok(out)
}

/// Lona's form's numbers and names: varints, counts and UTF-8 text.
impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err(DecodeError::VarintOverflow);
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::VarintOverflow)
    }
    /// A count of items each taking at least `per` bytes, plus `extra`
    /// bytes, checked against the input left.
    fn count(&mut self, per: usize, extra: usize) -> Result<usize, DecodeError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| DecodeError::LengthTooLarge)?;
        self.fits(n, per, extra)
    }
    /// A varint that must fit 32 bits (a field of another node's pid or
    /// reference).
    fn varint_u32(&mut self) -> Result<u32, DecodeError> {
        u32::try_from(self.varint()?).map_err(|_| DecodeError::BadNodeId)
    }
    fn text(&mut self) -> Result<&'a str, DecodeError> {
        let n = self.count(1, 0)?;
        std::str::from_utf8(self.take(n)?).map_err(|_| DecodeError::InvalidUtf8)
    }
}

/// Decodes an encoding made by [`encode`] into `heap`, accepting only
/// keywords and symbols that exist (see the module documentation).
pub fn decode<'h>(heap: &'h Heap, bytes: &[u8]) -> Result<Term<'h>, DecodeError> {
    decode_with(heap, bytes, &mut AtomBudget::none())
}

/// [`decode`], letting the input add up to `atoms`' remaining count of new
/// keywords and symbols to the node's atom table (and counting them off).
pub fn decode_with<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
) -> Result<Term<'h>, DecodeError> {
    let mut r = Reader::new(bytes);
    if r.take(2).map_err(|_| DecodeError::BadMagic)? != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let mut stack = Stack::new();
    loop {
        let tag = r.u8()?;
        // SAFETY: the constants are immediates.
        let imm = |bits| unsafe { heap.wrap(bits) };
        let value = match tag {
            0 => imm(NIL),
            1 => imm(FALSE),
            2 => imm(TRUE),
            3 => imm(EMPTY_LIST),
            4 => {
                let z = r.varint()?;
                heap.int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            5 => {
                let sign = sign(r.u8()?)?;
                let n = r.count(1, 0)?;
                bigint(heap, sign, r.take(n)?)
            }
            6 => heap.float(f64::from_le_bytes(r.array()?)),
            7 | 8 => {
                let a = atoms.atom(r.text()?)?;
                if tag == 7 {
                    Term::keyword_atom(a)
                } else {
                    Term::symbol_atom(a)
                }
            }
            9 => heap.string(r.text()?),
            10 => {
                let n = r.count(1, 0)?;
                heap.binary(r.take(n)?)
            }
            11 => match r.count(1, 0)? {
                0 => heap.vector(&[]),
                n => {
                    stack.open(Open::Vector, n);
                    continue;
                }
            },
            12 => match r.count(1, 1)? {
                0 => return Err(DecodeError::EmptyList),
                n => {
                    stack.open(Open::List, n + 1);
                    continue;
                }
            },
            13 => match r.count(2, 0)? {
                0 => heap.map(&[]),
                n => {
                    stack.open(Open::Map, 2 * n);
                    continue;
                }
            },
            14 => return Err(DecodeError::Function),
            15 => heap.pid(crate::Pid(r.varint()?)),
            16 => heap.reference(r.varint()?),
            17 => {
                let node = atoms.atom(r.text()?)?;
                let (id, serial, creation) = (r.varint_u32()?, r.varint_u32()?, r.varint_u32()?);
                heap.ext_pid(node, id, serial, creation)
            }
            18 => {
                let node = atoms.atom(r.text()?)?;
                let creation = r.varint_u32()?;
                let n = r.count(1, 0)?;
                if !(1..=MAX_REF_IDS).contains(&n) {
                    return Err(DecodeError::BadNodeId);
                }
                let mut ids = [0u32; MAX_REF_IDS];
                for w in &mut ids[..n] {
                    *w = r.varint_u32()?;
                }
                heap.ext_ref(node, creation, &ids[..n])
            }
            20 => match r.count(1, 0)? {
                0 => heap.set(&[]),
                n => {
                    stack.open(Open::Set, n);
                    continue;
                }
            },
            21 => heap.regex(r.text()?),
            t => return Err(DecodeError::UnknownTag(t)),
        };
        if let Some(t) = stack.add(heap, value)? {
            return if r.remaining() == 0 {
                Ok(t)
            } else {
                Err(DecodeError::TrailingBytes)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::Atom;

    #[test]
    fn roundtrip_and_errors() {
        let h = Heap::new();
        let t = h.vector(&[
            Term::keyword("ok"),
            h.int(-5),
            h.list_with_tail(&[h.int(1)], h.int(2)),
            h.map(&[(h.string("k"), h.float(1.5))]),
        ]);
        let bytes = encode(t).unwrap();
        assert_eq!(decode(&h, &bytes).unwrap(), t);
        let s = h.vector(&[
            h.set(&[h.int(1), h.string("a"), h.set(&[])]),
            h.regex("a+b"),
        ]);
        let d = decode(&h, &encode(s).unwrap()).unwrap();
        assert_eq!(d, s);
        assert_eq!(d.to_string(), "[#{1 #{} \"a\"} #\"a+b\"]");
        assert_eq!(
            decode(&h, b"L\x01\x14\x02\x00\x00"),
            Err(DecodeError::DuplicateKey)
        );
        assert_eq!(decode(&h, &[]), Err(DecodeError::BadMagic));
        assert_eq!(decode(&h, b"L\x01"), Err(DecodeError::UnexpectedEnd));
        assert_eq!(decode(&h, b"L\x01\x63"), Err(DecodeError::UnknownTag(0x63)));
        assert_eq!(
            decode(&h, b"L\x01\x00\x00"),
            Err(DecodeError::TrailingBytes)
        );
        assert_eq!(
            decode(&h, b"L\x01\x0b\xff\xff\xff\xff\x0f"),
            Err(DecodeError::LengthTooLarge)
        );
        assert_eq!(
            decode(&h, b"L\x01\x0c\x00\x03"),
            Err(DecodeError::EmptyList)
        );
        assert_eq!(
            decode(&h, b"L\x01\x09\x01\xff"),
            Err(DecodeError::InvalidUtf8)
        );
        assert_eq!(
            decode(&h, b"L\x01\x0d\x02\x00\x00\x00\x01"),
            Err(DecodeError::DuplicateKey)
        );
        let mut v = b"L\x01\x04".to_vec();
        v.extend([0xff; 11]);
        assert_eq!(decode(&h, &v), Err(DecodeError::VarintOverflow));
    }

    #[test]
    fn other_nodes_pids_and_references() {
        let h = Heap::new();
        let node = Atom::new("codec-test@host");
        let t = h.vector(&[
            h.ext_pid(node, u32::MAX, 0, 3),
            h.ext_ref(node, 3, &[1, 2, 3, 4, u32::MAX]),
            h.ext_ref(node, 0, &[7]),
        ]);
        let bytes = encode(t).unwrap();
        assert_eq!(decode(&h, &bytes).unwrap(), t);
        // the node name is an atom under the budget
        let fresh = "codec-test-never-made@host";
        let mut b = b"L\x01\x11".to_vec();
        b.push(fresh.len() as u8);
        b.extend(fresh.as_bytes());
        b.extend([1, 2, 3]);
        assert_eq!(decode(&h, &b), Err(DecodeError::UnknownAtom));
        assert_eq!(Atom::existing(fresh), None);
        // numbers over 32 bits, and 0 or 6 id words
        let mut b = b"L\x01\x11\x03a@b".to_vec();
        b.extend([0x80, 0x80, 0x80, 0x80, 0x10, 0, 0]);
        Atom::new("a@b");
        assert_eq!(decode(&h, &b), Err(DecodeError::BadNodeId));
        for n in [0u8, 6] {
            let mut b = b"L\x01\x12\x03a@b\x00".to_vec();
            b.push(n);
            b.extend(std::iter::repeat_n(1, usize::from(n)));
            assert_eq!(decode(&h, &b), Err(DecodeError::BadNodeId), "{n} ids");
        }
        // every proper prefix is an error
        for i in 2..bytes.len() {
            assert!(decode(&h, &bytes[..i]).is_err());
        }
    }

    #[test]
    fn deep_nesting_is_iterative() {
        let h = Heap::new();
        let depth = if cfg!(miri) { 200 } else { 200_000 };
        let mut bytes = MAGIC.to_vec();
        for _ in 0..depth {
            bytes.extend([11, 1]);
        }
        bytes.push(0);
        let t = decode(&h, &bytes).unwrap();
        assert_eq!(encode(t).unwrap(), bytes);
        // truncated: error, not a crash
        assert_eq!(
            decode(&h, &bytes[..bytes.len() - 1]),
            Err(DecodeError::LengthTooLarge)
        );
        assert_eq!(
            decode(&h, &bytes[..bytes.len() - 2]),
            Err(DecodeError::UnexpectedEnd)
        );
    }

    /// Issue 17: 11 bytes made a closure with an arbitrary code word, which
    /// the VM dereferenced when it printed the message.
    #[test]
    fn a_function_never_decodes() {
        let h = Heap::new();
        let eleven = b"L\x01\x0e\x80\x80\x80\x80\x80\x80\x01\x00";
        assert_eq!(eleven.len(), 11);
        assert_eq!(decode(&h, eleven), Err(DecodeError::Function));
        // nested, with captured values, or truncated: the same
        assert_eq!(
            decode(&h, b"L\x01\x0b\x02\x00\x0e\x07\x01\x00"),
            Err(DecodeError::Function)
        );
        assert_eq!(decode(&h, b"L\x01\x0e"), Err(DecodeError::Function));
        let mut budget = AtomBudget::unlimited();
        assert_eq!(
            decode_with(&h, eleven, &mut budget),
            Err(DecodeError::Function)
        );
    }

    #[test]
    fn a_function_never_encodes() {
        let h = Heap::new();
        // SAFETY: no interpreter here; the code word is never followed.
        let f = unsafe { h.closure(7, &[h.int(1)]) };
        assert_eq!(encode(f), Err(EncodeError::Function));
        let nested = h.map(&[(Term::keyword("ok"), h.vector(&[h.int(1), f]))]);
        assert_eq!(encode(nested), Err(EncodeError::Function));
    }

    fn kw_bytes(name: &str) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        put_bytes(&mut b, 7, name.as_bytes());
        b
    }

    #[test]
    fn new_atoms_only_within_the_callers_budget() {
        let h = Heap::new();
        // existing names decode without a budget
        assert_eq!(decode(&h, &kw_bytes("normal")), Ok(Term::keyword("normal")));
        // new ones do not, and are not created
        let fresh = |i: u32| format!("codec-test-fresh-{i}");
        assert_eq!(
            decode(&h, &kw_bytes(&fresh(0))),
            Err(DecodeError::UnknownAtom)
        );
        assert_eq!(Atom::existing(&fresh(0)), None);
        let mut sym = MAGIC.to_vec();
        put_bytes(&mut sym, 8, fresh(0).as_bytes());
        assert_eq!(decode(&h, &sym), Err(DecodeError::UnknownAtom));
        // a budget of two across messages: two new names, then no more;
        // names that exist cost nothing
        let mut budget = AtomBudget::new(2);
        let a = decode_with(&h, &kw_bytes(&fresh(1)), &mut budget).unwrap();
        assert_eq!(a.to_string(), format!(":{}", fresh(1)));
        assert_eq!(budget.remaining(), 1);
        decode_with(&h, &kw_bytes(&fresh(1)), &mut budget).unwrap();
        decode_with(&h, &kw_bytes("normal"), &mut budget).unwrap();
        assert_eq!(budget.remaining(), 1);
        decode_with(&h, &kw_bytes(&fresh(2)), &mut budget).unwrap();
        assert_eq!(budget.remaining(), 0);
        assert_eq!(
            decode_with(&h, &kw_bytes(&fresh(3)), &mut budget),
            Err(DecodeError::UnknownAtom)
        );
        assert_eq!(Atom::existing(&fresh(3)), None);
        // a name over 255 characters is never an atom
        let long = "k".repeat(256);
        assert_eq!(decode(&h, &kw_bytes(&long)), Err(DecodeError::AtomTooLong));
        let mut all = AtomBudget::unlimited();
        assert_eq!(
            decode_with(&h, &kw_bytes(&long), &mut all),
            Err(DecodeError::AtomTooLong)
        );
        let max = "k".repeat(255);
        assert!(decode_with(&h, &kw_bytes(&max), &mut all).is_ok());
    }
}
