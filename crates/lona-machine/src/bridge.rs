//! Rust values ↔ Lonala terms, with serde: how native Rust processes and
//! Lonala processes talk. [`to_message`] serializes a value into a message
//! (a [`Fragment`], what `Ctx::send` carries to a Lonala process);
//! [`from_message`] / [`from_term`] deserialize what a Lonala process sent.
//!
//! | Rust | Lonala |
//! | --- | --- |
//! | `bool` | `true` / `false` |
//! | `()`, `None`, unit struct | `nil` |
//! | `Some(x)` | `x` |
//! | integers | integers (big ones past `i64`) |
//! | `f32`, `f64` | floats |
//! | `char`, `&str`, `String` | strings |
//! | bytes (`serde_bytes`) | binary |
//! | `Vec`, slices, sets | lists (a vector is accepted back) |
//! | tuples, tuple structs | vectors (a list is accepted back) |
//! | maps | maps |
//! | structs | maps with keyword keys: `max_len` → `:max-len` |
//! | unit variant `Ping` | `:ping` (`GetValue` → `:get-value`) |
//! | newtype variant `Add(5)` | `[:add 5]` |
//! | tuple variant `Add(1, 2)` | `[:add 1 2]` |
//! | struct variant `Move { x: 1 }` | `[:move {:x 1}]` |
//! | [`PidTerm`], [`RefTerm`] | pid, reference |
//! | [`RemotePidTerm`] | a pid of another node |
//!
//! Keywords deserialize as strings (their names), so `[:ok 1]` reads as
//! `(String, i64)` as well as into an enum with an `Ok(i64)` variant.
//! Errors (a wrong kind, an integer out of range, a missing field, an
//! unknown variant) are [`BridgeError`]s, never panics.
//!
//! Nothing is dropped silently: two map keys (or struct fields, `max_len`
//! and `maxLen`) that become the same Lonala key, or Lonala keys that read
//! back as the same Rust key (`:a` and `"a"`), are errors. serde walks a
//! value on the Rust stack, so a value nested more than [`MAX_DEPTH`]
//! levels (a list in a list in ..., `Some` and newtypes counted) is an
//! error too, in both directions, however deep the input is: a Lonala
//! process cannot overflow a Rust process's stack.

use std::fmt;

use lona_term::{Heap, View};
use num_bigint::BigInt;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

const PID_NAME: &str = "$lona::Pid";

/// How deeply nested a value may be to convert (serde_json allows 128).
pub const MAX_DEPTH: u32 = 512;

fn too_deep() -> BridgeError {
    BridgeError(format!("value nested more than {MAX_DEPTH} levels deep"))
}
const REF_NAME: &str = "$lona::Ref";
const EXT_PID_NAME: &str = "$lona::ExtPid";

pub use crate::error::BridgeError;

/// A message for or from a Lonala process (what [`to_message`] makes and
/// [`from_message`] reads), and a term in one: re-exported so a program
/// that talks to Lonala needs no `lona-term` dependency of its own.
pub use lona_term::{Fragment, Term};

/// The keyword for a Rust field or variant name (kebab-cased): an error,
/// not a panic, when the atom table is full or the name too long.
fn name_keyword(name: &str) -> Result<Term<'static>, BridgeError> {
    let k = kebab(name);
    Term::try_keyword(&k).map_err(|e| BridgeError(format!("keyword :{k}: {e}")))
}

impl ser::Error for BridgeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        BridgeError(msg.to_string())
    }
}

impl de::Error for BridgeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        BridgeError(msg.to_string())
    }
}

/// A pid inside a serialized value (a Lonala pid term).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PidTerm(pub lona_runtime::Pid);

/// A pid of another node inside a serialized value: what a native
/// process receives from a process there (or from a Lonala process that
/// passes one on), and sends back with
/// `lona_vm::dist::Dist::send_value_to`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RemotePidTerm {
    /// The node, `name@host`.
    pub node: String,
    /// The process's id, serial and creation on that node.
    pub id: u32,
    pub serial: u32,
    pub creation: u32,
}

impl Serialize for RemotePidTerm {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fields = (&self.node, self.id, self.serial, self.creation);
        s.serialize_newtype_struct(EXT_PID_NAME, &fields)
    }
}

impl<'de> de::Deserialize<'de> for RemotePidTerm {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RemotePidTerm;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a pid of another node")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<RemotePidTerm, A::Error> {
                let missing = de::Error::missing_field;
                Ok(RemotePidTerm {
                    node: a.next_element()?.ok_or_else(|| missing("node"))?,
                    id: a.next_element()?.ok_or_else(|| missing("id"))?,
                    serial: a.next_element()?.ok_or_else(|| missing("serial"))?,
                    creation: a.next_element()?.ok_or_else(|| missing("creation"))?,
                })
            }
        }
        d.deserialize_newtype_struct(EXT_PID_NAME, V)
    }
}

