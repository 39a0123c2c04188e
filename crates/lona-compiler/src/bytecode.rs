//! The bytecode: instructions, function prototypes and their entries.
//!
//! # Machine model
//!
//! A Lonala process runs on a **register stack** (one `Vec` of term words
//! per process) and a **frame stack** (one frame of the machine, `lona-vm`'s `vm`, per active
//! call). A function sees a window of the register stack starting at its
//! *base*: registers `r0, r1, ...` are `stack[base + i]`. The word just
//! below the window, `stack[base - 1]`, is the *callee slot*: it holds the
//! closure being run (read by [`Instr::LoadCapture`] and [`Instr::LoadSelf`])
//! and receives the function's result on return.
//!
//! **Calling convention.** To call, a function puts the callee in some
//! register `a` and the arguments in `a+1 .. a+1+argc`; the callee's window
//! starts at `a+1`, so the arguments are its `r0..`, with no copying. The
//! result comes back in `a`. A tail call moves callee and arguments down to
//! the current callee slot and window and reuses the frame, so tail calls
//! of any kind (self, mutual, through a closure) run in constant space.
//!
//! **Reductions and safepoints.** Every call, tail call and loop back-edge
//! ([`Instr::Loop`]) costs one reduction. When the budget is spent, or the
//! heap asked for a collection, the interpreter stops *before* executing the
//! instruction, saving its state; a collection happens there, with the
//! register stack as its roots, and a yield returns to the scheduler. No
//! other instruction can move the heap, so only these points need the
//! registers to be exact roots.
//!
//! Instructions are a Rust enum of at most 8 bytes, so the interpreter's
//! `match` becomes one jump table; operands are register numbers (`u8`,
//! relative to the base), constant indices (`u32` into [`Proto::consts`])
//! and absolute jump targets (`u32`). The enum is defined in `ops.rs`
//! together with the opcode table ([`ops::OPS`]): each instruction's name,
//! operands, effect and properties, which the disassembler and the
//! compiling tier read.

use std::sync::Arc;

use lona_term::RawTerm;

use crate::var::Var;

pub mod ops;

pub use ops::Instr;

/// A register number, relative to the frame's base.
pub type Reg = u8;

/// `RecvWait`'s register operand when the receive has no timeout.
pub const NO_TIMEOUT: Reg = Reg::MAX;

/// Where an arity of a function starts and how many registers it uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// First instruction.
    pub pc: u32,
    /// Registers the frame uses (arguments included).
    pub nregs: u16,
}

impl Entry {
    /// No entry for this arity.
    pub const NONE: Entry = Entry {
        pc: u32::MAX,
        nregs: 0,
    };
}

/// A compiled function: the code of all its arities, its constants, and
/// where its instructions came from. Prototypes are shared by every process
/// and freed only by the code collector (closures refer to them by
/// address; see [`Proto::leak`] and [`crate::area`]).
///
/// `X` is what the machine that runs the code keeps in each prototype
/// (`lona-vm`'s: a built-in's Rust function, the compiling tier's state):
/// the compiler makes it with `X::default()` and never looks inside.
///
/// `repr(C)` with the area first, so that the code collector finds the
/// area of any prototype a closure names without knowing `X`
/// (`area.rs`).
#[repr(C)]
pub struct Proto<X: 'static> {
    /// The area that owns it (`area`); null for code never freed
    /// (built-ins). Set once, before the prototype is published.
    pub area: std::sync::atomic::AtomicPtr<crate::area::Area>,
    /// `ns/name`, or `ns/fn` for an anonymous function, for traces.
    pub name: Arc<str>,
    /// The source file, for traces.
    pub file: Arc<str>,
    /// `entries[argc]`: the entry for exactly `argc` arguments
    /// ([`Entry::NONE`] if that arity does not exist).
    pub entries: Box<[Entry]>,
    /// The variadic entry: `(fixed, entry)`; called with `argc >= fixed`
    /// arguments not covered by `entries`, the arguments from `fixed` on are
    /// packed into a list in `r[fixed]`.
    pub variadic: Option<(u16, Entry)>,
    /// The instructions of every arity.
    pub code: Box<[Instr]>,
    /// Constants: immediates or permanent terms.
    pub consts: Box<[RawTerm]>,
    /// The receive filters of `RecvScan`.
    pub recv_filters: Box<[RecvFilter]>,
    /// Vars this code refers to.
    pub vars: Box<[&'static Var]>,
    /// Prototypes of the functions created inside this one.
    pub protos: Box<[&'static Proto<X>]>,
    /// `(pc, line)`: the source line of the instructions from `pc` on.
    pub lines: Box<[(u32, u32)]>,
    /// A built-in's fewest and most arguments (`u16::MAX`: any number).
    pub native_arity: (u16, u16),
    /// Number of captured values a closure of this prototype carries.
    // Recorded by the compiler for debugging; the VM reads the count from
    // the closure itself.
    pub ncaptures: u8,
    /// The machine's part.
    pub ext: X,
}

/// What one receive clause's pattern needs of a message, checked on the
/// raw word without allocating: a necessary condition, never a
/// sufficient one (the clause's own tests still run on what passes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// The message is this immediate word (or is not an immediate: a boxed
    /// term may still be equal to it).
    Imm(u64),
    /// A vector of `n` elements (`min`: at least `n`), whose element `i`
    /// is the immediate word `k` (or is not an immediate), when `elem` is
    /// `Some((i, k))`.
    Vector {
        n: u16,
        min: bool,
        elem: Option<(u16, u64)>,
    },
}

