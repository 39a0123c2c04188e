//! Erlang's External Term Format (version 131), the encoding of
//! `term_to_binary/1` and of the distribution protocol: an encoder and a
//! decoder for Lonala terms, groundwork for talking to Erlang nodes
//! (issue 19). The format is `erts/doc/guides/erl_ext_dist.md` in OTP.
//!
//! # The mapping
//!
//! | Lonala                      | encoded as                                | decoded from                                   |
//! |-----------------------------|-------------------------------------------|------------------------------------------------|
//! | `nil`, `true`, `false`      | the atoms `nil`, `true`, `false` (Elixir's `nil` is the atom `nil`) | those atoms |
//! | keyword `:name`             | `SMALL_ATOM_UTF8_EXT` / `ATOM_UTF8_EXT`   | any other atom: `ATOM_UTF8_EXT`, `SMALL_ATOM_UTF8_EXT`, and the old Latin-1 `ATOM_EXT`, `SMALL_ATOM_EXT` |
//! | integer                     | `SMALL_INTEGER_EXT` (0..=255), `INTEGER_EXT` (32 bits), `SMALL_BIG_EXT`, `LARGE_BIG_EXT` | the same, in the canonical (smallest) Lonala form |
//! | float                       | `NEW_FLOAT_EXT` (finite only: Erlang has no NaN or infinity) | `NEW_FLOAT_EXT`, `FLOAT_EXT` (finite only) |
//! | vector                      | `SMALL_TUPLE_EXT` / `LARGE_TUPLE_EXT`     | tuples                                         |
//! | `()`                        | `NIL_EXT`                                 | `NIL_EXT`                                      |
//! | list (proper or improper)   | `LIST_EXT`, its tail encoded after the elements | `LIST_EXT` (an improper tail stays improper); `STRING_EXT` gives a list of integers |
//! | map                         | `MAP_EXT`                                 | `MAP_EXT` (equal keys are an error)            |
//! | binary                      | `BINARY_EXT`                              | `BINARY_EXT`, `BIT_BINARY_EXT` of whole bytes  |
//! | vector `[:erlang/bits bytes size]`, `bytes` a non-empty binary, `8 * (n - 1) < size < 8 * n` | `BIT_BINARY_EXT` (the last byte's unused low bits cleared) | `BIT_BINARY_EXT` of 1 to 7 bits in the last byte, those bits cleared |
//! | vector `[:erlang/fun m f arity]`, `m` and `f` atoms, arity 0..=255 | `EXPORT_EXT` (`fun m:f/arity`) | `EXPORT_EXT` |
//! | vector `[:erlang/local-fun "module" arity bytes]`, `bytes` a whole `NEW_FUN_EXT` (tag, `Size` equal to its length - 1) | `bytes`, unchanged | `NEW_FUN_EXT`: Lona cannot run Erlang's code, so the fun is kept as its encoding, bounded by its `Size`; only its arity and module name (a string: no atom made) are read from it |
//! | string                      | `BINARY_EXT` of its UTF-8 (as Elixir strings): **it decodes as a binary** | — |
//! | symbol, set, regex          | [`EncodeError::Unsupported`]: Erlang has no such kind; a tagged tuple convention can come later if Lona nodes need them | — |
//! | local pid (index, generation) | with a [`Node`] ([`encode_node`]): `NEW_PID_EXT` of the node's name and creation, ID = index, Serial = generation; without one [`EncodeError::Unsupported`] | with a [`Node`] ([`decode_node`]): `NEW_PID_EXT`, `PID_EXT` whose node and creation are the context's; without one refused ([`DecodeError::Unsupported`]) |
//! | pid of another node (`ExtPid`) | with a [`Node`]: `NEW_PID_EXT` of its own node, id, serial, creation; without one [`EncodeError::Unsupported`] | with a [`Node`]: any other `NEW_PID_EXT`, `PID_EXT` (another node name, or our name with another creation) |
//! | local reference (`u64` id)  | with a [`Node`]: `NEWER_REFERENCE_EXT` of the node's name and creation, 3 id words: low 32 bits, high 32 bits, 0; without one [`EncodeError::Unsupported`] | with a [`Node`]: `NEWER_REFERENCE_EXT`, `NEW_REFERENCE_EXT` whose node and creation are the context's and whose ids are 3 words, the third 0 (id = w0 \| w1 << 32); without one refused |
//! | reference of another node (`ExtRef`) | with a [`Node`]: `NEWER_REFERENCE_EXT` of its own fields; without one [`EncodeError::Unsupported`] | with a [`Node`]: any other `NEWER_REFERENCE_EXT`, `NEW_REFERENCE_EXT` (1 to 5 id words, [`DecodeError::BadRefLength`] otherwise) |
//! | function                    | [`EncodeError::Unsupported`]: code never crosses (as in `codec.rs`) | — (Erlang's funs: the two rows above) |
//!
//! Lossy corners: a string comes back as a binary; the keywords `:nil`,
//! `:true` and `:false` become the atoms `nil`, `true`, `false`, which
//! decode as `nil`, `true`, `false` (Elixir has the same identity); an
//! Erlang tuple of the shape of one of the three tagged vectors
//! (`{'erlang/fun', m, f, 2}`) goes back out as that fun or bit string.
//! Everything else in the table decodes to a term equal to the one
//! encoded, and the tagged vectors to the Erlang term they came from.
//!
//! Refused on decode with a clear error: compressed terms (tag 80,
//! [`DecodeError::Compressed`]), pids and references without a [`Node`],
//! the old `REFERENCE_EXT`, ports, the old `FUN_EXT`, a `NEW_FUN_EXT`
//! too short for its fields or without a module atom, an `EXPORT_EXT`
//! whose parts are not atoms and a small integer, atom cache references
//! and `LOCAL_EXT` ([`DecodeError::Unsupported`]), a pid's or
//! reference's node that is not an atom ([`DecodeError::BadNode`]), bit
//! strings with 0 or more than 8 bits in their last byte
//! ([`DecodeError::NotWholeBytes`]), non-finite floats, and unknown tags.
//!
//! # Node identity
//!
//! The distribution's pids and references name their node (`name@host`,
//! an atom) and its creation (which incarnation of that name). The `*_node`
//! functions take this node's identity, a [`Node`]: its own pids and
//! references (Lonala's local [`Pid`] and `u64` reference ids) go out with
//! its name and creation, and come back as local ones only when both
//! match; everything else is a pid or reference of another node
//! ([`crate::View::ExtPid`], [`crate::View::ExtRef`]), kept field for
//! field so it goes back out unchanged. A pid of this node's name with
//! another creation is a pid of an earlier incarnation: another node's.
//!
//! # What the decoder trusts: nothing
//!
//! The rules of `codec.rs`, which this follows (the code for them that
//! both decoders share, and their one [`DecodeError`], is in `serial.rs`):
//!
//! * Terms are built with the heap's safe constructors from checked values.
//! * **Atoms** from a peer become keywords only if they already exist
//!   ([`decode`]), or within the caller's [`AtomBudget`] ([`decode_with`]),
//!   so a peer cannot fill the never-freed atom table; a name over 255
//!   characters is an error. The node names of pids and references are
//!   atoms under the same rule.
//! * **Lengths** never reserve memory: every declared length or arity is
//!   checked against the bytes left (each element takes at least one byte)
//!   before anything is read, bytes are copied only once present, and
//!   container elements go on one shared stack that grows only as elements
//!   are decoded.
//! * The decoder is **iterative** (an explicit stack of open containers), so
//!   deep nesting cannot overflow the native stack; the encoder too.
//! * Trailing bytes after the term are an error ([`decode_prefix`] allows
//!   them, for the distribution's concatenated terms; [`encode_into`] and
//!   [`decode_body_prefix`] leave out the version byte, which terms after a
//!   distribution header do not carry; with a node: [`decode_node_prefix`],
//!   [`decode_node_body_prefix`], [`encode_node_into`]).

