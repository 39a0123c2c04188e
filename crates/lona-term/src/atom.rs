//! The node-wide atom table: keywords and symbols are interned here and a
//! term holds only the 32-bit index.
//!
//! Atoms are never freed (as in Erlang); the table is bounded by
//! [`MAX_ATOMS`] so that decoding untrusted input cannot exhaust memory.
//! Names are leaked into `'static` strings, so looking a name up needs the
//! lock only to index the vector.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// The most atoms a node holds (Erlang's default limit).
pub const MAX_ATOMS: usize = 1 << 20;

/// An interned name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Atom(u32);

/// The atom table is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomTableFull;

impl std::fmt::Display for AtomTableFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "atom table full ({MAX_ATOMS} atoms)")
    }
}

impl std::error::Error for AtomTableFull {}

#[derive(Default)]
struct Table {
    names: Vec<&'static str>,
    index: HashMap<&'static str, u32>,
}

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

impl Atom {
    /// Interns `name`.
    ///
    /// # Panics
    /// If the table is full; use [`Atom::try_new`] on untrusted input.
    pub fn new(name: &str) -> Atom {
        Atom::try_new(name).expect("atom table full")
    }

    /// Interns `name`, failing when the table is full.
    pub fn try_new(name: &str) -> Result<Atom, AtomTableFull> {
        let t = table();
        if let Some(&i) = t.read().unwrap_or_else(|e| e.into_inner()).index.get(name) {
            return Ok(Atom(i));
        }
        let mut w = t.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = w.index.get(name) {
            return Ok(Atom(i));
        }
        if w.names.len() >= MAX_ATOMS {
            return Err(AtomTableFull);
        }
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let i = w.names.len() as u32;
        w.names.push(leaked);
        w.index.insert(leaked, i);
        Ok(Atom(i))
    }

    /// The atom's index in the table.
    pub fn index(self) -> u32 {
        self.0
    }

    pub(crate) fn from_index(i: u32) -> Atom {
        Atom(i)
    }

    /// The atom's name.
    pub fn name(self) -> &'static str {
        table().read().unwrap_or_else(|e| e.into_inner()).names[self.0 as usize]
    }

    /// How many atoms exist.
    pub fn count() -> usize {
        table()
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .names
            .len()
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
}
