//! Heap block sizes: the growth sequence of `docs/design.md`, D7.
//!
//! Sizes are in words. The sequence starts at [`MIN_HEAP_WORDS`] (89 words,
//! 712 bytes, so an idle process's young heap plus stack stays under 1 KiB)
//! and follows the Fibonacci numbers — 89, 144, 233, 377, 610, 987, … — up
//! to [`FIB_LIMIT`] (1,346,269 words, the first Fibonacci number past one
//! million words, ~10 MiB). Past that each size is the previous one plus
//! 20 % (integer division): 1,615,522, 1,938,626, 2,326,351, …
//! The sequence saturates at `usize::MAX`.

/// The smallest (and default initial) young heap, in words.
pub const MIN_HEAP_WORDS: usize = 89;

/// The last size reached by Fibonacci growth; 20 % steps follow it.
pub const FIB_LIMIT: usize = 1_346_269;

/// The smallest size in the sequence that is at least `words`.
pub fn next_heap_size(words: usize) -> usize {
    let (mut a, mut b) = (55usize, MIN_HEAP_WORDS);
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

/// The sequence itself, from [`MIN_HEAP_WORDS`] on.
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
            [89, 144, 233, 377, 610, 987, 1597, 2584, 4181, 6765, 10946, 17711]
        );
        let big: Vec<usize> = heap_sizes().skip_while(|&s| s < 832_040).take(6).collect();
        assert_eq!(
            big,
            [832_040, 1_346_269, 1_615_522, 1_938_626, 2_326_351, 2_791_621]
        );
        assert_eq!(next_heap_size(0), 89);
        assert_eq!(next_heap_size(89), 89);
        assert_eq!(next_heap_size(90), 144);
        assert_eq!(next_heap_size(20_000_000), 20_741_965);
        assert_eq!(next_heap_size(usize::MAX), usize::MAX);
        const { assert!(MIN_HEAP_WORDS * 8 <= 1024) };
    }
}
