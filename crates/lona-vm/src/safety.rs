//! No safe path through the public API reaches undefined behaviour.
//!
//! A program embedding Lonala in safe Rust (even under
//! `#![forbid(unsafe_code)]`) cannot hand the VM a word that is not a
//! term: the VM follows term words as pointers (a closure's code word is
//! the address of its compiled function), so a forged word would be read
//! as memory. What keeps every such word out of safe reach:
//!
//! - [`lona_term::RawTerm`]'s word is private: a `RawTerm` comes from a
//!   real term ([`lona_term::Term::raw`]) or from the `unsafe`
//!   [`lona_term::RawTerm::from_raw`], and reading one back as a term is
//!   `unsafe` ([`lona_term::Heap::term`]).
//! - [`lona_term::Heap::closure`] is `unsafe`: its code word must be one
//!   the VM made.
//! - A native of the embedding program ([`crate::Env::define_native`]) is
//!   a [`crate::Native`]: it gets and returns [`lona_term::Term`]s tied to
//!   the heap it is given, never raw words; a term of another heap that
//!   outlives the call is copied in.
//! - The compiler, bytecode, VM, built-ins and the built-ins' raw calling
//!   convention are private to this crate, and in the machine below
//!   (`lona-machine`, which this crate reaches through
//!   `lona_machine::node`) making a VM or defining a built-in on raw
//!   words is `unsafe`, and a built-in's context is made only by the
//!   machine (`lona_machine::safety` has the machine's own tests).
//!
//! The examples below are compiled as tests: each former path fails to
//! compile, for the reason given (stable rustdoc checks only that they
//! fail; the error codes are checked on nightly, and were checked by hand
//! when they were written).
//!
//! # Terms from bits
//!
//! A `RawTerm` cannot be made from bits (E0603, private constructor):
//!
//! ```compile_fail,E0603
//! #![forbid(unsafe_code)]
//! let _forged = lona_term::RawTerm(5);
//! ```
//!
//! nor its word be read as a field (E0616); [`lona_term::RawTerm::bits`]
//! reads it:
//!
//! ```compile_fail,E0616
//! #![forbid(unsafe_code)]
//! let _w: u64 = lona_term::Term::NIL.raw().0;
//! ```
//!
//! ```
//! #![forbid(unsafe_code)]
//! assert_eq!(lona_term::Term::NIL.raw().bits(), lona_term::Term::NIL.bits());
//! ```
//!
//! # Closures with any code word
//!
//! `Heap::closure` needs an `unsafe` block (E0133)...
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! let h = lona_term::Heap::new();
//! let _f = h.closure(0xdead_bee8, &[]);
//! ```
//!
//! ...which `forbid(unsafe_code)` refuses:
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! let h = lona_term::Heap::new();
//! // SAFETY: none: this is what the lint refuses.
//! let _f = unsafe { h.closure(0xdead_bee8, &[]) };
//! ```
//!
//! # The VM's internals
//!
//! The closure namer that follows a code word (E0603, private module):
//!
//! ```compile_fail,E0603
//! #![forbid(unsafe_code)]
//! let _ = lona_vm::builtins::fn_name(0xdead_bee8);
//! ```
//!
//! Compiled functions, whose code and constants the VM trusts:
//!
//! ```compile_fail,E0603
//! #![forbid(unsafe_code)]
//! let _p = lona_vm::bytecode::Proto::bare("f", Vec::new(), None);
//! ```
//!
//! The interpreter itself, which starts calls from raw words:
//!
//! ```compile_fail,E0603
//! #![forbid(unsafe_code)]
//! let env = lona_vm::Env::stdout();
//! let _vm = lona_vm::vm::Vm::new(env);
//! ```
//!
//! ```compile_fail,E0616
//! #![forbid(unsafe_code)]
//! let ev = lona_vm::Evaluator::new(lona_vm::Env::stdout());
//! let _vm = &ev.vm;
//! ```
//!
//! and the built-ins' raw calling convention:
//!
//! ```compile_fail,E0603
//! #![forbid(unsafe_code)]
//! type Raw = fn(
//!     &mut lona_vm::native::BuiltinCx<'_, '_>,
//!     &[lona_term::RawTerm],
//! ) -> lona_vm::native::NResult;
//! ```
//!
//! # Through the machine's crate
//!
//! What the node uses of the machine is public there, but what trusts its
//! caller needs `unsafe` (E0133): a VM...
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! let env = lona_vm::Env::stdout();
//! let _vm = lona_machine::node::Vm::new(env);
//! ```
//!
//! ...and a built-in on raw words:
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! fn bad(_cx: &mut lona_machine::node::BuiltinCx<'_, '_>, _a: &[lona_term::RawTerm])
//!     -> lona_machine::node::NResult {
//!     Ok(lona_term::Term::NIL.raw())
//! }
//! let env = lona_vm::Env::stdout();
//! let ns = env.namespaces.get_or_create("x");
//! lona_machine::node::builtins::def(ns, "bad", 0, 0, bad);
//! ```
//!
//! # Natives
//!
//! A native returns a term, not a raw word (E0308, mismatched types):
//!
//! ```compile_fail,E0308
//! #![forbid(unsafe_code)]
//! let env = lona_vm::Env::new(Box::new(std::io::sink()));
//! env.define_native("x", "bad", 0, 0, |cx, _args| Ok(cx.heap().int(5).raw()));
//! ```
//!
//! The same native returning the term compiles and runs:
//!
//! ```
//! #![forbid(unsafe_code)]
//! let env = lona_vm::Env::new(Box::new(std::io::sink()));
//! env.define_native("x", "good", 0, 0, |cx, _args| Ok(cx.heap().int(5)));
//! assert_eq!(lona_vm::eval_str(&env, "t", "(x/good)").unwrap(), "5");
//! ```
//!
//! It cannot return a term of a heap that dies with the call (E0515)...
//!
//! ```compile_fail,E0515
//! #![forbid(unsafe_code)]
//! let env = lona_vm::Env::new(Box::new(std::io::sink()));
//! env.define_native("x", "bad", 0, 0, |_cx, _args| {
//!     let h = lona_term::Heap::new();
//!     Ok(h.int(1 << 62))
//! });
//! ```
//!
//! ...nor keep an argument past the call (E0521), when a collection may
//! move it:
//!
//! ```compile_fail,E0521
//! #![forbid(unsafe_code)]
//! use lona_term::Term;
//! use std::sync::Mutex;
//! static KEPT: Mutex<Option<Term<'static>>> = Mutex::new(None);
//! let env = lona_vm::Env::new(Box::new(std::io::sink()));
//! env.define_native("x", "keep", 1, 1, |_cx, args| {
//!     *KEPT.lock().unwrap() = Some(args[0]);
//!     Ok(Term::NIL)
//! });
//! ```
