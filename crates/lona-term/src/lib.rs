//! Lona's value model: tagged 64-bit terms, per-process heaps with a
//! generational copying collector, heap fragments for messages, shared
//! large binaries, and the operations every layer needs (deep copy,
//! equality, order, hashing, printing, a serialized form, and Erlang's
//! external term format in [`etf`]).
//!
//! Start with [`Term`] (the bit layout is documented in `term.rs`), then
//! [`Heap`] and [`gc`]. `docs/term-and-gc.md` walks through the design.
//!
//! # Safety contract
//!
//! A [`Term<'h>`] borrows the heap (or fragment) holding its objects, so
//! it cannot outlive it or be used across a collection, which needs
//! `&mut Heap`. Values that must survive a collection go into the heap's
//! stack ([`Heap::push`]), registers ([`Heap::set_reg`]) or roots
//! ([`Heap::add_root`]) and are read back afterwards. Storing a term of
//! one heap into another panics; [`Heap::copy_from`] copies it instead.
//! The only `unsafe` entry points are for an interpreter that keeps raw
//! words itself ([`RawTerm`], [`Heap::term`], [`Heap::collect_with_roots`]),
//! each with a `# Safety` section.

// Every unsafe block of the library says why it is sound (tests may be
// terser).
#![cfg_attr(not(test), deny(clippy::undocumented_unsafe_blocks))]

mod atom;
mod binary;
mod block;
mod cell;
mod cmp;
mod codec;
mod copy;
mod error;
pub mod etf;
mod fragment;
pub mod gc;
mod hamt;
mod heap;
mod int;
pub use int::IntRef;
mod map;
mod meta;
mod pages;
mod permanent;
mod pins;
mod print;
pub use print::Plain;
mod ranges;
mod scan;
mod serial;
mod sizes;
mod term;
mod tree;
mod trie;
mod view;

#[doc(hidden)]
pub use atom::runtime_index as atom_runtime_index;
pub use atom::{Atom, AtomError, MAX_ATOMS, MAX_ATOM_CHARS, RESERVED_ATOMS, RUNTIME_ATOMS};
pub use binary::{
    live_shared_binaries, shared_binary_bytes, CellRef, SharedBinary, SHARED_THRESHOLD,
};
pub use block::{
    block_cache_bytes, block_cache_grown, trim_block_cache, CACHE_MAX_BLOCKS, CACHE_MAX_BYTES,
    CACHE_MIN_WORDS,
};
pub use cell::CELL_SLOTS;
pub use cmp::{compare, equal, equal_exact, term_hash};
pub use codec::{decode, decode_with, encode, EncodeError};
pub use error::HeapError;
pub use fragment::Fragment;
pub use gc::{GcKind, GcStats};
pub use hamt::MAP_SMALL_MAX;
pub use heap::{
    GcCounts, Heap, HeapConfig, LimbWriter, Root, StackFull, OVERFLOW_FIRST_MAX,
    OVERFLOW_LIMIT_FACTOR, VHEAP_MIN_BYTES,
};
pub use permanent::{free_permanent, make_freeable, make_permanent, permanent_term};
pub use pins::{set_code_pins, CodePins};
pub use print::set_closure_namer;
pub use ranges::{is_permanent, permanent_bytes, permanent_owner, permanent_owner_of};
pub use scan::Foreign;
pub use serial::{AtomBudget, DecodeError};
pub use sizes::{heap_sizes, next_heap_size, FIB_LIMIT, MIN_HEAP_WORDS, SMALLEST_HEAP_WORDS};
pub use term::{Pid, RawTerm, Term, IMMEDIATE_PID_MAX, MAX_REF_IDS, SMALL_INT_MAX, SMALL_INT_MIN};
pub use view::{ListIter, MapView, RefIds, View};
