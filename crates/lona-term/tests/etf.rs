//! Erlang's external term format (`lona_term::etf`): round trips of
//! random terms (the bytes from the spec are `etf_spec.rs`), a real `erl` decoding and re-encoding
//! thousands of them, and hostile input.
//!
//! This binary installs a global allocator that records, per thread, the
//! largest single allocation, so a test can check that a declared length
//! reserved nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Read;

use proptest::strategy::ValueTree;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::bits;
use lona_term::etf::{
    decode, decode_node, decode_node_body_prefix, decode_node_prefix, decode_with, encode,
    encode_node, encode_node_into, AtomBudget, DecodeError, EncodeError, Node,
};
use lona_term::{term_hash, Atom, Fragment, Heap, Pid, Term, View};
use num_bigint::BigInt;
use proptest::prelude::*;

struct Largest;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the slot may be gone while a thread is torn down.
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to `System`; the counter only
// observes sizes.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

/// Runs `f` and returns its result with the largest single allocation this
/// thread made meanwhile.
fn largest_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|c| c.set(0));
    let out = f();
    (out, LARGEST.with(|c| c.get()))
}

// ---- random terms of the supported subset ------------------------------

/// Keyword names used by the generators (never `nil`, `true`, `false`,
/// which are Lonala's own values in Erlang).
fn names() -> Vec<String> {
    vec![
        "ok".into(),
        "error".into(),
        "hello world".into(),
        "Caps".into(),
        "with'quote".into(),
        "ünïcødé".into(),
        "日本".into(),
        "a".into(),
        "x".repeat(255),
        "é".repeat(255),
    ]
}

/// A term as plain data, built into a heap by [`build`].
#[derive(Clone, Debug)]
enum G {
    Nil,
    Bool(bool),
    Empty,
    Int(i64),
    Big(bool, Vec<u8>),
    Float(f64),
    Kw(usize),
    Bin(Vec<u8>),
    Tuple(Vec<G>),
    List(Vec<G>, Option<Box<G>>),
    Map(Vec<(G, G)>),
    /// An export fun `fun M:F/A`: `[:erlang/fun m f a]`.
    Export(usize, usize, u8),
    /// A bit string of these bytes whose last holds 1 to 7 bits:
    /// `[:erlang/bits bytes size]`.
    Bits(Vec<u8>, u8),
}

fn leaf() -> impl Strategy<Value = G> {
    prop_oneof![
        Just(G::Nil),
        any::<bool>().prop_map(G::Bool),
        Just(G::Empty),
        (0i64..=255).prop_map(G::Int),
        any::<i32>().prop_map(|i| G::Int(i.into())),
        any::<i64>().prop_map(G::Int),
        prop_oneof![
            Just(i64::MIN),
            Just(i64::MAX),
            Just(i32::MIN as i64 - 1),
            Just(i32::MAX as i64 + 1),
            Just(256),
            Just(-1)
        ]
        .prop_map(G::Int),
        (any::<bool>(), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(s, m)| G::Big(s, m)),
        (any::<bool>(), prop::collection::vec(any::<u8>(), 250..300))
            .prop_map(|(s, m)| G::Big(s, m)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(G::Float),
        prop_oneof![Just(0.0), Just(-0.0), Just(f64::MIN_POSITIVE), Just(5e-324)]
            .prop_map(G::Float),
        (0..names().len()).prop_map(G::Kw),
        prop::collection::vec(any::<u8>(), 0..80).prop_map(G::Bin),
        (0..names().len(), 0..names().len(), any::<u8>()).prop_map(|(m, f, a)| G::Export(m, f, a)),
        (prop::collection::vec(any::<u8>(), 1..20), 1u8..=7).prop_map(|(b, n)| G::Bits(b, n)),
    ]
}

fn term() -> impl Strategy<Value = G> {
    leaf().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(G::Tuple),
            (
                prop::collection::vec(inner.clone(), 0..8),
                prop::option::of(inner.clone().prop_map(Box::new))
            )
                .prop_map(|(v, t)| G::List(v, t)),
            prop::collection::vec((inner.clone(), inner), 0..6).prop_map(G::Map),
        ]
    })
}

fn build<'h>(h: &'h Heap, g: &G) -> Term<'h> {
    match g {
        G::Nil => Term::NIL,
        G::Bool(b) => Term::bool(*b),
        G::Empty => Term::EMPTY_LIST,
        G::Int(i) => h.int(*i),
        G::Big(neg, mag) => {
            let sign = if *neg {
                num_bigint::Sign::Minus
            } else {
                num_bigint::Sign::Plus
            };
            h.bigint(&BigInt::from_bytes_le(sign, mag))
        }
        G::Float(f) => h.float(*f),
        G::Kw(i) => Term::keyword(&names()[*i]),
        G::Bin(b) => h.binary(b),
        G::Tuple(v) => h.vector(&v.iter().map(|x| build(h, x)).collect::<Vec<_>>()),
        G::List(v, t) => {
            let items: Vec<Term<'h>> = v.iter().map(|x| build(h, x)).collect();
            match t {
                Some(t) => h.list_with_tail(&items, build(h, t)),
                None => h.list(&items),
            }
        }
        G::Map(p) => h.map(
            &p.iter()
                .map(|(k, v)| (build(h, k), build(h, v)))
                .collect::<Vec<_>>(),
        ),
        G::Export(m, f, a) => h.vector(&[
            Term::keyword("erlang/fun"),
            Term::keyword(&names()[*m]),
            Term::keyword(&names()[*f]),
            h.int((*a).into()),
        ]),
        G::Bits(b, n) => bits(h, b, *n),
    }
}

/// Decoding, then encoding and decoding what came out, gives an equal term
/// (the oracle used for input we did not make ourselves).
fn check_stable(h: &Heap, bytes: &[u8]) {
    if let Ok(t) = decode(h, bytes) {
        let again = encode(t).expect("a decoded term encodes");
        let t2 = decode(h, &again).expect("a re-encoded term decodes");
        assert_eq!(t, t2);
        assert_eq!(encode(t2).unwrap(), again);
    }
    // with a node, pids and references decode too (no new atoms)
    let me = here();
    if let Ok(t) = decode_node(h, bytes, &mut AtomBudget::none(), &me) {
        let again = encode_node(t, &me).expect("a decoded term encodes");
        let t2 = decode_node(h, &again, &mut AtomBudget::none(), &me)
            .expect("a re-encoded term decodes");
        assert_eq!(t, t2);
        assert_eq!(encode_node(t2, &me).unwrap(), again);
    }
}

