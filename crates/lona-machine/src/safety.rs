//! No safe path through the machine's public API reaches undefined
//! behaviour.
//!
//! The node (`lona-vm`) is above this crate, so what it needs of the
//! machine is public here ([`crate::node`]); whatever of that trusts a
//! word, a prototype or a function to keep the VM's invariants is an
//! `unsafe fn` whose `# Safety` section says what the caller promises, and
//! what a built-in sees ([`crate::node::BuiltinCx`]) cannot be made
//! outside this crate. Safe code, even under `#![forbid(unsafe_code)]`,
//! therefore still cannot hand the VM a word it did not make (see
//! `lona_vm::safety` for the node's side and the term crate's).
//!
//! The examples below are compiled as tests: each path fails to compile,
//! for the reason given (stable rustdoc checks only that they fail).
//!
//! # The interpreter
//!
//! A VM is made only by an `unsafe` function (E0133)...
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! let env = std::sync::Arc::new(lona_machine::Env::empty(Box::new(std::io::sink())));
//! let _vm = lona_machine::node::Vm::new(env);
//! ```
//!
//! ...which `forbid(unsafe_code)` refuses:
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! let env = std::sync::Arc::new(lona_machine::Env::empty(Box::new(std::io::sink())));
//! // SAFETY: none: this is what the lint refuses.
//! let _vm = unsafe { lona_machine::node::Vm::new(env) };
//! ```
//!
//! # Built-ins on raw words
//!
//! A built-in's context cannot be made outside the crate (it is
//! `#[non_exhaustive]`), so no safe code reads a word as a term of a heap
//! it chose:
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! fn forge<'a>(heap: &'a lona_term::Heap, env: &'a std::sync::Arc<lona_machine::Env>,
//!              reds: &'a mut i32, d: &'a mut dyn lona_machine::node::DictSlot)
//!     -> lona_machine::node::BuiltinCx<'a, 'a> {
//!     lona_machine::node::BuiltinCx {
//!         heap, env, rt: None, request: None, reds, dict_slot: d, user_native: None,
//!     }
//! }
//! ```
//!
//! and a raw built-in (which may return any word it holds) is defined
//! only by an `unsafe` function (E0133):
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! fn bad(_cx: &mut lona_machine::node::BuiltinCx<'_, '_>, _a: &[lona_term::RawTerm])
//!     -> lona_machine::node::NResult {
//!     Ok(lona_term::Term::NIL.raw())
//! }
//! let env = std::sync::Arc::new(lona_machine::Env::empty(Box::new(std::io::sink())));
//! let ns = env.namespaces.get_or_create("x");
//! lona_machine::node::builtins::def(ns, "bad", 0, 0, bad);
//! ```
//!
//! # Prototypes and code words
//!
//! The closure namer, which follows a code word as a pointer, is not
//! public (the node installs it, `node::print::install_closure_namer`):
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! let _ = lona_machine::node::print::fn_name(0xdead_bee8);
//! ```
//!
//! nor are prototypes made from any instructions, or compiled, outside
//! the crate (the white-box tests' feature aside, which only `lona-vm`'s
//! own tests enable):
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! let _p = lona_machine::node::bytecode::bare("f", Vec::new(), None);
//! ```
//!
//! ```compile_fail
//! #![forbid(unsafe_code)]
//! let _ = lona_machine::jit::compile;
//! ```
//!
//! # The compiler's host
//!
//! The host runs the word it is given as a macro: made only by an
//! `unsafe` function (E0133).
//!
//! ```compile_fail,E0133
//! #![forbid(unsafe_code)]
//! let env = lona_machine::Env::new(Box::new(std::io::sink()));
//! let _h = lona_machine::node::host::NodeHost::new(&env);
//! ```
//!
//! # What stays safe
//!
//! A node's data and the typed natives:
//!
//! ```
//! #![forbid(unsafe_code)]
//! let env = lona_machine::Env::new(Box::new(std::io::sink()));
//! env.define_native("x", "five", 0, 0, |cx, _args| Ok(cx.heap().int(5)));
//! assert!(env.namespaces.get("x").unwrap().lookup("five").is_some());
//! ```
