//! Erlang's external term format (`lona_term::etf`), from the spec's
//! bytes: every form we read and write, written out by hand, the framing,
//! what is refused, and what has no Erlang form. Round trips, a real
//! `erl` and hostile input are `etf.rs`.

mod common;

use common::bits;
use lona_term::etf::{
    decode, decode_body_prefix, decode_prefix, encode, encode_into, AtomBudget, DecodeError,
    EncodeError,
};
use lona_term::{Heap, Pid, Term};
use num_bigint::BigInt;

// ---- 1. bytes from the spec -------------------------------------------

#[test]
fn atoms_in_all_four_forms() {
    let h = Heap::new();
    let ok = Term::keyword("ok");
    for bytes in [
        &[131, 100, 0, 2, 111, 107][..],
        &[131, 115, 2, 111, 107],
        &[131, 118, 0, 2, 111, 107],
        &[131, 119, 2, 111, 107],
    ] {
        assert_eq!(decode(&h, bytes), Ok(ok), "{bytes:?}");
    }
    assert_eq!(encode(ok).unwrap(), [131, 119, 2, 111, 107]);
    // nil, true, false are the atoms
    assert_eq!(encode(Term::NIL).unwrap(), [131, 119, 3, b'n', b'i', b'l']);
    assert_eq!(
        decode(&h, &[131, 100, 0, 3, b'n', b'i', b'l']),
        Ok(Term::NIL)
    );
    assert_eq!(
        decode(&h, &[131, 119, 4, b't', b'r', b'u', b'e']),
        Ok(Term::TRUE)
    );
    assert_eq!(
        decode(&h, &[131, 115, 5, b'f', b'a', b'l', b's', b'e']),
        Ok(Term::FALSE)
    );
    assert_eq!(encode(Term::FALSE).unwrap()[1..3], [119, 5]);
    // the keyword :nil is the atom nil too (documented as lossy)
    assert_eq!(
        decode(&h, &encode(Term::keyword("nil")).unwrap()),
        Ok(Term::NIL)
    );
    // Latin-1 atoms: 0xE9 is é
    let e = Term::keyword("été");
    assert_eq!(decode(&h, &[131, 115, 3, 0xE9, b't', 0xE9]), Ok(e));
    assert_eq!(
        encode(e).unwrap(),
        [131, 119, 5, 0xC3, 0xA9, b't', 0xC3, 0xA9]
    );
    // a long UTF-8 name takes ATOM_UTF8_EXT
    let long = Term::keyword(&"é".repeat(200));
    let b = encode(long).unwrap();
    assert_eq!(b[..4], [131, 118, 1, 144]);
    assert_eq!(decode(&h, &b), Ok(long));
}

