//! What the translator knows of a value's tag, so that a check already
//! made is not made again (`translate/mod.rs` emits the checks; the
//! methods here keep the facts).
//!
//! A *fact* says of a Cranelift SSA value that it is a small integer
//! ([`SMALL`]) or an immediate ([`IMM`], which `=` needs to call two
//! different words unequal). A value never changes, so a fact holds
//! wherever the check that taught it has run. The translator keeps facts
//! for one block at a time and carries them only where that is sound:
//!
//! 1. A passed check continues in a block whose one predecessor is the
//!    checking block (`Translator::guard`): the facts go along.
//! 2. At the end of each instruction, every edge into another
//!    instruction's block is recorded with the facts of the block it
//!    leaves (none, if that is not the block the facts are kept for).
//! 3. An instruction's block starts with the facts common to all its
//!    recorded edges, if every instruction that can jump there comes
//!    before it (so all edges are recorded); a loop header starts with
//!    none.
//!
//! # The typed loop
//!
//! A function that calls itself in tail position loops back to its entry,
//! which knows nothing. Where every such call passes arguments of which
//! something is known (a counter that `inc` made a small integer), the
//! function is translated a second time from its entry, starting from
//! those facts, and the tail calls jump to that copy: its loop body runs
//! without the checks its arguments have already passed. A tail call in
//! the copy whose arguments are not known as well goes back to the first
//! translation (loop versioning, as `LuaJIT`'s and `V8`'s loop peeling
//! specialise a loop body to the types seen on its back edge).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, Value};

use super::Translator;

/// The value is a small integer (tag `011`).
pub(super) const SMALL: u8 = 1;
/// The value is an immediate: no pointer, so two different ones are
/// never equal (`tag & 0b110 != 0`); every small integer is one.
pub(super) const IMM: u8 = 2;

/// Facts of some values (a handful: a linear search is the fastest), and,
/// for the function's calls of itself (`Translator::self_call`), whether
/// the stacks were found to have room for them and the var to hold the
/// function.
#[derive(Clone, Default, Debug)]
pub(super) struct Facts {
    vals: Vec<(Value, u8)>,
    pub(super) room: bool,
    pub(super) var_ok: bool,
}

impl Facts {
    /// What is known of `v` (a union of the kinds; 0: nothing).
    pub(super) fn kind(&self, v: Value) -> u8 {
        self.vals
            .iter()
            .find(|(w, _)| *w == v)
            .map_or(0, |&(_, k)| k)
    }

    /// Learns `k` of `v`.
    pub(super) fn add(&mut self, v: Value, k: u8) {
        let k = if k & SMALL != 0 { k | IMM } else { k };
        match self.vals.iter_mut().find(|(w, _)| *w == v) {
            Some((_, old)) => *old |= k,
            None => self.vals.push((v, k)),
        }
    }

    /// What both know.
    pub(super) fn meet(&self, other: &Facts) -> Facts {
        Facts {
            vals: self
                .vals
                .iter()
                .filter_map(|&(v, k)| {
                    let k = k & other.kind(v);
                    (k != 0).then_some((v, k))
                })
                .collect(),
            room: self.room && other.room,
            var_ok: self.var_ok && other.var_ok,
        }
    }
}

/// Per argument register, what every tail call of a function to itself
/// passes: the facts its typed loop starts from (`meet` of each call's).
pub(super) fn meet_args(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x & y).collect()
}

/// Whether arguments known as `have` may enter a loop that assumes `need`.
pub(super) fn covers(have: &[u8], need: &[u8]) -> bool {
    have.iter().zip(need).all(|(h, n)| h & n == *n)
}

/// How often the typed loop of a function that calls nothing else checks
/// its var (`Translator::var_now_and_then`): every this many iterations
/// (a power of two).
const VAR_EVERY: i64 = 64;