/// A reference inside a serialized value (a Lonala reference term).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RefTerm(pub lona_runtime::Ref);

impl Serialize for PidTerm {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(PID_NAME, &self.0.to_bits())
    }
}

impl Serialize for RefTerm {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(REF_NAME, &self.0.to_bits())
    }
}

impl<'de> de::Deserialize<'de> for PidTerm {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = d.deserialize_newtype_struct(PID_NAME, BitsVisitor)?;
        Ok(PidTerm(lona_runtime::Pid::from_bits(bits)))
    }
}

impl<'de> de::Deserialize<'de> for RefTerm {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bits = d.deserialize_newtype_struct(REF_NAME, BitsVisitor)?;
        Ok(RefTerm(lona_runtime::Ref::from_bits(bits)))
    }
}

/// The term of a [`RemotePidTerm`] serialized as `[node id serial creation]`.
fn ext_pid<'h>(heap: &'h Heap, t: Term<'h>) -> Result<Term<'h>, BridgeError> {
    let bad = || BridgeError("bad pid of another node".into());
    let View::Vector(v) = t.view() else {
        return Err(bad());
    };
    let [node, id, serial, creation] = v else {
        return Err(bad());
    };
    let node = match node.view() {
        View::Str(s) => lona_term::Atom::try_new(s).map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let num = |t: &Term<'_>| match t.view() {
        View::Int(n) => u32::try_from(n).map_err(|_| bad()),
        _ => Err(bad()),
    };
    Ok(heap.ext_pid(node, num(id)?, num(serial)?, num(creation)?))
}

struct BitsVisitor;

impl<'de> Visitor<'de> for BitsVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a pid or reference")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        <u64 as de::Deserialize>::deserialize(d)
    }
}

/// `snake_case` and `CamelCase` names as Lonala keywords: `max_len` →
/// `max-len`, `GetValue` → `get-value`.
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c == '_' {
            out.push('-');
        } else if c.is_uppercase() {
            if i > 0 && !out.ends_with('-') {
                out.push('-');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The name in `names` whose keyword form is `k` (or `k` itself).
fn unkebab(k: &str, names: &'static [&'static str]) -> Option<&'static str> {
    names.iter().copied().find(|n| *n == k || kebab(n) == k)
}

// ---- serializing -------------------------------------------------------

/// Serializes `v` into a new message fragment.
pub fn to_message<T: Serialize + ?Sized>(v: &T) -> Result<Fragment, BridgeError> {
    let heap = Heap::new();
    let t = to_term(&heap, v)?;
    Ok(Fragment::new(t))
}

/// Builds the term for `v` on `heap`.
pub fn to_term<'h, T: Serialize + ?Sized>(heap: &'h Heap, v: &T) -> Result<Term<'h>, BridgeError> {
    v.serialize(Ser { heap, depth: 0 })
}

#[derive(Clone, Copy)]
struct Ser<'h> {
    heap: &'h Heap,
    /// Levels of nesting above this value.
    depth: u32,
}

impl<'h> Ser<'h> {
    /// The serializer for a value nested in this one.
    fn inner(self) -> Result<Ser<'h>, BridgeError> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep());
        }
        Ok(Ser {
            heap: self.heap,
            depth: self.depth + 1,
        })
    }

    fn seq(self, kind: SeqKind, tag: Option<&str>, cap: usize) -> Result<Seq<'h>, BridgeError> {
        let inner = self.inner()?;
        Seq::new(inner, kind, tag, cap)
    }
}

/// A compound value being serialized: its elements, and what it becomes.
struct Seq<'h> {
    /// The serializer of the elements (one level down).
    ser: Ser<'h>,
    items: Vec<Term<'h>>,
    kind: SeqKind,
}

#[derive(Clone, Copy, PartialEq)]
enum SeqKind {
    List,
    Vector,
    /// A map or struct: items alternate key, value.
    Map,
    /// `[:variant {..}]`: items alternate key, value; `items[0]` is the tag.
    TaggedMap,
}

impl<'h> Seq<'h> {
    fn new(
        ser: Ser<'h>,
        kind: SeqKind,
        tag: Option<&str>,
        cap: usize,
    ) -> Result<Seq<'h>, BridgeError> {
        // The capacity is a hint from the value: bounded, so that a
        // hostile length cannot reserve memory up front.
        let mut items = Vec::with_capacity(cap.min(1024) + 1);
        if let Some(t) = tag {
            items.push(name_keyword(t)?);
        }
        Ok(Seq { ser, items, kind })
    }

    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        let t = v.serialize(self.ser)?;
        self.items.push(t);
        Ok(())
    }

    fn finish(self) -> Result<Term<'h>, BridgeError> {
        let heap = self.ser.heap;
        Ok(match self.kind {
            SeqKind::List => heap.list(&self.items),
            SeqKind::Vector => heap.vector(&self.items),
            SeqKind::Map => map_of(heap, &self.items)?,
            SeqKind::TaggedMap => {
                let m = map_of(heap, &self.items[1..])?;
                heap.vector(&[self.items[0], m])
            }
        })
    }
}

