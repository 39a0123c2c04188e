//! Derived forms, rewritten into special forms before compiling:
//! `when`, `when-not`, `if-not`, `cond`, `and`, `or`, `->`, `->>`, `case`,
//! `if-let`, `when-let`, `comment`.
//!
//! `defn`/`defn-` are compiled directly (`mod.rs`), because a function's
//! calls to its own name must go through its var (hot code loading), not
//! bind the name locally as `(fn name ...)` would.

use std::sync::atomic::{AtomicU64, Ordering};

use lona_reader::{Form, FormKind, Pos};

use super::CompileError;

/// A symbol no source can spell (the reader never makes `#` part of a
/// symbol), for the temporaries of `and`/`or`.
fn gensym(base: &str, pos: Pos) -> Form {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    Form::new(FormKind::Symbol(format!("#{base}{n}")), pos)
}

fn sym(s: &str, pos: Pos) -> Form {
    Form::new(FormKind::Symbol(s.to_string()), pos)
}

fn list(items: Vec<Form>, pos: Pos) -> Form {
    Form::new(FormKind::List(items), pos)
}

fn vector(items: Vec<Form>, pos: Pos) -> Form {
    Form::new(FormKind::Vector(items), pos)
}

fn nil(pos: Pos) -> Form {
    Form::new(FormKind::Nil, pos)
}

/// Expands `form` (a list whose head is the symbol `head`) if `head` names
/// a derived form; `Ok(None)` if it does not.
pub(super) fn expand(
    head: &str,
    form: &Form,
    err: &dyn Fn(Pos, String) -> CompileError,
) -> Result<Option<Form>, CompileError> {
    let items = form.as_list().unwrap_or(&[]);
    let args = &items[1..];
    let pos = form.pos;
    let out = match head {
        "when" | "when-not" => {
            let Some((test, body)) = args.split_first() else {
                return Err(err(pos, format!("{head} needs a test")));
            };
            let mut d = vec![sym("do", pos)];
            d.extend(body.iter().cloned());
            let body = list(d, pos);
            if head == "when" {
                list(vec![sym("if", pos), test.clone(), body, nil(pos)], pos)
            } else {
                list(vec![sym("if", pos), test.clone(), nil(pos), body], pos)
            }
        }
        "if-not" => {
            if !(2..=3).contains(&args.len()) {
                return Err(err(
                    pos,
                    "if-not takes a test, a then and an optional else".into(),
                ));
            }
            let els = args.get(2).cloned().unwrap_or(nil(pos));
            list(
                vec![sym("if", pos), args[0].clone(), els, args[1].clone()],
                pos,
            )
        }
        "cond" => {
            if !args.len().is_multiple_of(2) {
                return Err(err(
                    pos,
                    "cond needs an even number of forms (test expr pairs)".into(),
                ));
            }
            let mut acc = nil(pos);
            for pair in args.chunks(2).rev() {
                let test = match &pair[0].kind {
                    FormKind::Keyword(k) if k == "else" => {
                        Form::new(FormKind::Bool(true), pair[0].pos)
                    }
                    _ => pair[0].clone(),
                };
                acc = list(
                    vec![sym("if", pair[0].pos), test, pair[1].clone(), acc],
                    pair[0].pos,
                );
            }
            acc
        }
        "and" | "or" => match args.len() {
            // (and) is true, (or) is nil, as in Clojure
            0 if head == "and" => Form::new(FormKind::Bool(true), pos),
            0 => nil(pos),
            1 => args[0].clone(),
            _ => {
                let t = gensym(head, pos);
                let mut rest = vec![sym(head, pos)];
                rest.extend(args[1..].iter().cloned());
                let rest = list(rest, pos);
                let body = if head == "and" {
                    list(vec![sym("if", pos), t.clone(), rest, t.clone()], pos)
                } else {
                    list(vec![sym("if", pos), t.clone(), t.clone(), rest], pos)
                };
                list(
                    vec![sym("let", pos), vector(vec![t, args[0].clone()], pos), body],
                    pos,
                )
            }
        },
        "->" | "->>" => {
            let Some((first, steps)) = args.split_first() else {
                return Err(err(pos, format!("{head} needs a value")));
            };
            let mut acc = first.clone();
            for step in steps {
                acc = match &step.kind {
                    FormKind::List(call) if !call.is_empty() => {
                        let mut v = call.clone();
                        if head == "->" {
                            v.insert(1, acc);
                        } else {
                            v.push(acc);
                        }
                        list(v, step.pos)
                    }
                    _ => list(vec![step.clone(), acc], step.pos),
                };
            }
            acc
        }
        "case" => {
            let Some((subject, clauses)) = args.split_first() else {
                return Err(err(pos, "case needs a value".into()));
            };
            let mut m = vec![sym("match", pos), subject.clone()];
            let mut i = 0;
            while i < clauses.len() {
                if i + 1 == clauses.len() {
                    m.push(sym("_", clauses[i].pos));
                    m.push(clauses[i].clone());
                    break;
                }
                let (test, body) = (&clauses[i], &clauses[i + 1]);
                let alts: Vec<Form> = match &test.kind {
                    FormKind::List(v) => v.clone(),
                    _ => vec![test.clone()],
                };
                for alt in alts {
                    m.push(list(vec![sym("quote", alt.pos), alt.clone()], alt.pos));
                    m.push(body.clone());
                }
                i += 2;
            }
            list(m, pos)
        }
        "if-let" | "when-let" => {
            let Some(b) = args.first().and_then(|f| f.as_vector()) else {
                return Err(err(
                    pos,
                    format!("{head} needs a binding vector [name value]"),
                ));
            };
            if b.len() != 2 {
                return Err(err(pos, format!("{head} binds exactly one name")));
            }
            let t = gensym("v", pos);
            let then = if head == "if-let" {
                args.get(1).cloned().unwrap_or(nil(pos))
            } else {
                let mut d = vec![sym("do", pos)];
                d.extend(args[1..].iter().cloned());
                list(d, pos)
            };
            let els = if head == "if-let" {
                args.get(2).cloned().unwrap_or(nil(pos))
            } else {
                nil(pos)
            };
            let inner = list(
                vec![
                    sym("let", pos),
                    vector(vec![b[0].clone(), t.clone()], pos),
                    then,
                ],
                pos,
            );
            list(
                vec![
                    sym("let", pos),
                    vector(vec![t.clone(), b[1].clone()], pos),
                    list(vec![sym("if", pos), t, inner, els], pos),
                ],
                pos,
            )
        }
        "comment" => nil(pos),
        _ => return Ok(None),
    };
    Ok(Some(out))
}
