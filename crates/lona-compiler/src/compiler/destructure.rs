//! Destructuring: how `let`, `loop` and a function's parameters bind
//! (Clojure's rules), next to the exact patterns of `match`, `receive`
//! and the clause heads of a function with several clauses per arity
//! (Erlang's rules, `pattern.rs`).
//!
//! | binding form | binds |
//! | --- | --- |
//! | `x`, `_`, `&` | the value (a name bound twice in one form: the later one wins; `_` is an ordinary name, as in Clojure) |
//! | `[a b]` | the first and second element of any sequential value (vector, list, lazy sequence, string, nil); `nil` for each missing one, extra ones ignored |
//! | `[a & r]` | `r`: `(next v)` after the named elements, `nil` when none are left |
//! | `[a :as v]` | `v`: the whole value |
//! | `{a :a, [x y] :pos}` | `(get m :a)` for each key, the value destructured by its binding form |
//! | `{:keys [a b] :strs [c] :syms [d]}` | `(get m :a)`, `(get m "c")`, `(get m 'd)` |
//! | `{:ns/keys [a] :ns/syms [b]}` | `(get m :ns/a)`, `(get m 'ns/b)` |
//! | `{:or {a 1}}` | `1` when `:a` is missing (the default is evaluated before the form's names are bound) |
//! | `{:as m}` | the map read (the value, or the map made of a seq) |
//! | a literal, `'sym` | nothing: the value must be equal (else `:badmatch`, or `:function-clause` for a parameter) |
//! | `{:k pat}` (a literal key) | the key must be present (Erlang's map pattern), its value destructured by `pat` |
//! | `(a b)` | an exact list pattern, as in `match` |
//!
//! A map form takes a map as it is, makes a map of a list of keys and
//! values (`& {:keys [opt]}`, Clojure's keyword arguments; a seq of one
//! map is that map), and reads the keys of anything else with `get`
//! (Clojure 1.11's rules).
//!
//! Code: a vector form without `& rest` first tests for a vector long
//! enough (`TestVectorMin`) and loads the elements (`GetElem`), as a match
//! does; any other value is walked with `seq`/`first`/`next` (the lazy-
//! aware built-ins). A map form tests `TestMap` and otherwise calls
//! `destructure-map*`; each key is then a `MapGet` with its default.

use crate::bytecode::{Instr, Reg};
use lona_reader::{Form, FormKind, Pos};

use super::{Compiler, Patch, R};

impl<X: Default + 'static> Compiler<'_, X> {
    /// Binds the destructuring form `p` against the value in `subj`. Names
    /// go to `bound` (made visible by the caller); a literal that does not
    /// match jumps to `fail`.
    pub(super) fn destructure(
        &mut self,
        p: &Form,
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        match &p.kind {
            // `_` and `&` are ordinary names here, as in Clojure (`_` is
            // a wildcard only in patterns; `&` marks the rest only in a
            // vector form).
            FormKind::Symbol(s) => {
                self.plain_name(p.pos, s, "binding", "a binding form")?;
                bound.push((s.clone(), subj));
                Ok(())
            }
            FormKind::Vector(items) => self.destructure_vector(p, items, subj, fail, bound),
            FormKind::Map(pairs) => self.destructure_map(p, pairs, subj, fail, bound),
            _ => self.pattern(p, subj, fail, bound),
        }
    }