/// The map of alternating keys and values; an error if two keys are the
/// same Lonala value (`None` and `Some(None)` are both `nil`; fields
/// `max_len` and `maxLen` both `:max-len`): one would be lost.
fn map_of<'h>(heap: &'h Heap, items: &[Term<'h>]) -> Result<Term<'h>, BridgeError> {
    let pairs: Vec<_> = items.chunks(2).map(|p| (p[0], p[1])).collect();
    let m = heap.map(&pairs);
    if m.map_len() != Some(pairs.len()) {
        let mut keys: Vec<Term<'h>> = pairs.iter().map(|p| p.0).collect();
        keys.sort_by(|a, b| lona_term::compare(*a, *b));
        let dup = keys
            .windows(2)
            .find(|w| lona_term::equal(w[0], w[1]))
            .map(|w| w[0].to_string())
            .unwrap_or_default();
        return Err(BridgeError(format!(
            "two keys of a map both become the Lonala key {dup}"
        )));
    }
    Ok(m)
}

impl<'h> ser::Serializer for Ser<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    type SerializeSeq = Seq<'h>;
    type SerializeTuple = Seq<'h>;
    type SerializeTupleStruct = Seq<'h>;
    type SerializeTupleVariant = Seq<'h>;
    type SerializeMap = Seq<'h>;
    type SerializeStruct = Seq<'h>;
    type SerializeStructVariant = Seq<'h>;

    fn serialize_bool(self, v: bool) -> Result<Term<'h>, BridgeError> {
        Ok(Term::bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.bigint(&BigInt::from(v)))
    }
    fn serialize_u8(self, v: u8) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Term<'h>, BridgeError> {
        self.serialize_i64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.bigint(&BigInt::from(v)))
    }
    fn serialize_u128(self, v: u128) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.bigint(&BigInt::from(v)))
    }
    fn serialize_f32(self, v: f32) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.float(v))
    }
    fn serialize_char(self, v: char) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.string(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.string(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Term<'h>, BridgeError> {
        Ok(self.heap.binary(v))
    }
    fn serialize_none(self) -> Result<Term<'h>, BridgeError> {
        Ok(Term::NIL)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Term<'h>, BridgeError> {
        v.serialize(self.inner()?)
    }
    fn serialize_unit(self) -> Result<Term<'h>, BridgeError> {
        Ok(Term::NIL)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Term<'h>, BridgeError> {
        Ok(Term::NIL)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
    ) -> Result<Term<'h>, BridgeError> {
        name_keyword(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<Term<'h>, BridgeError> {
        let t = v.serialize(self.inner()?)?;
        let bits = || match t.view() {
            View::Int(n) => Ok(n as u64),
            View::BigInt(b) => u64::try_from(&b).map_err(|_| BridgeError("bad id".into())),
            _ => Err(BridgeError("bad id".into())),
        };
        match name {
            PID_NAME => Ok(self.heap.pid(lona_term::Pid(bits()?))),
            REF_NAME => Ok(self.heap.reference(bits()?)),
            EXT_PID_NAME => ext_pid(self.heap, t),
            _ => Ok(t),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Term<'h>, BridgeError> {
        let t = v.serialize(self.inner()?)?;
        Ok(self.heap.vector(&[name_keyword(variant)?, t]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::List, None, len.unwrap_or(0))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::Vector, None, len)
    }
    fn serialize_tuple_struct(self, _n: &'static str, len: usize) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::Vector, None, len)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::Vector, Some(variant), len)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::Map, None, 2 * len.unwrap_or(0))
    }
    fn serialize_struct(self, _n: &'static str, len: usize) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::Map, None, 2 * len)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _i: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'h>, BridgeError> {
        self.seq(SeqKind::TaggedMap, Some(variant), 2 * len)
    }
}

impl<'h> ser::SerializeSeq for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeTuple for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeTupleStruct for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeTupleVariant for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeMap for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), BridgeError> {
        self.push(k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), BridgeError> {
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeStruct for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), BridgeError> {
        self.items.push(name_keyword(key)?);
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

impl<'h> ser::SerializeStructVariant for Seq<'h> {
    type Ok = Term<'h>;
    type Error = BridgeError;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), BridgeError> {
        self.items.push(name_keyword(key)?);
        self.push(v)
    }
    fn end(self) -> Result<Term<'h>, BridgeError> {
        self.finish()
    }
}

// ---- deserializing -------------------------------------------------------

