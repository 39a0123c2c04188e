//! Built-in functions written in Rust: leaf functions of `lona.core` and
//! `string`. Functions that call functions (`map`, `filter`, `reduce`,
//! `sort-by`, `update`...) are written in Lonala (`prelude.lona`), so they
//! stay preemptible.
//!
//! Every built-in checks its arguments and raises `:badarg` (or
//! `:badarith` for arithmetic) on a wrong type; arity is checked before
//! the call (`[:badarity f n]`). Work proportional to an input's size is
//! charged as reductions.

mod bytes;
mod cell;
mod coll;
mod core;
mod dict;
mod format;
mod math;
mod meta;
mod regex;
pub(crate) mod seq;
mod string;
mod testing;
mod text;

use lona_term::{Term, View};

use crate::bytecode::{NativeFn, Proto};
use crate::env::Env;
use crate::var::Namespace;

/// Any number of arguments.
pub const ANY: u16 = u16::MAX;

/// Defines a built-in `name` in `ns`.
pub(crate) fn def(ns: &'static Namespace, name: &str, lo: u16, hi: u16, f: NativeFn) {
    let proto = crate::bytecode::bare(
        &format!("{}/{}", ns.name, name),
        Vec::new(),
        Some((f, lo, hi)),
    );
    proto.ext.jit.set_intrinsic(&proto.name);
    bind(ns, name, proto.leak());
}

/// Defines `name` in `ns` as a native of the embedding program
/// ([`crate::Env::define_native`]), called through
/// `crate::native::call_user_native`.
pub fn def_user(ns: &'static Namespace, name: &str, lo: u16, hi: u16, f: crate::native::Native) {
    let mut proto = crate::bytecode::bare(
        &format!("{}/{}", ns.name, name),
        Vec::new(),
        Some((crate::native::call_user_native, lo, hi)),
    );
    proto.ext.user_native = Some(f);
    bind(ns, name, proto.leak());
}

/// Binds `ns/name` to a closure of the built-in `proto`.
fn bind(ns: &'static Namespace, name: &str, proto: &'static Proto) {
    let h = lona_term::Heap::with_config(lona_term::HeapConfig {
        min_heap_size: 1,
        ..Default::default()
    });
    // SAFETY: the code id of a leaked (never freed) prototype.
    let c = unsafe { h.closure(proto.code_id(), &[]) }.raw();
    lona_term::make_permanent(h);
    // SAFETY: `c` lives in the heap just made permanent.
    unsafe { ns.intern(name).set(c) };
}

/// Installs every built-in of the machine in `env` (the node's own, which
/// need its services, are `services::install`'s).
pub fn install(env: &Env) {
    core::install(env.core);
    cell::install(env.core);
    meta::install(env.core);
    coll::install(env.core);
    seq::install(env.core);
    math::install(env.core);
    dict::install(env.core);
    testing::install(env);
    text::install(env.core, env.namespaces.get_or_create("string"));
    // After `text`: `format` replaces its first version.
    regex::install(env.core);
    string::install(env.namespaces.get_or_create("string"));
    format::install(env.core);
    bytes::install(env.core);
}

/// `(get coll key)`: a map's value, a vector's element, a set's element;
/// `None` if absent.
pub fn get<'h>(coll: Term<'h>, key: Term<'_>) -> Option<Term<'h>> {
    match coll.unmeta().view() {
        // A set's values are its elements: (get #{1} 1) is 1.
        View::Map(m) | View::Set(m) => m.get(key),
        View::Vector(v) => {
            let i = key.as_i64()?;
            (i >= 0).then(|| v.get(i as usize).copied()).flatten()
        }
        _ => None,
    }
}

pub(crate) use coll::cons_any;
