//! Fast paths on raw term words, by the bit layout of `lona_term::Term`
//! (documented in `lona-term/src/term.rs`).
//!
//! A small integer `v` is the word `v << 3 | 0b011`. For two such words
//! `a` and `b`, `a + (b - 3)` is `(x + y) << 3 | 3`, and it overflows the
//! 64-bit word exactly when `x + y` leaves the small range
//! (`-2^60 .. 2^60`); likewise `a - (b - 3)`. Signed comparison of the
//! words is comparison of the values. So adding, subtracting and
//! comparing small integers never untags them.

use lona_term::{RawTerm, Term};

/// A word of the VM's own as a [`RawTerm`]: zero-cost, for the registers,
/// stack and constants the VM keeps as plain `u64`s.
#[inline(always)]
pub fn raw(w: u64) -> RawTerm {
    // SAFETY: lona-vm only passes words it tagged itself or read from its
    // registers, stack, constants and heaps (all valid term words, kept
    // live by the collector's roots), never bits from outside the crate.
    unsafe { RawTerm::from_raw(w) }
}

/// `nil`
pub const NIL: u64 = 0b000_111;
/// `false`
pub const FALSE: u64 = (1 << 6) | 0b111;
/// `true`
pub const TRUE: u64 = (2 << 6) | 0b111;
/// `()`
pub const EMPTY_LIST: u64 = (3 << 6) | 0b111;

const SMALL_TAG: u64 = 0b011;
const CONS_TAG: u64 = 0b001;
/// Low byte of a closure header (kind 10, header tag 010).
pub const CLOSURE_HEADER: u64 = (10 << 3) | 0b010;
/// Low byte of a vector header (kind 8).
pub const VECTOR_HEADER: u64 = (8 << 3) | 0b010;
/// Low byte of a header of a value with metadata (kind 23: `lona_term`'s
/// `meta.rs`).
pub const META_HEADER: u64 = (23 << 3) | 0b010;
/// Low byte of a string header (kind 4: under 64 bytes, inline).
pub const STR_HEADER: u64 = (4 << 3) | 0b010;
/// The whole header word of a float (kind 1, arity 1: the `f64`'s bits
/// follow).
pub const FLOAT_HEADER: u64 = (1 << 8) | (1 << 3) | 0b010;

/// Whether the word is truthy (neither `nil` nor `false`).
#[inline(always)]
pub fn truthy(w: u64) -> bool {
    w != NIL && w != FALSE
}

/// The boolean word.
#[inline(always)]
pub fn bool(b: bool) -> u64 {
    if b {
        TRUE
    } else {
        FALSE
    }
}

/// Whether the word is a small integer.
#[inline(always)]
pub fn is_small(w: u64) -> bool {
    w & 0b111 == SMALL_TAG
}

/// Whether both words are small integers.
#[inline(always)]
pub fn both_small(a: u64, b: u64) -> bool {
    (a & b & 0b111) == SMALL_TAG && ((a | b) & 0b111) == SMALL_TAG
}

/// Whether neither word points to an object.
#[inline(always)]
pub fn both_immediate(a: u64, b: u64) -> bool {
    a & 0b110 != 0 && b & 0b110 != 0
}

/// The word of a small integer (`v` must be in the small range).
#[inline(always)]
pub fn small(v: i64) -> u64 {
    ((v as u64) << 3) | SMALL_TAG
}

/// The value of a small-integer word.
#[inline(always)]
pub fn small_value(w: u64) -> i64 {
    (w as i64) >> 3
}

/// `a + b` of two small-integer words, if the sum is small.
#[inline(always)]
pub fn add_small(a: u64, b: u64) -> Option<u64> {
    match (a as i64).overflowing_add((b - SMALL_TAG) as i64) {
        (s, false) => Some(s as u64),
        _ => None,
    }
}

/// `a - b` of two small-integer words, if the difference is small.
#[inline(always)]
pub fn sub_small(a: u64, b: u64) -> Option<u64> {
    match (a as i64).overflowing_sub((b - SMALL_TAG) as i64) {
        (s, false) => Some(s as u64),
        _ => None,
    }
}

/// `a * b` of two small-integer words, if the product is small.
#[inline(always)]
pub fn mul_small(a: u64, b: u64) -> Option<u64> {
    let p = small_value(a).checked_mul(small_value(b))?;
    Term::small_int(p).map(|t| t.bits())
}

/// Whether the word is a cons cell.
#[inline(always)]
pub fn is_cons(w: u64) -> bool {
    w & 0b111 == CONS_TAG
}

/// The head of a cons word.
///
/// # Safety
/// `w` must be a cons word of a live heap.
#[inline(always)]
pub unsafe fn head(w: u64) -> u64 {
    // SAFETY: per the caller.
    unsafe { *((w & !0b111) as usize as *const u64) }
}

/// The tail of a cons word.
///
/// # Safety
/// `w` must be a cons word of a live heap.
#[inline(always)]
pub unsafe fn tail(w: u64) -> u64 {
    // SAFETY: per the caller.
    unsafe { *((w & !0b111) as usize as *const u64).add(1) }
}

