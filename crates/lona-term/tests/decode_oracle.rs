//! Arbitrary bytes through the decoder and the oracle (`oracle/mod.rs`,
//! shared with the fuzzer): whatever decodes is printed, compared, hashed,
//! copied, sent, re-encoded and collected; whatever does not is an error,
//! never a crash. Three sources of input: random bytes, token streams of
//! the encoding's grammar (every tag, function tags included, with small
//! counts and names that exist), and mutated encodings of random terms.

mod common;
mod oracle;

use common::*;
use lona_term::{decode, encode, DecodeError, Heap};
use proptest::prelude::*;

/// One piece of a grammar-shaped input.
#[derive(Clone, Debug)]
enum Tok {
    Byte(u8),
    /// A tag, then a small count.
    Header(u8, u8),
    Int(u64),
    Name(u8, usize),
    Float(u64),
}

const NAMES: [&str; 6] = ["ok", "normal", "error", "k0", "s0", "brand-new-name-xyz"];

fn tok() -> impl Strategy<Value = Tok> {
    prop_oneof![
        2 => (0u8..17).prop_map(Tok::Byte),
        4 => (prop::sample::select(vec![5u8, 9, 10, 11, 12, 13, 14]), 0u8..4)
            .prop_map(|(t, n)| Tok::Header(t, n)),
        2 => any::<u64>().prop_map(Tok::Int),
        2 => (prop::sample::select(vec![7u8, 8]), 0..NAMES.len()).prop_map(|(t, i)| Tok::Name(t, i)),
        1 => any::<u64>().prop_map(Tok::Float),
        1 => any::<u8>().prop_map(Tok::Byte),
    ]
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn render(toks: &[Tok]) -> Vec<u8> {
    let mut out = vec![b'L', 1];
    for t in toks {
        match t {
            Tok::Byte(b) => out.push(*b),
            Tok::Header(tag, n) => {
                out.push(*tag);
                if *tag == 5 {
                    out.push(n & 1);
                }
                varint(&mut out, u64::from(*n));
            }
            Tok::Int(v) => {
                out.push(4);
                varint(&mut out, *v);
            }
            Tok::Name(tag, i) => {
                out.push(*tag);
                varint(&mut out, NAMES[*i].len() as u64);
                out.extend_from_slice(NAMES[*i].as_bytes());
            }
            Tok::Float(bits) => {
                out.push(6);
                out.extend_from_slice(&bits.to_le_bytes());
            }
        }
    }
    out
}

fn setup() {
    // the names the grammar uses, except the last, exist
    for n in &NAMES[..NAMES.len() - 1] {
        lona_term::Term::keyword(n);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes(mut bytes in prop::collection::vec(any::<u8>(), 0..200), magic in any::<bool>()) {
        if magic {
            bytes.splice(0..0, [b'L', 1]);
        }
        let _ = oracle::check(&bytes);
    }

    #[test]
    fn grammar_shaped_bytes(toks in prop::collection::vec(tok(), 1..40)) {
        setup();
        let bytes = render(&toks);
        let r = oracle::check(&bytes);
        // the one name that does not exist never becomes an atom
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