impl Translator<'_, '_> {
    /// Translates each instruction of `only` into its block of `blocks`,
    /// each starting with the facts its edges bring (`facts.rs`).
    pub(super) fn translate_all(&mut self, only: &[bool], entry_pc: u32) {
        for (pc, _) in only.iter().enumerate().filter(|(_, &on)| on) {
            let blk = self.blocks[pc];
            let mark = self.b.func.layout.last_block();
            self.b.switch_to_block(blk);
            let first = pc as u32 == entry_pc && self.loop_need.is_none();
            let incoming = self.incoming[pc].take();
            self.facts_at = None;
            if !self.back_pred[pc] && !first {
                // Every edge into it is made (all come from instructions
                // before it): sealed, a register read here is the value
                // its predecessors hold, not a new block parameter, so
                // the facts about those values apply.
                self.b.seal_block(blk);
                if let Some(f) = incoming {
                    self.facts = f;
                    self.facts_at = Some(blk);
                }
            }
            self.instr(pc as u32);
            self.record_edges(mark);
        }
    }

    /// The instructions reachable from `entry_pc`.
    pub(super) fn reachable(&self, entry_pc: u32) -> Vec<bool> {
        super::reachable(self.p, entry_pc as usize)
    }

    /// Records the edges into instruction blocks from the blocks laid out
    /// after `mark` (`facts.rs`, step 2).
    pub(super) fn record_edges(&mut self, mark: Option<Block>) {
        let layout = &self.b.func.layout;
        let mut at = match mark {
            Some(m) => layout.next_block(m),
            None => layout.entry_block(),
        };
        while let Some(blk) = at {
            at = layout.next_block(blk);
            let Some(last) = layout.last_inst(blk) else {
                continue;
            };
            let dfg = &self.b.func.dfg;
            for call in dfg.insts[last].branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            {
                let to = call.block(&dfg.value_lists);
                let Some(&pc) = self.block_pc.get(&to) else {
                    continue;
                };
                let f = if self.facts_at == Some(blk) {
                    self.facts.clone()
                } else {
                    Facts::default()
                };
                let slot = &mut self.incoming[pc as usize];
                *slot = Some(match slot.take() {
                    None => f,
                    Some(g) => g.meet(&f),
                });
            }
        }
    }

    /// The facts of the current block, if they are kept for it.
    pub(super) fn here(&self) -> Option<&Facts> {
        (self.facts_at.is_some() && self.facts_at == self.b.current_block()).then_some(&self.facts)
    }

    /// The facts of the current block, to add to (those of another block
    /// are dropped).
    pub(super) fn here_mut(&mut self) -> &mut Facts {
        let here = self.b.current_block();
        if self.facts_at != here {
            self.facts = Facts::default();
            self.facts_at = here;
        }
        &mut self.facts
    }

    /// What is known of `v` here.
    pub(super) fn kind(&self, v: Value) -> u8 {
        self.here().map_or(0, |f| f.kind(v))
    }

    /// Learns `k` of `v` here.
    pub(super) fn learn(&mut self, v: Value, k: u8) {
        self.here_mut().add(v, k);
    }

    /// Learns what the constant word `w` in `v` is.
    pub(super) fn learn_word(&mut self, v: Value, w: u64) {
        if w & 0b111 == 0b011 {
            self.learn(v, SMALL);
        } else if w & 0b110 != 0 {
            self.learn(v, IMM);
        }
    }

    /// Switches to `blk`, whose one predecessor is the current block:
    /// the facts go along.
    pub(super) fn follow(&mut self, blk: Block) {
        let from = self.b.current_block();
        self.follow_from(from, blk);
    }

    /// Switches to `blk`, whose one predecessor is block `from`: the facts
    /// of `from` go along.
    pub(super) fn follow_from(&mut self, from: Option<Block>, blk: Block) {
        self.b.switch_to_block(blk);
        self.b.seal_block(blk);
        if self.facts_at.is_some() && self.facts_at == from {
            self.facts_at = Some(blk);
        }
    }