impl Shape {
    /// Whether the message word `w` may match.
    #[inline(always)]
    pub fn admits(self, w: u64) -> bool {
        use crate::tag;
        match self {
            Shape::Imm(k) => w == k || !tag::both_immediate(w, k),
            Shape::Vector { n, min, elem } => {
                let Some(h) = tag::boxed_header(w) else {
                    return false;
                };
                if h & 0xff == tag::META_HEADER {
                    // What a value with metadata wraps (the clause's own
                    // tests look through it too).
                    return self.admits(tag::unmeta(w));
                }
                let ok = if min {
                    tag::is_vector_header_min(h, n as usize)
                } else {
                    h == tag::vector_header(n as usize)
                };
                ok && match elem {
                    None => true,
                    Some((i, k)) => {
                        // SAFETY: a vector of at least n > i elements.
                        let x = unsafe { tag::vector_elem(w, i as usize) };
                        x == k || !tag::both_immediate(x, k)
                    }
                }
            }
        }
    }
}

/// A receive's cheap test ([`Instr::RecvScan`]): a message passes if any
/// clause's [`Shape`] admits it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecvFilter {
    first: Shape,
    rest: Box<[Shape]>,
}

impl RecvFilter {
    /// The filter of a receive whose clauses have these shapes (at least
    /// one).
    pub fn new(shapes: &[Shape]) -> RecvFilter {
        RecvFilter {
            first: shapes[0],
            rest: shapes[1..].into(),
        }
    }

    /// Whether any clause may match the message word `w`.
    #[inline(always)]
    pub fn admits(&self, w: u64) -> bool {
        self.first.admits(w) || self.rest.iter().any(|s| s.admits(w))
    }
}

/// The peephole pass: turns common instruction pairs into one
/// superinstruction in place of the first. The second instruction stays
/// where it was (the superinstruction skips it), so no jump target moves,
/// and a jump to the second still runs it alone.
pub fn fuse(code: &mut [Instr]) {
    for i in 0..code.len().saturating_sub(1) {
        match (code[i], code[i + 1]) {
            (Instr::AddImm { dst, a: src, imm }, Instr::CallVar { a, argc: 1, var })
                if dst as usize == a as usize + 1 && var <= u16::MAX as u32 =>
            {
                code[i] = Instr::CallVar1Imm {
                    a,
                    src,
                    imm,
                    var: var as u16,
                };
            }
            (Instr::Add { dst, a, b }, Instr::Ret { r }) if r == dst => {
                code[i] = Instr::AddRet { r, a, b };
            }
            _ => {}
        }
    }
}

