//! Large maps: a compressed hash array mapped trie (CHAMP: Steindorff and
//! Vinju, "Optimizing Hash-Array Mapped Tries for Fast and Lean Immutable
//! JVM Collections", OOPSLA 2015; after Bagwell, "Ideal Hash Trees", 2001).
//!
//! A map of at most [`MAP_SMALL_MAX`] keys is a flat object (keys in term
//! order, then values: `term.rs`); above that it is a trie, so `assoc`,
//! `dissoc` and `get` cost O(log32 n) and copy one path. Objects (every
//! payload word is a term, so the collector, deep copy and the heap walk
//! need nothing special):
//!
//! ```text
//! HamtMap   [count (small int), root node]
//! HamtNode  [datamap (small int), nodemap (small int),
//!            k0 v0 k1 v1 ... (one pair per datamap bit, in bit order),
//!            child ... (one per nodemap bit, in bit order)]
//! HamtColl  [k0 v0 k1 v1 ...]   keys with equal 64-bit hashes, in term order
//! ```
//!
//! Level `d` uses hash bits `5d .. 5d+5`; after 12 levels (60 bits) keys
//! whose hashes are equal so far go to a collision node. The shape is a
//! function of the key set alone: a key sits at the shallowest level where
//! its hash prefix is unique, and a removal that leaves a sub-node with one
//! entry inlines it into its parent (CHAMP's canonical form). So two equal
//! maps have the same representation, and a removal down to
//! [`MAP_SMALL_MAX`] keys gives a flat map again.
//!
//! Reading a trie without comparing keys (its count, its entries) is in
//! `trie.rs`, below the term order; choosing between the flat form and a
//! trie is `map.rs`'s.

use std::cmp::Ordering;

use crate::heap::Heap;
use crate::term::{header, header_arity, is_header, ptr_of, Kind, Term, TAG_BOXED, TAG_MASK};
use crate::trie::{collect, kind, unsmall, words};

/// Most keys a map holds in the flat (sorted array) form.
pub const MAP_SMALL_MAX: usize = 32;

const BITS: u32 = 5;
const MAX_SHIFT: u32 = 60;

/// The hash of a key: cheap for immediates, by content otherwise.
#[inline]
pub(crate) fn key_hash(t: Term<'_>) -> u64 {
    #[cfg(test)]
    if let Some(h) = tests::FORCED_HASH.with(|f| f.get()) {
        return h;
    }
    if t.is_immediate() && t.bits() != Term::EMPTY_LIST.bits() {
        // Equal immediates are the same word (but `()` equals `[]`). A multiplicative mix
        // (Fibonacci hashing) spreads nearby integers over all bits.
        let x = t.bits().wrapping_mul(0x9E37_79B9_7F4A_7C15);
        x ^ (x >> 29)
    } else {
        crate::cmp::term_hash(t)
    }
}

#[inline]
fn small(v: u64) -> u64 {
    (v << 3) | 0b011
}

fn eq(a: u64, b: u64) -> bool {
    if a == b {
        return true;
    }
    if a & TAG_MASK == TAG_BOXED && b & TAG_MASK == TAG_BOXED {
        // SAFETY: both are boxed words of live terms (callers pass keys of
        // live maps): each points at its header and `arity` payload words.
        unsafe {
            let (pa, pb) = (ptr_of(a), ptr_of(b));
            let h = *pa;
            if h == *pb && is_header(h) && matches!(Kind::from_header(h), Kind::Bin | Kind::Str) {
                // Two small binaries (or strings) of one length: equal
                // when their words are (the last one's padding is zero:
                // `Heap::bytes_object`). The general walk (`cmp.rs`) cost
                // as much as the rest of a lookup keyed on small binaries
                // (k-nucleotide's counts).
                let n = header_arity(h);
                return std::slice::from_raw_parts(pa.add(1), n)
                    == std::slice::from_raw_parts(pb.add(1), n);
            }
        }
    }
    // SAFETY: both are words of live terms (callers pass keys of live maps).
    unsafe { crate::cmp::equal(Term::from_bits(a), Term::from_bits(b)) }
}

