//! Running a frame's machine code (`jit/mod.rs`, the protocol): the
//! context compiled code works on, made from the VM's own fields, and the
//! frame stack and current frame set from what it did.

use lona_runtime::StepCx;

use super::{Frame, Vm};
use crate::jit::callout::Pending;

// Compiled code reads and writes frames at these offsets.
const _: () = {
    use crate::jit::layout::*;
    assert!(std::mem::size_of::<Frame>() == FRAME_SIZE as usize);
    assert!(std::mem::offset_of!(Frame, proto) == F_PROTO as usize);
    assert!(std::mem::offset_of!(Frame, pc) == F_PC as usize);
    assert!(std::mem::offset_of!(Frame, base) == F_BASE as usize);
    assert!(std::mem::offset_of!(Frame, nregs) == F_NREGS as usize);
};

/// A leave within this many reductions of the entry is early
/// (`JitSlot::judge`): the entry and the leave cost more than the code
/// gained. A chain of tail calls that ran until the native stack was
/// deep (thousands of calls, a reduction each) is not early; a function
/// that leaves at a call of one not compiled, after a message or two,
/// is (16 here let `lona.server/continue` stay compiled and leave at
/// every message: `call` 10% slower).
const EARLY_REDS: i64 = 1000;

impl Vm {
    /// Runs `f`, the machine code of the current frame's prototype, from
    /// its entry (the frame was just made current, state synced), or
    /// from the loop head `resume` (`jit::NO_RESUME`: the entry;
    /// `jit/translate/resume.rs`), with `reds` reductions (updated).
    /// Afterwards `cur` is the frame to go on with: the caller the code
    /// returned to, or the frame whose instruction the interpreter is to
    /// run; what a built-in it called left to finish comes back.
    pub(super) fn run_compiled(
        &mut self,
        f: crate::jit::Entry,
        argc: usize,
        resume: u64,
        reds: &mut i32,
        rt: &mut Option<&mut StepCx<'_>>,
    ) -> Pending {
        const FS: usize = std::mem::size_of::<Frame>();
        let frames = self.frames.as_mut_ptr() as *mut u8;
        let len0 = self.frames.len();
        let (htop, stop) = self.heap.bump_cursor();
        let (ovf_top, ovf_end) = self.heap.overflow_cursor();
        let mut jc = crate::jit::CompiledCx {
            sp_limit: 0,
            frames,
            // SAFETY: within (or one past) the vector's buffer.
            frames_top: unsafe { frames.add(len0 * FS) },
            frames_room: (self.frames.capacity() - len0) as u64,
            stack: self.stack.as_mut_ptr(),
            stack_len: self.stack.len() as u64,
            cur: self.cur,
            leave_depth: 0,
            leaver_named: 0,
            htop,
            stop,
            ovf_top,
            ovf_end,
            resume,
            vm: crate::jit::callout::VmParts {
                heap: &self.heap,
                env: &self.env,
                extra: &mut self.extra,
                rt: rt
                    .as_deref_mut()
                    .map(|c| (c as *mut StepCx<'_>).cast::<StepCx<'static>>()),
            },
            pending: Default::default(),
        };
        // Native calls may take the stack below this frame (`jc`
        // lives in it) down by `NATIVE_STACK`.
        jc.sp_limit = (&jc as *const crate::jit::CompiledCx as usize)
            .saturating_sub(crate::jit::NATIVE_STACK) as u64;
        let base = self.cur.base as usize;
        // SAFETY: the code was made for `cur`'s prototype, whose
        // frame is at its entry with its window inside the stack
        // (checked by the caller) and its arguments at its base
        // (`argc` of them: the code is its arity's, `JitSlot::entry`); it
        // reads and writes only the windows from this one up, the
        // frame stack within its capacity and `jc` (`jit/mod.rs`).
        let back = unsafe {
            crate::jit::enter(
                f,
                &mut jc,
                base as u64,
                *reds as i64,
                self.stack[base - 1],
                &self.stack[base..base + argc],
            )
        };
        let v = back.value;
        // Early: within `EARLY_REDS` of the entry, so entering cost more
        // than the code gained (a chain of tail calls that ran until the
        // native stack was deep is not early). It is the leaver's
        // doing: the entered function's if it left itself, else that of
        // the callee that left (named in `cur`), whose code is judged by
        // the entries it wasted so: a function compiled callers call,
        // which leaves at once, made every one of them leave. (Given up,
        // its compiled callers leave before calling it, and are judged
        // in turn: a chain that only wastes entries goes back to the
        // interpreter, for a rest.) A leaf that left (the interpreter
        // never enters one: `lona.server/reply`, finishing its `send`
        // there at every message) is the entered function's doing.
        judge(
            self.cur.proto,
            jc.cur.proto,
            v,
            *reds as i64,
            back.reds,
            jc.cur.pc,
        );
        let len = if v != 0 {
            // Returned to here: the frame it popped is the caller's,
            // current again (its bytes are still in the buffer).
            // SAFETY: `frames_top` moved down by whole frames.
            let len = unsafe { jc.frames_top.offset_from(frames) } as usize / FS;
            // SAFETY: index `len` held a live frame until the pop.
            self.cur = unsafe { *(frames as *const Frame).add(len) };
            len
        } else {
            // Left: the compiled callers' frames are written above
            // the entry's callers, the leaver is current.
            self.cur = jc.cur;
            len0 + jc.leave_depth as usize
        };
        // SAFETY: every frame below `len` is initialised (they
        // were, or the code wrote them within the capacity).
        unsafe { self.frames.set_len(len) };
        if crate::jit::counting() {
            // Clamped as `run_in` clamps: a budget overrun is not counted.
            crate::jit::add_compiled(i64::from(*reds).max(0) - back.reds.max(0));
        }
        *reds = back.reds as i32;
        jc.pending
    }
}

/// Judges the code entered (`entered`) or the callee that left
/// (`leaver`) by one entry that ended with value `v` (0: left) and
/// `after` of the `before` reductions left (`JitSlot::judge`), the
/// leaver at `pc` (kept for `LONA_JIT_LOG`). Out of
/// line: the interpreter's call paths inline `run_compiled`.
#[inline(never)]
fn judge(
    entered: &'static crate::bytecode::Proto,
    leaver: &'static crate::bytecode::Proto,
    v: u64,
    before: i64,
    after: i64,
    pc: u32,
) {
    use std::sync::atomic::Ordering::Relaxed;
    let early = v == 0 && after > 1 && before.saturating_sub(after) < EARLY_REDS;
    if v == 0 && !std::ptr::eq(leaver, entered) && leaver.ext.jit.entered_by_interpreter() {
        entered.ext.jit.judge(entered, false);
        if early {
            leaver.ext.jit.left_at.store(pc, Relaxed);
            leaver.ext.jit.judge(leaver, true);
        }
    } else {
        if early {
            entered.ext.jit.left_at.store(pc, Relaxed);
        }
        entered.ext.jit.judge(entered, early);
    }
}