use std::borrow::Cow;
use std::sync::Arc;

use num_bigint::{BigInt, Sign};

use crate::atom::Atom;
use crate::binary::SharedBinary;
use crate::heap::Heap;
use crate::serial::{bigint, sign, Open, Reader, Stack, Walk};
pub use crate::serial::{AtomBudget, DecodeError};
use crate::term::{Pid, Term, MAX_REF_IDS};
use crate::view::View;

/// This node's identity in the distribution: what its own pids and
/// references are sent as, and what a received one must carry to be taken
/// as local ([`encode_node`], [`decode_node`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// The node's name (`name@host`), an atom.
    pub name: Atom,
    /// Its creation: which incarnation of the node name this is (a peer
    /// tells a restarted node's pids from the old ones by it).
    pub creation: u32,
}

/// The version byte that starts every encoding.
pub const VERSION: u8 = 131;

/// The tags of the external term format, each the first byte of a term
/// (`erl_ext_dist.md`): shared with the distribution's packet reader.
pub mod tag {
    pub const NEW_FLOAT_EXT: u8 = 70;
    pub const BIT_BINARY_EXT: u8 = 77;
    pub const COMPRESSED: u8 = 80;
    pub const ATOM_CACHE_REF: u8 = 82;
    pub const NEW_PID_EXT: u8 = 88;
    pub const NEW_PORT_EXT: u8 = 89;
    pub const NEWER_REFERENCE_EXT: u8 = 90;
    pub const SMALL_INTEGER_EXT: u8 = 97;
    pub const INTEGER_EXT: u8 = 98;
    pub const FLOAT_EXT: u8 = 99;
    pub const ATOM_EXT: u8 = 100;
    pub const PORT_EXT: u8 = 102;
    pub const PID_EXT: u8 = 103;
    pub const SMALL_TUPLE_EXT: u8 = 104;
    pub const LARGE_TUPLE_EXT: u8 = 105;
    pub const NIL_EXT: u8 = 106;
    pub const STRING_EXT: u8 = 107;
    pub const LIST_EXT: u8 = 108;
    pub const BINARY_EXT: u8 = 109;
    pub const SMALL_BIG_EXT: u8 = 110;
    pub const LARGE_BIG_EXT: u8 = 111;
    pub const NEW_FUN_EXT: u8 = 112;
    pub const EXPORT_EXT: u8 = 113;
    pub const NEW_REFERENCE_EXT: u8 = 114;
    pub const SMALL_ATOM_EXT: u8 = 115;
    pub const MAP_EXT: u8 = 116;
    pub const ATOM_UTF8_EXT: u8 = 118;
    pub const SMALL_ATOM_UTF8_EXT: u8 = 119;
    pub const V4_PORT_EXT: u8 = 120;
}