fn cmp_words(a: u64, b: u64) -> Ordering {
    // SAFETY: as for `eq`.
    unsafe { crate::cmp::compare(Term::from_bits(a), Term::from_bits(b)) }
}

fn alloc(heap: &Heap, kind: Kind, payload: &[u64]) -> u64 {
    let p = heap.alloc(1 + payload.len());
    // SAFETY: fresh words for the header and payload; every payload word is
    // a valid term of this heap (or permanent).
    unsafe {
        p.write(header(kind, payload.len()));
        std::ptr::copy_nonoverlapping(payload.as_ptr(), p.add(1), payload.len());
    }
    p as usize as u64 | TAG_BOXED
}

/// A node whose payload is `parts`, one after another, written straight
/// into the heap: an update of a node on the path to a key builds no
/// temporary buffer (a `Vec` per level cost a malloc and a free; `maps`
/// and a supervisor's children map assoc on every change).
fn alloc_parts(heap: &Heap, kind: Kind, parts: &[&[u64]]) -> u64 {
    let len: usize = parts.iter().map(|x| x.len()).sum();
    let p = heap.alloc(1 + len);
    // SAFETY: fresh words for the header and `len` payload words, filled
    // by the copies below in turn; every payload word is a valid term of
    // this heap (or permanent).
    unsafe {
        p.write(header(kind, len));
        let mut at = p.add(1);
        for x in parts {
            std::ptr::copy_nonoverlapping(x.as_ptr(), at, x.len());
            at = at.add(x.len());
        }
    }
    p as usize as u64 | TAG_BOXED
}

/// A copy of `HamtNode` payload `w` with word `i` set to `x`.
fn alloc_patched(heap: &Heap, w: &[u64], i: usize, x: u64) -> u64 {
    alloc_parts(heap, Kind::HamtNode, &[&w[..i], &[x], &w[i + 1..]])
}

#[inline]
fn bit_of(h: u64, shift: u32) -> u32 {
    1 << ((h >> shift) & 31)
}

#[inline]
fn index(map: u32, bit: u32) -> usize {
    (map & (bit - 1)).count_ones() as usize
}

/// The value for `key` in the `HamtMap` `m`.
///
/// # Safety
/// `m` must be a live `HamtMap`.
pub(crate) unsafe fn get(m: u64, key: Term<'_>) -> Option<u64> {
    // SAFETY: per the caller.
    unsafe { get_h(m, key.bits(), key_hash(key)) }
}

/// `get` with the key's hash given (`key_hash`).
///
/// # Safety
/// As for [`get`].
pub(crate) unsafe fn get_h(m: u64, k: u64, h: u64) -> Option<u64> {
    // SAFETY: every node reached is a live node of the same map.
    unsafe {
        let mut node = words(m)[1];
        let mut shift = 0;
        loop {
            let w = words(node);
            if kind(node) == Kind::HamtColl {
                return w.chunks_exact(2).find(|p| eq(p[0], k)).map(|p| p[1]);
            }
            let (dm, nm) = (unsmall(w[0]) as u32, unsmall(w[1]) as u32);
            let bit = bit_of(h, shift);
            if dm & bit != 0 {
                let i = 2 + 2 * index(dm, bit);
                return eq(w[i], k).then_some(w[i + 1]);
            }
            if nm & bit == 0 {
                return None;
            }
            let c = 2 + 2 * dm.count_ones() as usize + index(nm, bit);
            node = w[c];
            shift += BITS;
        }
    }
}

