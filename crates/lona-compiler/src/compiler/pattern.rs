//! Patterns compile to tests and loads (BEAM's way): no pattern is
//! interpreted at run time.
//!
//! | pattern | code |
//! | --- | --- |
//! | `_` | nothing |
//! | `x` (new name) | binds `x` to the subject's register |
//! | `x` (bound earlier in the same pattern) | `TestEqReg` |
//! | literal, `'form` | `TestEqConst` |
//! | `[p0 p1]` | `TestVector 2`, then `GetElem` + the element patterns |
//! | `[p0 & rest]` | `TestVectorMin 1`, elements, `VectorFrom 1` for `rest` |
//! | `(p0 p1)` / `(p0 & rest)` | `TestCons`, `GetHead`/`GetTail` per element, `TestEmptyList` at the end unless `& rest` (`(& rest)` alone: `TestList`) |
//! | `{:k p}` | `TestMap`, `MapGet :k` (fails if missing), `p` |
//! | `{:keys [a b]}` | `TestMap`, each key loaded or `nil` when missing (Clojure's destructuring) |
//!
//! Every failing test jumps to the caller's `fail` patch list (the next
//! clause, or a `:badmatch`).

use crate::bytecode::{Instr, Reg};
use lona_reader::{Form, FormKind};

use super::{Compiler, Patch, R};

impl<X: Default + 'static> Compiler<'_, X> {
    /// Compiles `p` against the value in `subj`; names it binds are added
    /// to `bound` (made visible by the caller after the whole pattern).
    pub(super) fn pattern(
        &mut self,
        p: &Form,
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        match &p.kind {
            FormKind::Symbol(s) if s == "_" => Ok(()),
            FormKind::Symbol(s) if s == "&" => Err(self.err(p.pos, "& outside a sequence pattern")),
            FormKind::Symbol(s) => {
                self.plain_name(p.pos, s, "pattern", "a pattern")?;
                if let Some((_, r)) = bound.iter().find(|(n, _)| n == s) {
                    let r = *r;
                    fail.push(self.emit(Instr::TestEqReg {
                        a: subj,
                        b: r,
                        fail: u32::MAX,
                    }));
                } else {
                    bound.push((s.clone(), subj));
                }
                Ok(())
            }
            FormKind::Nil
            | FormKind::Bool(_)
            | FormKind::Int(_)
            | FormKind::BigInt(_)
            | FormKind::Float(_)
            | FormKind::Str(_)
            | FormKind::Binary(_)
            | FormKind::Keyword(_) => {
                let k = self.literal16(p)?;
                fail.push(self.emit(Instr::TestEqConst {
                    r: subj,
                    k,
                    fail: u32::MAX,
                }));
                Ok(())
            }
            FormKind::List(items) if items.first().and_then(|h| h.as_symbol()) == Some("quote") => {
                if items.len() != 2 {
                    return Err(self.err(p.pos, "quote takes one form"));
                }
                let k = self.literal16(&items[1])?;
                fail.push(self.emit(Instr::TestEqConst {
                    r: subj,
                    k,
                    fail: u32::MAX,
                }));
                Ok(())
            }
            // A set or regex literal matches an equal value (elements
            // are not patterns: a set has no order to bind by).
            FormKind::Set(_) | FormKind::Regex(_) => {
                if !super::is_constant(p) {
                    return Err(self.err(
                        p.pos,
                        "bad pattern: a set in a pattern must be a constant (it matches an equal set)",
                    ));
                }
                let k = self.literal16(p)?;
                fail.push(self.emit(Instr::TestEqConst {
                    r: subj,
                    k,
                    fail: u32::MAX,
                }));
                Ok(())
            }
            FormKind::Vector(items) => self.vector_pattern(p, items, subj, fail, bound),
            FormKind::List(items) => self.list_pattern(p, items, subj, fail, bound),
            FormKind::Map(pairs) => self.map_pattern(pairs, subj, fail, bound),
        }
    }