// ---- 2. round trips --------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn round_trip(g in term()) {
        let h = Heap::new();
        let t = build(&h, &g);
        let bytes = encode(t).unwrap();
        let back = decode(&h, &bytes).unwrap();
        prop_assert_eq!(back, t);
        prop_assert_eq!(encode(back).unwrap(), bytes.clone());
        // every proper prefix is an error, never a panic
        for i in 0..bytes.len() {
            let e = decode(&h, &bytes[..i]).unwrap_err();
            prop_assert!(
                matches!(e, DecodeError::UnexpectedEnd | DecodeError::LengthTooLarge | DecodeError::BadVersion),
                "prefix {} of {:?}: {:?}", i, bytes, e
            );
        }
    }
}

// ---- 3. against a real Erlang ----------------------------------------

const ERL_SCRIPT: &str = r#"
try
  [In, Out] = init:get_plain_arguments(),
  {ok, Data} = file:read_file(In),
  Frame = fun(B) -> [<<(byte_size(B)):32>>, B] end,
  Enc = fun(T, Vs) -> [Frame(term_to_binary(T, [{minor_version, V}])) || V <- Vs] end,
  Loop = fun L(<<N:32, B:N/binary, Rest/binary>>, Acc) ->
               L(Rest, [Enc(binary_to_term(B), [2, 0]) | Acc]);
             L(<<>>, Acc) -> lists:reverse(Acc)
         end,
  Mine = Loop(Data, []),
  Fixed = [ok, 'hello world', list_to_atom([16#101, $x]), 42, -1, 256,
           2147483647, -2147483648, 2147483648, 1 bsl 100, -(1 bsl 64),
           1 bsl 2100, 3.25, -2.5e300, <<1,2,3>>, <<>>, "abc", [1|2], {},
           {a, {b, c}}, list_to_tuple(lists:seq(1, 256)),
           #{a => 1, <<"k">> => [1.5]}, #{}, [], nil, true, false,
           lists:seq(1, 300), <<1:3>>, self(), make_ref(), fun lists:map/2],
  Theirs = [Enc(T, [0, 1, 2]) || T <- Fixed],
  Z = term_to_binary(lists:duplicate(1000, 0), [compressed]),
  ok = file:write_file(Out, [Mine, Theirs, Frame(Z)]),
  halt(0)
catch C:R:S ->
  io:format(standard_error, "~p~n", [{C, R, S}]),
  halt(2)
end.
"#;

fn without_negative_zero(g: G) -> G {
    let f = without_negative_zero;
    match g {
        G::Float(x) if x == 0.0 && x.is_sign_negative() => G::Float(0.0),
        G::Tuple(v) => G::Tuple(v.into_iter().map(f).collect()),
        G::List(v, t) => G::List(v.into_iter().map(f).collect(), t.map(|t| Box::new(f(*t)))),
        G::Map(p) => G::Map(p.into_iter().map(|(k, v)| (f(k), f(v))).collect()),
        g => g,
    }
}

fn find_erl() -> Option<&'static str> {
    ["/usr/bin/erl", "/usr/local/bin/erl"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

fn frames(mut b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let n = u32::from_be_bytes(b[..4].try_into().unwrap()) as usize;
        out.push(&b[4..4 + n]);
        b = &b[4 + n..];
    }
    out
}

/// What Erlang's `Fixed` list (in `ERL_SCRIPT`) decodes to.
fn expected_fixed(h: &Heap) -> Vec<Result<Term<'_>, DecodeError>> {
    let kw = Term::keyword;
    let seq = |n: i64| h.list(&(1..=n).map(|i| h.int(i)).collect::<Vec<_>>());
    vec![
        Ok(kw("ok")),
        Ok(kw("hello world")),
        Ok(kw("āx")),
        Ok(h.int(42)),
        Ok(h.int(-1)),
        Ok(h.int(256)),
        Ok(h.int(2147483647)),
        Ok(h.int(-2147483648)),
        Ok(h.int(2147483648)),
        Ok(h.bigint(&(BigInt::from(1u8) << 100u32))),
        Ok(h.bigint(&-(BigInt::from(1u8) << 64u32))),
        Ok(h.bigint(&(BigInt::from(1u8) << 2100u32))),
        Ok(h.float(3.25)),
        Ok(h.float(-2.5e300)),
        Ok(h.binary(&[1, 2, 3])),
        Ok(h.binary(&[])),
        Ok(h.list(&[h.int(97), h.int(98), h.int(99)])),
        Ok(h.list_with_tail(&[h.int(1)], h.int(2))),
        Ok(h.vector(&[])),
        Ok(h.vector(&[kw("a"), h.vector(&[kw("b"), kw("c")])])),
        Ok(h.vector(&(1..=256).map(|i| h.int(i)).collect::<Vec<_>>())),
        Ok(h.map(&[
            (kw("a"), h.int(1)),
            (h.binary(b"k"), h.list(&[h.float(1.5)])),
        ])),
        Ok(h.map(&[])),
        Ok(Term::EMPTY_LIST),
        Ok(Term::NIL),
        Ok(Term::TRUE),
        Ok(Term::FALSE),
        Ok(seq(300)),
        Ok(bits(h, &[32], 3)),
        Err(DecodeError::Unsupported("pid")),
        Err(DecodeError::Unsupported("reference")),
        Ok(h.vector(&[kw("erlang/fun"), kw("lists"), kw("map"), h.int(2)])),
    ]
}

#[test]
fn against_real_erlang() {
    let Some(erl) = find_erl() else {
        eprintln!("SKIPPED against_real_erlang: no `erl` found (install erlang-base)");
        return;
    };
    let h = Heap::new();
    // a few thousand random terms, from a fixed seed
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = term();
    let mut terms = Vec::new();
    let mut input = Vec::new();
    for _ in 0..3000 {
        // Erlang before OTP 27 takes -0.0 =:= 0.0 (so as map keys they
        // collide); Lonala tells them apart.
        let g = without_negative_zero(strategy.new_tree(&mut runner).unwrap().current());
        let t = build(&h, &g);
        let b = encode(t).unwrap();
        input.extend((b.len() as u32).to_be_bytes());
        input.extend(&b);
        terms.push(t);
    }
    let dir = std::env::temp_dir().join(format!("lona-etf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (inp, out) = (dir.join("in.bin"), dir.join("out.bin"));
    std::fs::write(&inp, &input).unwrap();
    let mut child = Command::new(erl)
        .args(["-noshell", "-eval", ERL_SCRIPT, "-extra"])
        .arg(&inp)
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("erl starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("erl did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "erl failed: {err}");
    let data = std::fs::read(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let fr = frames(&data);
    let expected = expected_fixed(&h);
    assert_eq!(fr.len(), 2 * terms.len() + 3 * expected.len() + 1);
    // our terms, as Erlang re-encoded them (minor versions 2 and 0)
    for (i, t) in terms.iter().enumerate() {
        for b in &fr[2 * i..2 * i + 2] {
            assert_eq!(decode(&h, b).as_ref(), Ok(t), "term {i}: {t} from {b:?}");
        }
    }
    // Erlang's own terms, in minor versions 0, 1 and 2
    let theirs = &fr[2 * terms.len()..];
    let mut atoms = AtomBudget::new(20);
    for (i, want) in expected.iter().enumerate() {
        for b in &theirs[3 * i..3 * i + 3] {
            assert_eq!(
                &decode_with(&h, b, &mut atoms),
                want,
                "Erlang term {i} from {b:?}"
            );
        }
    }
    assert_eq!(
        decode(&h, theirs[3 * expected.len()]),
        Err(DecodeError::Compressed)
    );
}

/// Erlang encodes local funs (with free variables too), export funs and
/// bit strings; they decode to `[:erlang/local-fun ...]`, `[:erlang/fun
/// ...]`, `[:erlang/bits ...]`, and encode back to terms Erlang finds
/// equal (`=:=`) to the originals, checked by a second `erl`.
#[test]
fn funs_and_bit_strings_go_back_to_erlang_unchanged() {
    let Some(erl) = find_erl() else {
        eprintln!("SKIPPED funs_and_bit_strings_go_back_to_erlang_unchanged: no `erl` found");
        return;
    };
    const MAKE: &str = r#"[Out] = init:get_plain_arguments(),
  Y = 42,
  Ts = [fun() -> ok end, fun(X) -> X + Y end, fun lists:map/2, <<1:3>>, <<255, 3:2>>,
        {<<7:5>>, [fun erlang:self/0]}, #{k => fun(A, B) -> {A, B, self()} end}],
  ok = file:write_file(Out, [[<<(byte_size(B)):32>>, B] || T <- Ts, B <- [term_to_binary(T)]]),
  halt(0)."#;
    const CHECK: &str = r#"[In] = init:get_plain_arguments(),
  {ok, D} = file:read_file(In),
  L = fun F(<<N:32, A:N/binary, M:32, B:M/binary, R/binary>>) -> [binary_to_term(A) =:= binary_to_term(B) | F(R)]; F(<<>>) -> [] end,
  io:format("~p~n", [L(D)]),
  halt(0)."#;
    let dir = std::env::temp_dir().join(format!("lona-etf-funs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (made, pairs) = (dir.join("made.bin"), dir.join("pairs.bin"));
    let run = |script: &str, arg: &std::path::Path| {
        let out = Command::new(erl)
            .args(["-noshell", "-eval", script, "-extra"])
            .arg(arg)
            .stdin(Stdio::null())
            .output()
            .expect("erl runs");
        assert!(
            out.status.success(),
            "erl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(MAKE, &made);
    let data = std::fs::read(&made).unwrap();
    let h = Heap::new();
    let mut atoms = AtomBudget::new(20);
    let me = here();
    let mut back = Vec::new();
    let mut shown = Vec::new();
    for b in frames(&data) {
        let t = decode_node(&h, b, &mut atoms, &me).unwrap_or_else(|e| panic!("{e:?} from {b:?}"));
        let again = encode_node(t, &me).unwrap();
        // stable: what we encode decodes to the same term
        assert_eq!(
            decode_node(&h, &again, &mut AtomBudget::none(), &me).as_ref(),
            Ok(&t)
        );
        shown.push(match t.view() {
            View::Vector(items) => items[0].to_string(),
            _ => t.to_string(),
        });
        for x in [b, &again[..]] {
            back.extend((x.len() as u32).to_be_bytes());
            back.extend(x);
        }
    }
    assert_eq!(
        shown,
        [
            ":erlang/local-fun",
            ":erlang/local-fun",
            ":erlang/fun",
            ":erlang/bits",
            ":erlang/bits",
            "[:erlang/bits #bin\"8\" 5]",
            &shown[6]
        ]
    );
    let lf = decode_node(&h, frames(&data)[1], &mut atoms, &me).unwrap();
    let View::Vector(items) = lf.view() else {
        panic!()
    };
    assert_eq!(
        (items[1].to_string(), items[2].to_string()),
        ("\"erl_eval\"".to_string(), "1".to_string())
    );
    std::fs::write(&pairs, &back).unwrap();
    let verdict = run(CHECK, &pairs);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(verdict.trim(), "[true,true,true,true,true,true,true]");
}

// ---- 4. hostile input --------------------------------------------------

#[test]
fn declared_lengths_reserve_nothing() {
    let h = Heap::new();
    let max = [255, 255, 255, 255];
    let cases: Vec<Vec<u8>> = vec![
        [&[131, 109][..], &max, &[1, 2, 3]].concat(), // BINARY_EXT
        [&[131, 108][..], &max, &[1, 2, 3]].concat(), // LIST_EXT
        [&[131, 105][..], &max, &[1, 2, 3]].concat(), // LARGE_TUPLE_EXT
        [&[131, 116][..], &max, &[1, 2, 3]].concat(), // MAP_EXT
        [&[131, 111][..], &max, &[0, 2, 3]].concat(), // LARGE_BIG_EXT
        [&[131, 77][..], &max, &[8, 2, 3]].concat(),  // BIT_BINARY_EXT
        [&[131, 112][..], &max, &[1, 2, 3]].concat(), // NEW_FUN_EXT
        vec![131, 107, 255, 255, 1, 2, 3],            // STRING_EXT
        vec![131, 118, 255, 255, 1, 2, 3],            // ATOM_UTF8_EXT
        vec![131, 100, 255, 255, 1, 2, 3],            // ATOM_EXT
    ];
    for bytes in &cases {
        let (r, largest) = largest_during(|| decode(&h, bytes).map(|_| ()));
        assert_eq!(r, Err(DecodeError::LengthTooLarge), "{bytes:?}");
        assert!(largest < 4096, "{bytes:?}: allocated {largest} bytes");
    }
    // nested containers each claiming the rest
    let mut nested = vec![131];
    for _ in 0..10_000 {
        nested.extend([108, 0, 0, 0, 1]);
    }
    let (r, largest) = largest_during(|| decode(&h, &nested).map(|_| ()));
    assert_eq!(r, Err(DecodeError::LengthTooLarge));
    assert!(largest < 1 << 20, "allocated {largest} bytes");
}

#[test]
fn deep_nesting_does_not_overflow() {
    let h = Heap::new();
    let depth = 100_000;
    let mut tuples = vec![131];
    for _ in 0..depth {
        tuples.extend([104, 1]);
    }
    tuples.push(106);
    let t = decode(&h, &tuples).unwrap();
    assert_eq!(encode(t).unwrap(), tuples);
    let mut lists = vec![131];
    for _ in 0..depth {
        lists.extend([108, 0, 0, 0, 1]);
    }
    lists.resize(lists.len() + depth + 1, 106);
    let t = decode(&h, &lists).unwrap();
    assert_eq!(encode(t).unwrap(), lists);
    // truncated: the innermost tuple claims a byte that is not there
    assert_eq!(
        decode(&h, &tuples[..tuples.len() - 1]),
        Err(DecodeError::LengthTooLarge)
    );
    assert_eq!(
        decode(&h, &tuples[..tuples.len() - 2]),
        Err(DecodeError::UnexpectedEnd)
    );
}

#[test]
fn unknown_atoms_need_a_budget() {
    let h = Heap::new();
    let name = "etf-test-never-seen-atom";
    let mut bytes = vec![131, 119, name.len() as u8];
    bytes.extend(name.as_bytes());
    assert_eq!(decode(&h, &bytes), Err(DecodeError::UnknownAtom));
    assert_eq!(Atom::existing(name), None);
    let mut latin = vec![131, 115, 4];
    latin.extend(b"etfz");
    assert_eq!(decode(&h, &latin), Err(DecodeError::UnknownAtom));
    // a budget of one: one new atom, then no more
    let mut budget = AtomBudget::new(1);
    assert_eq!(
        decode_with(&h, &bytes, &mut budget),
        Ok(Term::keyword(name))
    );
    assert_eq!(budget.remaining(), 0);
    assert_eq!(
        decode_with(&h, &latin, &mut budget),
        Err(DecodeError::UnknownAtom)
    );
    assert_eq!(Atom::existing("etfz"), None);
    // over 255 characters is never an atom
    let mut long = vec![131, 118, 1, 0];
    long.extend([b'q'; 256]);
    assert_eq!(
        decode_with(&h, &long, &mut AtomBudget::unlimited()),
        Err(DecodeError::AtomTooLong)
    );
}

fn mutate(mut b: Vec<u8>, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    for &(pos, kind, byte) in edits {
        if b.is_empty() {
            break;
        }
        let i = pos % b.len();
        match kind % 4 {
            0 => b[i] = byte,
            1 => b.insert(i, byte),
            2 => {
                b.remove(i);
            }
            _ => b.truncate(i),
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes(body in prop::collection::vec(any::<u8>(), 0..64)) {
        let h = Heap::new();
        let mut bytes = vec![131];
        bytes.extend(body);
        check_stable(&h, &bytes);
    }

    #[test]
    fn mutated_encodings(
        g in term(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        let h = Heap::new();
        let bytes = mutate(encode(build(&h, &g)).unwrap(), &edits);
        check_stable(&h, &bytes);
    }

    /// Erlang's encoding of a local fun, an export fun and a bit string,
    /// mutated: what decodes is stable (a tuple that looks like a tagged
    /// vector but is not what the decoder makes stays a tuple).
    #[test]
    fn mutated_funs_and_bit_strings(
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        let h = Heap::new();
        for n in ["erl_eval", "lists", "map", "clause", "atom", "none", "var", "nonode@nohost"] {
            Term::keyword(n);
        }
        prop_assert!(decode(&h, &ERLANG_FUNS).is_ok());
        check_stable(&h, &ERLANG_FUNS);
        check_stable(&h, &mutate(ERLANG_FUNS.to_vec(), &edits));
    }
}

/// `term_to_binary({fun() -> ok end, fun lists:map/2, <<5:3>>})` from
/// an `erl -eval` (OTP 25).
const ERLANG_FUNS: [u8; 171] = [
    131, 104, 3, 112, 0, 0, 0, 143, 0, 6, 83, 97, 170, 70, 21, 144, 209, 189, 241, 235, 98, 209,
    166, 235, 8, 0, 0, 0, 43, 0, 0, 0, 1, 100, 0, 8, 101, 114, 108, 95, 101, 118, 97, 108, 97, 43,
    98, 0, 50, 155, 13, 88, 100, 0, 13, 110, 111, 110, 111, 100, 101, 64, 110, 111, 104, 111, 115,
    116, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 104, 6, 97, 1, 106, 100, 0, 4, 110, 111, 110, 101,
    100, 0, 4, 110, 111, 110, 101, 116, 0, 0, 0, 0, 108, 0, 0, 0, 1, 104, 5, 100, 0, 6, 99, 108,
    97, 117, 115, 101, 97, 1, 106, 106, 108, 0, 0, 0, 1, 104, 3, 100, 0, 4, 97, 116, 111, 109, 97,
    1, 100, 0, 2, 111, 107, 106, 106, 113, 100, 0, 5, 108, 105, 115, 116, 115, 100, 0, 3, 109, 97,
    112, 97, 2, 77, 0, 0, 0, 1, 3, 160,
];

// ---- 5. pids and references with a node --------------------------------

/// The node the tests speak as.
fn here() -> Node {
    Node {
        name: Atom::new("lona@here"),
        creation: 7,
    }
}

fn elsewhere() -> Node {
    Node {
        name: Atom::new("peer@elsewhere"),
        creation: 0xdead_beef,
    }
}

/// The bytes of an atom as `SMALL_ATOM_UTF8_EXT`.
fn atom_bytes(name: &str) -> Vec<u8> {
    let mut b = vec![119, name.len() as u8];
    b.extend(name.as_bytes());
    b
}

fn new_pid_ext(node: &str, id: u32, serial: u32, creation: u32) -> Vec<u8> {
    let mut b = vec![131, 88];
    b.extend(atom_bytes(node));
    for n in [id, serial, creation] {
        b.extend(n.to_be_bytes());
    }
    b
}

fn newer_ref_ext(node: &str, creation: u32, ids: &[u32]) -> Vec<u8> {
    let mut b = vec![131, 90];
    b.extend((ids.len() as u16).to_be_bytes());
    b.extend(atom_bytes(node));
    b.extend(creation.to_be_bytes());
    for n in ids {
        b.extend(n.to_be_bytes());
    }
    b
}

#[test]
fn local_pids_and_references_take_the_nodes_identity() {
    let h = Heap::new();
    let me = here();
    let pid = h.pid(Pid::new(12, 3));
    assert_eq!(
        encode_node(pid, &me).unwrap(),
        new_pid_ext("lona@here", 12, 3, 7)
    );
    let r = h.reference(0x1234_5678_9abc_def0);
    assert_eq!(
        encode_node(r, &me).unwrap(),
        newer_ref_ext("lona@here", 7, &[0x9abc_def0, 0x1234_5678, 0])
    );
    // and come back local
    let mut none = AtomBudget::none();
    let back = decode_node(&h, &new_pid_ext("lona@here", 12, 3, 7), &mut none, &me).unwrap();
    assert!(matches!(back.view(), View::Pid(p) if p == Pid::new(12, 3)));
    let back = decode_node(
        &h,
        &newer_ref_ext("lona@here", 7, &[0x9abc_def0, 0x1234_5678, 0]),
        &mut none,
        &me,
    )
    .unwrap();
    assert!(matches!(back.view(), View::Ref(0x1234_5678_9abc_def0)));
    // a boxed local pid (generation of 2^29 and more) too
    let big = h.pid(Pid::new(u32::MAX, u32::MAX));
    let bytes = encode_node(big, &me).unwrap();
    assert_eq!(bytes, new_pid_ext("lona@here", u32::MAX, u32::MAX, 7));
    assert_eq!(decode_node(&h, &bytes, &mut none, &me), Ok(big));
}

#[test]
fn other_nodes_pids_and_references() {
    let h = Heap::new();
    let me = here();
    let mut none = AtomBudget::none();
    // another node's
    let p = decode_node(&h, &new_pid_ext("peer@elsewhere", 5, 1, 9), &mut none, &me).unwrap();
    match p.view() {
        View::ExtPid {
            node,
            id,
            serial,
            creation,
        } => {
            assert_eq!(node.name(), "peer@elsewhere");
            assert_eq!((id, serial, creation), (5, 1, 9));
        }
        v => panic!("not an ExtPid: {v:?}"),
    }
    assert_eq!(p, h.ext_pid(elsewhere().name, 5, 1, 9));
    assert_eq!(p.to_string(), "#pid<peer@elsewhere/5.1.9>");
    // our name, another creation: an earlier incarnation's pid
    let old = decode_node(&h, &new_pid_ext("lona@here", 5, 1, 6), &mut none, &me).unwrap();
    assert!(matches!(old.view(), View::ExtPid { creation: 6, .. }));
    assert_ne!(old, h.pid(Pid::new(5, 1)));
    // the old PID_EXT (one byte of creation)
    let mut pid_ext = vec![131, 103];
    pid_ext.extend(atom_bytes("lona@here"));
    pid_ext.extend([0, 0, 0, 5, 0, 0, 0, 1, 7]);
    assert_eq!(
        decode_node(&h, &pid_ext, &mut none, &me),
        Ok(h.pid(Pid::new(5, 1)))
    );
    let last = pid_ext.len() - 1;
    pid_ext[last] = 2;
    assert_eq!(
        decode_node(&h, &pid_ext, &mut none, &me),
        Ok(h.ext_pid(me.name, 5, 1, 2))
    );
    // references: 1 to 5 words; ours only as we encode them (3 words, the
    // third 0)
    for ids in [
        &[1][..],
        &[1, 2],
        &[1, 2, 3],
        &[1, 2, 3, 4],
        &[1, 2, 3, 4, 5],
    ] {
        let r = decode_node(&h, &newer_ref_ext("peer@elsewhere", 3, ids), &mut none, &me).unwrap();
        assert_eq!(r, h.ext_ref(elsewhere().name, 3, ids));
        match r.view() {
            View::ExtRef { ids: got, .. } => assert_eq!(&*got, ids),
            v => panic!("not an ExtRef: {v:?}"),
        }
        let mine = decode_node(&h, &newer_ref_ext("lona@here", 7, ids), &mut none, &me).unwrap();
        assert!(matches!(mine.view(), View::ExtRef { .. }), "{ids:?}");
    }
    let local = decode_node(
        &h,
        &newer_ref_ext("lona@here", 7, &[1, 2, 0]),
        &mut none,
        &me,
    );
    assert_eq!(local, Ok(h.reference(1 | 2 << 32)));
    let other_creation = decode_node(
        &h,
        &newer_ref_ext("lona@here", 8, &[1, 2, 0]),
        &mut none,
        &me,
    );
    assert_eq!(other_creation, Ok(h.ext_ref(me.name, 8, &[1, 2, 0])));
    // the old NEW_REFERENCE_EXT (one byte of creation)
    let mut new_ref = vec![131, 114, 0, 3];
    new_ref.extend(atom_bytes("lona@here"));
    new_ref.push(7);
    new_ref.extend([0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0]);
    assert_eq!(
        decode_node(&h, &new_ref, &mut none, &me),
        Ok(h.reference(1 | 2 << 32))
    );
    assert_eq!(
        h.ext_ref(me.name, 7, &[1, 2, 0]).to_string(),
        "#ref<lona@here/7.1.2.0>"
    );
}

#[test]
fn pids_and_references_cross_between_nodes() {
    // a's pid and reference, sent to b and back, are a's again
    let h = Heap::new();
    let (a, b) = (here(), elsewhere());
    let mut none = AtomBudget::none();
    let msg = h.vector(&[h.pid(Pid::new(1, 2)), h.reference(99), Term::keyword("ok")]);
    let wire = encode_node(msg, &a).unwrap();
    let at_b = decode_node(&h, &wire, &mut none, &b).unwrap();
    let View::Vector(items) = at_b.view() else {
        panic!("a vector")
    };
    assert_eq!(items[0], h.ext_pid(a.name, 1, 2, 7));
    assert_eq!(items[1], h.ext_ref(a.name, 7, &[99, 0, 0]));
    // b sends them back as they came
    let back = encode_node(at_b, &b).unwrap();
    assert_eq!(back, wire);
    assert_eq!(decode_node(&h, &back, &mut none, &a), Ok(msg));
    // without a node, pids and references have no Erlang form
    assert_eq!(encode(items[0]), Err(EncodeError::Unsupported("pid")));
    assert_eq!(encode(items[1]), Err(EncodeError::Unsupported("reference")));
    assert_eq!(decode(&h, &wire), Err(DecodeError::Unsupported("pid")));
    // the prefix and body forms
    let mut body = Vec::new();
    encode_node_into(&mut body, msg, &a).unwrap();
    assert_eq!(body, wire[1..]);
    body.push(106);
    assert_eq!(
        decode_node_body_prefix(&h, &body, &mut none, &a),
        Ok((msg, wire.len() - 1))
    );
    let mut two = wire.clone();
    two.extend([131, 106]);
    assert_eq!(
        decode_node_prefix(&h, &two, &mut none, &a),
        Ok((msg, wire.len()))
    );
    assert_eq!(
        decode_node(&h, &two, &mut none, &a),
        Err(DecodeError::TrailingBytes)
    );
}

#[test]
fn ext_pids_and_refs_compare_hash_copy_and_survive_collections() {
    let mut h = Heap::new();
    let (n1, n2) = (Atom::new("a@x"), Atom::new("b@x"));
    let root = {
        let terms = [
            h.pid(Pid::new(u32::MAX, u32::MAX)),
            h.ext_pid(n1, 0, 0, 0),
            h.ext_pid(n1, 0, 0, 1),
            h.ext_pid(n1, 1, 0, 0),
            h.ext_pid(n2, 0, 0, 0),
        ];
        for w in terms.windows(2) {
            assert!(w[0] < w[1], "{} < {}", w[0], w[1]);
        }
        let refs = [
            h.reference(u64::MAX),
            h.ext_ref(n1, 0, &[5]),
            h.ext_ref(n1, 1, &[0]),
            h.ext_ref(n1, 1, &[0, 0]),
            h.ext_ref(n1, 1, &[0, 1]),
            h.ext_ref(n2, 0, &[0]),
        ];
        for w in refs.windows(2) {
            assert!(w[0] < w[1], "{} < {}", w[0], w[1]);
        }
        // refs before functions before pids, as the local ones
        assert!(refs[5] < terms[0]);
        let a = h.ext_ref(n1, 3, &[1, 2, 3, 4, 5]);
        let b = h.ext_ref(n1, 3, &[1, 2, 3, 4, 5]);
        assert_eq!(a, b);
        assert_eq!(term_hash(a), term_hash(b));
        assert_eq!(term_hash(terms[1]), term_hash(h.ext_pid(n1, 0, 0, 0)));
        assert_ne!(term_hash(terms[1]), term_hash(terms[2]));
        let set: std::collections::HashSet<Term<'_>> =
            terms.iter().chain(&refs).copied().chain([a, b]).collect();
        assert_eq!(set.len(), terms.len() + refs.len() + 1);
        // as map keys
        let m = h.map(&[(terms[1], h.int(1)), (a, h.int(2))]);
        assert_eq!(m.map_get(h.ext_pid(n1, 0, 0, 0)), Some(h.int(1)));
        assert_eq!(m.map_get(b), Some(h.int(2)));

        let all = h.vector(&[h.vector(&terms), h.vector(&refs), a, m]);
        // copies: another heap, and a fragment another heap attaches
        let other = Heap::new();
        assert_eq!(other.copy_from(all), all);
        let receiver = Heap::new();
        let got = receiver.attach(Fragment::new(all));
        assert_eq!(got, all);
        assert_eq!(got.to_string(), all.to_string());
        h.add_root(all)
    };
    let printed = h.root(root).to_string();
    let words = encode_node(h.root(root), &here()).unwrap();
    // garbage, so the collections move the objects
    for i in 0..1000 {
        h.vector(&[h.int(i), h.int(i)]);
    }
    h.collect(0).unwrap();
    assert_eq!(h.root(root).to_string(), printed);
    h.collect_major(0).unwrap();
    assert_eq!(h.root(root).to_string(), printed);
    assert_eq!(encode_node(h.root(root), &here()).unwrap(), words);
    assert!(printed.contains("#pid<a@x/1.0.0>"));
    assert!(printed.contains("#ref<a@x/3.1.2.3.4.5>"));
}

#[test]
fn hostile_pids_and_references() {
    let h = Heap::new();
    let me = here();
    elsewhere();
    let mut none = AtomBudget::none();
    // every proper prefix of a pid or reference is an error
    for bytes in [
        new_pid_ext("peer@elsewhere", 1, 2, 3),
        newer_ref_ext("peer@elsewhere", 3, &[1, 2, 3, 4, 5]),
        new_pid_ext("lona@here", 1, 2, 7),
        newer_ref_ext("lona@here", 7, &[1, 2, 0]),
    ] {
        assert!(decode_node(&h, &bytes, &mut none, &me).is_ok());
        for i in 0..bytes.len() {
            let e = decode_node(&h, &bytes[..i], &mut none, &me).unwrap_err();
            assert!(
                matches!(
                    e,
                    DecodeError::UnexpectedEnd
                        | DecodeError::LengthTooLarge
                        | DecodeError::BadVersion
                ),
                "prefix {i} of {bytes:?}: {e:?}"
            );
        }
    }
    // a reference of no id word or more than five
    for n in [0u16, 6, 0xffff] {
        let mut b = vec![131, 90];
        b.extend(n.to_be_bytes());
        b.extend(atom_bytes("peer@elsewhere"));
        b.extend([0; 4]);
        b.extend(std::iter::repeat_n(0, 4 * usize::from(n.min(6))));
        assert_eq!(
            decode_node(&h, &b, &mut none, &me),
            Err(DecodeError::BadRefLength),
            "{n} ids"
        );
        b[1] = 114;
        assert_eq!(
            decode_node(&h, &b, &mut none, &me),
            Err(DecodeError::BadRefLength),
            "{n} ids"
        );
    }
    assert!(DecodeError::BadRefLength
        .to_string()
        .contains("1 to 5 id words"));
    // a node that is no atom, or an atom cache reference
    let mut b = vec![131, 88, 97, 1];
    b.extend([0; 12]);
    assert_eq!(
        decode_node(&h, &b, &mut none, &me),
        Err(DecodeError::BadNode)
    );
    let mut b = vec![131, 88, 82, 0];
    b.extend([0; 12]);
    assert!(matches!(
        decode_node(&h, &b, &mut none, &me),
        Err(DecodeError::Unsupported(_))
    ));
    // node names are atoms under the budget
    let fresh = ["etf-node-1@nowhere", "etf-node-2@nowhere"];
    let pid1 = new_pid_ext(fresh[0], 1, 0, 0);
    assert_eq!(
        decode_node(&h, &pid1, &mut none, &me),
        Err(DecodeError::UnknownAtom)
    );
    assert_eq!(Atom::existing(fresh[0]), None);
    let mut one = AtomBudget::new(1);
    let p = decode_node(&h, &pid1, &mut one, &me).unwrap();
    assert!(matches!(p.view(), View::ExtPid { node, .. } if node.name() == fresh[0]));
    // the same name again costs nothing, a second new one is refused
    assert!(decode_node(&h, &pid1, &mut one, &me).is_ok());
    assert_eq!(
        decode_node(&h, &newer_ref_ext(fresh[1], 0, &[1]), &mut one, &me),
        Err(DecodeError::UnknownAtom)
    );
    assert_eq!(Atom::existing(fresh[1]), None);
    // a Latin-1 node name
    let mut latin = vec![131, 88, 115, 4];
    latin.extend(b"a@\xe9x");
    latin.extend([0; 12]);
    let p = decode_node(&h, &latin, &mut AtomBudget::new(1), &me).unwrap();
    assert!(matches!(p.view(), View::ExtPid { node, .. } if node.name() == "a@éx"));
    // over 255 characters is never an atom
    let mut long = vec![131, 88, 118, 1, 0];
    long.extend([b'q'; 256]);
    long.extend([0; 12]);
    assert_eq!(
        decode_node(&h, &long, &mut AtomBudget::unlimited(), &me),
        Err(DecodeError::AtomTooLong)
    );
    // declared lengths reserve nothing
    let mut b = vec![131, 90, 0, 5, 118, 255, 255];
    b.extend([1, 2, 3]);
    let (r, largest) = largest_during(|| decode_node(&h, &b, &mut none, &me).map(|_| ()));
    assert_eq!(r, Err(DecodeError::LengthTooLarge));
    assert!(largest < 4096, "allocated {largest} bytes");
}

/// Pids and references of other nodes, and local ones.
#[derive(Clone, Debug)]
enum P {
    Local(u64),
    LocalRef(u64),
    Ext(u8, u32, u32, u32),
    ExtRef(u8, u32, Vec<u32>),
}

fn pid_or_ref() -> impl Strategy<Value = P> {
    prop_oneof![
        any::<u64>().prop_map(P::Local),
        any::<u64>().prop_map(P::LocalRef),
        // our name with another creation (never 7, ours: that one is
        // a local pid, see `other_nodes_pids_and_references`)
        (
            0u8..3,
            any::<u32>(),
            any::<u32>(),
            prop_oneof![Just(6u32), Just(8)]
        )
            .prop_map(|(n, i, s, c)| P::Ext(n, i, s, c)),
        (
            0u8..3,
            6u32..9,
            prop::collection::vec(prop_oneof![Just(0u32), any::<u32>()], 1..=5)
        )
            .prop_filter("our own reference is a local one", |(n, c, ids)| {
                !(*n == 0 && *c == 7 && ids.len() == 3 && ids[2] == 0)
            })
            .prop_map(|(n, c, ids)| P::ExtRef(n, c, ids)),
    ]
}

fn build_p<'h>(h: &'h Heap, p: &P) -> Term<'h> {
    let node = |n: &u8| Atom::new(["lona@here", "peer@elsewhere", "c@d"][usize::from(*n)]);
    match p {
        P::Local(v) => h.pid(Pid(*v)),
        P::LocalRef(r) => h.reference(*r),
        P::Ext(n, i, s, c) => h.ext_pid(node(n), *i, *s, *c),
        P::ExtRef(n, c, ids) => h.ext_ref(node(n), *c, ids),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn node_round_trip(g in term(), ps in prop::collection::vec(pid_or_ref(), 0..6)) {
        let h = Heap::new();
        let me = here();
        let mut items = vec![build(&h, &g)];
        items.extend(ps.iter().map(|p| build_p(&h, p)));
        let t = h.vector(&items);
        let bytes = encode_node(t, &me).unwrap();
        let mut none = AtomBudget::none();
        let back = decode_node(&h, &bytes, &mut none, &me).unwrap();
        prop_assert_eq!(back, t);
        prop_assert_eq!(encode_node(back, &me).unwrap(), bytes.clone());
        // what another node makes of it goes back unchanged
        let there = decode_node(&h, &bytes, &mut none, &elsewhere()).unwrap();
        prop_assert_eq!(encode_node(there, &elsewhere()).unwrap(), bytes.clone());
        for i in 0..bytes.len() {
            let e = decode_node(&h, &bytes[..i], &mut none, &me).unwrap_err();
            prop_assert!(
                matches!(e, DecodeError::UnexpectedEnd | DecodeError::LengthTooLarge | DecodeError::BadVersion),
                "prefix {} of {:?}: {:?}", i, bytes, e
            );
        }
    }

    #[test]
    fn mutated_node_encodings(
        ps in prop::collection::vec(pid_or_ref(), 1..4),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..4),
    ) {
        let h = Heap::new();
        let items: Vec<Term<'_>> = ps.iter().map(|p| build_p(&h, p)).collect();
        let bytes = mutate(encode_node(h.list(&items), &here()).unwrap(), &edits);
        check_stable(&h, &bytes);
    }
}

// ---- 6. against a real Erlang node ----------------------------------------

const ERL_NODE_SCRIPT: &str = r#"
try
  [Out, In] = init:get_plain_arguments(),
  Orig = {self(), make_ref(), [spawn(fun() -> ok end)], #{ok => make_ref()}, node()},
  ok = file:write_file(Out ++ ".tmp", term_to_binary(Orig)),
  ok = file:rename(Out ++ ".tmp", Out),
  Wait = fun W(0) -> timeout;
             W(N) -> case file:read_file(In) of
                       {ok, B} -> B;
                       _ -> timer:sleep(20), W(N - 1)
                     end
         end,
  case Wait(3000) of
    timeout -> halt(4);
    Back ->
      case binary_to_term(Back) of
        Orig -> halt(0);
        Other -> io:format(standard_error, "~p =/= ~p~n", [Other, Orig]), halt(3)
      end
  end
catch C:R:S ->
  io:format(standard_error, "~p~n", [{C, R, S}]),
  halt(2)
end.
"#;

#[test]
fn pids_and_references_against_a_real_erlang_node() {
    let Some(erl) = find_erl() else {
        eprintln!("SKIPPED pids_and_references_against_a_real_erlang_node: no `erl` found (install erlang-base)");
        return;
    };
    let sname = format!("lonaetf{}", std::process::id());
    let dir = std::env::temp_dir().join(format!("lona-etf-node-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (out, inp) = (dir.join("out.bin"), dir.join("in.bin"));
    let mut child = Command::new(erl)
        .args([
            "-sname",
            &sname,
            "-noshell",
            "-eval",
            ERL_NODE_SCRIPT,
            "-extra",
        ])
        .arg(&out)
        .arg(&inp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("erl starts");
    let start = Instant::now();
    let wait = |child: &mut std::process::Child| -> Option<std::process::ExitStatus> {
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                return Some(s);
            }
            if start.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                return None;
            }
            if out.exists() && !inp.exists() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let early = wait(&mut child);
    let stderr = |child: &mut std::process::Child| {
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        err
    };
    if let Some(status) = early {
        let err = stderr(&mut child);
        std::fs::remove_dir_all(&dir).ok();
        // a distributed node needs epmd and a host name; without them
        // there is nothing to test against
        if err.contains("distribution") || err.contains("epmd") || err.contains("net_kernel") {
            eprintln!(
                "SKIPPED pids_and_references_against_a_real_erlang_node: erl -sname failed: {err}"
            );
            return;
        }
        panic!("erl ended before writing its term ({status}): {err}");
    }
    assert!(out.exists(), "erl did not write its term in 60 s");
    let theirs = std::fs::read(&out).unwrap();

    let h = Heap::new();
    let me = here();
    // the node's name is an atom we may make
    let t = decode_node(&h, &theirs, &mut AtomBudget::new(1), &me).unwrap();
    let View::Vector(items) = t.view() else {
        panic!("a tuple: {t}")
    };
    let node_name = match items[4].view() {
        View::Keyword(a) => a,
        v => panic!("node() is an atom: {v:?}"),
    };
    assert!(
        node_name.name().starts_with(&format!("{sname}@")),
        "{}",
        node_name.name()
    );
    let creation = match items[0].view() {
        View::ExtPid { node, creation, .. } => {
            assert_eq!(node, node_name);
            creation
        }
        v => panic!("self() is another node's pid: {v:?}"),
    };
    assert!(
        matches!(items[1].view(), View::ExtRef { node, creation: c, ref ids } if node == node_name && c == creation && ids.len() >= 3),
        "{}",
        items[1]
    );
    let spawned = items[2].list_iter().next().unwrap();
    assert!(matches!(spawned.view(), View::ExtPid { node, .. } if node == node_name));
    let inner_ref = items[3].map_get(Term::keyword("ok")).unwrap();
    assert!(matches!(inner_ref.view(), View::ExtRef { .. }));

    // decoded as that node itself, its pids are local, and encode the same
    let as_them = Node {
        name: node_name,
        creation,
    };
    let local = decode_node(&h, &theirs, &mut AtomBudget::none(), &as_them).unwrap();
    let View::Vector(local_items) = local.view() else {
        panic!("a tuple")
    };
    let View::ExtPid { id, serial, .. } = items[0].view() else {
        unreachable!()
    };
    assert_eq!(local_items[0], h.pid(Pid::new(id, serial)));
    let ours = encode_node(t, &me).unwrap();
    assert_eq!(encode_node(local, &as_them).unwrap(), ours);

    // back to erl, which must find its own pids and references in it
    let tmp = dir.join("in.tmp");
    std::fs::write(&tmp, &ours).unwrap();
    std::fs::rename(&tmp, &inp).unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("erl did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let err = stderr(&mut child);
    std::fs::remove_dir_all(&dir).ok();
    assert!(status.success(), "erl: {status}: {err}");
}
