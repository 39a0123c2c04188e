//! The node-wide atom table: keywords and symbols are interned here and a
//! term holds only the 32-bit index.
//!
//! # The rules
//!
//! * **Atoms are never freed** (as in Erlang), so the table is bounded:
//!   at most [`MAX_ATOMS`] (1,048,576, Erlang's default) atoms, each name
//!   at most [`MAX_ATOM_CHARS`] (255, Erlang's limit) characters when it
//!   is made from data. The table's memory is then bounded too: at most
//!   about 1 GiB of names in the worst case (255 four-byte characters
//!   each), 255 MiB for ASCII.
//! * **The runtime's own names exist before any code runs.** The table is
//!   created with every keyword and symbol the runtime, the VM and the
//!   bridge spell out themselves ([`RUNTIME_ATOMS`]: `:system-limit`,
//!   `:badarg`, `:EXIT`, `:DOWN`, `:normal`, `process-info`'s keys, ...),
//!   so an error path never needs a new atom and works however full the
//!   table is. [`Atom::new`] (and `Term::keyword`/`Term::symbol`) is for
//!   such names the code spells out: it finds them without taking a slot,
//!   and should a name the code spells out be missing from the list, it
//!   may take one of [`RESERVED_ATOMS`] slots above the limit rather than
//!   fail (past those it panics).
//! * **Names from data go through [`Atom::try_new`]**, which fails with an
//!   [`AtomError`] when the table is full or the name too long: `(keyword
//!   s)` and `(symbol s)` raise a catchable `:system-limit`, the compiler
//!   reports an error, the decoder a `DecodeError`, the bridge a
//!   conversion error. Nothing panics.
//! * **Untrusted input does not fill the table.** The decoder
//!   (`codec.rs`) makes no new atoms unless its caller gives it an
//!   [`AtomBudget`](crate::AtomBudget): by default it accepts only atoms
//!   that exist (Erlang's `binary_to_term(B, [safe])`), and a caller that
//!   reads from a peer it partly trusts bounds what that peer may add.
//!
//! Names are leaked into `'static` strings, so looking a name up needs the
//! lock only to index the vector.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// The most atoms a node holds (Erlang's default limit). Names made from
/// data ([`Atom::try_new`]) fail beyond it.
pub const MAX_ATOMS: usize = 1 << 20;

/// Slots above [`MAX_ATOMS`] that [`Atom::new`] (names the code spells
/// out) may still take when the table is full, so that a runtime name
/// missing from [`RUNTIME_ATOMS`] degrades instead of panicking.
pub const RESERVED_ATOMS: usize = 4096;

/// The longest name, in characters, of a keyword or symbol made from data
/// (Erlang's limit for atoms).
pub const MAX_ATOM_CHARS: usize = 255;

/// The names interned when the table is created, before any code runs:
/// every keyword and symbol the runtime, the VM and the bridge make
/// themselves (error reasons, message tags, the keys of `process-info`
/// and `runtime-info`, statuses, priorities). Their indices are their
/// positions here. `lona-vm`'s tests check that every keyword its source
/// spells out is in this list.
pub const RUNTIME_ATOMS: &[&str] = &[
    // exit reasons and signals
    "normal",
    "kill",
    "killed",
    "shutdown",
    "noproc",
    "EXIT",
    "DOWN",
    "panic",
    "rust",
    "foreign",
    // exception classes
    "error",
    "throw",
    "exit",
    "nocatch",
    // error reasons
    "system-limit",
    "out-of-memory",
    "already-registered",
    "bad-format",
    "bad-regex",
    "badarg",
    "badarith",
    "badarity",
    "badfun",
    "badmatch",
    "case-clause",
    "function-clause",
    "undef",
    "no-process",
    "receive-in-guard",
    "timeout-value",
    "shutting-down",
    "badkey",
    "not-found",
    "timeout",
    "ok",
    // replies the runtime delivers
    "alive-reply",
    "info-reply",
    "snapshot-reply",
    // process-info
    "status",
    // tcp/http-response
    "bad-response",
    "header",
    "running",
    "waiting",
    "message-queue-len",
    "reductions",
    "links",
    "monitors",
    "monitored-by",
    "registered-name",
    "trap-exit",
    "priority",
    "low",
    "high",
    "max",
    "heap-size",
    "current-function",
    "memory",
    "parent",
    // runtime-info
    "busy-ms",
    "idle-ms",
    "utilisation",
    "run-queue",
    "uptime-ms",
    "workers",
    "injector-queue",
    "process-count",
    "process-limit",
    "registered",
    "timers",
    "total",
    "binary",
    "code",
    "process-table",
    // other values the built-ins return
    "infinity",
    // an atom's metadata, in its second slot (`lona-machine`'s `meta.rs`)
    "meta",
    // where `with-out-str` collects a process's printing (`text.rs`)
    "lona.core/out",
    // Erlang terms with no Lonala kind of their own (`etf.rs`)
    "erlang/fun",
    "erlang/bits",
    "erlang/local-fun",
    // sockets (`tcp`): messages, options, errors
    "tcp",
    "tcp-closed",
    "tcp-error",
    "tcp-passive",
    "lona.io/ready",
    "lona.io/sent",
    "wait",
    "closed",
    "not-owner",
    "active",
    "once",
    "packet",
    "packet-size",
    "raw",
    "line",
    "ip",
    "emsgsize",
    "eaddrinuse",
    "eaddrnotavail",
    "econnrefused",
    "econnreset",
    "econnaborted",
    "epipe",
    "emfile",
    "enfile",
    "eacces",
    "etimedout",
    "enetunreach",
    "ehostunreach",
    "enotconn",
    "einval",
    "replace",
    // files
    "lona.io/done",
    "enoent",
    "eisdir",
    "enotdir",
    "eexist",
    "enospc",
    "eagain",
    "ebadf",
    // file handles: results, modes, positions
    "eof",
    "line-too-long",
    "read",
    "write",
    "append",
    "exclusive",
    "bof",
    "cur",
    // udp active mode
    "udp",
    "udp-passive",
    // :packet :http
    "http",
    "bad-request",
    "too-many-headers",
    "method",
    "uri",
    "query-string",
    "protocol",
    "headers",
    "get",
    "head",
    "post",
    "put",
    "delete",
    "patch",
    "options",
    "trace",
    "connect",
    "nonode@nohost",
    // distribution
    "up",
    "pending",
    "noconnection",
    "nodedown",
    "spawn-reply",
    "not-distributed",
    "lona.dist/ready",
    // lona_vm::otp: calls and casts to a Lonala server from Rust.
    "$gen_call",
    "$gen_cast",
];