/// A node holding two entries whose hashes agree below `shift`.
fn two(heap: &Heap, a: (u64, u64, u64), b: (u64, u64, u64), shift: u32) -> u64 {
    if shift >= MAX_SHIFT {
        let (x, y) = if cmp_words(a.0, b.0) == Ordering::Less {
            (a, b)
        } else {
            (b, a)
        };
        return alloc(heap, Kind::HamtColl, &[x.0, x.1, y.0, y.1]);
    }
    let (ba, bb) = (bit_of(a.2, shift), bit_of(b.2, shift));
    if ba == bb {
        let child = two(heap, a, b, shift + BITS);
        return alloc(heap, Kind::HamtNode, &[small(0), small(ba as u64), child]);
    }
    let (x, y) = if ba < bb { (a, b) } else { (b, a) };
    alloc(
        heap,
        Kind::HamtNode,
        &[small((ba | bb) as u64), small(0), x.0, x.1, y.0, y.1],
    )
}

/// `node` with `k` set to `v`; whether a key was added.
fn assoc_node(heap: &Heap, node: u64, k: u64, v: u64, h: u64, shift: u32) -> (u64, bool) {
    // SAFETY: `node` is a live node of the map being updated.
    let w = unsafe { words(node) };
    // SAFETY: as above.
    if unsafe { kind(node) } == Kind::HamtColl {
        let mut out: Vec<u64> = Vec::with_capacity(w.len() + 2);
        let mut added = true;
        let mut placed = false;
        for p in w.chunks_exact(2) {
            if !placed {
                match cmp_words(p[0], k) {
                    Ordering::Equal => {
                        out.extend_from_slice(&[p[0], v]);
                        placed = true;
                        added = false;
                        continue;
                    }
                    Ordering::Greater => {
                        out.extend_from_slice(&[k, v]);
                        placed = true;
                    }
                    Ordering::Less => {}
                }
            }
            out.extend_from_slice(p);
        }
        if !placed {
            out.extend_from_slice(&[k, v]);
        }
        return (alloc(heap, Kind::HamtColl, &out), added);
    }
    let (dm, nm) = (unsmall(w[0]) as u32, unsmall(w[1]) as u32);
    let bit = bit_of(h, shift);
    let ndata = dm.count_ones() as usize;
    if dm & bit != 0 {
        let i = 2 + 2 * index(dm, bit);
        if eq(w[i], k) {
            if w[i + 1] == v {
                return (node, false);
            }
            return (alloc_patched(heap, w, i + 1, v), false);
        }
        // Two keys meet here: push both one level down.
        // SAFETY: w[i] is a key of this live map.
        let eh = key_hash(unsafe { Term::from_bits(w[i]) });
        let child = two(heap, (w[i], w[i + 1], eh), (k, v, h), shift + BITS);
        let children = &w[2 + 2 * ndata..];
        let ci = index(nm, bit);
        let node = alloc_parts(
            heap,
            Kind::HamtNode,
            &[
                &[small((dm & !bit) as u64), small((nm | bit) as u64)],
                &w[2..i],
                &w[i + 2..2 + 2 * ndata],
                &children[..ci],
                &[child],
                &children[ci..],
            ],
        );
        return (node, true);
    }
    if nm & bit != 0 {
        let c = 2 + 2 * ndata + index(nm, bit);
        let (child, added) = assoc_node(heap, w[c], k, v, h, shift + BITS);
        if child == w[c] {
            return (node, false);
        }
        return (alloc_patched(heap, w, c, child), added);
    }
    let i = 2 + 2 * index(dm, bit);
    let node = alloc_parts(
        heap,
        Kind::HamtNode,
        &[
            &[small((dm | bit) as u64), w[1]],
            &w[2..i],
            &[k, v],
            &w[i..],
        ],
    );
    (node, true)
}

/// `HamtMap` `m` with `key` set to `value`.
///
/// # Safety
/// `m` must be a live `HamtMap`; `key`, `value` terms of `heap` (or
/// permanent).
pub(crate) unsafe fn assoc(heap: &Heap, m: u64, key: Term<'_>, value: Term<'_>) -> u64 {
    // SAFETY: per the caller.
    unsafe { assoc_h(heap, m, key, value, key_hash(key)) }
}