/// Deserializes a term.
pub fn from_term<'de, T: de::Deserialize<'de>>(t: Term<'de>) -> Result<T, BridgeError> {
    T::deserialize(De(t.unmeta(), 0))
}

/// Deserializes a message fragment.
pub fn from_message<T: de::DeserializeOwned>(m: &Fragment) -> Result<T, BridgeError> {
    from_term(m.root())
}

/// Deserializes an exit reason: a Lonala process's (what it raised or
/// exited with, say `[:error [:badarith ...]]`), or one of the runtime's
/// (`:normal`, `:killed`, `:noproc`, ... as keywords), as a monitor's
/// `Down`, a link's `Exit` or `lona_vm::otp::LonaCallError::Exit` give it.
pub fn from_reason<T: de::DeserializeOwned>(r: &lona_runtime::Reason) -> Result<T, BridgeError> {
    let heap = Heap::new();
    from_term(crate::msg::reason_term(&heap, r))
}

/// A term being deserialized, and how deeply it is nested.
struct De<'de>(Term<'de>, u32);

impl<'de> De<'de> {
    /// `t` nested at `depth`: an error past [`MAX_DEPTH`].
    fn at(t: Term<'de>, depth: u32) -> Result<De<'de>, BridgeError> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        // Metadata is not part of the value.
        Ok(De(t.unmeta(), depth))
    }

    /// The same term one level down (`Some(x)`, a newtype's value).
    fn inner(self) -> Result<De<'de>, BridgeError> {
        De::at(self.0, self.1 + 1)
    }

    /// The entries of a map, for a Rust map: an error if two keys read
    /// as the same Rust key (`:a`, `'a` and `"a"` all read as `"a"`).
    fn pairs(&self, m: lona_term::MapView<'de>) -> Result<Pairs<'de>, BridgeError> {
        let entries: Vec<_> = m.iter().collect();
        let mut names = std::collections::HashSet::new();
        for (k, _) in &entries {
            let name = match k.view() {
                View::Keyword(a) | View::Symbol(a) => a.name(),
                View::Str(s) => s,
                _ => continue,
            };
            if !names.insert(name) {
                return Err(BridgeError(format!(
                    "two keys of a map both read as \"{name}\""
                )));
            }
        }
        Ok(Pairs {
            it: entries.into_iter(),
            value: None,
            fields: None,
            depth: self.1 + 1,
        })
    }
}

fn kind(t: Term<'_>) -> &'static str {
    match t.view() {
        View::Nil => "nil",
        View::Bool(_) => "a boolean",
        View::EmptyList | View::Cons(..) => "a list",
        View::Int(_) | View::BigInt(_) => "an integer",
        View::Float(_) => "a float",
        View::Keyword(_) => "a keyword",
        View::Symbol(_) => "a symbol",
        View::Pid(_) | View::ExtPid { .. } => "a pid",
        View::Ref(_) | View::ExtRef { .. } => "a reference",
        View::Str(_) => "a string",
        View::Binary(_) => "a binary",
        View::Vector(_) => "a vector",
        View::Map(_) => "a map",
        View::Set(_) => "a set",
        View::Regex(_) => "a regex",
        View::Closure { .. } => "a function",
        View::Cell(_) => "an atom",
        View::Meta { value, .. } => kind(value),
    }
}

impl<'de> De<'de> {
    fn wrong(&self, want: &str) -> BridgeError {
        let mut s = String::new();
        crate::print::readable(&mut s, self.0);
        if s.len() > 60 {
            s.truncate(57);
            s.push_str("...");
        }
        BridgeError(format!("expected {want}, found {} {s}", kind(self.0)))
    }

    /// The elements of a list or vector.
    fn items(&self) -> Option<Vec<Term<'de>>> {
        match self.0.view() {
            View::Vector(v) => Some(v.to_vec()),
            View::EmptyList | View::Nil => Some(Vec::new()),
            View::Cons(..) => Some(self.0.list_iter().collect()),
            // A set gives its elements in term order (HashSet, BTreeSet).
            View::Set(m) => Some(m.ordered_pairs().into_iter().map(|p| p.0).collect()),
            _ => None,
        }
    }
}

struct Items<'de> {
    it: std::vec::IntoIter<Term<'de>>,
    /// The depth of the elements.
    depth: u32,
}

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = BridgeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, BridgeError> {
        match self.it.next() {
            Some(t) => seed.deserialize(De::at(t, self.depth)?).map(Some),
            None => Ok(None),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.it.len())
    }
}

struct Pairs<'de> {
    it: std::vec::IntoIter<(Term<'de>, Term<'de>)>,
    value: Option<Term<'de>>,
    /// Struct fields: keyword keys are mapped back to these names.
    fields: Option<&'static [&'static str]>,
    /// The depth of the keys and values.
    depth: u32,
}

