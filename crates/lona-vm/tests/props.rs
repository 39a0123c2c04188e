//! Property tests: the compiled pattern matcher agrees with a simple
//! reference matcher; printed values read back equal.

use std::collections::HashMap;
use std::sync::Arc;

use lona_term::Heap;
use lona_vm::form_to_term;
use lona_vm::{eval_str, read_all, Env, Form, FormKind, Pos, SharedBuf, Source};
use proptest::prelude::*;

fn f(kind: FormKind) -> Form {
    Form::new(kind, Pos::default())
}

fn sym(s: &str) -> Form {
    f(FormKind::Symbol(s.into()))
}

/// Data values (what a pattern is matched against).
fn value() -> impl Strategy<Value = Form> {
    let leaf = prop_oneof![
        Just(f(FormKind::Nil)),
        any::<bool>().prop_map(|b| f(FormKind::Bool(b))),
        (-3i64..4).prop_map(|i| f(FormKind::Int(i))),
        prop::sample::select(vec!["a", "b", "ok"]).prop_map(|k| f(FormKind::Keyword(k.into()))),
        prop::sample::select(vec!["", "x"]).prop_map(|s| f(FormKind::Str(s.into()))),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| f(FormKind::Vector(v))),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| f(FormKind::List(v))),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), inner, 0..3)
                .prop_map(|m| {
                    f(FormKind::Map(
                        m.into_iter()
                            .map(|(k, v)| (f(FormKind::Keyword(k.into())), v))
                            .collect(),
                    ))
                }),
        ]
    })
}

fn seq_pattern(inner: BoxedStrategy<Form>, list: bool) -> impl Strategy<Value = Form> {
    (
        prop::collection::vec(inner.clone(), 0..4),
        prop::option::of(inner),
    )
        .prop_map(move |(mut v, rest)| {
            if let Some(r) = rest {
                v.push(sym("&"));
                v.push(r);
            }
            if list && v.is_empty() {
                // `()` is the empty-list literal, fine as a pattern too
            }
            f(if list {
                FormKind::List(v)
            } else {
                FormKind::Vector(v)
            })
        })
}

/// Patterns: `_`, names (a name may repeat), literals, vectors, lists,
/// maps.
fn pattern() -> impl Strategy<Value = Form> {
    let leaf = prop_oneof![
        Just(sym("_")),
        prop::sample::select(vec!["p", "q"]).prop_map(sym),
        Just(f(FormKind::Nil)),
        (-1i64..3).prop_map(|i| f(FormKind::Int(i))),
        prop::sample::select(vec!["a", "ok"]).prop_map(|k| f(FormKind::Keyword(k.into()))),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        let inner = inner.boxed();
        prop_oneof![
            seq_pattern(inner.clone(), false),
            seq_pattern(inner.clone(), true),
            prop::collection::btree_map(prop::sample::select(vec!["a", "b"]), inner, 1..3)
                .prop_map(|m| {
                    f(FormKind::Map(
                        m.into_iter()
                            .map(|(k, v)| (f(FormKind::Keyword(k.into())), v))
                            .collect(),
                    ))
                }),
        ]
    })
}

/// Structural equality of data forms (maps as sets of pairs).
fn feq(a: &Form, b: &Form) -> bool {
    match (&a.kind, &b.kind) {
        (FormKind::Vector(x), FormKind::Vector(y)) | (FormKind::List(x), FormKind::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| feq(p, q))
        }
        (FormKind::Map(x), FormKind::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| feq(k, k2) && feq(v, v2)))
        }
        (p, q) => p == q,
    }
}

/// The reference matcher: a direct reading of lonala.md's pattern rules.
fn matches(p: &Form, v: &Form, env: &mut HashMap<String, Form>) -> bool {
    match &p.kind {
        FormKind::Symbol(s) if s == "_" => true,
        FormKind::Symbol(s) => match env.get(s) {
            Some(b) => feq(b, v),
            None => {
                env.insert(s.clone(), v.clone());
                true
            }
        },
        FormKind::Vector(ps) | FormKind::List(ps) => {
            let is_list = matches!(p.kind, FormKind::List(_));
            let items = match (&v.kind, is_list) {
                (FormKind::Vector(items), false) | (FormKind::List(items), true) => items,
                _ => return false,
            };
            let (fixed, rest) = match ps.iter().position(|x| x.as_symbol() == Some("&")) {
                Some(i) => (&ps[..i], Some(&ps[i + 1])),
                None => (&ps[..], None),
            };
            if rest.is_none() && items.len() != fixed.len() || items.len() < fixed.len() {
                return false;
            }
            for (pp, vv) in fixed.iter().zip(items) {
                if !matches(pp, vv, env) {
                    return false;
                }
            }
            match rest {
                None => true,
                Some(r) => {
                    let tail = items[fixed.len()..].to_vec();
                    let tail = f(if is_list {
                        FormKind::List(tail)
                    } else {
                        FormKind::Vector(tail)
                    });
                    matches(r, &tail, env)
                }
            }
        }
        FormKind::Map(pairs) => {
            let FormKind::Map(vp) = &v.kind else {
                return false;
            };
            pairs
                .iter()
                .all(|(k, pp)| match vp.iter().find(|(k2, _)| feq(k, k2)) {
                    Some((_, vv)) => matches(pp, vv, env),
                    None => false,
                })
        }
        _ => feq(p, v),
    }
}

fn shared_env() -> Arc<Env> {
    static ENV: std::sync::OnceLock<Arc<Env>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| Env::new(Box::new(SharedBuf::default())))
        .clone()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn compiled_patterns_agree_with_the_reference(p in pattern(), v in value()) {
        let want = matches(&p, &v, &mut HashMap::new());
        let src = format!("(match (quote {v}) {p} :yes _ :no)");
        let got = eval_str(&shared_env(), "prop.lona", &src).map_err(|e| TestCaseError::fail(format!("{src}: {e}")))?;
        prop_assert_eq!(got, if want { ":yes" } else { ":no" }, "{}", src);
    }

    #[test]
    fn printed_values_read_back_equal(v in value()) {
        let heap = Heap::new();
        let t = form_to_term(&heap, &v).unwrap();
        let printed = t.to_string();
        let forms = read_all(&Source::new("p", printed.clone())).map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
        prop_assert_eq!(forms.len(), 1);
        let back = form_to_term(&heap, &forms[0]).unwrap();
        prop_assert!(lona_term::equal(t, back), "{} read back as {}", printed, back);
    }
}