    /// The typed loop's tail call in a function that calls nothing else:
    /// the var is checked to still hold the running closure only when the
    /// reductions left (`reds`, one fewer an iteration) are a multiple of
    /// [`VAR_EVERY`]. This process cannot have changed it since the tail
    /// call that entered the loop checked it; another process's
    /// redefinition is seen within `VAR_EVERY` iterations, as if it had
    /// come that much later (nothing orders it with this loop). The check
    /// is a cold block with its own way back, so that the hot path is a
    /// branch not taken and a jump.
    pub(super) fn var_now_and_then(
        &mut self,
        var: u32,
        reds: Value,
        pc: u32,
        args: &[Value],
        to: Block,
    ) {
        let (check, on, go) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.set_cold_block(check);
        self.b.set_cold_block(go);
        let m = self.b.ins().band_imm(reds, VAR_EVERY - 1);
        let due = self.b.ins().icmp_imm(IntCC::Equal, m, 0);
        self.b.ins().brif(due, check, &[], on, &[]);
        self.b.switch_to_block(check);
        self.b.seal_block(check);
        let w = self.var_value(var);
        let same = self.b.ins().icmp(IntCC::Equal, w, self.me_word);
        let out = self.leave(pc);
        self.b.ins().brif(same, go, &[], out, &[]);
        for blk in [go, on] {
            self.b.switch_to_block(blk);
            self.b.seal_block(blk);
            self.loop_back(reds, args, to);
        }
    }

    /// Leaves at `pc` unless `x` is a small integer (unless known).
    pub(super) fn guard_small(&mut self, x: Value, pc: u32) {
        if self.kind(x) & SMALL == 0 {
            let ok = self.is_small(x);
            self.guard(ok, pc);
            self.learn(x, SMALL);
        }
    }

    /// Where a tail call of the function to itself passing `args` goes:
    /// to the typed loop where they are known well enough, else to the
    /// entry (`facts.rs`). Before the typed loop is made, what the call
    /// passes is gathered for it.
    pub(super) fn loop_target(&mut self, args: &[Value]) -> Block {
        let have: Vec<u8> = args.iter().map(|&v| self.kind(v)).collect();
        match &self.loop_need {
            Some(need) if covers(&have, need) => self.loop_head,
            Some(_) => self.entry0,
            None => {
                self.tail_args = Some(match self.tail_args.take() {
                    None => have,
                    Some(old) => meet_args(&old, &have),
                });
                self.loop_head
            }
        }
    }

    /// The tail call itself: the reduction taken, the arguments into
    /// registers `0..argc`, and on to `to` (`loop_target`).
    pub(super) fn loop_back(&mut self, reds: Value, args: &[Value], to: Block) {
        self.b.def_var(self.reds, reds);
        for (i, &v) in args.iter().enumerate() {
            self.set(i as i64, v);
        }
        self.b.ins().jump(to, &[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::entity::EntityRef;

    #[test]
    fn small_implies_immediate_and_meet_keeps_the_common_part() {
        let (a, b, c) = (Value::new(1), Value::new(2), Value::new(3));
        let mut f = Facts::default();
        f.add(a, SMALL);
        f.add(b, IMM);
        assert_eq!(f.kind(a), SMALL | IMM);
        assert_eq!(f.kind(b), IMM);
        assert_eq!(f.kind(c), 0);
        let mut g = Facts::default();
        g.add(a, IMM);
        g.add(c, SMALL);
        let m = f.meet(&g);
        assert_eq!(m.kind(a), IMM);
        assert_eq!(m.kind(b), 0);
        assert_eq!(m.kind(c), 0);
    }

    #[test]
    fn loops_assume_only_what_every_call_passes() {
        let s = meet_args(&[SMALL | IMM, IMM, 0], &[IMM, IMM, SMALL | IMM]);
        assert_eq!(s, vec![IMM, IMM, 0]);
        assert!(covers(&[SMALL | IMM, IMM, 0], &s));
        assert!(!covers(&[0, IMM, 0], &s));
    }
}