#[test]
fn integers() {
    let h = Heap::new();
    let cases: Vec<(Term<'_>, Vec<u8>)> = vec![
        (h.int(0), vec![131, 97, 0]),
        (h.int(255), vec![131, 97, 255]),
        (h.int(256), vec![131, 98, 0, 0, 1, 0]),
        (h.int(-1), vec![131, 98, 255, 255, 255, 255]),
        (h.int(i32::MIN.into()), vec![131, 98, 128, 0, 0, 0]),
        (h.int(i32::MAX.into()), vec![131, 98, 127, 255, 255, 255]),
        (h.int(1 << 31), vec![131, 110, 4, 0, 0, 0, 0, 128]),
        (h.int(-(1 << 31) - 1), vec![131, 110, 4, 1, 1, 0, 0, 128]),
        (
            h.int(i64::MIN),
            vec![131, 110, 8, 1, 0, 0, 0, 0, 0, 0, 0, 128],
        ),
        (
            h.bigint(&(BigInt::from(1u8) << 64u32)),
            vec![131, 110, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        ),
    ];
    for (t, bytes) in &cases {
        assert_eq!(&encode(*t).unwrap(), bytes, "{t}");
        assert_eq!(decode(&h, bytes), Ok(*t), "{bytes:?}");
    }
    // LARGE_BIG_EXT: 2^2100 takes 263 bytes
    let big = h.bigint(&-(BigInt::from(1u8) << 2100u32));
    let b = encode(big).unwrap();
    assert_eq!(b[..7], [131, 111, 0, 0, 1, 7, 1]);
    assert_eq!(b.len(), 7 + 263);
    assert_eq!(decode(&h, &b), Ok(big));
    // a non-canonical big (small value, leading zero bytes) decodes canonically
    let t = decode(&h, &[131, 110, 3, 1, 5, 0, 0]).unwrap();
    assert_eq!(t, h.int(-5));
    assert_eq!(encode(t).unwrap(), [131, 98, 255, 255, 255, 251]);
    // a zero-length big is zero
    assert_eq!(decode(&h, &[131, 110, 0, 0]), Ok(h.int(0)));
    assert_eq!(decode(&h, &[131, 110, 1, 2, 5]), Err(DecodeError::BadSign));
}

#[test]
fn floats() {
    let h = Heap::new();
    let b = encode(h.float(1.5)).unwrap();
    assert_eq!(b, [131, 70, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0]);
    assert_eq!(decode(&h, &b), Ok(h.float(1.5)));
    // -0.0 keeps its sign
    let nz = decode(&h, &encode(h.float(-0.0)).unwrap()).unwrap();
    assert_eq!(nz.as_f64().unwrap().to_bits(), (-0.0f64).to_bits());
    // the old textual FLOAT_EXT ("%.20e", NUL padded to 31 bytes)
    let mut old = vec![131, 99];
    let mut text = b"-1.50000000000000000000e+02".to_vec();
    text.resize(31, 0);
    old.extend(&text);
    assert_eq!(decode(&h, &old), Ok(h.float(-150.0)));
    let mut junk = vec![131, 99];
    junk.extend([b'x'; 31]);
    assert_eq!(decode(&h, &junk), Err(DecodeError::BadFloat));
    // Erlang has no NaN or infinity
    let mut nan = vec![131, 70];
    nan.extend(f64::NAN.to_bits().to_be_bytes());
    assert_eq!(decode(&h, &nan), Err(DecodeError::BadFloat));
    assert_eq!(
        encode(h.float(f64::INFINITY)),
        Err(EncodeError::Unsupported("non-finite float"))
    );
}

#[test]
fn containers() {
    let h = Heap::new();
    let ok = Term::keyword("ok");
    let a = Term::keyword("a");
    let one = h.int(1);
    let two = h.int(2);
    let cases: Vec<(Term<'_>, Vec<u8>)> = vec![
        (h.vector(&[]), vec![131, 104, 0]),
        (Term::EMPTY_LIST, vec![131, 106]),
        (
            h.vector(&[ok, h.list(&[one, two])]),
            vec![
                131, 104, 2, 119, 2, 111, 107, 108, 0, 0, 0, 2, 97, 1, 97, 2, 106,
            ],
        ),
        (
            h.list_with_tail(&[one], two),
            vec![131, 108, 0, 0, 0, 1, 97, 1, 97, 2],
        ),
        (
            h.map(&[(a, one)]),
            vec![131, 116, 0, 0, 0, 1, 119, 1, b'a', 97, 1],
        ),
        (h.map(&[]), vec![131, 116, 0, 0, 0, 0]),
        (h.binary(&[1, 2, 3]), vec![131, 109, 0, 0, 0, 3, 1, 2, 3]),
        (
            h.vector(&[h.vector(&[a]), h.map(&[(h.binary(b"k"), h.list(&[ok]))])]),
            vec![
                131, 104, 2, 104, 1, 119, 1, b'a', 116, 0, 0, 0, 1, 109, 0, 0, 0, 1, b'k', 108, 0,
                0, 0, 1, 119, 2, b'o', b'k', 106,
            ],
        ),
    ];
    for (t, bytes) in &cases {
        assert_eq!(&encode(*t).unwrap(), bytes, "{t}");
        assert_eq!(decode(&h, bytes), Ok(*t), "{bytes:?}");
    }
    // a 256-tuple is LARGE_TUPLE_EXT
    let items: Vec<Term<'_>> = (0..256).map(|i| h.int(i)).collect();
    let big = h.vector(&items);
    let b = encode(big).unwrap();
    assert_eq!(b[..6], [131, 105, 0, 0, 1, 0]);
    assert_eq!(decode(&h, &b), Ok(big));
    // STRING_EXT is a list of small integers; the empty one is ()
    assert_eq!(
        decode(&h, &[131, 107, 0, 3, 97, 98, 99]),
        Ok(h.list(&[h.int(97), h.int(98), h.int(99)]))
    );
    assert_eq!(decode(&h, &[131, 107, 0, 0]), Ok(Term::EMPTY_LIST));
    // a LIST_EXT of no elements is its tail
    assert_eq!(
        decode(&h, &[131, 108, 0, 0, 0, 0, 106]),
        Ok(Term::EMPTY_LIST)
    );
    // strings go as binaries and come back as binaries
    let s = encode(h.string("hi")).unwrap();
    assert_eq!(s, [131, 109, 0, 0, 0, 2, b'h', b'i']);
    assert_eq!(decode(&h, &s), Ok(h.binary(b"hi")));
    // bit strings: whole bytes are a binary, others [:erlang/bits bytes size]
    assert_eq!(decode(&h, &[131, 77, 0, 0, 0, 1, 8, 5]), Ok(h.binary(&[5])));
    let b13 = [131, 77, 0, 0, 0, 1, 3, 32]; // <<1:3>>
    assert_eq!(decode(&h, &b13), Ok(bits(&h, &[32], 3)));
    assert_eq!(encode(bits(&h, &[32], 3)).unwrap(), b13);
    assert_eq!(bits(&h, &[32], 3).to_string(), "[:erlang/bits #bin\" \" 3]");
    // the unused low bits are cleared
    assert_eq!(
        decode(&h, &[131, 77, 0, 0, 0, 2, 7, 1, 255]),
        Ok(bits(&h, &[1, 254], 7))
    );
    for bad in [
        &[131, 77, 0, 0, 0, 1, 0, 5][..], // no bits in the last byte
        &[131, 77, 0, 0, 0, 1, 9, 5],     // more than 8
        &[131, 77, 0, 0, 0, 0, 3],        // bits of no byte
    ] {
        assert_eq!(decode(&h, bad), Err(DecodeError::NotWholeBytes), "{bad:?}");
    }
    // a vector of another shape stays a tuple
    for t in [
        h.vector(&[Term::keyword("erlang/bits"), h.binary(&[1]), h.int(8)]),
        h.vector(&[Term::keyword("erlang/bits"), h.binary(&[]), h.int(0)]),
        h.vector(&[Term::keyword("erlang/bits"), h.int(1), h.int(3)]),
        h.vector(&[
            Term::keyword("erlang/fun"),
            h.int(1),
            Term::keyword("f"),
            h.int(1),
        ]),
        h.vector(&[
            Term::keyword("erlang/fun"),
            Term::keyword("m"),
            Term::keyword("f"),
            h.int(256),
        ]),
        h.vector(&[
            Term::keyword("erlang/local-fun"),
            h.int(1),
            h.int(0),
            h.binary(&[112, 0]),
        ]),
        h.vector(&[
            Term::keyword("erlang/local-fun"),
            h.string("m"),
            h.int(0),
            h.binary(&[112, 0, 0, 0, 4]),
        ]),
        // unused bits set: not what the decoder makes
        h.vector(&[Term::keyword("erlang/bits"), h.binary(&[255]), h.int(3)]),
    ] {
        assert_eq!(encode(t).unwrap()[1], 104, "{t}");
    }
    // export funs: [:erlang/fun m f arity], both ways
    let export = [
        &[131, 113, 119, 5][..],
        b"lists",
        &[119, 3],
        b"map",
        &[97, 2],
    ]
    .concat();
    let want = h.vector(&[
        Term::keyword("erlang/fun"),
        Term::keyword("lists"),
        Term::keyword("map"),
        h.int(2),
    ]);
    assert_eq!(decode(&h, &export), Ok(want));
    assert_eq!(encode(want).unwrap(), export);
    assert_eq!(
        decode(
            &h,
            &[&export[..export.len() - 2], &[98, 0, 0, 0, 2]].concat()
        ),
        Err(DecodeError::Unsupported(
            "export (fun M:F/A) without a small arity"
        ))
    );
    // equal map keys
    assert_eq!(
        decode(&h, &[131, 116, 0, 0, 0, 2, 97, 1, 97, 1, 97, 1, 97, 2]),
        Err(DecodeError::DuplicateKey)
    );
}

#[test]
fn framing_and_refusals() {
    let h = Heap::new();
    assert_eq!(decode(&h, &[]), Err(DecodeError::BadVersion));
    assert_eq!(decode(&h, &[130, 106]), Err(DecodeError::BadVersion));
    assert_eq!(decode(&h, &[131]), Err(DecodeError::UnexpectedEnd));
    assert_eq!(
        decode(&h, &[131, 106, 106]),
        Err(DecodeError::TrailingBytes)
    );
    let mut none = AtomBudget::none();
    assert_eq!(
        decode_prefix(&h, &[131, 97, 7, 131, 106], &mut none),
        Ok((h.int(7), 3))
    );
    assert_eq!(
        decode_body_prefix(&h, &[97, 7, 106], &mut none),
        Ok((h.int(7), 2))
    );
    let mut body = vec![1];
    encode_into(&mut body, h.vector(&[h.int(300)])).unwrap();
    assert_eq!(body, [1, 104, 1, 98, 0, 0, 1, 44]);
    assert_eq!(
        decode(&h, &[131, 80, 0, 0, 0, 1, 120, 156]),
        Err(DecodeError::Compressed)
    );
    assert_eq!(decode(&h, &[131, 88]), Err(DecodeError::Unsupported("pid")));
    assert_eq!(
        decode(&h, &[131, 90]),
        Err(DecodeError::Unsupported("reference"))
    );
    // the old FUN_EXT (before OTP R8); NEW_FUN_EXT is read
    assert_eq!(
        decode(&h, &[131, 117]),
        Err(DecodeError::Unsupported("fun"))
    );
    assert_eq!(decode(&h, &[131, 112]), Err(DecodeError::UnexpectedEnd));
    // a size too small to hold a fun's fields
    assert_eq!(
        decode(&h, &[131, 112, 0, 0, 0, 5, 0]),
        Err(DecodeError::Unsupported("malformed fun (NEW_FUN_EXT)"))
    );
    assert_eq!(decode(&h, &[131, 1]), Err(DecodeError::UnknownTag(1)));
    assert_eq!(
        decode(&h, &[131, 119, 1, 255]),
        Err(DecodeError::InvalidUtf8)
    );
    // the errors say what happened
    assert!(DecodeError::Unsupported("pid").to_string().contains("pid"));
    assert!(DecodeError::Compressed.to_string().contains("compressed"));
}

#[test]
fn what_has_no_erlang_form_is_an_encode_error() {
    fn u(t: Term<'_>) -> EncodeError {
        encode(t).unwrap_err()
    }
    let h = Heap::new();
    assert_eq!(u(Term::symbol("s")), EncodeError::Unsupported("symbol"));
    assert_eq!(u(h.set(&[h.int(1)])), EncodeError::Unsupported("set"));
    assert_eq!(u(h.regex("a+")), EncodeError::Unsupported("regex"));
    assert_eq!(u(h.pid(Pid(5))), EncodeError::Unsupported("pid"));
    assert_eq!(u(h.reference(5)), EncodeError::Unsupported("reference"));
    // SAFETY: no interpreter here; the code word is never followed.
    let f = unsafe { h.closure(7, &[]) };
    assert_eq!(u(f), EncodeError::Unsupported("function"));
    // nested deep inside, too
    let nested = h.map(&[(Term::keyword("ok"), h.list(&[h.int(1), f]))]);
    assert_eq!(u(nested), EncodeError::Unsupported("function"));
    assert!(EncodeError::Unsupported("pid").to_string().contains("pid"));
}