use tag::*;

/// Why a term cannot be encoded in the external term format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The term holds a value with no Erlang counterpart here (see the
    /// module's table): `"function"`, `"pid"` or `"reference"` (without a
    /// [`Node`]), `"symbol"`,
    /// `"set"`, `"regex"`, `"non-finite float"`, or a size over 2^32 - 1.
    Unsupported(&'static str),
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Unsupported(what) => {
                write!(f, "a {what} cannot be encoded in Erlang's term format")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

fn put_u32(out: &mut Vec<u8>, n: usize, what: &'static str) -> Result<(), EncodeError> {
    let n = u32::try_from(n).map_err(|_| EncodeError::Unsupported(what))?;
    out.extend_from_slice(&n.to_be_bytes());
    Ok(())
}

fn put_int(out: &mut Vec<u8>, i: i64) {
    if (0..=255).contains(&i) {
        out.extend([SMALL_INTEGER_EXT, i as u8]);
    } else if let Ok(v) = i32::try_from(i) {
        out.push(INTEGER_EXT);
        out.extend_from_slice(&v.to_be_bytes());
    } else {
        put_big(out, &BigInt::from(i)).expect("8 bytes");
    }
}

fn put_big(out: &mut Vec<u8>, b: &BigInt) -> Result<(), EncodeError> {
    let mag = b.magnitude().to_bytes_le();
    let sign = u8::from(b.sign() == Sign::Minus);
    if let Ok(n) = u8::try_from(mag.len()) {
        out.extend([SMALL_BIG_EXT, n, sign]);
    } else {
        out.push(LARGE_BIG_EXT);
        put_u32(out, mag.len(), "big integer over 2^32 - 1 bytes")?;
        out.push(sign);
    }
    out.extend_from_slice(&mag);
    Ok(())
}

fn put_atom(out: &mut Vec<u8>, name: &str) {
    let b = name.as_bytes();
    match u8::try_from(b.len()) {
        Ok(n) => out.extend([SMALL_ATOM_UTF8_EXT, n]),
        Err(_) => {
            // At most 255 characters, so at most 1,020 bytes.
            out.push(ATOM_UTF8_EXT);
            out.extend_from_slice(&(b.len() as u16).to_be_bytes());
        }
    }
    out.extend_from_slice(b);
}

fn put_binary(out: &mut Vec<u8>, b: &[u8]) -> Result<(), EncodeError> {
    out.push(BINARY_EXT);
    put_u32(out, b.len(), "binary over 2^32 - 1 bytes")?;
    out.extend_from_slice(b);
    Ok(())
}

/// Where large binaries go instead of being copied ([`encode_node_spliced`]).
struct Splice<'s> {
    min: usize,
    splices: &'s mut Vec<(usize, SharedBinary)>,
}

/// A binary or string's bytes `b` (term `t`): copied in, or, when it is
/// shared and at least `splice.min` bytes, referenced at this offset.
fn put_bytes(
    out: &mut Vec<u8>,
    t: Term<'_>,
    b: &[u8],
    splice: &mut Option<Splice<'_>>,
) -> Result<(), EncodeError> {
    if let Some(sp) = splice.as_mut().filter(|sp| b.len() >= sp.min) {
        if let Some(shared) = t.shared_binary() {
            out.push(BINARY_EXT);
            put_u32(out, b.len(), "binary over 2^32 - 1 bytes")?;
            sp.splices.push((out.len(), shared));
            return Ok(());
        }
    }
    put_binary(out, b)
}

/// Encodes a term as `term_to_binary/1` would (version byte included),
/// or says which part has no Erlang form (see the module's table). Pids and
/// references need a node ([`encode_node`]).
pub fn encode(t: Term<'_>) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![VERSION];
    encode_into(&mut out, t)?;
    Ok(out)
}

/// [`encode`] without the version byte, appended to `out` (on an error,
/// `out` may hold part of the term).
pub fn encode_into(out: &mut Vec<u8>, t: Term<'_>) -> Result<(), EncodeError> {
    encode_impl(out, t, None, None)
}

/// [`encode`] as the node `node` sends: local pids and references are
/// encoded with `node`'s name and creation, those of other nodes with
/// their own (see the module's table).
pub fn encode_node(t: Term<'_>, node: &Node) -> Result<Vec<u8>, EncodeError> {
    let mut out = vec![VERSION];
    encode_node_into(&mut out, t, node)?;
    Ok(out)
}

/// [`encode_node`] without the version byte, appended to `out` (on an
/// error, `out` may hold part of the term).
pub fn encode_node_into(out: &mut Vec<u8>, t: Term<'_>, node: &Node) -> Result<(), EncodeError> {
    encode_impl(out, t, Some(node), None)
}

/// [`encode_node_into`] without copying large binaries: a shared binary
/// or string of at least `min` bytes gets its tag and length in `out`,
/// and is pushed on `splices` with the offset in `out` its bytes belong
/// at (offsets ascending; several may share one). The encoding is `out`
/// with each binary's bytes inserted at its offset, for a writer to
/// write in place (`writev`) as BEAM's distribution writes refc
/// binaries. On an error, `out` and `splices` may hold part of the term.
pub fn encode_node_spliced(
    out: &mut Vec<u8>,
    t: Term<'_>,
    node: &Node,
    min: usize,
    splices: &mut Vec<(usize, SharedBinary)>,
) -> Result<(), EncodeError> {
    encode_impl(out, t, Some(node), Some(Splice { min, splices }))
}

fn put_pid(out: &mut Vec<u8>, node: Atom, id: u32, serial: u32, creation: u32) {
    out.push(NEW_PID_EXT);
    put_atom(out, node.name());
    for n in [id, serial, creation] {
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn put_ref(out: &mut Vec<u8>, node: Atom, creation: u32, ids: &[u32]) {
    out.push(NEWER_REFERENCE_EXT);
    // At most MAX_REF_IDS words.
    out.extend_from_slice(&(ids.len() as u16).to_be_bytes());
    put_atom(out, node.name());
    out.extend_from_slice(&creation.to_be_bytes());
    for n in ids {
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_impl(
    out: &mut Vec<u8>,
    t: Term<'_>,
    node: Option<&Node>,
    mut splice: Option<Splice<'_>>,
) -> Result<(), EncodeError> {
    let mut walk = Walk::new(t);
    while let Some(t) = walk.next() {
        match t.view() {
            View::Nil => put_atom(out, "nil"),
            View::Bool(false) => put_atom(out, "false"),
            View::Bool(true) => put_atom(out, "true"),
            View::EmptyList => out.push(NIL_EXT),
            View::Int(i) => put_int(out, i),
            View::BigInt(b) => match i64::try_from(&b) {
                Ok(i) => put_int(out, i),
                Err(_) => put_big(out, &b)?,
            },
            View::Float(f) => {
                if !f.is_finite() {
                    return Err(EncodeError::Unsupported("non-finite float"));
                }
                out.push(NEW_FLOAT_EXT);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            View::Keyword(a) => put_atom(out, a.name()),
            View::Str(s) => put_bytes(out, t, s.as_bytes(), &mut splice)?,
            View::Binary(b) => put_bytes(out, t, b, &mut splice)?,
            View::Vector(items) => {
                if put_special(out, items)? {
                    continue;
                }
                match u8::try_from(items.len()) {
                    Ok(n) => out.extend([SMALL_TUPLE_EXT, n]),
                    Err(_) => {
                        out.push(LARGE_TUPLE_EXT);
                        put_u32(out, items.len(), "tuple over 2^32 - 1 elements")?;
                    }
                }
                walk.items(items);
            }
            View::Cons(..) => {
                let n = walk.list(t);
                out.push(LIST_EXT);
                put_u32(out, n, "list over 2^32 - 1 elements")?;
            }
            View::Map(m) => {
                out.push(MAP_EXT);
                put_u32(out, m.len(), "map over 2^32 - 1 entries")?;
                walk.entries(m);
            }
            View::Symbol(_) => return Err(EncodeError::Unsupported("symbol")),
            View::Set(_) => return Err(EncodeError::Unsupported("set")),
            View::Regex(_) => return Err(EncodeError::Unsupported("regex")),
            View::Pid(p) => match node {
                Some(me) => put_pid(out, me.name, p.index(), p.generation(), me.creation),
                None => return Err(EncodeError::Unsupported("pid")),
            },
            View::ExtPid {
                node: n,
                id,
                serial,
                creation,
            } => match node {
                Some(_) => put_pid(out, n, id, serial, creation),
                None => return Err(EncodeError::Unsupported("pid")),
            },
            View::Ref(r) => match node {
                Some(me) => put_ref(out, me.name, me.creation, &[r as u32, (r >> 32) as u32, 0]),
                None => return Err(EncodeError::Unsupported("reference")),
            },
            View::ExtRef {
                node: n,
                creation,
                ids,
            } => match node {
                Some(_) => put_ref(out, n, creation, &ids),
                None => return Err(EncodeError::Unsupported("reference")),
            },
            View::Closure { .. } => return Err(EncodeError::Unsupported("function")),
            View::Cell(_) => return Err(EncodeError::Unsupported("Lonala atom")),
            // Metadata stays on the node (`meta.rs`, rule 1).
            View::Meta { value, .. } => walk.items(&[value]),
        }
    }
    Ok(())
}

/// An atom's name, for a term that is one (a keyword, or `nil`, `true`,
/// `false`, which are atoms in Erlang).
fn atom_of<'t>(t: &'t View<'_>) -> Option<&'t str> {
    match t {
        View::Keyword(a) => Some(a.name()),
        View::Nil => Some("nil"),
        View::Bool(true) => Some("true"),
        View::Bool(false) => Some("false"),
        _ => None,
    }
}

/// The vectors that stand for Erlang terms with no Lonala kind (see the
/// module's table), written as those terms: an export fun, a bit string,
/// a local fun received from Erlang. Any other vector (one of the wrong
/// shape too) is a tuple: `false`.
fn put_special(out: &mut Vec<u8>, items: &[Term<'_>]) -> Result<bool, EncodeError> {
    let Some(View::Keyword(tag)) = items.first().map(|t| t.view()) else {
        return Ok(false);
    };
    match (tag.name(), items.len()) {
        ("erlang/fun", 4) => {
            let (m, f) = (items[1].view(), items[2].view());
            let (Some(m), Some(f), View::Int(arity @ 0..=255)) =
                (atom_of(&m), atom_of(&f), items[3].view())
            else {
                return Ok(false);
            };
            out.push(EXPORT_EXT);
            put_atom(out, m);
            put_atom(out, f);
            out.extend([SMALL_INTEGER_EXT, arity as u8]);
            Ok(true)
        }
        ("erlang/bits", 3) => {
            let (View::Binary(b), View::Int(size)) = (items[1].view(), items[2].view()) else {
                return Ok(false);
            };
            let whole = (b.len() as i64) * 8;
            if b.is_empty() || size <= whole - 8 || size >= whole {
                return Ok(false);
            }
            let bits = (size - (whole - 8)) as u8;
            // Only as the decoder makes it: the unused bits clear.
            if b[b.len() - 1] & !(0xffu8 << (8 - bits)) != 0 {
                return Ok(false);
            }
            out.push(BIT_BINARY_EXT);
            put_u32(out, b.len(), "binary over 2^32 - 1 bytes")?;
            out.push(bits);
            out.extend_from_slice(b);
            Ok(true)
        }
        ("erlang/local-fun", 4) => {
            let (View::Str(module), View::Int(arity), View::Binary(raw)) =
                (items[1].view(), items[2].view(), items[3].view())
            else {
                return Ok(false);
            };
            // Only what the decoder makes of these bytes: the same fun,
            // with this module and arity, and nothing after it.
            let mut r = Reader::new(raw);
            let same = r.u8() == Ok(NEW_FUN_EXT)
                && fun_fields(&mut r).is_ok_and(|(m, a, _)| m == module && i64::from(a) == arity)
                && r.pos == raw.len();
            if !same {
                return Ok(false);
            }
            out.extend_from_slice(raw);
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The external term format's lengths: big-endian integers.
impl Reader<'_> {
    fn u16(&mut self) -> Result<usize, DecodeError> {
        Ok(usize::from(u16::from_be_bytes(self.array()?)))
    }
    fn u32(&mut self) -> Result<usize, DecodeError> {
        usize::try_from(u32::from_be_bytes(self.array()?)).map_err(|_| DecodeError::LengthTooLarge)
    }
}

/// Decodes one external term (version byte first) into `heap`, accepting
/// only atoms that already exist (like `binary_to_term(B, [safe])`).
pub fn decode<'h>(heap: &'h Heap, bytes: &[u8]) -> Result<Term<'h>, DecodeError> {
    decode_with(heap, bytes, &mut AtomBudget::none())
}

/// [`decode`], letting the input add up to `atoms`' remaining count of new
/// atoms (keywords) to the node's atom table, and counting them off.
pub fn decode_with<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
) -> Result<Term<'h>, DecodeError> {
    whole(bytes, decode_prefix(heap, bytes, atoms))
}

/// Decodes the external term at the start of `bytes` (version byte first)
/// and returns it with the number of bytes it took; what follows is left
/// alone (distribution messages carry several terms one after another).
pub fn decode_prefix<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
) -> Result<(Term<'h>, usize), DecodeError> {
    decode_version_prefix(heap, bytes, atoms, None)
}

/// [`decode_prefix`] for a term without the version byte, as the terms
/// after a distribution header are sent (the header implies the version).
pub fn decode_body_prefix<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
) -> Result<(Term<'h>, usize), DecodeError> {
    decode_body(heap, bytes, atoms, None, None)
}

/// [`decode_with`] as the node `node` receives: pids and references are
/// accepted, those of `node` (its name and creation) as local ones and any
/// other as a pid or reference of another node (see the module's table).
/// A pid's or reference's node name is an atom like any other, within
/// `atoms`.
pub fn decode_node<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
    node: &Node,
) -> Result<Term<'h>, DecodeError> {
    whole(bytes, decode_node_prefix(heap, bytes, atoms, node))
}

/// [`decode_prefix`] with a node, as [`decode_node`].
pub fn decode_node_prefix<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
    node: &Node,
) -> Result<(Term<'h>, usize), DecodeError> {
    decode_version_prefix(heap, bytes, atoms, Some(node))
}