/// `assoc` with the key's hash given (`key_hash`).
///
/// # Safety
/// As for [`assoc`].
pub(crate) unsafe fn assoc_h(heap: &Heap, m: u64, key: Term<'_>, value: Term<'_>, h: u64) -> u64 {
    // SAFETY: per the caller.
    let w = unsafe { words(m) };
    let (root, added) = assoc_node(heap, w[1], key.bits(), value.bits(), h, 0);
    if root == w[1] {
        return m;
    }
    let n = unsmall(w[0]) + u64::from(added);
    alloc(heap, Kind::HamtMap, &[small(n), root])
}

/// `HamtMap` `m` with each `(key, hash, n)` of `items` (distinct keys,
/// `hash` their `key_hash`) counted in: `n` added to the key's value, an
/// integer, or the key added with value `n`. The nodes on the paths to
/// the keys are copied once for all of them (an `assoc` per key copies
/// the root and the upper nodes once per key); the result is the map
/// those `assoc`s would make. `None` if a value met is not an integer or
/// a sum overflows.
///
/// # Safety
/// `m` must be a live `HamtMap`; the keys, words of terms of `heap` (or
/// permanent).
pub(crate) unsafe fn add_counts(heap: &Heap, m: u64, items: &mut [(u64, u64, i64)]) -> Option<u64> {
    // SAFETY: per the caller.
    let w = unsafe { words(m) };
    let (root, added) = add_node(heap, w[1], items, 0)?;
    let n = unsmall(w[0]) + added as u64;
    Some(alloc(heap, Kind::HamtMap, &[small(n), root]))
}

/// The value word `v` (an integer) plus `n`, as a term of `heap`.
fn count_plus(heap: &Heap, v: u64, n: i64) -> Option<u64> {
    // SAFETY: a value word of a live map.
    let had = unsafe { Term::from_bits(v) }.as_i64()?;
    Some(heap.int(had.checked_add(n)?).bits())
}

