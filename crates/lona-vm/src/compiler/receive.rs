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

use crate::bytecode::{Instr, Reg, NO_TIMEOUT};
use crate::form::Form;

use super::{Compiler, R};

impl Compiler<'_> {
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
        let peek = self.emit(Instr::RecvPeek {
            dst: subj,
            empty: u32::MAX,
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
}