/// [`decode_body_prefix`] with a node, as [`decode_node`]: the terms after
/// a distribution header.
pub fn decode_node_body_prefix<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
    node: &Node,
) -> Result<(Term<'h>, usize), DecodeError> {
    decode_body(heap, bytes, atoms, Some(node), None)
}

/// Binaries of at least this many bytes may share the buffer they are
/// decoded from ([`decode_node_body_in`]).
pub const ADOPT_MIN: usize = 64 << 10;

/// [`decode_node_body_prefix`] of `buf[start..]`, where a binary of at
/// least [`ADOPT_MIN`] bytes that is at least half of `buf` is not copied:
/// it shares `buf` (a large message joined from fragments becomes its
/// binary without a second copy; the buffer lives as long as the binary,
/// so only a binary that is most of it may keep it).
pub fn decode_node_body_in<'h>(
    heap: &'h Heap,
    buf: &Arc<Vec<u8>>,
    start: usize,
    atoms: &mut AtomBudget,
    node: &Node,
) -> Result<(Term<'h>, usize), DecodeError> {
    let bytes = buf.get(start..).ok_or(DecodeError::UnexpectedEnd)?;
    decode_body(heap, bytes, atoms, Some(node), Some((buf, start)))
}

/// The term of a prefix decoding that took all of `bytes`.
fn whole<'h>(
    bytes: &[u8],
    prefix: Result<(Term<'h>, usize), DecodeError>,
) -> Result<Term<'h>, DecodeError> {
    let (t, used) = prefix?;
    if used != bytes.len() {
        return Err(DecodeError::TrailingBytes);
    }
    Ok(t)
}