impl<'de> de::MapAccess<'de> for Pairs<'de> {
    type Error = BridgeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, BridgeError> {
        let Some((k, v)) = self.it.next() else {
            return Ok(None);
        };
        self.value = Some(v);
        if let Some(fields) = self.fields {
            let name = match k.view() {
                View::Keyword(a) => Some(a.name()),
                View::Str(s) => Some(s),
                _ => None,
            };
            if let Some(name) = name {
                // Unknown names pass through as they are (serde ignores
                // them, or reports them with deny_unknown_fields).
                let field = unkebab(name, fields).unwrap_or(name);
                return seed
                    .deserialize(field.to_string().into_deserializer())
                    .map(Some);
            }
        }
        seed.deserialize(De::at(k, self.depth)?).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, BridgeError> {
        let v = self
            .value
            .take()
            .ok_or_else(|| BridgeError("a map value without its key".into()))?;
        seed.deserialize(De::at(v, self.depth)?)
    }
}

/// An enum: its variant's name and the rest of `[:variant ...]`.
struct Variant<'de> {
    name: &'static str,
    rest: Vec<Term<'de>>,
    /// The depth of the values after the tag.
    depth: u32,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = BridgeError;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), BridgeError> {
        let v = seed.deserialize(self.name.into_deserializer())?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'de> {
    type Error = BridgeError;
    fn unit_variant(self) -> Result<(), BridgeError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(BridgeError(format!(":{} takes no value", kebab(self.name))))
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, BridgeError> {
        match self.rest.as_slice() {
            [v] => seed.deserialize(De::at(*v, self.depth)?),
            _ => Err(BridgeError(format!(
                "expected [:{} value], found {} values",
                kebab(self.name),
                self.rest.len()
            ))),
        }
    }
    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, BridgeError> {
        if self.rest.len() != len {
            return Err(BridgeError(format!(
                "expected {len} values after :{}, found {}",
                kebab(self.name),
                self.rest.len()
            )));
        }
        visitor.visit_seq(Items {
            it: self.rest.into_iter(),
            depth: self.depth,
        })
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, BridgeError> {
        match self.rest.as_slice() {
            [m] => {
                de::Deserializer::deserialize_struct(De::at(*m, self.depth)?, "", fields, visitor)
            }
            _ => Err(BridgeError(format!(
                "expected [:{} {{...}}]",
                kebab(self.name)
            ))),
        }
    }
}

macro_rules! int_method {
    ($name:ident, $t:ty, $visit:ident) => {
        fn $name<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
            let n: Option<$t> = match self.0.view() {
                View::Int(n) => <$t>::try_from(n).ok(),
                View::BigInt(b) => <$t>::try_from(&b).ok(),
                _ => return Err(self.wrong(stringify!($t))),
            };
            match n {
                Some(n) => v.$visit(n),
                None => Err(self.wrong(concat!("an integer that fits ", stringify!($t)))),
            }
        }
    };
}