/// An interned name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atom(u32);

/// Why a name could not become an atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomError {
    /// The table holds [`MAX_ATOMS`] atoms.
    TableFull,
    /// The name has more than [`MAX_ATOM_CHARS`] characters.
    TooLong,
}

impl std::fmt::Display for AtomError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AtomError::TableFull => write!(f, "atom table full ({MAX_ATOMS} atoms)"),
            AtomError::TooLong => write!(f, "name longer than {MAX_ATOM_CHARS} characters"),
        }
    }
}

impl std::error::Error for AtomError {}

/// The index from names to atoms: written under its lock by interning,
/// read under it by lookups by name.
struct Table {
    /// foldhash: fast, and seeded per process (names come from data).
    index: HashMap<&'static str, u32, foldhash::fast::RandomState>,
}

/// The names by index, append-only: written only under [`Table`]'s write
/// lock (so an atom's index is its position), read without any lock by
/// [`Atom::name`], which compares, hashes and prints keywords. A
/// `boxcar::Vec` never moves an element, so a name read once stays valid.
static NAMES: boxcar::Vec<&'static str> = boxcar::Vec::new();

impl Table {
    fn push(&mut self, name: &'static str) -> u32 {
        let i = NAMES.push(name) as u32;
        self.index.insert(name, i);
        i
    }
}

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Table {
            index: HashMap::with_capacity_and_hasher(RUNTIME_ATOMS.len(), Default::default()),
        };
        for name in RUNTIME_ATOMS {
            t.push(name);
        }
        RwLock::new(t)
    })
}

/// The index of `name` in [`RUNTIME_ATOMS`], found at compile time by
/// [`kw!`](crate::kw); a name not there is a compile error.
#[doc(hidden)]
pub const fn runtime_index(name: &str) -> u32 {
    let mut i = 0;
    while i < RUNTIME_ATOMS.len() {
        let (a, b) = (RUNTIME_ATOMS[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i as u32;
            }
        }
        i += 1;
    }
    panic!("kw!: the name is not in RUNTIME_ATOMS")
}

/// The keyword `:name` for a name in [`RUNTIME_ATOMS`], its index found
/// at compile time: no lookup at run time, and a name missing from the
/// list does not compile. `Term::keyword` finds any other name by a
/// hash lookup.
///
/// ```
/// assert_eq!(lona_term::kw!("normal"), lona_term::Term::keyword("normal"));
/// ```
#[macro_export]
macro_rules! kw {
    ($name:literal) => {{
        const INDEX: u32 = $crate::atom_runtime_index($name);
        $crate::Term::keyword_atom($crate::Atom::runtime(INDEX))
    }};
}

/// Whether `name` may become an atom made from data.
pub(crate) fn check_len(name: &str) -> Result<(), AtomError> {
    // Bytes bound characters from above: most names skip the count.
    if name.len() > MAX_ATOM_CHARS && name.chars().count() > MAX_ATOM_CHARS {
        return Err(AtomError::TooLong);
    }
    Ok(())
}