fn decode_version_prefix<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
    node: Option<&Node>,
) -> Result<(Term<'h>, usize), DecodeError> {
    match bytes.first() {
        Some(&VERSION) => {}
        _ => return Err(DecodeError::BadVersion),
    }
    let (t, used) = decode_body(heap, &bytes[1..], atoms, node, None)?;
    Ok((t, used + 1))
}

/// `donor`: the buffer `bytes` lies in, from the offset given, for
/// [`decode_node_body_in`].
fn decode_body<'h>(
    heap: &'h Heap,
    bytes: &[u8],
    atoms: &mut AtomBudget,
    node: Option<&Node>,
    donor: Option<(&Arc<Vec<u8>>, usize)>,
) -> Result<(Term<'h>, usize), DecodeError> {
    let mut r = Reader::new(bytes);
    let mut stack = Stack::new();
    loop {
        let tag = r.u8()?;
        let value = match tag {
            SMALL_INTEGER_EXT => heap.int(i64::from(r.u8()?)),
            INTEGER_EXT => heap.int(i64::from(i32::from_be_bytes(r.array()?))),
            SMALL_BIG_EXT | LARGE_BIG_EXT => {
                let n = if tag == SMALL_BIG_EXT {
                    usize::from(r.u8()?)
                } else {
                    r.u32()?
                };
                let sign = sign(r.u8()?)?;
                bigint(heap, sign, r.bytes(n)?)
            }
            NEW_FLOAT_EXT => float(heap, f64::from_be_bytes(r.array()?))?,
            FLOAT_EXT => {
                let raw: [u8; 31] = r.array()?;
                let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                let f = std::str::from_utf8(&raw[..end])
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or(DecodeError::BadFloat)?;
                float(heap, f)?
            }
            ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT | ATOM_EXT | SMALL_ATOM_EXT => {
                atom(&atom_name(tag, &mut r)?, atoms)?
            }
            NEW_PID_EXT | PID_EXT if node.is_some() => {
                let me = node.expect("checked");
                let name = node_atom(&mut r, atoms)?;
                let id = u32::from_be_bytes(r.array()?);
                let serial = u32::from_be_bytes(r.array()?);
                let creation = if tag == NEW_PID_EXT {
                    u32::from_be_bytes(r.array()?)
                } else {
                    u32::from(r.u8()?)
                };
                if name == me.name && creation == me.creation {
                    heap.pid(Pid::new(id, serial))
                } else {
                    heap.ext_pid(name, id, serial, creation)
                }
            }
            NEWER_REFERENCE_EXT | NEW_REFERENCE_EXT if node.is_some() => {
                let me = node.expect("checked");
                let n = r.u16()?;
                if !(1..=MAX_REF_IDS).contains(&n) {
                    return Err(DecodeError::BadRefLength);
                }
                let name = node_atom(&mut r, atoms)?;
                let creation = if tag == NEWER_REFERENCE_EXT {
                    u32::from_be_bytes(r.array()?)
                } else {
                    u32::from(r.u8()?)
                };
                let mut ids = [0u32; MAX_REF_IDS];
                for w in &mut ids[..n] {
                    *w = u32::from_be_bytes(r.array()?);
                }
                // What `encode_node` makes of a local reference.
                if name == me.name && creation == me.creation && n == 3 && ids[2] == 0 {
                    heap.reference(u64::from(ids[0]) | u64::from(ids[1]) << 32)
                } else {
                    heap.ext_ref(name, creation, &ids[..n])
                }
            }
            NIL_EXT => Term::EMPTY_LIST,
            STRING_EXT => {
                let n = r.u16()?;
                let ints: Vec<Term<'h>> = r.bytes(n)?.iter().map(|&b| heap.int(b.into())).collect();
                heap.list(&ints)
            }
            BINARY_EXT => {
                let n = r.u32()?;
                let at = r.pos;
                let data = r.bytes(n)?;
                match donor {
                    Some((buf, base)) if n >= ADOPT_MIN && n >= buf.len() / 2 => {
                        heap.binary_in(buf, base + at, n)
                    }
                    _ => heap.binary(data),
                }
            }
            BIT_BINARY_EXT => {
                let n = r.u32()?;
                let bits = r.u8()?;
                let data = r.bytes(n)?;
                match (n, bits) {
                    (_, 8) | (0, 0) => heap.binary(data),
                    (1.., 1..=7) => bitstring(heap, data, bits),
                    _ => return Err(DecodeError::NotWholeBytes),
                }
            }
            EXPORT_EXT => {
                let m = export_atom(&mut r, atoms)?;
                let f = export_atom(&mut r, atoms)?;
                if r.u8()? != SMALL_INTEGER_EXT {
                    return Err(DecodeError::Unsupported(
                        "export (fun M:F/A) without a small arity",
                    ));
                }
                let arity = heap.int(i64::from(r.u8()?));
                heap.vector(&[crate::kw!("erlang/fun"), m, f, arity])
            }
            NEW_FUN_EXT => local_fun(heap, &mut r)?,
            SMALL_TUPLE_EXT | LARGE_TUPLE_EXT => {
                let n = if tag == SMALL_TUPLE_EXT {
                    usize::from(r.u8()?)
                } else {
                    r.u32()?
                };
                match r.fits(n, 1, 0)? {
                    0 => heap.vector(&[]),
                    n => {
                        stack.open(Open::Vector, n);
                        continue;
                    }
                }
            }
            LIST_EXT => {
                let n = r.u32()?;
                let n = r.fits(n, 1, 1)?;
                // n elements, then the tail.
                stack.open(Open::List, n + 1);
                continue;
            }
            MAP_EXT => {
                let n = r.u32()?;
                match r.fits(n, 2, 0)? {
                    0 => heap.map(&[]),
                    n => {
                        stack.open(Open::Map, 2 * n);
                        continue;
                    }
                }
            }
            COMPRESSED => return Err(DecodeError::Compressed),
            t => return Err(unsupported(t)),
        };
        if let Some(t) = stack.add(heap, value)? {
            return Ok((t, r.pos));
        }
    }
}

