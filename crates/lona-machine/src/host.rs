//! The compiler's host (`lona_compiler::Host`): a node's namespaces, and
//! macros run on a scratch interpreter of their own.

use std::sync::Arc;

use lona_compiler::{ExpandError, Host, Namespace, Namespaces};
use lona_reader::{Form, Pos};
use lona_term::RawTerm;

use crate::env::Env;
use crate::vm::{Outcome, Vm};

/// Reductions a macro may take before its expansion is abandoned.
const MACRO_BUDGET: u64 = 50_000_000;

/// A node as the compiler's host.
pub struct NodeHost<'a>(pub(crate) &'a Arc<Env>);

impl<'a> NodeHost<'a> {
    /// The host of `env`'s namespaces.
    ///
    /// # Safety
    ///
    /// The host runs the word `expand` is given as a macro: it is given
    /// only to a [`lona_compiler::Compiler`], which passes it macros'
    /// values (words of permanent memory the machine made).
    pub unsafe fn new(env: &'a Arc<Env>) -> NodeHost<'a> {
        NodeHost(env)
    }
}

impl Host for NodeHost<'_> {
    fn namespaces(&self) -> &Namespaces {
        &self.0.namespaces
    }

    fn core(&self) -> &'static Namespace {
        self.0.core
    }

    fn expand(&self, f: RawTerm, args: &[Form], pos: Pos) -> Result<Form, ExpandError> {
        // SAFETY: the words started are `f`, a macro's value the compiler
        // read from its var (permanent memory), and terms made on this
        // VM's heap just above.
        let mut vm = unsafe { Vm::new(self.0.clone()) };
        let mut words = Vec::with_capacity(args.len());
        for a in args {
            let t = lona_compiler::form_to_term(&vm.heap, a)
                .map_err(|m| ExpandError::Quote(a.pos, m))?;
            words.push(t.raw());
        }
        vm.start(f, &words);
        loop {
            match vm.run(1_000_000) {
                Outcome::Yield => {
                    if vm.reductions > MACRO_BUDGET {
                        return Err(ExpandError::Unfinished);
                    }
                }
                Outcome::Done(r) => {
                    // SAFETY: the VM just returned this word of its heap.
                    let t = unsafe { vm.heap.term(r) };
                    return lona_compiler::term_to_form(t, pos).map_err(ExpandError::NotForm);
                }
                Outcome::Raised(e) => {
                    // SAFETY: the reason is a word of the VM's heap.
                    let reason = unsafe { vm.heap.term(e.reason) };
                    return Err(ExpandError::Raised(reason.to_string()));
                }
                Outcome::Halt(_) => return Err(ExpandError::Halt),
                // A scratch VM has no process: receive raises before it
                // could wait, and its heap has no limit.
                Outcome::Wait | Outcome::HeapLimit(_) => return Err(ExpandError::Wait),
            }
        }
    }
}
