//! Metadata (Clojure's `with-meta` and `meta`): a map attached to a
//! value without changing what the value is.
//!
//! A value with metadata is a two-word object (`Meta` header, the value,
//! the map) around a vector, list, map or set. The rules:
//!
//! 1. **Equality, order and hashing look through it**
//!    (`cmp.rs`): `(= (with-meta [1] {:a 1}) [1])`, and both are the same
//!    map key. So do printing and the encoders: metadata never crosses to
//!    another node.
//! 2. **Nothing else does by itself.** [`View::Meta`](crate::View::Meta) is
//!    a variant of its own, so code that reads a term's contents sees a
//!    wrapper, not a vector, unless it takes [`Term::unmeta`] first: a
//!    reader that forgot is refused, never misled. Lists are the one
//!    exception: walking a list looks through a wrapper in its tail.
//! 3. **One wrapper at most:** [`Heap::with_meta`] of a value that has
//!    metadata replaces it; `nil` metadata gives the bare value.
//! 4. **Copies keep it:** a message or a var's value holding a wrapped
//!    value holds the wrapper (its two words are terms like a vector's).

use crate::heap::Heap;
use crate::term::{header, Kind, Term, TAG_CONS};

impl<'h> Term<'h> {
    /// Whether the term is of a kind that can carry metadata: a vector, a
    /// non-empty list, a map or a set (with or without metadata now).
    pub fn takes_meta(self) -> bool {
        let t = self.unmeta();
        if t.tag() == TAG_CONS {
            return true;
        }
        t.boxed_header().is_some_and(|h| {
            matches!(
                Kind::from_header(h),
                Kind::Vector
                    | Kind::Map
                    | Kind::HamtMap
                    | Kind::Set
                    | Kind::SortedMap
                    | Kind::SortedSet
            )
        })
    }
}

impl Heap {
    /// `value` with metadata `meta` (rule 3: replacing any it had; the
    /// bare value when `meta` is nil), or `None` if `value` cannot carry
    /// metadata ([`Term::takes_meta`]) or `meta` is not a map or nil.
    /// Both must be of this heap or permanent, as for [`Heap::vector`]
    /// (panics otherwise).
    pub fn with_meta(&self, value: Term<'_>, meta: Term<'_>) -> Option<Term<'_>> {
        if !value.takes_meta() {
            return None;
        }
        let value = value.unmeta();
        match meta.view() {
            crate::View::Nil => {
                // SAFETY: checked to be ours (or permanent).
                return Some(unsafe { self.wrap(self.own(value)) });
            }
            crate::View::Map(_) => {}
            _ => return None,
        }
        Some(self.with_terms(header(Kind::Meta, 2), &[], &[value, meta]))
    }
}
