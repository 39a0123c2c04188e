//! Calls the general way: entering any callable (built-ins, variadic
//! entries, keywords, maps and vectors as functions), pushing a frame,
//! returning, spreading `apply`'s last argument, and what a built-in asks
//! of the VM (`Request`). The interpreter's fast paths (`call_fast!`, the
//! self tail call) and compiled code fall back to these.

use lona_runtime::StepCx;
use lona_term::{RawTerm, Term, View};

use super::{Frame, Outcome, Vm};
use crate::bytecode::{Entry, Proto};
use crate::native::{BuiltinCx, Raise, Request};
use crate::tag;

impl Vm {
    /// Enters the callable in `stack[slot]` with `argc` arguments after it
    /// (state synced; for a tail call `slot` is the current callee slot and
    /// the current frame is replaced). `Ok(true)`: a bytecode frame is now
    /// current; `Ok(false)`: the result is already in `stack[slot]`.
    pub(super) fn enter(
        &mut self,
        slot: usize,
        argc: usize,
        tail: bool,
        reds: &mut i32,
        rt: &mut Option<&mut StepCx<'_>>,
    ) -> Result<bool, Raise> {
        let f = self.stack[slot];
        if let Some(code) = tag::closure_code(f) {
            // SAFETY: closures are made only by this VM, with the address
            // of a leaked Proto as code id.
            let p = unsafe { Proto::from_code(code) };
            if let Some(nf) = p.ext.native {
                let (lo, hi) = p.native_arity;
                if argc < lo as usize || (hi != u16::MAX && argc > hi as usize) {
                    return Err(self.badarity(f, argc));
                }
                let words = &self.stack[slot + 1..slot + 1 + argc];
                // SAFETY: RawTerm is repr(transparent) over u64.
                let args: &[RawTerm] = unsafe {
                    std::slice::from_raw_parts(words.as_ptr() as *const RawTerm, words.len())
                };
                let mut cx = BuiltinCx {
                    heap: &self.heap,
                    env: &self.env,
                    reds,
                    rt: rt.as_deref_mut(),
                    request: None,
                    dict_slot: &mut self.extra,
                    user_native: p.ext.user_native,
                };
                let r = nf(&mut cx, args);
                if let Some(q) = cx.request {
                    if let (Request::Redirect, Ok(g)) = (q, r) {
                        // The same arguments, another callee (a Lonala
                        // function of the prelude, never a redirecting
                        // built-in: the recursion is one level).
                        self.stack[slot] = g.bits();
                        return self.enter(slot, argc, tail, reds, rt);
                    }
                    self.request(q, reds);
                }
                let v = r.inspect_err(|_| self.extra().fault_native = Some(p))?;
                self.stack[slot] = v.bits();
                return Ok(false);
            }
            let Some((e, variadic)) = p.entry(argc) else {
                return Err(self.badarity(f, argc));
            };
            if variadic {
                let fixed = p.variadic.map(|v| v.0 as usize).unwrap_or(0);
                // No rest arguments: nil, as Clojure's `& more`.
                let mut rest = if argc > fixed {
                    Term::EMPTY_LIST.raw()
                } else {
                    Term::NIL.raw()
                };
                for i in (fixed..argc).rev() {
                    // SAFETY: stack words are valid terms of this heap.
                    rest = unsafe {
                        self.heap
                            .cons_raw(crate::tag::raw(self.stack[slot + 1 + i]), rest)
                    };
                }
                self.stack[slot + 1 + fixed] = rest.bits();
            }
            self.push_frame(p, e, slot + 1, tail)?;
            return Ok(true);
        }
        // Keywords, maps, sets and vectors are functions of their keys.
        // SAFETY: a stack word is a valid term of this heap.
        // (A map or vector with metadata is one too.)
        let ft = unsafe { self.heap.term(crate::tag::raw(f)) }.unmeta();
        let args: Vec<Term<'_>> = self.stack[slot + 1..slot + 1 + argc]
            .iter()
            // SAFETY: as above.
            .map(|w| unsafe { self.heap.term(crate::tag::raw(*w)) })
            .collect();
        let v = match (ft.view(), args.as_slice()) {
            (View::Keyword(_), [m]) | (View::Keyword(_), [m, _]) => {
                let d = args.get(1).copied().unwrap_or(Term::NIL);
                crate::builtins::get(*m, ft).unwrap_or(d).raw()
            }
            (View::Map(_) | View::Set(_), [k]) | (View::Map(_) | View::Set(_), [k, _]) => {
                let d = args.get(1).copied().unwrap_or(Term::NIL);
                crate::builtins::get(ft, *k).unwrap_or(d).raw()
            }
            (View::Vector(items), [i]) => match i.as_i64() {
                Some(i) if i >= 0 && (i as usize) < items.len() => items[i as usize].raw(),
                _ => return Err(Raise::badarg()),
            },
            (View::Keyword(_) | View::Map(_) | View::Set(_) | View::Vector(_), _) => {
                return Err(self.badarity(f, argc))
            }
            _ => {
                let r = self.heap.vector(&[lona_term::kw!("badfun"), ft]).raw();
                // SAFETY: `r` was made on this heap just now.
                return Err(Raise::error(unsafe { self.heap.term(r) }));
            }
        };
        self.stack[slot] = v.bits();
        Ok(false)
    }

