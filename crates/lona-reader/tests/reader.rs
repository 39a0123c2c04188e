//! The reader: every syntax element, every error with its message and
//! position, `incomplete`, printing, hostile input (deep nesting, huge
//! lines, garbage) and a print/read round trip over random forms.

use std::time::{Duration, Instant};

use lona_reader::{read_all, Form, FormKind, Pos, ReadError, Reader, Source};
use num_bigint::BigInt;
use proptest::prelude::*;

fn read(text: &str) -> Result<Vec<Form>, ReadError> {
    read_all(&Source::new("t.lona", text))
}

fn one(text: &str) -> FormKind {
    let mut v = read(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(v.len(), 1, "{text:?}");
    v.remove(0).kind
}

fn err(text: &str) -> String {
    read(text).expect_err(text).to_string()
}

fn sym(s: &str) -> FormKind {
    FormKind::Symbol(s.into())
}

fn at(line: u32, col: u32) -> Pos {
    Pos { line, col }
}

/// Equal ignoring positions; NaN equals NaN.
fn same(a: &Form, b: &Form) -> bool {
    a.same_as(b)
}

/// Reads `text` as one form, prints it, reads that back: equal.
fn round_trip(text: &str) -> String {
    let v = read(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(v.len(), 1, "{text:?}");
    let printed = v[0].to_string();
    let back = read(&printed).unwrap_or_else(|e| panic!("{printed:?}: {e}"));
    assert_eq!(back.len(), 1, "{printed:?}");
    assert!(same(&v[0], &back[0]), "{text:?} printed as {printed:?}");
    printed
}

#[test]
fn atoms() {
    assert_eq!(one("nil"), FormKind::Nil);
    assert_eq!(one("true"), FormKind::Bool(true));
    assert_eq!(one("false"), FormKind::Bool(false));
    assert_eq!(one("42"), FormKind::Int(42));
    assert_eq!(one("-7"), FormKind::Int(-7));
    assert_eq!(one("+7"), FormKind::Int(7));
    assert_eq!(one("0"), FormKind::Int(0));
    assert_eq!(one("-0"), FormKind::Int(0));
    assert_eq!(one("007"), FormKind::Int(7));
    assert_eq!(one("0xff"), FormKind::Int(255));
    assert_eq!(one("0XFF"), FormKind::Int(255));
    assert_eq!(one("-0x1F"), FormKind::Int(-31));
    assert_eq!(one("+0x10"), FormKind::Int(16));
    assert_eq!(one("0x1e5"), FormKind::Int(0x1e5));
    assert_eq!(one("3.14"), FormKind::Float("3.14".parse().unwrap()));
    assert_eq!(one("2.75"), FormKind::Float(2.75));
    assert_eq!(one("-2.5"), FormKind::Float(-2.5));
    assert_eq!(one("+2.5"), FormKind::Float(2.5));
    assert_eq!(one("1e-3"), FormKind::Float(0.001));
    assert_eq!(one("1.5E10"), FormKind::Float(1.5e10));
    assert_eq!(one("-2.5E2"), FormKind::Float(-250.0));
    assert_eq!(one("1e+2"), FormKind::Float(100.0));
    assert_eq!(one("##Inf"), FormKind::Float(f64::INFINITY));
    assert_eq!(one("##-Inf"), FormKind::Float(f64::NEG_INFINITY));
    assert!(matches!(one("##NaN"), FormKind::Float(x) if x.is_nan()));
    assert_eq!(one(":ok"), FormKind::Keyword("ok".into()));
    assert_eq!(one(":app/ready"), FormKind::Keyword("app/ready".into()));
    assert_eq!(one(":nil"), FormKind::Keyword("nil".into()));
    assert_eq!(one(":a'"), FormKind::Keyword("a'".into()));
    assert_eq!(one(":a#"), FormKind::Keyword("a#".into()));
    assert_eq!(one(":lona@vm"), FormKind::Keyword("lona@vm".into()));
    assert_eq!(one("foo"), sym("foo"));
    assert_eq!(one("app.util/parse"), sym("app.util/parse"));
    assert_eq!(one("+"), sym("+"));
    assert_eq!(one("-"), sym("-"));
    assert_eq!(one("/"), sym("/"));
    assert_eq!(one("-a"), sym("-a"));
    assert_eq!(one("even?"), sym("even?"));
    assert_eq!(one("->>"), sym("->>"));
    assert_eq!(one("x'"), sym("x'"));
    assert_eq!(one("a'b"), sym("a'b"));
    assert_eq!(one("*+!-_'?<>=/.&%$"), sym("*+!-_'?<>=/.&%$"));
    assert_eq!(one("a1&rest%$"), sym("a1&rest%$"));
    assert_eq!(one("t#"), sym("t#"));
    assert_eq!(one("héllo"), sym("héllo"));
    assert_eq!(one("λx"), sym("λx"));
    assert_eq!(one("nil?"), sym("nil?"));
}

#[test]
fn integers_and_big_integers() {
    assert_eq!(one("9223372036854775807"), FormKind::Int(i64::MAX));
    assert_eq!(one("-9223372036854775808"), FormKind::Int(i64::MIN));
    assert_eq!(
        one("9223372036854775808"),
        FormKind::BigInt(BigInt::from(i64::MAX) + 1)
    );
    assert_eq!(
        one("-9223372036854775809"),
        FormKind::BigInt(BigInt::from(i64::MIN) - 1)
    );
    assert_eq!(
        one("0x8000000000000000"),
        FormKind::BigInt(BigInt::from(i64::MAX) + 1)
    );
    assert_eq!(
        one("99999999999999999999"),
        FormKind::BigInt("99999999999999999999".parse().unwrap())
    );
    // 4096 bits read, in hex and in decimal, either sign
    let max: BigInt = (BigInt::from(1) << 4096usize) - 1;
    assert_eq!(
        one(&format!("0x{}", "f".repeat(1024))),
        FormKind::BigInt(max.clone())
    );
    assert_eq!(one(&max.to_string()), FormKind::BigInt(max.clone()));
    assert_eq!(one(&format!("-{max}")), FormKind::BigInt(-max.clone()));
    // the largest literal prints in decimal and reads back (found by the fuzzer)
    round_trip(&format!("0x{}", "f".repeat(1024)));
    // 4097 bits do not
    for text in [
        format!("0x1{}", "0".repeat(1024)),
        (max.clone() + 1u8).to_string(),
        format!("-{}", max + 1u8),
        format!("1{}", "0".repeat(2000)),
        format!("1{}", "0".repeat(1_000_000)),
    ] {
        let e = read(&text).expect_err("too large");
        assert_eq!(e.message, "integer literal too large");
        assert_eq!((e.pos, e.incomplete), (at(1, 1), false));
    }
    // leading zeros do not count
    assert_eq!(one(&format!("{}7", "0".repeat(1500))), FormKind::Int(7));
    assert_eq!(
        one(&format!("0x{}1", "0".repeat(1_000_000))),
        FormKind::Int(1)
    );
}

#[test]
fn clojure_number_literals() {
    // `N`: Clojure's big integers; Lonala's integers are one kind.
    assert_eq!(one("1N"), FormKind::Int(1));
    assert_eq!(one("-7N"), FormKind::Int(-7));
    assert_eq!(one("0xffN"), FormKind::Int(255));
    assert_eq!(
        one("99999999999999999999N"),
        FormKind::BigInt("99999999999999999999".parse().unwrap())
    );
    // radix literals, 2 to 36, either sign, either case of r and digits
    assert_eq!(one("2r1010"), FormKind::Int(10));
    assert_eq!(one("16rFF"), FormKind::Int(255));
    assert_eq!(one("16rff"), FormKind::Int(255));
    assert_eq!(one("8R17"), FormKind::Int(15));
    assert_eq!(one("36rZZ"), FormKind::Int(1295));
    assert_eq!(one("-2r1010"), FormKind::Int(-10));
    assert_eq!(one("+36rz"), FormKind::Int(35));
    assert_eq!(
        one(&format!("2r1{}", "0".repeat(64))),
        FormKind::BigInt(BigInt::from(1) << 64usize)
    );
    let e = read(&format!("2r1{}", "0".repeat(4096))).expect_err("too large");
    assert_eq!(e.message, "integer literal too large");
    assert_eq!(round_trip("[2r11 16rA 1N]"), "[3 10 1]");
}

#[test]
fn deref_auto_keywords_and_metadata() {
    assert_eq!(round_trip("@x"), "(deref x)");
    assert_eq!(round_trip("[@a @(f b)]"), "[(deref a) (deref (f b))]");
    let v = read("\n @x").unwrap();
    assert_eq!(v[0].pos, at(2, 2));
    // `~@` stays unquote-splicing
    assert_eq!(
        round_trip("`(~@x)"),
        "(syntax-quote ((unquote-splicing x)))"
    );
    // `::a` keeps its second colon for the compiler to resolve
    assert_eq!(one("::a"), FormKind::Keyword(":a".into()));
    assert_eq!(one("::str/a"), FormKind::Keyword(":str/a".into()));
    assert_eq!(round_trip("{::a 1}"), "{::a 1}");
    // metadata is read and dropped, in each of its three forms
    assert_eq!(round_trip("^{:doc \"x\" :k 1} [a]"), "[a]");
    assert_eq!(round_trip("^:private f"), "f");
    assert_eq!(round_trip("^String s"), "s");
    assert_eq!(
        round_trip("(defn ^:private ^long f [^long x] x)"),
        "(defn f [x] x)"
    );
    assert_eq!(
        err("^:k"),
        "t.lona:1:4: expected a form after metadata (^) at 1:1"
    );
}

#[test]
fn strings_and_escapes() {
    assert_eq!(one(r#""a\n\"b\"""#), FormKind::Str("a\n\"b\"".into()));
    assert_eq!(one(r#""\t\r\\\0""#), FormKind::Str("\t\r\\\0".into()));
    assert_eq!(one(r#""\u00e9x\u00E9""#), FormKind::Str("éxé".into()));
    assert_eq!(one(r#""\u2713""#), FormKind::Str("✓".into()));
    assert_eq!(one("\"multi\nline\""), FormKind::Str("multi\nline".into()));
    assert_eq!(
        one("\"ünïcödé ✓ 😀\""),
        FormKind::Str("ünïcödé ✓ 😀".into())
    );
    assert_eq!(one("\"\""), FormKind::Str(String::new()));
    assert_eq!(
        one("\"; not a comment\""),
        FormKind::Str("; not a comment".into())
    );
}

#[test]
fn collections_comments_and_separators() {
    let v = read("; comment\n(f x) [1, 2] {:a 1 \"b\" 2} ; trailing\n").unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(
        v[0].kind,
        FormKind::List(vec![
            Form::new(sym("f"), at(2, 2)),
            Form::new(sym("x"), at(2, 4))
        ])
    );
    assert_eq!(v[0].pos, at(2, 1));
    assert_eq!(
        v[1].kind,
        FormKind::Vector(vec![
            Form::new(FormKind::Int(1), at(2, 8)),
            Form::new(FormKind::Int(2), at(2, 11))
        ])
    );
    assert_eq!(v[1].pos, at(2, 7));
    assert_eq!(
        v[2].kind,
        FormKind::Map(vec![
            (
                Form::new(FormKind::Keyword("a".into()), at(2, 15)),
                Form::new(FormKind::Int(1), at(2, 18))
            ),
            (
                Form::new(FormKind::Str("b".into()), at(2, 20)),
                Form::new(FormKind::Int(2), at(2, 24))
            ),
        ])
    );
    assert_eq!(v[2].pos, at(2, 14));
    assert_eq!(one("()"), FormKind::List(vec![]));
    assert_eq!(one("[]"), FormKind::Vector(vec![]));
    assert_eq!(one("{}"), FormKind::Map(vec![]));
    assert_eq!(one("(,,,)"), FormKind::List(vec![]));
    // no space needed around brackets and strings
    let FormKind::List(items) = one("(a(b)[c]{:d\"e\"}\"f\"g)") else {
        panic!()
    };
    assert_eq!(items.len(), 6);
    // tabs, CR LF, unicode whitespace separate
    assert_eq!(read("a\tb\r\nc\u{a0}d").unwrap().len(), 4);
    // exactly Unicode whitespace separates (and ends a token)
    for c in (0..0x3000).filter_map(char::from_u32) {
        let text = format!("a{c}b");
        match read(&text) {
            Ok(v) if v.len() == 2 && v[1].kind == sym("b") => {
                assert!(c.is_whitespace() || c == ',', "{c:?}")
            }
            _ => assert!(!c.is_whitespace(), "{c:?}"),
        }
    }
    assert_eq!(read("").unwrap().len(), 0);
    assert_eq!(read("  ; only a comment").unwrap().len(), 0);
}

#[test]
fn reader_macros() {
    for (text, head) in [
        ("'x", "quote"),
        ("`x", "syntax-quote"),
        ("~x", "unquote"),
        ("~@x", "unquote-splicing"),
    ] {
        let v = read(&format!("\n  {text}")).unwrap();
        assert_eq!(v[0].pos, at(2, 3), "{text}");
        let FormKind::List(items) = &v[0].kind else {
            panic!("{text}")
        };
        assert_eq!(items.len(), 2, "{text}");
        assert_eq!(items[0].kind, sym(head), "{text}");
        assert_eq!(items[0].pos, at(2, 3), "{text}");
        assert_eq!(items[1].kind, sym("x"), "{text}");
        assert_eq!(items[1].pos, at(2, 3 + text.len() as u32 - 1), "{text}");
    }
    // nested and over collections
    let printed = round_trip("'`(a ~b ~@c '[d])");
    assert_eq!(
        printed,
        "(quote (syntax-quote (a (unquote b) (unquote-splicing c) (quote [d]))))"
    );
    assert_eq!(round_trip("' x"), "(quote x)");
    // `'` inside a token belongs to it; a leading one is quote
    assert_eq!(round_trip("(f x' 'y)"), "(f x' (quote y))");
    // #_ discards the next form, wherever it is
    assert_eq!(
        one("[1 #_ 2 3]"),
        FormKind::Vector(vec![
            Form::new(FormKind::Int(1), at(1, 2)),
            Form::new(FormKind::Int(3), at(1, 9))
        ])
    );
    assert_eq!(round_trip("[#_#_ a b c]"), "[c]");
    assert_eq!(round_trip("[#_(a [b]) c #_d]"), "[c]");
    assert_eq!(round_trip("'#_a b"), "(quote b)");
    assert_eq!(round_trip("{:a #_ 1 2}"), "{:a 2}");
    assert_eq!(read("#_(ignored) ").unwrap().len(), 0);
    assert_eq!(read("#_ x 1 #_ y").unwrap().len(), 1);
    assert_eq!(one("a#_b"), sym("a#_b"));
}

#[test]
fn printing() {
    assert_eq!(round_trip("1.0"), "1.0");
    assert_eq!(round_trip("1e300"), "1e300");
    assert_eq!(round_trip("-2.5e-7"), "-2.5e-7");
    assert_eq!(round_trip("5e-324"), "5e-324");
    assert_eq!(round_trip("-0.0"), "-0.0");
    assert_eq!(round_trip("##Inf"), "##Inf");
    assert_eq!(round_trip("##-Inf"), "##-Inf");
    assert_eq!(round_trip("##NaN"), "##NaN");
    assert_eq!(round_trip("0xff"), "255");
    assert_eq!(
        round_trip(r#""a\n\t\r\"\\\0\u0001é""#),
        r#""a\n\t\r\"\\\u0000\u0001é""#
    );
    assert_eq!(round_trip(":app/ready"), ":app/ready");
    assert_eq!(round_trip("{:a 1 :b [2 3]}"), "{:a 1, :b [2 3]}");
    assert_eq!(round_trip("(nil true false)"), "(nil true false)");
    assert_eq!(
        Form::new(FormKind::Float(3.0), Pos::default()).to_string(),
        "3.0"
    );
    // any depth prints, without recursion
    let deep = format!("{}{}", "[".repeat(4096), "]".repeat(4096));
    assert_eq!(round_trip(&deep), deep);
}

#[test]
fn positions_count_characters() {
    let v = read("\"é\" x").unwrap();
    assert_eq!(v[1].pos, at(1, 5));
    let v = read("\"日本語\nü\" \"😀\" y").unwrap();
    assert_eq!(v[1].pos, at(2, 4));
    assert_eq!(v[2].pos, at(2, 8));
    assert_eq!(
        err("(a\n  (b c]"),
        "t.lona:2:7: expected ')' to close '(' opened at 2:3, found ']'"
    );
    assert_eq!(
        err("(é é ]"),
        "t.lona:1:6: expected ')' to close '(' opened at 1:1, found ']'"
    );
    assert_eq!(err("x\n\"😀😀\" )"), "t.lona:2:6: unexpected ')'");
    assert_eq!(
        err("[\"日本\" :ü 1x]"),
        "t.lona:1:10: expected a decimal digit, found 'x' in 1x"
    );
    assert_eq!(
        err("\"ü\\q\""),
        "t.lona:1:3: unknown escape \\q in a string"
    );
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    let cases: &[(&str, &str, bool)] = &[
        // unclosed: at the end of the input, incomplete
        ("(a b", "1:5: expected ')' to close '(' opened at 1:1", true),
        (
            "\n\n    (a b",
            "3:9: expected ')' to close '(' opened at 3:5",
            true,
        ),
        (
            "[1 2\n",
            "2:1: expected ']' to close '[' opened at 1:1",
            true,
        ),
        ("{:a", "1:4: expected '}' to close '{' opened at 1:1", true),
        (
            "(foo\n  [1 2\n",
            "3:1: expected ']' to close '[' opened at 2:3",
            true,
        ),
        (
            "(a ; comment )",
            "1:15: expected ')' to close '(' opened at 1:1",
            true,
        ),
        (
            "\"abc",
            "1:5: expected '\"' to close the string opened at 1:1",
            true,
        ),
        (
            "(f \"abc\n",
            "2:1: expected '\"' to close the string opened at 1:4",
            true,
        ),
        (
            "\"abc\\",
            "1:6: expected '\"' to close the string opened at 1:1",
            true,
        ),
        ("\"\\u00", "1:6: expected 4 hex digits after \\u", true),
        ("'", "1:2: expected a form after quote (') at 1:1", true),
        (
            "`",
            "1:2: expected a form after syntax-quote (`) at 1:1",
            true,
        ),
        ("~", "1:2: expected a form after unquote (~) at 1:1", true),
        (
            "~@",
            "1:3: expected a form after unquote-splicing (~@) at 1:1",
            true,
        ),
        ("#_", "1:3: expected a form after discard (#_) at 1:1", true),
        ("(' ", "1:4: expected a form after quote (') at 1:2", true),
        // stray and mismatched closers
        (")", "1:1: unexpected ')'", false),
        ("]", "1:1: unexpected ']'", false),
        ("a }", "1:3: unexpected '}'", false),
        (
            "(]",
            "1:2: expected ')' to close '(' opened at 1:1, found ']'",
            false,
        ),
        (
            "[)",
            "1:2: expected ']' to close '[' opened at 1:1, found ')'",
            false,
        ),
        (
            "{:a 1)",
            "1:6: expected '}' to close '{' opened at 1:1, found ')'",
            false,
        ),
        (
            "(')",
            "1:3: expected a form after quote (') at 1:2, found ')'",
            false,
        ),
        (
            "[#_]",
            "1:4: expected a form after discard (#_) at 1:2, found ']'",
            false,
        ),
        // maps
        (
            "{:a 1 :b}",
            "1:1: map literal needs an even number of forms",
            false,
        ),
        (
            "[1\n {:a}]",
            "2:2: map literal needs an even number of forms",
            false,
        ),
        // strings
        ("\"a\\q\"", "1:3: unknown escape \\q in a string", false),
        ("\"a\\x41\"", "1:3: unknown escape \\x in a string", false),
        (
            "\"a\\\nb\"",
            "1:3: unknown escape: \\ followed by U+000A in a string",
            false,
        ),
        ("\"\\u12x4\"", "1:2: expected 4 hex digits after \\u", false),
        ("\"\\ud800\"", "1:2: \\ud800 is not a character", false),
        // keywords
        (":", "1:1: expected a keyword name after ':'", false),
        (": a", "1:1: expected a keyword name after ':'", false),
        (":::a", "1:1: unexpected ':' in keyword :::a", false),
        ("::", "1:1: expected a keyword name after '::'", false),
        ("::/a", "1:1: bad auto-resolved keyword ::/a", false),
        ("::a/", "1:1: bad auto-resolved keyword ::a/", false),
        ("1r0", "1:1: radix must be 2 to 36 in 1r0", false),
        ("37r1", "1:1: radix must be 2 to 36 in 37r1", false),
        (
            "2r102",
            "1:1: expected a digit of the radix, found '2' in 2r102",
            false,
        ),
        ("16r", "1:1: expected a digit of the radix after 16r", false),
        (
            "1.5N",
            "1:1: expected a float like 1.5, -2.0 or 1e-3, found 1.5N",
            false,
        ),
        ("@", "1:2: expected a form after deref (@) at 1:1", true),
        // `@` may follow the first character (node names: `:lona@host`).
        (":@b", "1:1: unexpected '@' in keyword :@b", false),
        (":#a", "1:1: unexpected '#' in keyword :#a", false),
        // numbers
        (
            "1x",
            "1:1: expected a decimal digit, found 'x' in 1x",
            false,
        ),
        (
            "-1_000",
            "1:1: expected a decimal digit, found '_' in -1_000",
            false,
        ),
        ("0xg", "1:1: expected a hex digit, found 'g' in 0xg", false),
        (
            "0x1.5",
            "1:1: expected a hex digit, found '.' in 0x1.5",
            false,
        ),
        ("0x", "1:1: expected a hex digit after 0x", false),
        ("-0x", "1:1: expected a hex digit after -0x", false),
        (
            "1.5.2",
            "1:1: expected a float like 1.5, -2.0 or 1e-3, found 1.5.2",
            false,
        ),
        (
            "1e",
            "1:1: expected a float like 1.5, -2.0 or 1e-3, found 1e",
            false,
        ),
        ("1e400", "1:1: float literal out of range: 1e400", false),
        ("-1e400", "1:1: float literal out of range: -1e400", false),
        // symbols and other characters
        ("a\\b", "1:1: unexpected '\\' in symbol a\\b", false),
        ("a@x", "1:1: unexpected '@' in symbol a@x", false),
        // A colon inside a name is Clojure's (`a:b`); at its end or
        // doubled it is not.
        ("a:", "1:1: unexpected ':' in symbol a:", false),
        ("a::b", "1:1: unexpected ':' in symbol a::b", false),
        (":k:", "1:1: unexpected ':' in keyword :k:", false),
        ("λ→", "1:1: unexpected '→' in symbol λ→", false),
        (
            "#",
            "1:1: unknown reader form # (expected #{...}, #(...), #\"regex\", #_, ##Inf, ##-Inf or ##NaN)",
            false,
        ),
        (
            "#inst \"2020\"",
            "1:1: unknown reader form #inst (expected #{...}, #(...), #\"regex\", #_, ##Inf, ##-Inf or ##NaN)",
            false,
        ),
        (
            "##Infinity",
            "1:1: unknown reader form ##Infinity (expected #{...}, #(...), #\"regex\", #_, ##Inf, ##-Inf or ##NaN)",
            false,
        ),
    ];
    for &(text, want, incomplete) in cases {
        let e = read(text).expect_err(text);
        assert_eq!(e.to_string(), format!("t.lona:{want}"), "{text:?}");
        assert_eq!(e.incomplete, incomplete, "{text:?}");
        assert_eq!(&*e.file, "t.lona");
    }
    // the error type
    let e = read("(").unwrap_err();
    assert_eq!(
        e,
        ReadError {
            file: "t.lona".into(),
            pos: at(1, 2),
            message: "expected ')' to close '(' opened at 1:1".into(),
            incomplete: true,
        }
    );
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert_eq!(
        boxed.to_string(),
        "t.lona:1:2: expected ')' to close '(' opened at 1:1"
    );
    // a long bad token is shortened in the message
    let long = format!("{}\\", "a".repeat(1_000_000));
    let m = read(&long).unwrap_err().message;
    assert_eq!(
        m,
        format!("unexpected '\\' in symbol {}...", "a".repeat(40))
    );
}

#[test]
fn reading_one_form_at_a_time() {
    let src = Source::new("t.lona", "(ok) 'also-ok\n(broken");
    let mut r = Reader::new(&src);
    assert_eq!(r.next_form().unwrap().unwrap().pos, at(1, 1));
    assert_eq!(r.next_form().unwrap().unwrap().pos, at(1, 6));
    let e = r.next_form().unwrap_err();
    assert!(e.incomplete);
    assert_eq!(e.pos, at(2, 8));

    let src = Source::new("t.lona", "a b ; done\n");
    let mut r = Reader::new(&src);
    assert!(r.next_form().unwrap().is_some());
    assert!(r.next_form().unwrap().is_some());
    assert_eq!(r.next_form().unwrap(), None);
    assert_eq!(r.next_form().unwrap(), None);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = "(".repeat(100_000);
    let e = read(&deep).unwrap_err();
    assert_eq!(e.to_string(), "t.lona:1:4097: nesting deeper than 4096");
    assert!(!e.incomplete);
    let deep = "'".repeat(100_000);
    assert_eq!(err(&deep), "t.lona:1:4097: nesting deeper than 4096");
    let deep = "([{'`~~@#_".repeat(20_000);
    assert!(err(&deep).ends_with(": nesting deeper than 4096"));
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(err(&deep), "t.lona:1:4097: nesting deeper than 4096");
    // 4096 deep is fine
    let ok = format!("{}x{}", "(".repeat(4096), ")".repeat(4096));
    assert_eq!(read(&ok).unwrap().len(), 1);
    let ok = format!("{}x", "'".repeat(4096));
    assert_eq!(read(&ok).unwrap().len(), 1);
    // 4097 is not
    let no = format!("{}x{}", "(".repeat(4097), ")".repeat(4097));
    assert_eq!(err(&no), "t.lona:1:4097: nesting deeper than 4096");
}

#[test]
fn large_inputs_read_in_linear_time() {
    let started = Instant::now();
    // a 10 MB line: a vector of ints
    let n = 10 * 1024 * 1024 / 6;
    let line = format!("[{}]", "12345 ".repeat(n));
    let v = read(&line).unwrap();
    let FormKind::Vector(items) = &v[0].kind else {
        panic!()
    };
    assert_eq!(items.len(), n);
    assert_eq!(items[n - 1].pos, at(1, 2 + 6 * (n as u32 - 1)));
    drop(v);
    // 10 MB of one string (with newlines), one comment, one symbol, one bad symbol
    let big = "ab".repeat(5 * 1024 * 1024);
    assert_eq!(read(&format!("\"{big}\"")).unwrap().len(), 1);
    let lines = "a\n".repeat(5 * 1024 * 1024);
    let v = read(&format!("\"{lines}\" x")).unwrap();
    assert_eq!(v[1].pos, at(5 * 1024 * 1024 + 1, 3));
    assert_eq!(read(&format!(";{big}\n1")).unwrap().len(), 1);
    assert_eq!(read(&big).unwrap().len(), 1);
    assert!(read(&format!("{big}@")).is_err());
    // 4 MB of the largest integer literals
    let max = format!("{} ", "9".repeat(1233));
    assert_eq!(read(&max.repeat(3400)).unwrap().len(), 3400);
    // a generous bound, for a debug build on a loaded machine
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn garbage_gives_errors_not_crashes() {
    for text in [
        "\u{0}\u{1}",
        "#",
        "##",
        "#{",
        "#_#_",
        "\\",
        "~@",
        "@",
        "^x",
        "\u{feff}x",
        "\"\\u",
        "\"\\u{1F600}\"",
        "0x-1",
        "--1",
        "+-1",
        "1/2",
        ":/",
        "\r",
    ] {
        if let Ok(forms) = read(text) {
            for f in forms {
                round_trip(&f.to_string());
            }
        }
    }
}

/// Strings of characters a symbol may hold, not starting like a number or
/// a prefix.
fn symbol_text() -> impl Strategy<Value = String> {
    "[a-zA-Zλé*+!_?<>=.&%$-][a-zA-Z0-9λé日*+!_'?<>=.&%$/-]{0,8}#?".prop_filter(
        "not a literal",
        |s| {
            let mut c = s.chars();
            let (first, second) = (c.next(), c.next());
            let signed_digit =
                matches!(first, Some('+' | '-')) && second.is_some_and(|c| c.is_ascii_digit());
            !matches!(s.as_str(), "nil" | "true" | "false") && !signed_digit
        },
    )
}

fn big_int() -> impl Strategy<Value = BigInt> {
    (any::<bool>(), prop::collection::vec(any::<u32>(), 2..=128)).prop_map(|(neg, digits)| {
        let b = BigInt::from_slice(
            if neg {
                num_bigint::Sign::Minus
            } else {
                num_bigint::Sign::Plus
            },
            &digits,
        );
        if i64::try_from(&b).is_ok() {
            // keep it big
            b + BigInt::from(1u128 << 100)
        } else {
            b
        }
    })
}

fn form() -> impl Strategy<Value = Form> {
    let leaf = prop_oneof![
        Just(FormKind::Nil),
        any::<bool>().prop_map(FormKind::Bool),
        any::<i64>().prop_map(FormKind::Int),
        big_int().prop_map(FormKind::BigInt),
        any::<f64>().prop_map(FormKind::Float),
        (-1000i32..1000, -30i32..30)
            .prop_map(|(m, e)| FormKind::Float(f64::from(m) * 10f64.powi(e))),
        prop_oneof![
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(-0.0)
        ]
        .prop_map(FormKind::Float),
        ".*".prop_map(FormKind::Str),
        "[\\x00-\\x20\"\\\\]{0,4}".prop_map(FormKind::Str),
        symbol_text().prop_map(FormKind::Keyword),
        "[0-9/][a-z0-9/]{0,4}".prop_map(FormKind::Keyword),
        symbol_text().prop_map(FormKind::Symbol),
    ]
    .prop_map(|k| Form::new(k, Pos::default()));
    leaf.prop_recursive(5, 64, 6, |inner| {
        let list = |v| Form::new(FormKind::List(v), Pos::default());
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(list),
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|v| Form::new(FormKind::Vector(v), Pos::default())),
            prop::collection::vec((inner.clone(), inner.clone()), 0..4)
                .prop_map(|v| Form::new(FormKind::Map(v), Pos::default())),
            (
                prop_oneof![
                    Just("quote"),
                    Just("syntax-quote"),
                    Just("unquote"),
                    Just("unquote-splicing")
                ],
                inner
            )
                .prop_map(move |(h, x)| list(vec![
                    Form::new(FormKind::Symbol(h.into()), Pos::default()),
                    x
                ])),
        ]
    })
}

/// The byte offsets where a printed form may be cut without cutting a
/// token: before a separator, a bracket or a `"`, and the end.
fn cuts(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|(_, c)| " ,()[]{}\"".contains(*c))
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect()
}

/// The position just after the last character of `text`.
fn end_pos(text: &str) -> Pos {
    let line = 1 + text.matches('\n').count() as u32;
    let last = text.rsplit('\n').next().unwrap_or("");
    at(line, 1 + last.chars().count() as u32)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn printed_forms_read_back_equal(f in form()) {
        let text = f.to_string();
        let back = read(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back.len(), 1);
        prop_assert!(same(&back[0], &f), "{} read as {}", text, back[0]);
        // printing is stable
        prop_assert_eq!(back[0].to_string(), text);
    }

    #[test]
    fn cut_forms_are_incomplete_at_the_end(f in form()) {
        let text = f.to_string();
        for cut in cuts(&text) {
            let part = &text[..cut];
            match read(part) {
                Ok(forms) => prop_assert!(forms.len() <= 1, "{}", part),
                Err(e) => {
                    prop_assert!(e.incomplete, "{:?}: {}", part, e);
                    prop_assert_eq!(e.pos, end_pos(part), "{:?}: {}", part, e);
                }
            }
        }
    }

    #[test]
    fn any_text_reads_or_errs_without_panicking(s in ".{0,200}") {
        match read(&s) {
            Ok(forms) => for f in forms {
                let printed = f.to_string();
                let again = read(&printed)
                    .map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
                prop_assert_eq!(again.len(), 1);
                prop_assert!(same(&again[0], &f), "{}", printed);
            },
            Err(e) => {
                prop_assert!(e.pos.line >= 1 && e.pos.col >= 1);
                // incomplete errors are at the end of the input
                if e.incomplete {
                    prop_assert_eq!(e.pos, end_pos(&s));
                }
            }
        }
    }

    #[test]
    fn syntax_soup_reads_or_errs_without_panicking(
        s in "([()\\[\\]{}'`~@#_ :\"\\\\;,\nax0-9.e+]|##Inf|0x){0,60}"
    ) {
        match read(&s) {
            Ok(forms) => for f in forms {
                let printed = f.to_string();
                let again = read(&printed)
                    .map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
                prop_assert!(same(&again[0], &f), "{}", printed);
            },
            Err(e) => if e.incomplete {
                prop_assert_eq!(e.pos, end_pos(&s), "{:?}: {}", s, e);
            },
        }
    }
}

#[test]
fn binaries() {
    assert_eq!(
        one(r#"#bin"hé\n""#),
        FormKind::Binary("hé\n".as_bytes().to_vec())
    );
    assert_eq!(
        one("#bin[104 195, 169]"),
        FormKind::Binary(vec![104, 195, 169])
    );
    assert_eq!(one("#bin[]"), FormKind::Binary(vec![]));
    assert_eq!(one(r#"#bin"""#), FormKind::Binary(vec![]));
    assert!(
        err("#bin[1 256]").contains("0 to 255"),
        "{}",
        err("#bin[1 256]")
    );
    assert!(err("#bin[1 x]").contains("0 to 255"));
    assert!(read("#bin[1 2").unwrap_err().incomplete);
    assert!(read("#bin\"ab").unwrap_err().incomplete);
    // in a collection, and printed back as bytes
    assert_eq!(round_trip("[#bin[1 2] #bin\"a\"]"), "[#bin[1 2] #bin[97]]");
}

#[test]
fn clojure_names_with_colons_and_octal_integers() {
    assert_eq!(one("abc:def:ghi"), FormKind::Symbol("abc:def:ghi".into()));
    assert_eq!(one(":a:b"), FormKind::Keyword("a:b".into()));
    assert_eq!(one("017"), FormKind::Int(15));
    assert_eq!(one("-010"), FormKind::Int(-8));
    assert_eq!(one("0"), FormKind::Int(0));
    assert_eq!(one("00"), FormKind::Int(0));
    // A leading zero before a point or exponent is a float's.
    assert_eq!(one("00.5"), FormKind::Float(0.5));
    assert_eq!(
        read("08").unwrap_err().to_string(),
        "t.lona:1:1: expected an octal digit, found '8' in 08"
    );
}

#[test]
fn metadata_is_kept_on_the_form_it_precedes() {
    let v = read("^{:a 1} ^:b [x]").unwrap();
    let m = v[0].meta.as_deref().expect("metadata");
    // The inner one first, the outer merged over it.
    assert_eq!(m.to_string(), "{:b true, :a 1}");
    let v = read("^String s").unwrap();
    assert_eq!(v[0].meta.as_deref().unwrap().to_string(), "{:tag String}");
    assert_eq!(
        read("^1 x").unwrap_err().to_string(),
        "t.lona:1:1: metadata must be a map, keyword, symbol or string"
    );
}