impl Atom {
    /// Interns `name`, a name the code spells out (an error reason, a
    /// message tag, a map key of a reply).
    ///
    /// Such names should be in [`RUNTIME_ATOMS`], where they exist from
    /// the start; any other still gets one of [`RESERVED_ATOMS`] slots
    /// when the table is full.
    ///
    /// # Panics
    /// If the table and its reserve are full; use [`Atom::try_new`] for
    /// names from data.
    pub fn new(name: &str) -> Atom {
        if let Some(a) = Atom::existing(name) {
            return a;
        }
        Atom::intern(name, MAX_ATOMS + RESERVED_ATOMS)
            .expect("atom table and its reserve full")
            .0
    }

    /// Interns `name` (from data), failing when the table is full or the
    /// name has more than [`MAX_ATOM_CHARS`] characters.
    pub fn try_new(name: &str) -> Result<Atom, AtomError> {
        Atom::try_new_counted(name).map(|(a, _)| a)
    }

    /// [`Atom::try_new`], also telling whether the atom is new.
    pub(crate) fn try_new_counted(name: &str) -> Result<(Atom, bool), AtomError> {
        check_len(name)?;
        if let Some(a) = Atom::existing(name) {
            return Ok((a, false));
        }
        Atom::intern(name, MAX_ATOMS)
    }

    /// The atom named `name` if it exists; never creates one.
    pub fn existing(name: &str) -> Option<Atom> {
        let t = table().read().unwrap_or_else(|e| e.into_inner());
        t.index.get(name).map(|&i| Atom(i))
    }

    /// Interns `name` if the table holds fewer than `limit` atoms.
    fn intern(name: &str, limit: usize) -> Result<(Atom, bool), AtomError> {
        let mut w = table().write().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = w.index.get(name) {
            return Ok((Atom(i), false));
        }
        if NAMES.count() >= limit {
            return Err(AtomError::TableFull);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        Ok((Atom(w.push(leaked)), true))
    }

    /// Whether this atom is one of [`RUNTIME_ATOMS`], interned before any
    /// code ran.
    pub fn is_runtime(self) -> bool {
        (self.0 as usize) < RUNTIME_ATOMS.len()
    }

    /// The atom's index in the table.
    pub fn index(self) -> u32 {
        self.0
    }

    pub(crate) fn from_index(i: u32) -> Atom {
        Atom(i)
    }

    /// The atom of [`RUNTIME_ATOMS`] at `index` (for [`kw!`](crate::kw)).
    ///
    /// # Panics
    /// If `index` is not one of theirs.
    #[doc(hidden)]
    pub const fn runtime(index: u32) -> Atom {
        assert!((index as usize) < RUNTIME_ATOMS.len());
        Atom(index)
    }

    /// The atom's name (no lock: see `NAMES`).
    pub fn name(self) -> &'static str {
        match NAMES.get(self.0 as usize) {
            Some(n) => n,
            None => {
                // The runtime's names are pushed when the table is made.
                table();
                NAMES.get(self.0 as usize).expect("an atom's name")
            }
        }
    }

    /// How many atoms exist.
    pub fn count() -> usize {
        let _t = table().read().unwrap_or_else(|e| e.into_inner());
        NAMES.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_threadsafe() {
        let a = Atom::new("hello");
        assert_eq!(a, Atom::new("hello"));
        assert_eq!(a.name(), "hello");
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..50)
                        .map(|i| Atom::new(&format!("t{i}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for r in &results[1..] {
            assert_eq!(r, &results[0]);
        }
        assert_eq!(results[0][7].name(), "t7");
    }

    #[test]
    fn runtime_atoms_exist_from_the_start_in_order() {
        let mut seen = std::collections::HashSet::new();
        for (i, name) in RUNTIME_ATOMS.iter().enumerate() {
            assert!(seen.insert(*name), "{name} listed twice");
            let a = Atom::existing(name).expect("pre-interned");
            assert_eq!(a.index() as usize, i);
            assert!(a.is_runtime());
        }
        assert!(!Atom::new("not-a-runtime-name").is_runtime());
    }

    #[test]
    fn names_from_data_are_at_most_255_characters() {
        let ok = "é".repeat(MAX_ATOM_CHARS); // 510 bytes, 255 characters
        assert_eq!(Atom::try_new(&ok).unwrap().name(), ok);
        let long = "x".repeat(MAX_ATOM_CHARS + 1);
        assert_eq!(Atom::try_new(&long), Err(AtomError::TooLong));
        assert_eq!(Atom::existing(&long), None);
        assert_eq!(Atom::existing("never-interned-name"), None);
    }
}