    /// Acts on what a built-in asked for (`BuiltinCx::request`).
    pub(super) fn request(&mut self, q: Request, reds: &mut i32) {
        match q {
            Request::Gc { full } => {
                // At the next safepoint, which ends the slice.
                self.gc_request = Some(full || self.gc_request == Some(true));
                *reds = (*reds).min(1);
            }
            Request::MaxHeapSize { words } => self.heap.set_max_heap_size(words),
            // At the next safepoint (the fast call path yields at once).
            Request::Yield => *reds = 0,
            // Handled where the built-in was called.
            Request::Redirect => {}
        }
    }

    pub(super) fn badarity(&self, f: u64, argc: usize) -> Raise {
        // SAFETY: a stack word is a valid term of this heap.
        let ft = unsafe { self.heap.term(crate::tag::raw(f)) };
        let v = self.heap.vector(&[
            lona_term::kw!("badarity"),
            ft,
            Term::small_int(argc as i64).unwrap_or(Term::NIL),
        ]);
        Raise::error(v)
    }

    pub(super) fn push_frame(
        &mut self,
        p: &'static Proto,
        e: Entry,
        base: usize,
        tail: bool,
    ) -> Result<(), Raise> {
        if !self.ensure(base + e.nregs as usize + 1) {
            return Err(Raise::system_limit());
        }
        if !tail {
            self.push_caller(self.cur);
        }
        self.cur = Frame {
            proto: p,
            pc: e.pc,
            base: base as u32,
            nregs: e.nregs as u32,
        };
        Ok(())
    }

    /// Returns `v` from the current frame (state synced). `Some` when the
    /// outermost call finished.
    pub(super) fn ret(&mut self, v: u64) -> Option<Outcome> {
        let slot = self.cur.base as usize - 1;
        self.stack[slot] = v;
        match self.frames.pop() {
            Some(f) => {
                self.cur = f;
                None
            }
            None => {
                self.active = false;
                Some(Outcome::Done(crate::tag::raw(v)))
            }
        }
    }

    /// Spreads the list or vector in `stack[at]` onto the stack from `at`
    /// on; returns how many.
    pub(super) fn spread(&mut self, at: usize) -> Result<usize, Raise> {
        // SAFETY: a stack word is a valid term of this heap.
        let t = unsafe { self.heap.term(crate::tag::raw(self.stack[at])) };
        let items: Vec<u64> = match t.view() {
            View::Vector(v) => v.iter().map(|x| x.bits()).collect(),
            View::EmptyList | View::Nil => Vec::new(),
            View::Cons(..) => {
                let mut v = Vec::new();
                let mut it = t.list_iter();
                for x in &mut it {
                    v.push(x.bits());
                }
                if !it.tail().same(Term::EMPTY_LIST) {
                    return Err(Raise::badarg());
                }
                v
            }
            _ => return Err(Raise::badarg()),
        };
        if !self.ensure(at + items.len() + 1) {
            return Err(Raise::system_limit());
        }
        self.stack[at..at + items.len()].copy_from_slice(&items);
        Ok(items.len())
    }

    /// After a tail call moved callee and arguments to the callee slot.
    pub(super) fn tail_enter(
        &mut self,
        argc: usize,
        reds: &mut i32,
        rt: &mut Option<&mut StepCx<'_>>,
    ) -> Result<Option<Outcome>, Raise> {
        let slot = self.cur.base as usize - 1;
        if self.enter(slot, argc, true, reds, rt)? {
            Ok(None)
        } else {
            let v = self.stack[slot];
            Ok(self.ret(v))
        }
    }
}
