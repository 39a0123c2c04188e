//! Maps and sets: building them, finding a key, `assoc` and `dissoc`.
//!
//! A map of at most [`MAP_SMALL_MAX`] keys is one flat object, its keys in
//! term order (`Heap::sorted_map`); a larger one is a trie
//! (`hamt.rs`). The functions here choose the form and keep a map in the
//! one its size calls for. A set is a boxed word around a map whose values
//! are its keys.
//!
//! Reading a map's entries needs no comparison (`view.rs`, `trie.rs`);
//! finding a key does, so lookup lives here, above the term order
//! (`cmp.rs`), the heap and the trie.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::cmp::{compare, equal};
use crate::hamt::{self, MAP_SMALL_MAX};
use crate::heap::Heap;
use crate::term::{header, Kind, Term};
use crate::tree;
use crate::view::{MapView, View};

impl Heap {
    /// A set of `items` (an element given twice is in it once): a boxed
    /// word around a map whose values are its keys.
    pub fn set(&self, items: &[Term<'_>]) -> Term<'_> {
        let pairs: Vec<(Term<'_>, Term<'_>)> = items.iter().map(|x| (*x, *x)).collect();
        let m = self.map(&pairs);
        self.with_terms(header(Kind::Set, 1), &[], &[m])
    }

    /// The map inside a set (`None` if `s` is not a set).
    fn set_map<'a>(s: Term<'a>) -> Option<Term<'a>> {
        let h = s.boxed_header()?;
        if Kind::from_header(h) != Kind::Set {
            return None;
        }
        // SAFETY: a set's payload word is its map, alive as long as it.
        Some(unsafe { Term::from_bits(s.payload(0)) })
    }