    /// `[p0 p1 & rest :as all]`
    fn destructure_vector(
        &mut self,
        p: &Form,
        items: &[Form],
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        let mut items = items;
        let mut as_name = None;
        if items.len() >= 2 && items[items.len() - 2].as_keyword() == Some("as") {
            as_name = Some(&items[items.len() - 1]);
            items = &items[..items.len() - 2];
        }
        let (fixed, rest) = self.split_rest(p, items)?;
        if fixed.len() > u16::MAX as usize {
            return Err(self.err(p.pos, "bad binding: too many elements"));
        }
        if let Some(a) = as_name {
            if a.as_symbol().is_none() {
                return Err(self.err(a.pos, "bad binding: :as takes a name"));
            }
            self.destructure(a, subj, fail, bound)?;
        }
        if fixed.is_empty() && rest.is_none() {
            return Ok(());
        }
        let regs: Vec<Option<Reg>> = fixed
            .iter()
            .map(|f| self.alloc(f.pos).map(Some))
            .collect::<R<_>>()?;
        let mut done = None;
        if rest.is_none() {
            // The common case, a vector: straight loads.
            let slow = self.emit(Instr::TestVectorMin {
                r: subj,
                n: fixed.len() as u16,
                fail: u32::MAX,
            });
            for (i, r) in regs.iter().enumerate() {
                if let Some(r) = *r {
                    self.emit(Instr::GetElem {
                        dst: r,
                        r: subj,
                        i: i as u16,
                    });
                }
            }
            done = Some(self.emit(Instr::Jump { to: u32::MAX }));
            self.bind(vec![slow]);
        }
        // Anything else: (seq v), then first/next along it.
        let cur = self.alloc(p.pos)?;
        self.call_core("seq", &[subj], cur, p.pos)?;
        for (i, r) in regs.iter().enumerate() {
            if let Some(r) = *r {
                self.call_core("first", &[cur], r, p.pos)?;
            }
            if i + 1 < regs.len() || rest.is_some() {
                self.call_core("next", &[cur], cur, p.pos)?;
            }
        }
        if let Some(d) = done {
            self.bind(vec![d]);
        }
        for (f, r) in fixed.iter().zip(&regs) {
            if let Some(r) = *r {
                self.destructure(f, r, fail, bound)?;
            }
        }
        if let Some(rest) = rest {
            self.destructure(rest, cur, fail, bound)?;
        }
        Ok(())
    }

    /// `{a :a, :keys [b] :or {b 1} :as m, :k pat}`
    fn destructure_map(
        &mut self,
        p: &Form,
        pairs: &[(Form, Form)],
        subj: Reg,
        fail: &mut Patch,
        bound: &mut Vec<(String, Reg)>,
    ) -> R<()> {
        let mut defaults: Vec<(&str, &Form)> = Vec::new();
        for (k, v) in pairs {
            if k.as_keyword() == Some("or") {
                let FormKind::Map(ds) = &v.kind else {
                    return Err(
                        self.err(v.pos, "bad binding: :or takes a map of names to defaults")
                    );
                };
                for (n, d) in ds {
                    let Some(n) = n.as_symbol() else {
                        return Err(
                            self.err(n.pos, "bad binding: :or takes a map of names to defaults")
                        );
                    };
                    defaults.push((n, d));
                }
            }
        }
        // m: the subject if it is a map, else (destructure-map* subject).
        let m = self.alloc(p.pos)?;
        self.emit(Instr::Move { dst: m, src: subj });
        let is_map = self.emit(Instr::TestMap {
            r: subj,
            fail: u32::MAX,
        });
        let go = self.emit(Instr::Jump { to: u32::MAX });
        self.bind(vec![is_map]);
        self.call_core("destructure-map*", &[subj], m, p.pos)?;
        self.bind(vec![go]);
        // Each entry: (binding form, key form, required).
        let mut entries: Vec<(Form, Form, bool)> = Vec::new();
        for (k, v) in pairs {
            match k.as_keyword() {
                Some("or") => continue,
                Some("as") => {
                    if v.as_symbol().is_none() {
                        return Err(self.err(v.pos, "bad binding: :as takes a name"));
                    }
                    // The map read (Clojure 1.11: a seq of keys and values
                    // binds the map made of it).
                    self.destructure(v, m, fail, bound)?;
                    continue;
                }
                Some(k) if map_key_kind(k).is_some() => {
                    let (kind, key_ns) = map_key_kind(k).unwrap_or(("keys", None));
                    let Some(names) = v.as_vector() else {
                        return Err(self.err(
                            v.pos,
                            format!("bad binding: :{kind} takes a vector of names"),
                        ));
                    };
                    for n in names {
                        let name = match &n.kind {
                            FormKind::Symbol(s) => s.as_str(),
                            FormKind::Keyword(s) if kind != "strs" => s.as_str(),
                            _ => {
                                return Err(
                                    self.err(n.pos, format!("bad binding: :{kind} takes names"))
                                )
                            }
                        };
                        // `:keys [ns/a]` reads `:ns/a` and binds `a`.
                        let local = name.rsplit('/').next().unwrap_or(name);
                        // `{:ns/keys [a]}` reads `:ns/a` (a qualified name
                        // keeps its own namespace).
                        let qualified;
                        let name = match key_ns {
                            Some(ns) if !name.contains('/') => {
                                qualified = format!("{ns}/{name}");
                                qualified.as_str()
                            }
                            _ => name,
                        };
                        let key = match kind {
                            "keys" => FormKind::Keyword(name.to_string()),
                            "strs" => FormKind::Str(name.to_string()),
                            _ => FormKind::List(vec![
                                Form::new(FormKind::Symbol("quote".into()), n.pos),
                                Form::new(FormKind::Symbol(name.to_string()), n.pos),
                            ]),
                        };
                        entries.push((
                            Form::new(FormKind::Symbol(local.to_string()), n.pos),
                            Form::new(key, n.pos),
                            false,
                        ));
                    }
                }
                _ => {
                    let binding_key = matches!(
                        k.kind,
                        FormKind::Symbol(_) | FormKind::Vector(_) | FormKind::Map(_)
                    );
                    if binding_key {
                        // Clojure's `{name :key}`.
                        entries.push((k.clone(), v.clone(), false));
                    } else {
                        // Erlang's `{:key pattern}`: the key must be there.
                        entries.push((v.clone(), k.clone(), true));
                    }
                }
            }
        }
        for (binding, key, required) in &entries {
            // A quoted key (`'sym`) too.
            if !(super::pattern::is_literal_key(key) || matches!(key.kind, FormKind::List(_))) {
                return Err(self.err(key.pos, "bad binding: a map key must be a literal"));
            }
            let kk = self.literal(if let FormKind::List(q) = &key.kind {
                q.get(1).unwrap_or(key)
            } else {
                key
            })?;
            let r = self.alloc(key.pos)?;
            self.emit(Instr::LoadConst { dst: r, k: kk });
            let at = self.emit(Instr::MapGet {
                dst: r,
                r: m,
                fail: u32::MAX,
            });
            if *required {
                fail.push(at);
            } else {
                let skip = self.emit(Instr::Jump { to: u32::MAX });
                self.bind(vec![at]);
                let default = binding
                    .as_symbol()
                    .and_then(|n| defaults.iter().find(|(d, _)| *d == n))
                    .map(|(_, d)| *d);
                match default {
                    Some(d) => self.expr(d, r, false)?,
                    None => {
                        self.emit(Instr::LoadNil { dst: r });
                    }
                }
                self.bind(vec![skip]);
            }
            self.destructure(binding, r, fail, bound)?;
        }
        Ok(())
    }