impl<X: 'static> Proto<X> {
    /// A prototype with the given code and nothing else (no arities: it is
    /// entered only by the machine itself, or it is a built-in taking
    /// `builtin`'s fewest to most arguments).
    pub fn bare(name: &str, code: Vec<Instr>, builtin: Option<(u16, u16)>, ext: X) -> Proto<X> {
        Proto {
            name: name.into(),
            file: if builtin.is_some() {
                "<builtin>".into()
            } else {
                "".into()
            },
            entries: Box::new([]),
            variadic: None,
            code: code.into(),
            consts: Box::new([]),
            recv_filters: Box::new([]),
            vars: Box::new([]),
            protos: Box::new([]),
            lines: Box::new([]),
            native_arity: builtin.unwrap_or((0, 0)),
            ncaptures: 0,
            area: Default::default(),
            ext,
        }
    }

    /// Makes the prototype permanent, returning a reference valid for the
    /// rest of the process: closures store its address as their code id.
    pub fn leak(self) -> &'static Proto<X> {
        Box::leak(Box::new(self))
    }

    /// Makes the prototype a box of its own and gives up the box: the
    /// pointer an owner (a code area, [`crate::collect::make`]) frees it
    /// through, `Box::from_raw` of this very pointer (a pointer made from
    /// a `&'static` one may not free it: it only grants reading).
    pub fn into_raw(self) -> std::ptr::NonNull<Proto<X>> {
        std::ptr::NonNull::from(Box::leak(Box::new(self)))
    }

    /// The prototype a closure's code id names.
    ///
    /// # Safety
    /// `code` must come from a closure made by this VM (the address of a
    /// leaked `Proto`).
    #[inline]
    pub unsafe fn from_code(code: u64) -> &'static Proto<X> {
        // SAFETY: per the caller, a leaked Proto, alive while a closure
        // of it is held.
        unsafe { &*(code as usize as *const Proto<X>) }
    }

    /// The code id closures of this prototype carry.
    #[inline]
    pub fn code_id(&'static self) -> u64 {
        self as *const Proto<X> as usize as u64
    }

    /// The entry for `argc` arguments, if any (fixed arities first).
    #[inline]
    pub fn entry(&self, argc: usize) -> Option<(Entry, bool)> {
        if let Some(e) = self.entries.get(argc) {
            if e.pc != u32::MAX {
                return Some((*e, false));
            }
        }
        match self.variadic {
            Some((fixed, e)) if argc >= fixed as usize => Some((e, true)),
            _ => None,
        }
    }

    /// The source line of the instruction at `pc` (0 if unknown).
    pub fn line_at(&self, pc: u32) -> u32 {
        let i = self.lines.partition_point(|&(p, _)| p <= pc);
        if i == 0 {
            0
        } else {
            self.lines[i - 1].1
        }
    }

    /// A readable listing of the code, for debugging the compiler: each
    /// instruction as [`Instr::write`] prints it from the opcode table,
    /// the instructions a superinstruction stands for marked.
    pub fn disassemble(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "{} ({})", self.name, self.file);
        for (argc, e) in self.entries.iter().enumerate() {
            if e.pc != u32::MAX {
                let _ = writeln!(s, "  arity {argc}: pc {} regs {}", e.pc, e.nregs);
            }
        }
        if let Some((fixed, e)) = self.variadic {
            let _ = writeln!(s, "  arity {fixed}+: pc {} regs {}", e.pc, e.nregs);
        }
        // The pc of the superinstruction covering the next ones, if any.
        let mut fused: Option<(usize, usize)> = None;
        for (pc, &i) in self.code.iter().enumerate() {
            let _ = write!(s, "  {pc:4} ");
            i.write(&mut s, Some(self));
            match fused {
                Some((at, last)) if pc <= last => {
                    let _ = write!(s, "  (fused into {at})");
                }
                _ => fused = None,
            }
            let covers = i.op().covers as usize;
            if covers > 0 && fused.is_none() {
                fused = Some((pc, pc + covers));
            }
            s.push('\n');
        }
        s
    }
}

impl<X: 'static> std::fmt::Debug for Proto<X> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#<proto {}>", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_at_most_eight_bytes() {
        assert!(std::mem::size_of::<Instr>() <= 8);
    }
}