/// `node` (at `shift`, its keys' hashes agreeing with all of `items`'
/// below it) with `items` counted in (`add_counts`); how many keys were
/// added.
fn add_node(
    heap: &Heap,
    node: u64,
    items: &mut [(u64, u64, i64)],
    shift: u32,
) -> Option<(u64, usize)> {
    // SAFETY: `node` is a live node of the map being updated; allocation
    // moves nothing, so its words stay readable while new ones are made.
    let w = unsafe { words(node) };
    // SAFETY: as above.
    if unsafe { kind(node) } == Kind::HamtColl {
        let mut pairs: Vec<(u64, u64)> = w.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        let mut added = 0;
        for &(k, _, n) in items.iter() {
            match pairs.iter_mut().find(|p| eq(p.0, k)) {
                Some(p) => p.1 = count_plus(heap, p.1, n)?,
                None => {
                    pairs.push((k, heap.int(n).bits()));
                    added += 1;
                }
            }
        }
        pairs.sort_by(|a, b| cmp_words(a.0, b.0));
        let flat: Vec<u64> = pairs.iter().flat_map(|p| [p.0, p.1]).collect();
        return Some((alloc(heap, Kind::HamtColl, &flat), added));
    }
    let (dm, nm) = (unsmall(w[0]) as u32, unsmall(w[1]) as u32);
    let ndata = dm.count_ones() as usize;
    let (data, children) = (&w[2..2 + 2 * ndata], &w[2 + 2 * ndata..]);
    let chunk = |h: u64| ((h >> shift) & 31) as u32;
    items.sort_unstable_by_key(|x| chunk(x.1));
    let (mut ndm, mut nnm) = (0u32, 0u32);
    let mut new_data: Vec<u64> = Vec::with_capacity(data.len() + 2 * items.len());
    let mut new_children: Vec<u64> = Vec::with_capacity(children.len() + items.len());
    let mut added = 0;
    let mut i = 0;
    for b in 0..32u32 {
        let bit = 1u32 << b;
        let start = i;
        while i < items.len() && chunk(items[i].1) == b {
            i += 1;
        }
        let group = &mut items[start..i];
        if dm & bit != 0 {
            let di = 2 * index(dm, bit);
            let (ek, ev) = (data[di], data[di + 1]);
            if group.is_empty() {
                ndm |= bit;
                new_data.extend_from_slice(&[ek, ev]);
            } else if group.len() == 1 && eq(group[0].0, ek) {
                ndm |= bit;
                new_data.extend_from_slice(&[ek, count_plus(heap, ev, group[0].2)?]);
            } else {
                // The entry and at least one new key: a node one level
                // down, as `two` makes for one new key.
                // SAFETY: `ek` is a key of this live map.
                let eh = key_hash(unsafe { Term::from_bits(ek) });
                let mut sub: Vec<(u64, u64, u64)> = vec![(ek, ev, eh)];
                for &(k, h, n) in group.iter() {
                    if eq(k, ek) {
                        sub[0].1 = count_plus(heap, ev, n)?;
                    } else {
                        sub.push((k, heap.int(n).bits(), h));
                        added += 1;
                    }
                }
                nnm |= bit;
                new_children.push(build(heap, &mut sub, shift + BITS));
            }
        } else if nm & bit != 0 {
            let child = children[index(nm, bit)];
            if group.is_empty() {
                new_children.push(child);
            } else {
                let (c, a) = add_node(heap, child, group, shift + BITS)?;
                added += a;
                new_children.push(c);
            }
            nnm |= bit;
        } else if group.len() == 1 {
            ndm |= bit;
            new_data.extend_from_slice(&[group[0].0, heap.int(group[0].2).bits()]);
            added += 1;
        } else if !group.is_empty() {
            let mut sub: Vec<(u64, u64, u64)> = group
                .iter()
                .map(|&(k, h, n)| (k, heap.int(n).bits(), h))
                .collect();
            added += sub.len();
            nnm |= bit;
            new_children.push(build(heap, &mut sub, shift + BITS));
        }
    }
    let head = [small(u64::from(ndm)), small(u64::from(nnm))];
    let node = alloc_parts(heap, Kind::HamtNode, &[&head, &new_data, &new_children]);
    Some((node, added))
}

/// A `HamtMap` of pairs with unique keys (more than [`MAP_SMALL_MAX`]),
/// built bottom-up in one pass: no intermediate nodes, so memory is the
/// final map's size (decoding a large map must stay linear).
pub(crate) fn from_pairs(heap: &Heap, pairs: &[(Term<'_>, Term<'_>)]) -> u64 {
    let mut items: Vec<(u64, u64, u64)> = pairs
        .iter()
        .map(|(k, v)| (k.bits(), v.bits(), key_hash(*k)))
        .collect();
    let root = build(heap, &mut items, 0);
    alloc(heap, Kind::HamtMap, &[small(pairs.len() as u64), root])
}

/// A `HamtMap` of unique keys (more than [`MAP_SMALL_MAX`]) given as
/// `(key, value, key_hash(key))` words, as [`from_pairs`] builds it, for a
/// caller that has the hashes already (`Heap::frequencies`).
pub(crate) fn from_hashed(heap: &Heap, mut items: Vec<(u64, u64, u64)>) -> u64 {
    let n = items.len() as u64;
    let root = build(heap, &mut items, 0);
    alloc(heap, Kind::HamtMap, &[small(n), root])
}

