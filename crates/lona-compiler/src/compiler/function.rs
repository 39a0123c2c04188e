//! Functions: `defn`, `fn`, clauses by pattern grouped by arity, variadic
//! parameters, and the closure that captures what the body uses.
//!
//! Each arity is one entry of the prototype. An arity with one clause and
//! no guard binds its parameters by destructuring, as Clojure
//! (`destructure.rs`: `[[a b] & {:keys [c]}]` takes any sequential value
//! and any map). The clauses of an arity with several are Erlang's: they
//! are tried in order: their parameter patterns are compiled against the
//! argument registers, a failing test jumps to the next clause, and after
//! the last one comes `:function-clause` (omitted when a clause has only
//! plain names and no guard, which always match). A clause may have a
//! guard after its parameters, `([x] :when (> x 0) body...)`, as in
//! `match`: false, nil or an exception means the next clause. `recur` re-enters the clause tests
//! with new arguments.

use crate::bytecode::{Entry, Instr, Reg};
use lona_reader::{Form, FormKind, Pos};

use super::{Clause, Compiler, FnState, Loc, LoopTarget, R};

impl<X: Default + 'static> Compiler<'_, X> {
    pub(super) fn defn(
        &mut self,
        f: &Form,
        items: &[Form],
        dst: Reg,
        tail: bool,
        private: bool,
    ) -> R<()> {
        let Some(name) = items
            .get(1)
            .and_then(|n| n.as_symbol())
            .filter(|s| !s.contains('/'))
        else {
            return Err(self.err(f.pos, "defn needs a name: (defn name [params] body...)"));
        };
        let v = self.ns.intern(name);
        v.set_private(private);
        let mut rest = &items[2..];
        if let Some(FormKind::Str(_)) = rest.first().map(|x| &x.kind) {
            rest = &rest[1..];
        }
        if let Some(FormKind::Map(_)) = rest.first().map(|x| &x.kind) {
            rest = &rest[1..];
        }
        let qualified = format!("{}/{}", self.ns.name, name);
        self.function(f, rest, qualified, None, dst)?;
        self.set_var(v, dst, tail);
        Ok(())
    }

    pub(super) fn fn_form(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let mut rest = &items[1..];
        let mut self_name = None;
        if let Some(n) = rest.first().and_then(|x| x.as_symbol()) {
            self_name = Some(n.to_string());
            rest = &rest[1..];
        }
        let name = format!("{}/{}", self.ns.name, self_name.as_deref().unwrap_or("fn"));
        self.function(f, rest, name, self_name, dst)?;
        self.ret_if(dst, tail);
        Ok(())
    }

    /// Compiles a function from its clauses (`[params] body...` or
    /// `([params] body...) ...`) and puts the closure in `dst`.
    fn function(
        &mut self,
        f: &Form,
        rest: &[Form],
        name: String,
        self_name: Option<String>,
        dst: Reg,
    ) -> R<()> {
        let clauses: Vec<Clause<'_>> = match rest.first().map(|x| &x.kind) {
            Some(FormKind::Vector(p)) => vec![(p.as_slice(), &rest[1..], rest[0].pos)],
            Some(FormKind::List(_)) => {
                let mut v = Vec::new();
                for c in rest {
                    let Some(items) = c.as_list() else {
                        return Err(self.err(c.pos, "expected a clause ([params] body...)"));
                    };
                    let Some(p) = items.first().and_then(|p| p.as_vector()) else {
                        return Err(self.err(c.pos, "a clause starts with a parameter vector"));
                    };
                    v.push((p, &items[1..], c.pos));
                }
                v
            }
            _ => return Err(self.err(f.pos, "fn needs a parameter vector: (fn [params] body...)")),
        };
        // Group clauses by arity, keeping their order.
        let mut groups: Vec<(usize, bool, Vec<Clause<'_>>)> = Vec::new();
        for c in clauses {
            let (fixed, variadic) = self.param_shape(c.0, c.2)?;
            match groups.iter_mut().find(|g| g.0 == fixed && g.1 == variadic) {
                Some(g) => g.2.push(c),
                None => groups.push((fixed, variadic, vec![c])),
            }
        }
        if groups.iter().filter(|g| g.1).count() > 1 {
            return Err(self.err(f.pos, "a function can have only one variadic arity"));
        }
        self.fns.push(FnState {
            name,
            self_name,
            ..Default::default()
        });
        let mut entries = Vec::new();
        let mut variadic = None;
        for (fixed, is_var, cl) in &groups {
            let nparams = fixed + usize::from(*is_var);
            let pc = self.pc();
            {
                let st = self.st();
                st.next_reg = nparams;
                st.max_reg = st.max_reg.max(nparams);
                st.locals.clear();
            }
            self.clauses_body(cl, nparams, *fixed, *is_var)?;
            let e = Entry { pc, nregs: 0 };
            if *is_var {
                variadic = Some((*fixed as u16, e));
            } else {
                entries.push((*fixed, e));
            }
        }
        let st = self.fns.pop().expect("function state");
        let captures: Vec<(String, Loc)> = st.captures.clone();
        let proto = self.finish(st, entries, variadic);
        if captures.is_empty() {
            // SAFETY: the code id of the leaked prototype just finished.
            let c = unsafe { self.lits.closure(proto.code_id(), &[]) }.raw();
            let k = self.konst_lit(c);
            self.emit(Instr::LoadConst { dst, k });
        } else {
            let m = self.mark();
            let from = self.alloc_n(captures.len(), f.pos)?;
            for (i, (_, loc)) in captures.iter().enumerate() {
                self.load_loc(*loc, from + i as Reg);
            }
            let p = {
                let st = self.st();
                st.protos.push(proto);
                (st.protos.len() - 1) as u32
            };
            self.emit(Instr::Closure {
                dst,
                from,
                n: captures.len() as u8,
                proto: p,
            });
            self.release(m);
        }
        Ok(())
    }

