//! `receive`: selective receive compiled to BEAM's loop (`bytecode.rs`,
//! "receive").
//!
//! ```text
//! (receive pat1 body1  pat2 :when g body2  :timeout ms body3)
//!
//!         <ms into t>              ; before the scan: it may call anything
//!         RecvStart
//! top:    RecvPeek s, wait         ; next message not yet rejected
//!         <tests of pat1 on s>     ; each failing test jumps to c2
//!         RecvAccept
//!         <body1>  Jump end
//! c2:     <tests of pat2>, <guard g>   ; failing to next
//!         RecvAccept
//!         <body2>  Jump end
//! next:   RecvNext top             ; rejected: the cursor moves past it
//! wait:   RecvWait t, top          ; sleeps, then resumes at top
//!         <body3>                  ; reached when the timeout fired (or is 0)
//! end:
//! ```
//!
//! A `:timeout` keyword followed by exactly two forms at the end is the
//! timeout clause; anywhere else it is a pattern (the message `:timeout`).
//!
//! Only the matching message leaves the mailbox; the others keep their
//! order, and a later scan of the same receive resumes after the messages
//! it already rejected.

use crate::bytecode::{Instr, RecvFilter, Reg, Shape, NO_TIMEOUT};
use lona_reader::{Form, FormKind};

use super::{form_to_term, Compiler, R};

impl<X: Default + 'static> Compiler<'_, X> {
    pub(super) fn receive(&mut self, f: &Form, items: &[Form], dst: Reg, tail: bool) -> R<()> {
        let mut forms = &items[1..];
        let mut timeout = None;
        let n = forms.len();
        if n >= 3 && forms[n - 3].as_keyword() == Some("timeout") {
            timeout = Some((&forms[n - 2], &forms[n - 1]));
            forms = &forms[..n - 3];
        }
        let clauses = self.split_clauses(forms, f.pos)?;
        let m = self.mark();
        let t = match timeout {
            Some((ms, _)) => {
                let t = self.alloc(ms.pos)?;
                self.expr(ms, t, false)?;
                t
            }
            None => NO_TIMEOUT,
        };
        let subj = self.alloc(f.pos)?;
        self.line(f.pos);
        self.emit(Instr::RecvStart);
        let top = self.pc();
        let filter = self.recv_filter(&clauses);
        let peek = self.emit(match filter {
            Some(f) => Instr::RecvScan {
                dst: subj,
                f,
                empty: u32::MAX,
            },
            None => Instr::RecvPeek {
                dst: subj,
                empty: u32::MAX,
            },
        });
        let mut ends = Vec::new();
        for (pat, guard, body) in clauses {
            let cm = self.mark();
            let mut fail = Vec::new();
            let mut bound = Vec::new();
            self.pattern(pat, subj, &mut fail, &mut bound)?;
            self.bind_all(bound);
            if let Some(g) = guard {
                self.guard(g, &mut fail)?;
            }
            self.emit(Instr::RecvAccept);
            self.expr(body, dst, tail)?;
            if !tail {
                ends.push(self.emit(Instr::Jump { to: u32::MAX }));
            }
            self.bind(fail);
            self.release(cm);
        }
        self.emit(Instr::RecvNext { to: top });
        self.bind(vec![peek]);
        self.emit(Instr::RecvWait { t, to: top });
        match timeout {
            Some((_, body)) => self.expr(body, dst, tail)?,
            // Never reached (a receive without a timeout only wakes to scan
            // again); the value keeps the register's contract.
            None => {
                self.emit(Instr::LoadNil { dst });
                self.ret_if(dst, tail);
            }
        }
        self.bind(ends);
        self.release(m);
        Ok(())
    }

    /// The receive's [`RecvFilter`] (its index), when every clause's
    /// pattern has a [`Shape`]: a literal, or a vector pattern.
    fn recv_filter(&mut self, clauses: &[(&Form, Option<&Form>, &Form)]) -> Option<u16> {
        let shapes = clauses
            .iter()
            .map(|(pat, _, _)| self.shape(pat))
            .collect::<Option<Vec<Shape>>>()?;
        if shapes.is_empty() {
            return None;
        }
        let st = self.st();
        let i = u16::try_from(st.recv_filters.len()).ok()?;
        st.recv_filters.push(RecvFilter::new(&shapes));
        Some(i)
    }

    fn shape(&self, p: &Form) -> Option<Shape> {
        match &p.kind {
            FormKind::Vector(items) => {
                let rest = items.iter().position(|x| x.as_symbol() == Some("&"));
                let fixed = &items[..rest.unwrap_or(items.len())];
                let n = u16::try_from(fixed.len()).ok()?;
                let elem = fixed
                    .iter()
                    .enumerate()
                    .find_map(|(i, x)| Some((i as u16, self.immediate(x)?)));
                Some(Shape::Vector {
                    n,
                    min: rest.is_some(),
                    elem,
                })
            }
            _ => self.immediate(p).map(Shape::Imm),
        }
    }

    /// The word of a literal pattern that is an immediate.
    fn immediate(&self, p: &Form) -> Option<u64> {
        match &p.kind {
            FormKind::Nil
            | FormKind::Bool(_)
            | FormKind::Int(_)
            | FormKind::Float(_)
            | FormKind::Keyword(_) => {
                let w = form_to_term(&self.lits, p).ok()?.raw().bits();
                crate::tag::both_immediate(w, w).then_some(w)
            }
            _ => None,
        }
    }
}