/// The node for `items` (unique keys whose hashes agree below `shift`).
fn build(heap: &Heap, items: &mut [(u64, u64, u64)], shift: u32) -> u64 {
    if shift >= MAX_SHIFT {
        items.sort_by(|a, b| cmp_words(a.0, b.0));
        let words: Vec<u64> = items.iter().flat_map(|x| [x.0, x.1]).collect();
        return alloc(heap, Kind::HamtColl, &words);
    }
    items.sort_by_key(|x| (x.2 >> shift) & 31);
    let (mut dm, mut nm) = (0u32, 0u32);
    let mut data = Vec::new();
    let mut children = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let chunk = (items[i].2 >> shift) & 31;
        let mut j = i + 1;
        while j < items.len() && (items[j].2 >> shift) & 31 == chunk {
            j += 1;
        }
        if j - i == 1 {
            dm |= 1 << chunk;
            data.extend_from_slice(&[items[i].0, items[i].1]);
        } else {
            nm |= 1 << chunk;
            children.push(build(heap, &mut items[i..j], shift + BITS));
        }
        i = j;
    }
    let mut words = Vec::with_capacity(2 + data.len() + children.len());
    words.push(small(dm as u64));
    words.push(small(nm as u64));
    words.extend_from_slice(&data);
    words.extend_from_slice(&children);
    alloc(heap, Kind::HamtNode, &words)
}

enum Removed {
    Unchanged,
    Node(u64),
    /// The node is down to one entry (inline it into the parent).
    Single(u64, u64),
}

fn dissoc_node(heap: &Heap, node: u64, k: u64, h: u64, shift: u32) -> Removed {
    // SAFETY: `node` is a live node of the map being updated.
    let w = unsafe { words(node) };
    // SAFETY: as above.
    if unsafe { kind(node) } == Kind::HamtColl {
        let Some(i) = w.chunks_exact(2).position(|p| eq(p[0], k)) else {
            return Removed::Unchanged;
        };
        let rest: Vec<u64> = w
            .chunks_exact(2)
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, p)| [p[0], p[1]])
            .collect();
        if rest.len() == 2 {
            return Removed::Single(rest[0], rest[1]);
        }
        return Removed::Node(alloc(heap, Kind::HamtColl, &rest));
    }
    let (dm, nm) = (unsmall(w[0]) as u32, unsmall(w[1]) as u32);
    let bit = bit_of(h, shift);
    let ndata = dm.count_ones() as usize;
    if dm & bit != 0 {
        let i = 2 + 2 * index(dm, bit);
        if !eq(w[i], k) {
            return Removed::Unchanged;
        }
        if shift > 0 && ndata == 2 && nm == 0 {
            let j = if i == 2 { 4 } else { 2 };
            return Removed::Single(w[j], w[j + 1]);
        }
        return Removed::Node(alloc_parts(
            heap,
            Kind::HamtNode,
            &[&[small((dm & !bit) as u64), w[1]], &w[2..i], &w[i + 2..]],
        ));
    }
    if nm & bit == 0 {
        return Removed::Unchanged;
    }
    let c = 2 + 2 * ndata + index(nm, bit);
    match dissoc_node(heap, w[c], k, h, shift + BITS) {
        Removed::Unchanged => Removed::Unchanged,
        Removed::Node(child) => Removed::Node(alloc_patched(heap, w, c, child)),
        Removed::Single(sk, sv) => {
            if shift > 0 && ndata == 0 && nm.count_ones() == 1 {
                return Removed::Single(sk, sv);
            }
            // Inline the single entry here, at `bit`, as data.
            let i = 2 + 2 * index(dm, bit);
            Removed::Node(alloc_parts(
                heap,
                Kind::HamtNode,
                &[
                    &[small((dm | bit) as u64), small((nm & !bit) as u64)],
                    &w[2..i],
                    &[sk, sv],
                    &w[i..2 + 2 * ndata],
                    &w[2 + 2 * ndata..c],
                    &w[c + 1..],
                ],
            ))
        }
    }
}

