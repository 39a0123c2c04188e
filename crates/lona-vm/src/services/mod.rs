//! The built-ins that are the node's services, not the machine's:
//! processes (spawning, links, monitors, names, other nodes: `process.rs`),
//! code loading at run time (`eval`, `load`, `require`: `code.rs`),
//! files (`file.rs`) and sockets (`tcp.rs`, `udp.rs`). Installed by the
//! node (`boot.rs`) after the machine's own (`builtins`), in the same
//! namespaces, through the same `builtins::def`.

mod file;
mod load;
mod process;
mod tcp;
mod udp;

use crate::env::Env;

/// Installs the node's built-ins in `env`.
pub(crate) fn install(env: &Env) {
    process::install(env.core);
    load::install(env);
    tcp::install(env.namespaces.get_or_create("tcp"));
    file::install(env.namespaces.get_or_create("file"));
    udp::install(env.namespaces.get_or_create("udp"));
}

/// Defines `ns/name` as the built-in `f` (the machine's `builtins::def`)
/// for this module tree only.
fn def(
    ns: &'static lona_compiler::Namespace,
    name: &str,
    lo: u16,
    hi: u16,
    f: crate::builtins::NativeFn,
) {
    // SAFETY: every `f` given here is a built-in of `services/`, which
    // keeps the calling convention: it reads its arguments as terms of
    // `cx.heap` (`cx.term`), returns or raises words of that heap or
    // immediates, and keeps no word past its return.
    unsafe { crate::builtins::def(ns, name, lo, hi, f) }
}
