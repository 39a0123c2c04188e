//! A call's frame: the interpreter's unit of its frame stack, and what
//! compiled code reads and writes in the same places (`jit::layout`), so
//! it sits below both.

use crate::bytecode::Proto;

/// A call's frame. Compiled code reads and writes frames (`jit`), so the
/// layout is fixed: `jit::layout` names the offsets.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Frame {
    pub(crate) proto: &'static Proto,
    /// For a caller: where to continue. For `cur`: only valid when synced.
    pub(crate) pc: u32,
    pub(crate) base: u32,
    pub(crate) nregs: u32,
}