/// `HamtMap` `m` without `key`: the same word if absent, else the new map
/// (a flat map when it is down to [`MAP_SMALL_MAX`] keys).
///
/// # Safety
/// `m` must be a live `HamtMap`; `key` a term of `heap` (or permanent).
pub(crate) unsafe fn dissoc(heap: &Heap, m: u64, key: Term<'_>) -> u64 {
    // SAFETY: per the caller.
    let w = unsafe { words(m) };
    let n = unsmall(w[0]) as usize;
    let root = match dissoc_node(heap, w[1], key.bits(), key_hash(key), 0) {
        Removed::Unchanged => return m,
        Removed::Node(r) => r,
        Removed::Single(..) => unreachable!("the root keeps its entries"),
    };
    if n - 1 <= MAP_SMALL_MAX {
        let mut pairs = Vec::with_capacity(n - 1);
        // SAFETY: `root` was just built from live words of this heap.
        unsafe { collect(root, &mut pairs) };
        // SAFETY: the pair words are live terms of this heap.
        let mut terms: Vec<(Term<'_>, Term<'_>)> = pairs
            .iter()
            .map(|(k, v)| unsafe { (Term::from_bits(*k), Term::from_bits(*v)) })
            .collect();
        terms.sort_by(|a, b| crate::cmp::compare(a.0, b.0));
        return heap.sorted_map(&terms).bits();
    }
    alloc(heap, Kind::HamtMap, &[small(n as u64 - 1), root])
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// When set, every key hashes to this (to force collisions).
        pub(super) static FORCED_HASH: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
    }

    /// Keys whose hashes are all equal end in a collision node 12 levels
    /// down; lookups, replacement and removal work there, and removing
    /// down to one key collapses the chain back into the root.
    #[test]
    fn full_hash_collisions() {
        let heap = Heap::new();
        let h = 0x0123_4567_89ab_cdef_u64;
        FORCED_HASH.with(|f| f.set(Some(h)));
        let mut root = alloc(&heap, Kind::HamtNode, &[small(0), small(0)]);
        let keys: Vec<u64> = (0..5).map(|i| small(i * 7)).collect();
        for (i, k) in keys.iter().enumerate() {
            let (r, added) = assoc_node(&heap, root, *k, small(i as u64), h, 0);
            assert!(added);
            root = r;
        }
        let (r, added) = assoc_node(&heap, root, keys[2], small(99), h, 0);
        assert!(!added);
        root = r;
        let m = alloc(&heap, Kind::HamtMap, &[small(5), root]);
        // SAFETY: `m` is a live map of `heap`.
        unsafe {
            assert_eq!(get_h(m, keys[2], h), Some(small(99)));
            assert_eq!(get_h(m, keys[4], h), Some(small(4)));
            assert_eq!(get_h(m, small(1000), h), None);
            // the collision node is 12 levels down
            let mut node = root;
            let mut depth = 0;
            while kind(node) == Kind::HamtNode {
                let w = words(node);
                assert_eq!(unsmall(w[0]), 0, "no data above the collision");
                node = w[2];
                depth += 1;
            }
            assert_eq!(depth, 12);
            assert_eq!(words(node).len(), 10);
        }
        for k in &keys[..4] {
            match dissoc_node(&heap, root, *k, h, 0) {
                Removed::Node(r) => root = r,
                _ => panic!("removal"),
            }
        }
        // one key left: inlined into the root as data
        // SAFETY: `root` is a live node of `heap`.
        let w = unsafe { words(root) };
        assert_eq!(unsmall(w[1]), 0, "no children");
        assert_eq!(&w[2..], &[keys[4], small(4)]);
        FORCED_HASH.with(|f| f.set(None));
    }

    /// `add_counts` down to a collision node and beside it: counts added
    /// to keys there, new keys joining it, a new key pushing a data entry
    /// one level down, as one `assoc` per key would.
    #[test]
    fn counts_added_at_once_match_one_assoc_per_key() {
        let heap = Heap::new();
        let h = 0x0123_4567_89ab_cdef_u64;
        FORCED_HASH.with(|f| f.set(Some(h)));
        let mut root = alloc(&heap, Kind::HamtNode, &[small(0), small(0)]);
        for i in 0..3 {
            root = assoc_node(&heap, root, small(i), small(10 + i), h, 0).0;
        }
        let m = alloc(&heap, Kind::HamtMap, &[small(3), root]);
        let mut items = [(small(1), h, 5), (small(7), h, 2)];
        // SAFETY: `m` is a live map of `heap`; the keys are immediates.
        unsafe {
            let t = add_counts(&heap, m, &mut items).expect("integers");
            assert_eq!(unsmall(words(t)[0]), 4);
            assert_eq!(get_h(t, small(1), h), Some(small(16)));
            assert_eq!(get_h(t, small(7), h), Some(small(2)));
            assert_eq!(get_h(t, small(2), h), Some(small(12)));
            assert_eq!(get_h(m, small(1), h), Some(small(11)), "m unchanged");
            let r = assoc_node(&heap, root, small(1), small(16), h, 0).0;
            let r = assoc_node(&heap, r, small(7), small(2), h, 0).0;
            assert!(same_shape(words(t)[1], r), "the canonical trie");
        }
        FORCED_HASH.with(|f| f.set(None));
        // Without forced hashes: a trie of 100 keys, 60 of them counted
        // again and 40 new, against assoc-ing one key at a time.
        let key = |i: u64| small(i * 3);
        let (mut a, mut n) = (alloc(&heap, Kind::HamtNode, &[small(0), small(0)]), 0);
        for i in 0..100 {
            a = assoc_node(&heap, a, key(i), small(1), key_hash_w(key(i)), 0).0;
            n += 1;
        }
        let m = alloc(&heap, Kind::HamtMap, &[small(n), a]);
        let mut items: Vec<(u64, u64, i64)> =
            (40..140).map(|i| (key(i), key_hash_w(key(i)), 2)).collect();
        let mut b = a;
        for &(k, kh, _) in &items {
            // SAFETY: `b` is a live node of `heap`.
            let v = unsafe { get_h(alloc(&heap, Kind::HamtMap, &[small(0), b]), k, kh) };
            let v = v.map_or(2, |w| unsmall(w) + 2);
            b = assoc_node(&heap, b, k, small(v), kh, 0).0;
        }
        // SAFETY: `m` is a live map of `heap`; the keys are immediates.
        let t = unsafe { add_counts(&heap, m, &mut items) }.expect("integers");
        // SAFETY: both are live maps of `heap`.
        unsafe {
            assert_eq!(unsmall(words(t)[0]), 140);
            let model = alloc(&heap, Kind::HamtMap, &[small(140), b]);
            assert!(crate::cmp::equal(
                Term::from_bits(t),
                Term::from_bits(model)
            ));
            assert!(same_shape(words(t)[1], b), "the canonical trie");
            for i in 0..140 {
                let want = if i < 40 {
                    1
                } else if i < 100 {
                    3
                } else {
                    2
                };
                assert_eq!(get_h(t, key(i), key_hash_w(key(i))), Some(small(want)));
            }
        }
    }

    /// Whether two tries of immediates are the same nodes, word for word.
    ///
    /// # Safety
    /// Both are live nodes.
    unsafe fn same_shape(a: u64, b: u64) -> bool {
        // SAFETY: per the caller; children are live nodes too.
        unsafe {
            let (wa, wb) = (words(a), words(b));
            if kind(a) != kind(b) || wa.len() != wb.len() {
                return false;
            }
            if kind(a) == Kind::HamtColl {
                return wa == wb;
            }
            let nd = 2 + 2 * (unsmall(wa[0]) as u32).count_ones() as usize;
            wa[..nd] == wb[..nd]
                && wa[nd..]
                    .iter()
                    .zip(&wb[nd..])
                    .all(|(x, y)| same_shape(*x, *y))
        }
    }

    fn key_hash_w(w: u64) -> u64 {
        // SAFETY: an immediate.
        key_hash(unsafe { Term::from_bits(w) })
    }
}