impl<'de> de::Deserializer<'de> for De<'de> {
    type Error = BridgeError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Nil => v.visit_unit(),
            View::Bool(b) => v.visit_bool(b),
            View::Int(n) => v.visit_i64(n),
            View::BigInt(b) => match (i128::try_from(&b), u128::try_from(&b)) {
                (Ok(n), _) => v.visit_i128(n),
                (_, Ok(n)) => v.visit_u128(n),
                _ => v.visit_string(b.to_string()),
            },
            View::Float(f) => v.visit_f64(f),
            View::Keyword(a) | View::Symbol(a) => v.visit_str(a.name()),
            View::Str(s) => v.visit_borrowed_str(s),
            View::Binary(b) => v.visit_borrowed_bytes(b),
            View::Pid(p) => v.visit_u64(p.0),
            View::Ref(r) => v.visit_u64(r),
            View::Regex(s) => v.visit_borrowed_str(s),
            View::EmptyList | View::Cons(..) | View::Vector(_) | View::Set(_) => {
                let items = self.items().unwrap_or_default();
                v.visit_seq(Items {
                    it: items.into_iter(),
                    depth: self.1 + 1,
                })
            }
            View::Map(m) => v.visit_map(self.pairs(m)?),
            View::Closure { .. } => Err(self.wrong("a value (functions do not convert)")),
            View::Cell(_) => Err(self.wrong("a value (atoms do not convert: deref first)")),
            // `De::at` took metadata off; a wrapper inside a list's tail
            // is walked as the list.
            View::Meta { value, .. } => De(value, self.1).deserialize_any(v),
            View::ExtPid { .. } | View::ExtRef { .. } => {
                Err(self.wrong("a value (pids and references of other nodes do not convert)"))
            }
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Bool(b) => v.visit_bool(b),
            _ => Err(self.wrong("a boolean")),
        }
    }

    int_method!(deserialize_i8, i8, visit_i8);
    int_method!(deserialize_i16, i16, visit_i16);
    int_method!(deserialize_i32, i32, visit_i32);
    int_method!(deserialize_i64, i64, visit_i64);
    int_method!(deserialize_i128, i128, visit_i128);
    int_method!(deserialize_u8, u8, visit_u8);
    int_method!(deserialize_u16, u16, visit_u16);
    int_method!(deserialize_u32, u32, visit_u32);
    int_method!(deserialize_u64, u64, visit_u64);
    int_method!(deserialize_u128, u128, visit_u128);

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        self.deserialize_f64(v)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Float(f) => v.visit_f64(f),
            View::Int(n) => v.visit_f64(n as f64),
            _ => Err(self.wrong("a number")),
        }
    }
    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Str(s) if s.chars().count() == 1 => {
                v.visit_char(s.chars().next().unwrap_or('\0'))
            }
            _ => Err(self.wrong("a one-character string")),
        }
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Str(s) => v.visit_borrowed_str(s),
            View::Keyword(a) | View::Symbol(a) => v.visit_str(a.name()),
            _ => Err(self.wrong("a string")),
        }
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        self.deserialize_str(v)
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Binary(b) => v.visit_borrowed_bytes(b),
            View::Str(s) => v.visit_borrowed_bytes(s.as_bytes()),
            _ => Err(self.wrong("a binary")),
        }
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        self.deserialize_bytes(v)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Nil => v.visit_none(),
            _ => v.visit_some(self.inner()?),
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Nil => v.visit_unit(),
            _ => Err(self.wrong("nil")),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, BridgeError> {
        self.deserialize_unit(v)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, BridgeError> {
        match (name, self.0.view()) {
            (PID_NAME, View::Pid(p)) => v.visit_u64(p.0),
            (PID_NAME, _) => Err(self.wrong("a pid")),
            (REF_NAME, View::Ref(r)) => v.visit_u64(r),
            (REF_NAME, _) => Err(self.wrong("a reference")),
            (
                EXT_PID_NAME,
                View::ExtPid {
                    node,
                    id,
                    serial,
                    creation,
                },
            ) => {
                let n = |x: u32| Term::small_int(i64::from(x)).unwrap_or(Term::NIL);
                let items = vec![Term::keyword_atom(node), n(id), n(serial), n(creation)];
                v.visit_seq(Items {
                    it: items.into_iter(),
                    depth: self.1 + 1,
                })
            }
            (EXT_PID_NAME, _) => Err(self.wrong("a pid of another node")),
            _ => v.visit_newtype_struct(self.inner()?),
        }
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.items() {
            Some(items) => v.visit_seq(Items {
                it: items.into_iter(),
                depth: self.1 + 1,
            }),
            None => Err(self.wrong("a list or vector")),
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, BridgeError> {
        match self.items() {
            Some(items) if items.len() == len => v.visit_seq(Items {
                it: items.into_iter(),
                depth: self.1 + 1,
            }),
            Some(items) => Err(BridgeError(format!(
                "expected {len} elements, found {}",
                items.len()
            ))),
            None => Err(self.wrong("a vector")),
        }
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, BridgeError> {
        self.deserialize_tuple(len, v)
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Map(m) => v.visit_map(self.pairs(m)?),
            _ => Err(self.wrong("a map")),
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, BridgeError> {
        match self.0.view() {
            View::Map(m) => v.visit_map(Pairs {
                it: m.iter().collect::<Vec<_>>().into_iter(),
                value: None,
                fields: Some(fields),
                depth: self.1 + 1,
            }),
            _ => Err(self.wrong("a map")),
        }
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, BridgeError> {
        let (tag, rest) = match self.0.view() {
            View::Keyword(a) => (a, Vec::new()),
            View::Vector(items) => match items.first().map(|t| t.view()) {
                Some(View::Keyword(a)) => (a, items[1..].to_vec()),
                _ => return Err(self.wrong("[:variant ...]")),
            },
            _ => return Err(self.wrong("a keyword or [:variant ...]")),
        };
        let Some(name) = unkebab(tag.name(), variants) else {
            return Err(BridgeError(format!(
                "unknown variant :{}, expected one of {}",
                tag.name(),
                variants
                    .iter()
                    .map(|n| format!(":{}", kebab(n)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        v.visit_enum(Variant {
            name,
            rest,
            depth: self.1 + 1,
        })
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        self.deserialize_str(v)
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, BridgeError> {
        v.visit_unit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use std::collections::BTreeMap;

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    enum Msg {
        Ping,
        GetValue,
        Add(i64),
        Pair(i64, String),
        Move { x: i32, max_len: u8 },
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Config {
        name: String,
        max_len: Option<u32>,
        tags: Vec<String>,
        point: (i64, f64),
        big: u64,
        huge: i128,
        msgs: Vec<Msg>,
        table: BTreeMap<String, i64>,
        owner: PidTerm,
        tag: RefTerm,
    }

    fn printed<T: Serialize>(v: &T) -> String {
        let h = Heap::new();
        let t = to_term(&h, v).unwrap();
        let mut s = String::new();
        crate::print::readable(&mut s, t);
        s
    }

    fn sample() -> Config {
        Config {
            name: "n".into(),
            max_len: Some(3),
            tags: vec!["a".into(), "b".into()],
            point: (-1, 2.5),
            big: u64::MAX,
            huge: i128::MIN,
            msgs: vec![
                Msg::Ping,
                Msg::GetValue,
                Msg::Add(5),
                Msg::Pair(1, "x".into()),
                Msg::Move { x: -2, max_len: 7 },
            ],
            table: [("k".to_string(), 1)].into_iter().collect(),
            owner: PidTerm(lona_runtime::Pid::from_bits(7 << 32 | 3)),
            tag: RefTerm(lona_runtime::Ref::from_bits(99)),
        }
    }

    #[test]
    fn round_trips() {
        let c = sample();
        let m = to_message(&c).unwrap();
        let back: Config = from_message(&m).unwrap();
        assert_eq!(back, c);
        let v: Vec<Option<bool>> = vec![Some(true), None, Some(false)];
        assert_eq!(
            from_message::<Vec<Option<bool>>>(&to_message(&v).unwrap()).unwrap(),
            v
        );
        assert_eq!(
            from_message::<char>(&to_message(&'λ').unwrap()).unwrap(),
            'λ'
        );
    }

    #[test]
    fn the_terms_lonala_sees() {
        assert_eq!(printed(&Msg::Ping), ":ping");
        assert_eq!(printed(&Msg::GetValue), ":get-value");
        assert_eq!(printed(&Msg::Add(5)), "[:add 5]");
        assert_eq!(printed(&Msg::Pair(1, "x".into())), "[:pair 1 \"x\"]");
        assert_eq!(
            printed(&Msg::Move { x: 1, max_len: 2 }),
            "[:move {:max-len 2, :x 1}]"
        );
        assert_eq!(printed(&vec![1, 2]), "(1 2)");
        assert_eq!(printed(&(1, "a")), "[1 \"a\"]");
        assert_eq!(printed(&None::<i32>), "nil");
        assert_eq!(printed(&u64::MAX), "18446744073709551615");
    }

    #[test]
    fn lonala_shapes_read_back() {
        let h = Heap::new();
        let ok = h.vector(&[Term::keyword("ok"), h.int(41)]);
        let (tag, n): (String, i64) = from_term(ok).unwrap();
        assert_eq!((tag.as_str(), n), ("ok", 41));
        // a vector where a Vec is expected, and a list where a tuple is
        let v = h.vector(&[h.int(1), h.int(2)]);
        assert_eq!(from_term::<Vec<u8>>(v).unwrap(), vec![1, 2]);
        let l = h.list(&[h.int(1), h.string("s")]);
        assert_eq!(from_term::<(i32, String)>(l).unwrap(), (1, "s".to_string()));
    }

    #[test]
    fn errors_say_what_was_wrong() {
        let h = Heap::new();
        let e = from_term::<i64>(Term::keyword("foo")).unwrap_err();
        assert_eq!(e.to_string(), "expected i64, found a keyword :foo");
        let e = from_term::<u8>(h.int(300)).unwrap_err();
        assert!(e.to_string().contains("fits u8"), "{e}");
        let e = from_term::<Msg>(Term::keyword("pong")).unwrap_err();
        assert!(e.to_string().starts_with("unknown variant :pong"), "{e}");
        let m = h.map(&[(Term::keyword("name"), h.string("x"))]);
        let e = from_term::<Config>(m).unwrap_err();
        assert!(e.to_string().contains("missing field"), "{e}");
        let e = from_term::<(i32, i32)>(h.vector(&[h.int(1)])).unwrap_err();
        assert_eq!(e.to_string(), "expected 2 elements, found 1");
        let e =
            from_term::<Msg>(h.vector(&[Term::keyword("add"), h.int(1), h.int(2)])).unwrap_err();
        assert!(e.to_string().contains("[:add value]"), "{e}");
        let e = from_term::<PidTerm>(h.int(1)).unwrap_err();
        assert!(e.to_string().contains("expected a pid"), "{e}");
    }

    /// A recursive type: serde walks it on the Rust stack.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Chain {
        End,
        Link(Box<Chain>),
    }

    fn chain(n: usize) -> Chain {
        (0..n).fold(Chain::End, |c, _| Chain::Link(Box::new(c)))
    }

    #[test]
    fn a_deep_value_is_an_error_in_both_directions_not_a_stack_overflow() {
        let h = Heap::new();
        // 50,000 vectors deep, as a Lonala process can send.
        let mut t = h.vector(&[Term::keyword("end")]);
        for _ in 0..50_000 {
            t = h.vector(&[Term::keyword("link"), t]);
        }
        let e = from_term::<Chain>(t).unwrap_err();
        assert!(e.to_string().contains("nested more than 512"), "{e}");
        let mut l = h.list(&[]);
        for _ in 0..50_000 {
            l = h.list(&[l]);
        }
        let e = from_term::<serde::de::IgnoredAny>(l).map(|_| ());
        assert!(e.is_ok(), "ignoring a value does not walk it");
        #[derive(Deserialize, Debug)]
        struct Lists(#[allow(dead_code)] Vec<Lists>);
        let e = from_term::<Lists>(l).unwrap_err();
        assert!(e.to_string().contains("nested more than"), "{e}");
        // Deep Some and newtypes count too.
        let e = to_message(&chain(2_000)).unwrap_err();
        assert!(e.to_string().contains("nested more than"), "{e}");
        // Within the limit, both ways work.
        let c = chain(100);
        assert_eq!(from_message::<Chain>(&to_message(&c).unwrap()).unwrap(), c);
    }

    #[test]
    fn keys_that_become_one_are_an_error_not_lost() {
        // None and Some(None) are both nil.
        let m: BTreeMap<Option<Option<i32>>, i32> =
            [(None, 1), (Some(None), 2), (Some(Some(3)), 3)]
                .into_iter()
                .collect();
        let e = to_message(&m).unwrap_err();
        assert!(e.to_string().contains("Lonala key nil"), "{e}");
        // Fields max_len and maxLen are both :max-len.
        #[derive(Serialize)]
        #[allow(non_snake_case)]
        struct Both {
            max_len: u8,
            maxLen: u8,
        }
        let e = to_message(&Both {
            max_len: 1,
            maxLen: 2,
        })
        .unwrap_err();
        assert!(e.to_string().contains(":max-len"), "{e}");
        #[derive(Serialize)]
        enum V {
            S {
                max_len: u8,
                #[serde(rename = "max-len")]
                other: u8,
            },
        }
        assert!(to_message(&V::S {
            max_len: 1,
            other: 2
        })
        .is_err());
        // Lonala keys that read as one Rust key.
        let h = Heap::new();
        let m = h.map(&[(Term::keyword("a"), h.int(1)), (h.string("a"), h.int(2))]);
        let e = from_term::<BTreeMap<String, i64>>(m).unwrap_err();
        assert!(e.to_string().contains("both read as \"a\""), "{e}");
        let e = from_term::<std::collections::HashMap<String, i64>>(m).unwrap_err();
        assert!(e.to_string().contains("both read as"), "{e}");
        #[derive(Deserialize, Debug)]
        struct S {
            #[allow(dead_code)]
            max_len: u8,
        }
        let m = h.map(&[
            (Term::keyword("max-len"), h.int(1)),
            (Term::keyword("max_len"), h.int(2)),
        ]);
        let e = from_term::<S>(m).unwrap_err();
        assert!(e.to_string().contains("duplicate field"), "{e}");
        // Distinct keys still convert.
        let ok: BTreeMap<String, i64> =
            from_term(h.map(&[(Term::keyword("a"), h.int(1)), (h.string("b"), h.int(2))])).unwrap();
        assert_eq!(ok.len(), 2);
    }

    #[test]
    fn kebab_case_both_ways() {
        assert_eq!(kebab("max_len"), "max-len");
        assert_eq!(kebab("GetValue"), "get-value");
        assert_eq!(kebab("Ping"), "ping");
        assert_eq!(
            unkebab("get-value", &["Ping", "GetValue"]),
            Some("GetValue")
        );
        assert_eq!(unkebab("max-len", &["max_len"]), Some("max_len"));
    }
}

#[cfg(test)]
mod remote_pid_tests {
    use super::*;

    #[test]
    fn a_pid_of_another_node_round_trips_and_a_local_one_is_refused() {
        let h = Heap::new();
        let p = RemotePidTerm {
            node: "erl@host".into(),
            id: 7,
            serial: 1,
            creation: u32::MAX,
        };
        let t = to_term(&h, &(1, p.clone())).unwrap();
        match t.view() {
            View::Vector(v) => assert!(matches!(
                v[1].view(),
                View::ExtPid {
                    id: 7,
                    serial: 1,
                    creation: u32::MAX,
                    ..
                }
            )),
            _ => panic!("not a vector"),
        }
        let back: (i64, RemotePidTerm) = from_term(t).unwrap();
        assert_eq!(back.1, p);
        // A local pid is not a pid of another node, and the other way.
        let local = h.pid(lona_term::Pid(5));
        assert!(from_term::<RemotePidTerm>(local).is_err());
        let ext = to_term(&h, &p).unwrap();
        assert!(from_term::<PidTerm>(ext).is_err());
    }
}
