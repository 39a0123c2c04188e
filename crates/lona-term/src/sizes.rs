//! Heap block sizes: the growth sequence of `docs/design.md`, D7.
//!
//! Sizes are in words. The sequence starts at [`SMALLEST_HEAP_WORDS`] (34
//! words, 272 bytes: what a heap configured as small as possible gets, e.g.
//! a Lonala process, so a million idle processes cost little) and follows
//! the Fibonacci numbers — 34, 55, 89, 144, 233, 377, 610, 987, … — up
//! to [`FIB_LIMIT`] (1,346,269 words, the first Fibonacci number past one
//! million words, ~10 MiB). Past that each size is the previous one plus
//! 20 % (integer division): 1,615,522, 1,938,626, 2,326,351, …
//! The sequence saturates at `usize::MAX`.

/// The default initial (and smallest) young heap of [`crate::HeapConfig`],
/// in words: 712 bytes, so an idle heap plus a small stack stays under
/// 1 KiB.
pub const MIN_HEAP_WORDS: usize = 89;

/// The first size of the sequence: the smallest young heap a
/// configuration can ask for.
pub const SMALLEST_HEAP_WORDS: usize = 34;

/// The last size reached by Fibonacci growth; 20 % steps follow it.
pub const FIB_LIMIT: usize = 1_346_269;

/// The smallest size in the sequence that is at least `words`.
pub fn next_heap_size(words: usize) -> usize {
    let (mut a, mut b) = (21usize, SMALLEST_HEAP_WORDS);
    while b < words {
        if b >= FIB_LIMIT {
            b = b.saturating_add(b / 5);
        } else {
            let c = a + b;
            a = b;
            b = c;
        }
        if b == usize::MAX {
            break;
        }
    }
    b
}

/// The sequence itself, from [`SMALLEST_HEAP_WORDS`] on.
pub fn heap_sizes() -> impl Iterator<Item = usize> {
    let mut cur = 0usize;
    std::iter::from_fn(move || {
        cur = next_heap_size(cur + 1);
        Some(cur)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sequence() {
        let v: Vec<usize> = heap_sizes().take(12).collect();
        assert_eq!(
            v,
            [34, 55, 89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765]
        );
        let big: Vec<usize> = heap_sizes().skip_while(|&s| s < 832_040).take(6).collect();
        assert_eq!(
            big,
            [832_040, 1_346_269, 1_615_522, 1_938_626, 2_326_351, 2_791_621]
        );
        assert_eq!(next_heap_size(0), 34);
        assert_eq!(next_heap_size(35), 55);
        assert_eq!(next_heap_size(MIN_HEAP_WORDS), MIN_HEAP_WORDS);
        assert_eq!(next_heap_size(89), 89);
        assert_eq!(next_heap_size(90), 144);
        assert_eq!(next_heap_size(20_000_000), 20_741_965);
        assert_eq!(next_heap_size(usize::MAX), usize::MAX);
        const { assert!(MIN_HEAP_WORDS * 8 <= 1024) };
    }
}