    /// `s` with `x` added (the same set if `x` is in it), or `None` if `s`
    /// is not a set.
    pub fn set_conj(&self, s: Term<'_>, x: Term<'_>) -> Option<Term<'_>> {
        let m = Self::set_map(s)?;
        if m.map_get(x).is_some() {
            // SAFETY: checked to be ours (or permanent).
            return Some(unsafe { self.wrap(self.own(s)) });
        }
        let m2 = self.map_assoc(m, x, x)?;
        Some(self.with_terms(header(Kind::Set, 1), &[], &[m2]))
    }

    /// `s` without `x` (the same set if absent), or `None` if `s` is not a
    /// set.
    pub fn set_disj(&self, s: Term<'_>, x: Term<'_>) -> Option<Term<'_>> {
        let m = Self::set_map(s)?;
        if m.map_get(x).is_none() {
            // SAFETY: checked to be ours (or permanent).
            return Some(unsafe { self.wrap(self.own(s)) });
        }
        let m2 = self.map_dissoc(m, x)?;
        Some(self.with_terms(header(Kind::Set, 1), &[], &[m2]))
    }

    /// A map from key/value pairs; a later pair wins over an earlier one
    /// with an equal key. More than [`crate::MAP_SMALL_MAX`] keys make a
    /// trie (`hamt.rs`).
    pub fn map(&self, pairs: &[(Term<'_>, Term<'_>)]) -> Term<'_> {
        for (k, v) in pairs {
            self.own(*k);
            self.own(*v);
        }
        let mut v: Vec<(Term<'_>, Term<'_>)> = pairs.to_vec();
        // stable sort keeps equal keys in input order; keep the last.
        v.sort_by(|a, b| compare(a.0, b.0));
        let mut out: Vec<(Term<'_>, Term<'_>)> = Vec::with_capacity(v.len());
        for p in v {
            match out.last_mut() {
                Some(last) if equal(last.0, p.0) => *last = p,
                _ => out.push(p),
            }
        }
        if out.len() > MAP_SMALL_MAX {
            let m = hamt::from_pairs(self, &out);
            // SAFETY: a fresh map of this heap.
            return unsafe { self.wrap(m) };
        }
        self.sorted_map(&out)
    }

    /// A map from each distinct item of `items` (by `=`) to how many
    /// times it occurs, the first of equal items being its key: what
    /// `frequencies` makes, and the map `assoc`-ing the counts one item
    /// at a time would make. The counting is done in a table off the heap
    /// and the map is written once, at its final size (`from_pairs`):
    /// one `assoc` per item copied a path of the trie each time, some 100
    /// words per item on a large map, and a built-in cannot collect
    /// while it runs, so a million items left a gigabyte of garbage
    /// (k-nucleotide, `docs/benchmarks-history.md`, session 29).
    pub fn frequencies(&self, items: &[Term<'_>]) -> Term<'_> {
        let mut counts: HashMap<Keyed<'_>, u64, BuildHasherDefault<Prehashed>> = HashMap::default();
        for x in items {
            self.own(*x);
            *counts.entry(Keyed(hamt::key_hash(*x), *x)).or_insert(0) += 1;
        }
        if counts.len() <= MAP_SMALL_MAX {
            let pairs: Vec<(Term<'_>, Term<'_>)> = counts
                .into_iter()
                .map(|(Keyed(_, k), n)| (k, self.count(n)))
                .collect();
            return self.map(&pairs);
        }
        let items: Vec<(u64, u64, u64)> = counts
            .into_iter()
            .map(|(Keyed(h, k), n)| (k.bits(), self.count(n).bits(), h))
            .collect();
        // SAFETY: a fresh map of this heap, of keys checked to be ours
        // (or permanent) and counts that are immediates.
        unsafe { self.wrap(hamt::from_hashed(self, items)) }
    }

    /// `counts` (a map whose values are integers) with each item of
    /// `items` counted in: the map `frequencies` makes of what `counts`
    /// counted and then `items`, the first of equal items being its key.
    /// `None` if `counts` is not a map, or counts an item with a value
    /// that is not an integer. For `frequencies` of a lazy sequence,
    /// which counts it a chunk at a time (`lonala/prelude.lona`): the
    /// chunks need not be held all at once, and the garbage of each
    /// chunk's `assoc`s is collected before the next.
    pub fn frequencies_into(&self, counts: Term<'_>, items: &[Term<'_>]) -> Option<Term<'_>> {
        let View::Map(mv) = counts.view() else {
            return None;
        };
        if mv.is_empty() && mv.sorted().is_none() {
            return Some(self.frequencies(items));
        }
        // Each distinct item once, in order of first occurrence, with its
        // hash and count.
        let mut index: HashMap<Keyed<'_>, usize, BuildHasherDefault<Prehashed>> =
            HashMap::default();
        let mut distinct: Vec<(Term<'_>, u64, i64)> = Vec::new();
        for x in items {
            self.own(*x);
            let h = hamt::key_hash(*x);
            let i = *index.entry(Keyed(h, *x)).or_insert_with(|| {
                distinct.push((*x, h, 0));
                distinct.len() - 1
            });
            distinct[i].2 += 1;
        }
        // SAFETY: checked to be ours (or permanent).
        let mut m = unsafe { self.wrap(self.own(counts)) };
        for (i, &(k, _, n)) in distinct.iter().enumerate() {
            let View::Map(mv) = m.view() else {
                return None;
            };
            if mv.trie().is_some() {
                // A trie: the rest counted in at once, each node on their
                // paths copied once (`hamt::add_counts`), with the hashes
                // computed above.
                let mut rest: Vec<(u64, u64, i64)> = distinct[i..]
                    .iter()
                    .map(|(k, h, n)| (k.bits(), *h, *n))
                    .collect();
                // SAFETY: a HamtMap of this heap; the keys checked to be
                // ours (or permanent).
                let t = unsafe { hamt::add_counts(self, m.bits(), &mut rest) }?;
                // SAFETY: a fresh map of this heap.
                return Some(unsafe { self.wrap(t) });
            }
            let had = match m.map_get(k) {
                Some(v) => v.as_i64()?,
                None => 0,
            };
            m = self.map_assoc(m, k, self.int(had.checked_add(n)?))?;
        }
        Some(m)
    }

    /// A count as a term: a small integer (every count of items that fit
    /// in memory is one).
    fn count(&self, n: u64) -> Term<'_> {
        self.int(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// `m` with `key` set to `value`, or `None` if `m` is not a map.
    /// O(log n) for a large map; a small map is copied (at most 32 keys).
    pub fn map_assoc(&self, m: Term<'_>, key: Term<'_>, value: Term<'_>) -> Option<Term<'_>> {
        let (key, value) = (self.own(key), self.own(value));
        // SAFETY: checked to be ours (or permanent).
        let (key, value) = unsafe { (self.wrap(key), self.wrap(value)) };
        let View::Map(mv) = m.view() else {
            return None;
        };
        if mv.sorted().is_some() {
            // A tree is changed by its comparator, in Lonala (`tree.rs`).
            return None;
        }
        let Some((keys, values)) = mv.flat() else {
            self.own(m);
            // SAFETY: a HamtMap term of this heap; key and value checked.
            return Some(unsafe { self.wrap(hamt::assoc(self, m.bits(), key, value)) });
        };
        match keys.binary_search_by(|k| compare(*k, key)) {
            Ok(i) => {
                let mut pairs: Vec<(Term<'_>, Term<'_>)> =
                    keys.iter().copied().zip(values.iter().copied()).collect();
                pairs[i].1 = value;
                Some(self.sorted_map(&pairs))
            }
            Err(i) => {
                let mut pairs: Vec<(Term<'_>, Term<'_>)> =
                    keys.iter().copied().zip(values.iter().copied()).collect();
                pairs.insert(i, (key, value));
                if pairs.len() > MAP_SMALL_MAX {
                    // SAFETY: a fresh map of this heap.
                    return Some(unsafe { self.wrap(hamt::from_pairs(self, &pairs)) });
                }
                Some(self.sorted_map(&pairs))
            }
        }
    }

    /// `m` without `key` (the same map if absent), or `None` if `m` is not
    /// a map.
    pub fn map_dissoc(&self, m: Term<'_>, key: Term<'_>) -> Option<Term<'_>> {
        let View::Map(mv) = m.view() else {
            return None;
        };
        if mv.sorted().is_some() {
            return None;
        }
        let mw = self.own(m);
        let Some((keys, values)) = mv.flat() else {
            // SAFETY: a HamtMap term of this heap.
            return Some(unsafe { self.wrap(hamt::dissoc(self, m.bits(), key)) });
        };
        match keys.binary_search_by(|k| compare(*k, key)) {
            Ok(i) => {
                let mut pairs: Vec<(Term<'_>, Term<'_>)> =
                    keys.iter().copied().zip(values.iter().copied()).collect();
                pairs.remove(i);
                Some(self.sorted_map(&pairs))
            }
            // SAFETY: checked to be ours (or permanent).
            Err(_) => Some(unsafe { self.wrap(mw) }),
        }
    }
}

/// A key of `Heap::frequencies`' table: its hash (`hamt::key_hash`,
/// which the trie is then built with) and the term, equal by `=`.
struct Keyed<'a>(u64, Term<'a>);