    fn param_shape(&self, params: &[Form], pos: Pos) -> R<(usize, bool)> {
        match params.iter().position(|p| p.as_symbol() == Some("&")) {
            None => Ok((params.len(), false)),
            Some(i) if i + 2 == params.len() => Ok((i, true)),
            Some(_) => Err(self.err(pos, "& must be followed by exactly one parameter")),
        }
    }

    /// The clauses of one arity: match each parameter pattern in turn,
    /// falling through to the next clause, then `:function-clause`.
    fn clauses_body(
        &mut self,
        clauses: &[(&[Form], &[Form], Pos)],
        nparams: usize,
        fixed: usize,
        variadic: bool,
    ) -> R<()> {
        let start = self.pc();
        for (params, body, pos) in clauses {
            let m = self.mark();
            let pats: Vec<&Form> = params
                .iter()
                .filter(|p| p.as_symbol() != Some("&"))
                .collect();
            debug_assert_eq!(pats.len(), fixed + usize::from(variadic));
            let mut fail = Vec::new();
            let mut bound = Vec::new();
            // `([x] :when guard body...)`: as in `match`, a false guard (or
            // one that raises) goes on to the next clause.
            let (guard, body) = clause_guard(body);
            // The only clause of its arity, without a guard, destructures
            // (Clojure); clauses to choose from are patterns (Erlang).
            let destructure = clauses.len() == 1 && guard.is_none();
            for (i, p) in pats.iter().enumerate() {
                if destructure {
                    self.destructure(p, i as Reg, &mut fail, &mut bound)?;
                } else {
                    self.pattern(p, i as Reg, &mut fail, &mut bound)?;
                }
            }
            self.bind_all(bound);
            if let Some(g) = guard {
                self.guard(g, &mut fail)?;
            }
            // Recur re-enters the clause tests with new arguments.
            let saved = self.st().loop_target.replace(LoopTarget {
                pc: start,
                first: 0,
                n: nparams,
            });
            let dst = self.alloc(*pos)?;
            self.body(body, *pos, dst, true)?;
            self.st().loop_target = saved;
            self.bind(fail);
            self.release(m);
        }
        if !clauses.iter().all(|(p, body, _)| {
            p.iter().all(|x| x.as_symbol().is_some()) && clause_guard(body).0.is_none()
        }) {
            self.emit(Instr::FunctionClause);
        }
        Ok(())
    }
}

/// A clause body's guard: `:when guard body...` (the keyword and a guard
/// form, then the body) gives the guard and the rest.
fn clause_guard(body: &[Form]) -> (Option<&Form>, &[Form]) {
    match body {
        [w, g, rest @ ..] if w.as_keyword() == Some("when") => (Some(g), rest),
        _ => (None, body),
    }
}