/// A bit string of `data` whose last byte holds `bits` (1 to 7) bits:
/// `[:erlang/bits bytes bit-size]`, the unused low bits of the last byte
/// cleared.
fn bitstring<'h>(heap: &'h Heap, data: &[u8], bits: u8) -> Term<'h> {
    let mut bytes = data.to_vec();
    let last = bytes.len() - 1;
    bytes[last] &= 0xffu8 << (8 - bits);
    let size = (bytes.len() as i64 - 1) * 8 + i64::from(bits);
    heap.vector(&[
        crate::kw!("erlang/bits"),
        heap.binary(&bytes),
        heap.int(size),
    ])
}

/// The module or function of an `EXPORT_EXT`: an atom term.
fn export_atom(r: &mut Reader<'_>, atoms: &mut AtomBudget) -> Result<Term<'static>, DecodeError> {
    match r.u8()? {
        tag @ (ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT | ATOM_EXT | SMALL_ATOM_EXT) => {
            atom(&atom_name(tag, r)?, atoms)
        }
        ATOM_CACHE_REF => Err(unsupported(ATOM_CACHE_REF)),
        _ => Err(DecodeError::Unsupported("export (fun M:F/A) of a non-atom")),
    }
}

/// A local fun (`NEW_FUN_EXT`, its tag read): Lona cannot run Erlang's
/// code, so it becomes `[:erlang/local-fun "module" arity bytes]`,
/// `bytes` its whole encoding (tag included), which [`encode`] writes
/// back unchanged. Its `Size` bounds it; only the arity and the module's
/// name are read from inside (the name as a string, so no atom is made).
fn local_fun<'h>(heap: &'h Heap, r: &mut Reader<'_>) -> Result<Term<'h>, DecodeError> {
    let (module, arity, raw) = fun_fields(r)?;
    Ok(heap.vector(&[
        crate::kw!("erlang/local-fun"),
        heap.string(&module),
        heap.int(i64::from(arity)),
        heap.binary(raw),
    ]))
}

/// A `NEW_FUN_EXT` whose tag `r` has just read: its module's name, its
/// arity and its whole encoding (from the tag).
fn fun_fields<'a>(r: &mut Reader<'a>) -> Result<(Cow<'a, str>, u8, &'a [u8]), DecodeError> {
    const BAD: DecodeError = DecodeError::Unsupported("malformed fun (NEW_FUN_EXT)");
    let start = r.pos - 1;
    let size: [u8; 4] = r.array()?;
    let size =
        usize::try_from(u32::from_be_bytes(size)).map_err(|_| DecodeError::LengthTooLarge)?;
    // Size counts itself: then Arity, Uniq (16), Index (4), NumFree (4)
    // and the module's atom (at least 2 bytes) at least.
    let body = size
        .checked_sub(4)
        .filter(|&b| b >= 1 + 16 + 4 + 4 + 2)
        .ok_or(BAD)?;
    let inner = r.bytes(body)?;
    let raw = &r.buf[start..r.pos];
    let mut fun = Reader::new(inner);
    let arity = fun.u8()?;
    fun.take(24)?;
    let tag = fun.u8()?;
    match tag {
        ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT | ATOM_EXT | SMALL_ATOM_EXT => {
            Ok((atom_name(tag, &mut fun)?, arity, raw))
        }
        _ => Err(BAD),
    }
}

