//! The reader: every syntax element, every error with its position, and
//! hostile input (deep nesting, huge lines, garbage).

use lona_vm::{read_all, Form, FormKind, Pos, ReadError, Reader, Source};
use proptest::prelude::*;

fn read(text: &str) -> Result<Vec<Form>, ReadError> {
    read_all(&Source::new("t.lona", text))
}

fn one(text: &str) -> FormKind {
    let mut v = read(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(v.len(), 1, "{text}");
    v.remove(0).kind
}

fn err(text: &str) -> String {
    read(text).expect_err(text).to_string()
}

fn sym(s: &str) -> FormKind {
    FormKind::Symbol(s.into())
}

/// A form without positions, for comparisons.
fn strip(f: &Form) -> Form {
    let kind = match &f.kind {
        FormKind::List(v) => FormKind::List(v.iter().map(strip).collect()),
        FormKind::Vector(v) => FormKind::Vector(v.iter().map(strip).collect()),
        FormKind::Map(v) => FormKind::Map(v.iter().map(|(k, x)| (strip(k), strip(x))).collect()),
        FormKind::Float(x) if x.is_nan() => FormKind::Str("NaN marker".into()),
        k => k.clone(),
    };
    Form::new(kind, Pos::default())
}

#[test]
fn atoms() {
    assert_eq!(one("nil"), FormKind::Nil);
    assert_eq!(one("true"), FormKind::Bool(true));
    assert_eq!(one("false"), FormKind::Bool(false));
    assert_eq!(one("42"), FormKind::Int(42));
    assert_eq!(one("-7"), FormKind::Int(-7));
    assert_eq!(one("+7"), FormKind::Int(7));
    assert_eq!(one("0xff"), FormKind::Int(255));
    assert_eq!(one("-0x1F"), FormKind::Int(-31));
    assert_eq!(one("2.75"), FormKind::Float(2.75));
    assert_eq!(one("1e-3"), FormKind::Float(0.001));
    assert_eq!(one("-2.5E2"), FormKind::Float(-250.0));
    assert_eq!(one("##Inf"), FormKind::Float(f64::INFINITY));
    assert_eq!(one("##-Inf"), FormKind::Float(f64::NEG_INFINITY));
    assert!(matches!(one("##NaN"), FormKind::Float(x) if x.is_nan()));
    assert_eq!(
        one("99999999999999999999"),
        FormKind::BigInt("99999999999999999999".parse().unwrap())
    );
    assert_eq!(one("-9223372036854775808"), FormKind::Int(i64::MIN));
    assert_eq!(one(":ok"), FormKind::Keyword("ok".into()));
    assert_eq!(one(":app/ready"), FormKind::Keyword("app/ready".into()));
    assert_eq!(one("foo"), sym("foo"));
    assert_eq!(one("app.util/parse"), sym("app.util/parse"));
    assert_eq!(one("+"), sym("+"));
    assert_eq!(one("-"), sym("-"));
    assert_eq!(one("/"), sym("/"));
    assert_eq!(one("even?"), sym("even?"));
    assert_eq!(one("->>"), sym("->>"));
    assert_eq!(one("t#"), sym("t#"));
    assert_eq!(one("héllo"), sym("héllo"));
}

#[test]
fn strings_and_escapes() {
    assert_eq!(one(r#""a\n\"b\"""#), FormKind::Str("a\n\"b\"".into()));
    assert_eq!(one(r#""\t\r\\\0""#), FormKind::Str("\t\r\\\0".into()));
    assert_eq!(one(r#""\u00e9x""#), FormKind::Str("éx".into()));
    assert_eq!(one("\"multi\nline\""), FormKind::Str("multi\nline".into()));
    assert_eq!(one("\"ünïcödé ✓\""), FormKind::Str("ünïcödé ✓".into()));
}

#[test]
fn collections_comments_and_prefixes() {
    let v = read("; comment\n(f x) [1, 2] {:a 1 \"b\" 2} ; trailing\n").unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        v[0].kind,
        FormKind::List(vec![
            Form::new(sym("f"), Pos { line: 2, col: 2 }),
            Form::new(sym("x"), Pos { line: 2, col: 4 })
        ])
    );
    assert_eq!(v[0].pos, Pos { line: 2, col: 1 });
    assert_eq!(v[1].pos, Pos { line: 2, col: 7 });
    let FormKind::Map(pairs) = &v[2].kind else {
        panic!()
    };
    assert_eq!(pairs.len(), 2);
    assert_eq!(one("()"), FormKind::List(vec![]));
    let q = one("'x");
    let FormKind::List(items) = q else { panic!() };
    assert_eq!(items[0].kind, sym("quote"));
    assert_eq!(items[1].kind, sym("x"));
    for (text, head) in [
        ("`x", "syntax-quote"),
        ("~x", "unquote"),
        ("~@x", "unquote-splicing"),
    ] {
        let FormKind::List(items) = one(text) else {
            panic!()
        };
        assert_eq!(items[0].kind, sym(head), "{text}");
    }
    assert_eq!(
        one("[1 #_ 2 3]"),
        FormKind::Vector(vec![
            Form::new(FormKind::Int(1), Pos { line: 1, col: 2 }),
            Form::new(FormKind::Int(3), Pos { line: 1, col: 9 })
        ])
    );
    assert_eq!(read("#_(ignored) ").unwrap().len(), 0);
}

#[test]
fn positions_count_characters() {
    let v = read("\"é\" x").unwrap();
    assert_eq!(v[1].pos, Pos { line: 1, col: 5 });
    assert_eq!(
        err("(a\n  (b c]"),
        "t.lona:2:7: expected ')' to close '(' opened at 2:3, found ']'"
    );
    assert_eq!(
        err("(é é ]"),
        "t.lona:1:6: expected ')' to close '(' opened at 1:1, found ']'"
    );
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    let cases = [
        (
            "(a b",
            "t.lona:1:5: expected ')' to close '(' opened at 1:1",
            true,
        ),
        (
            "[1 2\n",
            "t.lona:2:1: expected ']' to close '[' opened at 1:1",
            true,
        ),
        (
            "{:a",
            "t.lona:1:4: expected '}' to close '{' opened at 1:1",
            true,
        ),
        (")", "t.lona:1:1: unexpected ')'", false),
        (
            "(]",
            "t.lona:1:2: expected ')' to close '(' opened at 1:1, found ']'",
            false,
        ),
        (
            "{:a 1 :b}",
            "t.lona:1:1: map literal needs an even number of forms",
            false,
        ),
        (
            "\"abc",
            "t.lona:1:5: expected '\"' to close the string opened at 1:1",
            true,
        ),
        (
            "\"a\\q\"",
            "t.lona:1:3: unknown escape \\q in a string",
            false,
        ),
        (
            "'",
            "t.lona:1:2: expected a form after the prefix at 1:1",
            true,
        ),
        (":", "t.lona:1:1: bad keyword :", false),
        ("1x", "t.lona:1:1: bad number 1x", false),
        ("0xg", "t.lona:1:1: bad number 0xg", false),
        ("1.5.2", "t.lona:1:1: bad number 1.5.2", false),
        ("a\\b", "t.lona:1:1: unexpected '\\' in a\\b", false),
    ];
    for (text, want, incomplete) in cases {
        let e = read(text).expect_err(text);
        assert_eq!(e.to_string(), want, "{text:?}");
        assert_eq!(e.incomplete, incomplete, "{text:?}");
    }
    let big = format!("1{}", "0".repeat(2000));
    assert_eq!(
        err(&big),
        "t.lona:1:1: integer literal too large (over 4096 bits)"
    );
    let big = format!("1{}", "0".repeat(1_000_000));
    assert_eq!(
        err(&big),
        "t.lona:1:1: integer literal too large (over 4096 bits)"
    );
    // the largest literal prints in decimal and reads back (found by the fuzzer)
    let max = format!("0x{}", "f".repeat(1024));
    let FormKind::BigInt(b) = one(&max) else {
        panic!()
    };
    assert_eq!(one(&b.to_string()), FormKind::BigInt(b));
    // leading zeros do not count
    assert_eq!(one(&format!("{}7", "0".repeat(1500))), FormKind::Int(7));
}

#[test]
fn reading_one_form_at_a_time_stops_at_the_error() {
    let src = Source::new("t.lona", "(ok) (also ok) (broken");
    let mut r = Reader::new(&src);
    assert!(r.next_form().unwrap().is_some());
    assert!(r.next_form().unwrap().is_some());
    let e = r.next_form().unwrap_err();
    assert!(e.incomplete);
}

#[test]
fn hostile_input_gives_errors_not_crashes() {
    // 100,000 nested brackets
    let deep = "(".repeat(100_000);
    assert_eq!(err(&deep), "t.lona:1:4097: nesting deeper than 4096");
    let deep = "'".repeat(100_000);
    assert_eq!(err(&deep), "t.lona:1:4097: nesting deeper than 4096");
    // 4096 deep is fine, and closes
    let ok = format!("{}{}", "[".repeat(4096), "]".repeat(4096));
    assert_eq!(read(&ok).unwrap().len(), 1);
    // a 10 MB line
    let line = format!("[{}]", "12345 ".repeat(10 * 1024 * 1024 / 6));
    let v = read(&line).unwrap();
    let FormKind::Vector(items) = &v[0].kind else {
        panic!()
    };
    assert_eq!(items.len(), 10 * 1024 * 1024 / 6);
    // garbage bytes
    for text in ["\u{0}\u{1}", "#", "##", "#{", "\\", "~@", "@", "^x"] {
        let _ = read(text);
    }
}

fn form() -> impl Strategy<Value = Form> {
    let leaf = prop_oneof![
        Just(FormKind::Nil),
        any::<bool>().prop_map(FormKind::Bool),
        any::<i64>().prop_map(FormKind::Int),
        any::<u128>().prop_map(|u| FormKind::BigInt(
            num_bigint::BigInt::from(u) * 1000 + 10_000_000_000_000_000_000i128
        )),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(FormKind::Float),
        Just(FormKind::Float(f64::INFINITY)),
        ".*".prop_map(FormKind::Str),
        "[a-z][a-z0-9.?!*+-]{0,8}(/[a-z][a-z0-9]{0,5})?".prop_map(FormKind::Keyword),
        "[a-z*+!_?<>=][a-z0-9*+!_?<>=.-]{0,8}"
            .prop_filter("not a literal", |s| {
                // `+0` reads as a number, as in Clojure
                let signed_digit = (s.starts_with('+') || s.starts_with('-'))
                    && s[1..].starts_with(|c: char| c.is_ascii_digit());
                !matches!(s.as_str(), "nil" | "true" | "false") && !signed_digit
            })
            .prop_map(FormKind::Symbol),
    ]
    .prop_map(|k| Form::new(k, Pos::default()));
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|v| Form::new(FormKind::List(v), Pos::default())),
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|v| Form::new(FormKind::Vector(v), Pos::default())),
            prop::collection::vec((inner.clone(), inner), 0..4)
                .prop_map(|v| Form::new(FormKind::Map(v), Pos::default())),
        ]
    })
}

proptest! {
    #[test]
    fn printed_forms_read_back_equal(f in form()) {
        let text = f.to_string();
        let back = read(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back.len(), 1);
        prop_assert_eq!(strip(&back[0]), strip(&f), "{}", text);
    }

    #[test]
    fn any_text_reads_or_errs_without_panicking(s in ".{0,200}") {
        match read(&s) {
            Ok(forms) => for f in forms {
                let again = read(&f.to_string()).map_err(|e| TestCaseError::fail(format!("{f}: {e}")))?;
                prop_assert_eq!(strip(&again[0]), strip(&f));
            },
            Err(e) => prop_assert!(e.pos.line >= 1 && e.pos.col >= 1),
        }
    }
}