    pub(super) fn split_rest<'f>(
        &self,
        p: &Form,
        items: &'f [Form],
    ) -> R<(&'f [Form], Option<&'f Form>)> {
        match items.iter().position(|x| x.as_symbol() == Some("&")) {
            None => Ok((items, None)),
            Some(i) if i + 2 == items.len() => Ok((&items[..i], Some(&items[i + 1]))),
            Some(_) => Err(self.err(
                p.pos,
                "bad pattern: & must be followed by exactly one pattern",
            )),
        }
    }

    fn vector_pattern(
        &mut self,
        p: &Form,
        items: &[Form],
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        let (fixed, rest) = self.split_rest(p, items)?;
        if fixed.len() > u16::MAX as usize {
            return Err(self.err(p.pos, "bad pattern: too many elements"));
        }
        let n = fixed.len() as u16;
        fail.push(self.emit(match rest {
            None => Instr::TestVector {
                r: subj,
                n,
                fail: u32::MAX,
            },
            Some(_) => Instr::TestVectorMin {
                r: subj,
                n,
                fail: u32::MAX,
            },
        }));
        for (i, item) in fixed.iter().enumerate() {
            if item.as_symbol() == Some("_") {
                continue;
            }
            let r = self.alloc(item.pos)?;
            self.emit(Instr::GetElem {
                dst: r,
                r: subj,
                i: i as u16,
            });
            self.pattern(item, r, fail, bound)?;
        }
        if let Some(rest) = rest {
            if rest.as_symbol() != Some("_") {
                let r = self.alloc(rest.pos)?;
                self.emit(Instr::VectorFrom {
                    dst: r,
                    r: subj,
                    i: n,
                });
                self.pattern(rest, r, fail, bound)?;
            }
        }
        Ok(())
    }

    fn list_pattern(
        &mut self,
        p: &Form,
        items: &[Form],
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        let (fixed, rest) = self.split_rest(p, items)?;
        if fixed.is_empty() && rest.is_some() {
            // `(& rest)`: any list, and only a list.
            fail.push(self.emit(Instr::TestList {
                r: subj,
                fail: u32::MAX,
            }));
        }
        let mut cur = subj;
        for item in fixed {
            fail.push(self.emit(Instr::TestCons {
                r: cur,
                fail: u32::MAX,
            }));
            let h = self.alloc(item.pos)?;
            self.emit(Instr::GetHead { dst: h, r: cur });
            let t = self.alloc(item.pos)?;
            self.emit(Instr::GetTail { dst: t, r: cur });
            self.pattern(item, h, fail, bound)?;
            cur = t;
        }
        match rest {
            None => fail.push(self.emit(Instr::TestEmptyList {
                r: cur,
                fail: u32::MAX,
            })),
            Some(rest) => self.pattern(rest, cur, fail, bound)?,
        }
        Ok(())
    }

    fn map_pattern(
        &mut self,
        pairs: &[(Form, Form)],
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        fail.push(self.emit(Instr::TestMap {
            r: subj,
            fail: u32::MAX,
        }));
        for (k, v) in pairs {
            if k.as_keyword() == Some("keys") {
                let Some(names) = v.as_vector() else {
                    return Err(self.err(v.pos, "bad pattern: :keys takes a vector of names"));
                };
                for n in names {
                    let Some(name) = n.as_symbol().filter(|s| !s.contains('/')) else {
                        return Err(self.err(n.pos, "bad pattern: :keys takes plain names"));
                    };
                    let key = Form::new(FormKind::Keyword(name.to_string()), n.pos);
                    let kk = self.literal(&key)?;
                    let r = self.alloc(n.pos)?;
                    self.emit(Instr::LoadConst { dst: r, k: kk });
                    let at = self.emit(Instr::MapGet {
                        dst: r,
                        r: subj,
                        fail: u32::MAX,
                    });
                    // Missing key: nil, and go on.
                    let skip = self.emit(Instr::Jump { to: u32::MAX });
                    self.bind(vec![at]);
                    self.emit(Instr::LoadNil { dst: r });
                    self.bind(vec![skip]);
                    self.pattern(n, r, fail, bound)?;
                }
                continue;
            }
            if !is_literal_key(k) {
                return Err(self.err(k.pos, "bad pattern: map pattern keys must be literals"));
            }
            let kk = self.literal(k)?;
            let r = self.alloc(v.pos)?;
            self.emit(Instr::LoadConst { dst: r, k: kk });
            fail.push(self.emit(Instr::MapGet {
                dst: r,
                r: subj,
                fail: u32::MAX,
            }));
            self.pattern(v, r, fail, bound)?;
        }
        Ok(())
    }
}

/// Whether `k` is a constant a map pattern's or a map binding form's key
/// can be: nil, a boolean, a number, a string or a keyword.
pub(super) fn is_literal_key(k: &Form) -> bool {
    matches!(
        k.kind,
        FormKind::Nil
            | FormKind::Bool(_)
            | FormKind::Int(_)
            | FormKind::BigInt(_)
            | FormKind::Float(_)
            | FormKind::Str(_)
            | FormKind::Keyword(_)
    )
}