    /// Calls `lona.core/name` with `args` and puts the result in `dst`
    /// (a call through the var, as any call of a core function).
    pub(super) fn call_core(&mut self, name: &str, args: &[Reg], dst: Reg, pos: Pos) -> R<()> {
        let Some(v) = self.resolve_var(&format!("lona.core/{name}"), pos)? else {
            return Err(self.err(pos, format!("lona.core/{name} is not defined")));
        };
        let var = self.var_index(v);
        let m = self.mark();
        let a = self.alloc_n(1 + args.len(), pos)?;
        for (i, r) in args.iter().enumerate() {
            self.emit(Instr::Move {
                dst: a + 1 + i as Reg,
                src: *r,
            });
        }
        self.emit(Instr::CallVar {
            a,
            argc: args.len() as u8,
            var,
        });
        if a != dst {
            self.emit(Instr::Move { dst, src: a });
        }
        self.release(m);
        Ok(())
    }
}

/// What a keyword key of a map binding form names: `:keys`, `:strs`,
/// `:syms`, or `:ns/keys`, `:ns/syms` (keys of that namespace).
fn map_key_kind(k: &str) -> Option<(&'static str, Option<&str>)> {
    let (ns, kind) = match k.rsplit_once('/') {
        Some((ns, kind)) if !ns.is_empty() => (Some(ns), kind),
        _ => (None, k),
    };
    let kind = match kind {
        "keys" => "keys",
        "syms" => "syms",
        "strs" if ns.is_none() => "strs",
        _ => return None,
    };
    Some((kind, ns))
}