/// The header of a boxed word, if it is boxed.
#[inline(always)]
pub fn boxed_header(w: u64) -> Option<u64> {
    if w & 0b111 == 0 && w != 0 {
        // SAFETY: a boxed word of a live heap (or a permanent term) points
        // at its header.
        Some(unsafe { *(w as usize as *const u64) })
    } else {
        None
    }
}

/// The value inside a word with metadata; any other word itself. A
/// pattern looks through metadata (`lona_term`'s `meta.rs`): its tests
/// and loads take this first when the fast test fails.
#[inline(always)]
pub fn unmeta(w: u64) -> u64 {
    match boxed_header(w) {
        // SAFETY: a value with metadata holds the value right after its
        // header.
        Some(h) if h & 0xff == META_HEADER => unsafe { *(w as usize as *const u64).add(1) },
        _ => w,
    }
}

/// The code id of a closure word.
#[inline(always)]
pub fn closure_code(w: u64) -> Option<u64> {
    match boxed_header(w) {
        // SAFETY: a closure has its code id right after the header.
        Some(h) if h & 0xff == CLOSURE_HEADER => {
            // SAFETY: a closure has its code id right after the header.
            Some(unsafe { *(w as usize as *const u64).add(1) })
        }
        _ => None,
    }
}

/// Captured value `i` of a closure word.
///
/// # Safety
/// `w` must be a closure with more than `i` captured values.
#[inline(always)]
pub unsafe fn closure_captured(w: u64, i: usize) -> u64 {
    // SAFETY: per the caller; captures follow the code id.
    unsafe { *(w as usize as *const u64).add(2 + i) }
}

/// Whether the word is a float (boxed, a float's header).
#[inline(always)]
pub fn is_float(w: u64) -> bool {
    boxed_header(w) == Some(FLOAT_HEADER)
}

/// The length of a vector word.
#[inline(always)]
pub fn vector_len(w: u64) -> Option<usize> {
    match boxed_header(w) {
        Some(h) if h & 0xff == VECTOR_HEADER => Some((h >> 8) as usize),
        _ => None,
    }
}

/// The header word of a vector of `n` elements.
#[inline(always)]
pub const fn vector_header(n: usize) -> u64 {
    ((n as u64) << 8) | VECTOR_HEADER
}

/// Whether `h` is the header word of a vector of at least `n` elements.
#[inline(always)]
pub fn is_vector_header_min(h: u64, n: usize) -> bool {
    h & 0xff == VECTOR_HEADER && (h >> 8) as usize >= n
}

/// Element `i` of a vector word.
///
/// # Safety
/// `w` must be a vector of more than `i` elements.
#[inline(always)]
pub unsafe fn vector_elem(w: u64, i: usize) -> u64 {
    // SAFETY: per the caller.
    unsafe { *(w as usize as *const u64).add(1 + i) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lona_term::Heap;

    #[test]
    fn constants_agree_with_lona_term() {
        assert_eq!(NIL, Term::NIL.bits());
        assert_eq!(FALSE, Term::FALSE.bits());
        assert_eq!(TRUE, Term::TRUE.bits());
        assert_eq!(EMPTY_LIST, Term::EMPTY_LIST.bits());
        let h = Heap::new();
        // SAFETY: the closure is only inspected by its tag and words;
        // nothing calls or prints it.
        let c = unsafe { h.closure(77, &[Term::small_int(5).unwrap()]) };
        assert_eq!(closure_code(c.bits()), Some(77));
        assert_eq!(unsafe { closure_captured(c.bits(), 0) }, small(5));
        let v = h.vector(&[Term::NIL, Term::TRUE]);
        assert_eq!(vector_len(v.bits()), Some(2));
        assert_eq!(closure_code(v.bits()), None);
        assert_eq!(vector_len(c.bits()), None);
        let l = h.list(&[Term::TRUE]);
        assert!(is_cons(l.bits()));
        assert_eq!(unsafe { head(l.bits()) }, TRUE);
        assert_eq!(unsafe { tail(l.bits()) }, EMPTY_LIST);
    }

    #[test]
    fn small_arithmetic_on_tagged_words() {
        let max = lona_term::SMALL_INT_MAX;
        let min = lona_term::SMALL_INT_MIN;
        for (x, y) in [
            (1, 2),
            (-5, 3),
            (max, 0),
            (max, 1),
            (min, -1),
            (min, 0),
            (max, min),
        ] {
            let (a, b) = (small(x), small(y));
            let s = x as i128 + y as i128;
            let expect = (min as i128..=max as i128)
                .contains(&s)
                .then(|| small(s as i64));
            assert_eq!(add_small(a, b), expect, "{x} + {y}");
            let d = x as i128 - y as i128;
            let expect = (min as i128..=max as i128)
                .contains(&d)
                .then(|| small(d as i64));
            assert_eq!(sub_small(a, b), expect, "{x} - {y}");
            assert_eq!((a as i64).cmp(&(b as i64)), x.cmp(&y));
        }
        assert!(both_small(small(1), small(2)));
        assert!(!both_small(small(1), NIL));
        assert!(!both_small(NIL, NIL));
    }
}