fn float(heap: &Heap, f: f64) -> Result<Term<'_>, DecodeError> {
    if f.is_finite() {
        Ok(heap.float(f))
    } else {
        Err(DecodeError::BadFloat)
    }
}

/// The name of an atom whose tag (one of the four atom tags) was read.
fn atom_name<'a>(tag: u8, r: &mut Reader<'a>) -> Result<Cow<'a, str>, DecodeError> {
    let n = if tag == SMALL_ATOM_UTF8_EXT || tag == SMALL_ATOM_EXT {
        usize::from(r.u8()?)
    } else {
        r.u16()?
    };
    let bytes = r.bytes(n)?;
    if tag == ATOM_UTF8_EXT || tag == SMALL_ATOM_UTF8_EXT {
        std::str::from_utf8(bytes)
            .map(Cow::Borrowed)
            .map_err(|_| DecodeError::InvalidUtf8)
    } else {
        // Latin-1: each byte is the code point of its character.
        Ok(Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()))
    }
}

fn atom(name: &str, atoms: &mut AtomBudget) -> Result<Term<'static>, DecodeError> {
    Ok(match name {
        "nil" => Term::NIL,
        "true" => Term::TRUE,
        "false" => Term::FALSE,
        _ => Term::keyword_atom(atoms.atom(name)?),
    })
}

/// The node of a pid or reference: an atom (as any other, within `atoms`).
fn node_atom(r: &mut Reader<'_>, atoms: &mut AtomBudget) -> Result<Atom, DecodeError> {
    match r.u8()? {
        tag @ (ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT | ATOM_EXT | SMALL_ATOM_EXT) => {
            atoms.atom(&atom_name(tag, r)?)
        }
        ATOM_CACHE_REF => Err(unsupported(ATOM_CACHE_REF)),
        _ => Err(DecodeError::BadNode),
    }
}

fn unsupported(tag: u8) -> DecodeError {
    DecodeError::Unsupported(match tag {
        82 => "atom cache reference (ATOM_CACHE_REF)",
        88 | 103 => "pid",
        89 | 102 | 120 => "port",
        90 | 101 | 114 => "reference",
        112 | 117 => "fun",
        113 => "export (fun M:F/A)",
        121 => "LOCAL_EXT",
        t => return DecodeError::UnknownTag(t),
    })
}
