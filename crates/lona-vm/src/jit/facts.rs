//! What the translator knows of a value's tag, so that a check already
//! made is not made again (`translate.rs`).
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

use cranelift_codegen::ir::Value;

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