impl Hash for Keyed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0);
    }
}

impl PartialEq for Keyed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 && equal(self.1, other.1)
    }
}

impl Eq for Keyed<'_> {}

/// The hasher of that table: a key's hash is computed already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

impl<'h> MapView<'h> {
    /// The value for `key`.
    pub fn get(&self, key: Term<'_>) -> Option<Term<'h>> {
        if let Some((cmp, root)) = self.sorted() {
            return tree_get(cmp, root, key);
        }
        let Some((keys, values)) = self.flat() else {
            let m = self.trie().expect("a map is flat or a trie");
            // SAFETY: a HamtMap term borrowed for 'h; its words live as long.
            return unsafe { hamt::get(m.bits(), key).map(|w| Term::from_bits(w)) };
        };
        if key.is_immediate() && key.bits() != Term::EMPTY_LIST.bits() {
            // An immediate key (a keyword, a small integer...) equals only
            // the same word (`()` also equals `[]`), so a scan of a small map's keys by word finds
            // it without comparing names (the binary search compares a
            // keyword by its name: most of a record lookup's cost).
            return keys
                .iter()
                .position(|k| k.bits() == key.bits())
                .map(|i| values[i]);
        }
        keys.binary_search_by(|k| compare(*k, key))
            .ok()
            .map(|i| values[i])
    }
}

/// The value for `key` in the tree at `root` of comparator `cmp`
/// (`tree.rs`): a search by the term order when `cmp` is `nil`; otherwise
/// (a Lonala comparator, which only Lonala can call) the entry whose key
/// equals `key`, by a scan. The Lonala functions (`get`, `contains?`,
/// `find`) search a tree of a comparator with it instead (`sorted-get`).
fn tree_get<'h>(cmp: Term<'h>, root: Term<'h>, key: Term<'_>) -> Option<Term<'h>> {
    if cmp.bits() == Term::NIL.bits() {
        let mut at = root;
        while let Some((k, v, l, r)) = tree::node(at) {
            at = match compare(key, k) {
                std::cmp::Ordering::Less => l,
                std::cmp::Ordering::Greater => r,
                std::cmp::Ordering::Equal => return Some(v),
            };
        }
        return None;
    }
    tree::entries(root, false)
        .into_iter()
        .find(|(k, _)| equal(*k, key))
        .map(|(_, v)| v)
}

impl Heap {
    /// A sorted map (`set`: a sorted set) of comparator `cmp` (`nil`: the
    /// term order) and tree `root` (`nil` or a node, see `tree.rs`).
    pub fn sorted(&self, set: bool, cmp: Term<'_>, root: Term<'_>) -> Term<'_> {
        let kind = if set {
            Kind::SortedSet
        } else {
            Kind::SortedMap
        };
        self.with_terms(header(kind, 2), &[], &[cmp, root])
    }
}

impl<'h> Term<'h> {
    /// The value for `key`, if the term is a map that has it.
    pub fn map_get(self, key: Term<'_>) -> Option<Term<'h>> {
        match self.view() {
            View::Map(m) => m.get(key),
            _ => None,
        }
    }
}
