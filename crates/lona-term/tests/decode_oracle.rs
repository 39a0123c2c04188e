//! Arbitrary bytes through the decoder and the oracle (`oracle/mod.rs`,
//! shared with the fuzzer): whatever decodes is printed, compared, hashed,
//! copied, sent, re-encoded and collected; whatever does not is an error,
//! never a crash. Three sources of input: random bytes, encodings built
//! from the grammar (every tag, functions and stray bytes included, with
//! names that exist and one that does not), and mutated encodings of
//! random terms.

mod common;
mod oracle;

use common::*;
use lona_term::{decode, encode, DecodeError, Heap};
use proptest::prelude::*;

const NAMES: [&str; 6] = ["ok", "normal", "error", "k0", "s0", "brand-new-name-xyz"];

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The encoding of one well-formed term (or, now and then, a function or
/// a stray byte in its place): its bytes without the magic.
fn leaf() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => (0u8..4).prop_map(|t| vec![t]),
        3 => any::<u64>().prop_map(|v| {
            let mut b = vec![4];
            varint(&mut b, v);
            b
        }),
        3 => (any::<bool>(), prop::collection::vec(any::<u8>(), 0..20)).prop_map(|(neg, mag)| {
            let mut b = vec![5, u8::from(neg)];
            varint(&mut b, mag.len() as u64);
            b.extend(mag);
            b
        }),
        3 => any::<u64>().prop_map(|bits| {
            let mut b = vec![6];
            b.extend_from_slice(&bits.to_le_bytes());
            b
        }),
        3 => (prop::sample::select(vec![7u8, 8]), 0..NAMES.len()).prop_map(|(t, i)| {
            let mut b = vec![t];
            varint(&mut b, NAMES[i].len() as u64);
            b.extend_from_slice(NAMES[i].as_bytes());
            b
        }),
        3 => (prop::sample::select(vec![9u8, 10]), ".{0,8}|.{60,70}").prop_map(|(t, s)| {
            let mut b = vec![t];
            varint(&mut b, s.len() as u64);
            b.extend_from_slice(s.as_bytes());
            b
        }),
        3 => (prop::sample::select(vec![15u8, 16]), any::<u64>()).prop_map(|(t, v)| {
            let mut b = vec![t];
            varint(&mut b, v);
            b
        }),
        // a pid of another node: its name, then id, serial, creation
        // (now and then over 32 bits)
        2 => (0..NAMES.len(), prop::collection::vec(prop_oneof![3 => any::<u32>().prop_map(u64::from), 1 => any::<u64>()], 3))
            .prop_map(|(i, nums)| {
                let mut b = vec![17];
                varint(&mut b, NAMES[i].len() as u64);
                b.extend_from_slice(NAMES[i].as_bytes());
                for n in nums {
                    varint(&mut b, n);
                }
                b
            }),
        // a reference of another node: name, creation, count (now and
        // then 0 or over 5), ids
        2 => (0..NAMES.len(), any::<u32>(), prop::collection::vec(any::<u32>(), 0..7))
            .prop_map(|(i, creation, ids)| {
                let mut b = vec![18];
                varint(&mut b, NAMES[i].len() as u64);
                b.extend_from_slice(NAMES[i].as_bytes());
                varint(&mut b, creation.into());
                varint(&mut b, ids.len() as u64);
                for n in ids {
                    varint(&mut b, n.into());
                }
                b
            }),
        // a function, which must never decode
        1 => (any::<u64>(), 0u8..3).prop_map(|(code, n)| {
            let mut b = vec![14];
            varint(&mut b, code);
            varint(&mut b, u64::from(n));
            b.extend(std::iter::repeat_n(0, n as usize));
            b
        }),
        1 => any::<u8>().prop_map(|x| vec![x]),
    ]
}

fn term_bytes() -> impl Strategy<Value = Vec<u8>> {
    leaf().prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|items| {
                let mut b = vec![11];
                varint(&mut b, items.len() as u64);
                b.extend(items.concat());
                b
            }),
            (prop::collection::vec(inner.clone(), 1..5), inner.clone()).prop_map(
                |(items, tail)| {
                    let mut b = vec![12];
                    varint(&mut b, items.len() as u64);
                    b.extend(items.concat());
                    b.extend(tail);
                    b
                }
            ),
            prop::collection::vec((inner.clone(), inner), 0..5).prop_map(|pairs| {
                let mut b = vec![13];
                varint(&mut b, pairs.len() as u64);
                for (k, v) in pairs {
                    b.extend(k);
                    b.extend(v);
                }
                b
            }),
        ]
    })
}

fn setup() {
    // the names the grammar uses, except the last, exist
    for n in &NAMES[..NAMES.len() - 1] {
        lona_term::Term::keyword(n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_bytes(mut bytes in prop::collection::vec(any::<u8>(), 0..200), magic in any::<bool>()) {
        if magic {
            bytes.splice(0..0, [b'L', 1]);
        }
        let _ = oracle::check(&bytes);
    }

    #[test]
    fn grammar_shaped_bytes(term in term_bytes()) {
        setup();
        let mut bytes = vec![b'L', 1];
        bytes.extend(term);
        let r = oracle::check(&bytes);
        // (the oracle checks that what decodes holds no function); the one
        // name that does not exist never becomes an atom
        prop_assert!(lona_term::Atom::existing(NAMES[NAMES.len() - 1]).is_none());
        prop_assert!(r != Err(DecodeError::AtomTableFull));
    }

    #[test]
    fn mutated_encodings(ops in ops(20), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..4), cut in any::<usize>()) {
        let h = Heap::new();
        for t in build_all(&h, &ops) {
            let Ok(mut bytes) = encode(t) else { continue };
            prop_assert!(oracle::check(&bytes).is_ok());
            for (i, b) in &flips {
                let n = bytes.len();
                bytes[i % n] = *b;
            }
            let _ = oracle::check(&bytes);
            let n = bytes.len();
            let _ = oracle::check(&bytes[..cut % (n + 1)]);
        }
    }
}

/// Issue 17's input (a closure whose code word is arbitrary) and its
/// variants never decode, so the oracle never sees a function.
#[test]
fn function_tags_never_decode() {
    let h = Heap::new();
    for bytes in [
        &b"L\x01\x0e\x80\x80\x80\x80\x80\x80\x01\x00"[..],
        b"L\x01\x0e\x00\x00",
        b"L\x01\x0b\x01\x0e\x01\x00",
        b"L\x01\x0d\x01\x00\x0e\x00\x00",
    ] {
        assert_eq!(decode(&h, bytes), Err(DecodeError::Function));
        assert_eq!(oracle::check(bytes), Err(DecodeError::Function));
    }
}
