//! Large blocks straight from the kernel, on huge pages where it gives
//! them.
//!
//! A block of [`LARGE_BYTES`] (2 MiB) or more is mapped by itself, aligned
//! to 2 MiB, and advised as a candidate for transparent huge pages
//! (`MADV_HUGEPAGE`). A process whose heap grows that large copies
//! megabytes into fresh memory at each collection; with 4 KiB pages each
//! first touch is a page fault (512 per 2 MiB), and those faults cost
//! more than the copying itself (`strings`, `docs/benchmarks-history.md`,
//! session 14). With a huge page it is one fault per 2 MiB.
//!
//! Why not the global allocator: mimalloc's own large allocations took
//! 4 KiB faults even when advised, and the kernel only backs a 2 MiB
//! range with a huge page when the whole aligned range is one advised
//! mapping. Blocks under 2 MiB (nearly every process's) stay with the
//! allocator: a huge page for them would be memory nobody uses.
//!
//! Whether the kernel gives huge pages is its policy
//! (`/sys/kernel/mm/transparent_hugepage/enabled`: `always` or `madvise`;
//! a process can turn them off, as `lona` with mimalloc does except where
//! advised). Without them these are plain mappings.
//!
//! Elsewhere than Linux, and under Miri, there are no large blocks: every
//! block comes from the allocator.

/// Blocks of at least this many bytes are mapped here.
pub const LARGE_BYTES: usize = 2 << 20;

#[cfg(all(target_os = "linux", not(miri)))]
const PAGE: usize = 4096;

/// Whether a block of `bytes` bytes is mapped here.
#[inline]
pub(crate) fn is_large(bytes: usize) -> bool {
    cfg!(all(target_os = "linux", not(miri))) && bytes >= LARGE_BYTES
}

#[cfg(all(target_os = "linux", not(miri)))]
fn pages(bytes: usize) -> usize {
    bytes.div_ceil(PAGE) * PAGE
}

/// Maps `bytes` (at least [`LARGE_BYTES`]) of fresh zeroed memory aligned
/// to 2 MiB; `None` if the kernel refuses.
#[cfg(all(target_os = "linux", not(miri)))]
pub(crate) fn map(bytes: usize) -> Option<*mut u8> {
    let len = pages(bytes);
    let total = len.checked_add(LARGE_BYTES)?;
    // SAFETY: an anonymous private mapping at an address the kernel
    // chooses touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let aligned = start.next_multiple_of(LARGE_BYTES);
    let head = aligned - start;
    let tail = total - head - len;
    // SAFETY: head and tail are the parts of the new mapping outside
    // `aligned..aligned + len`; nothing refers to them. madvise only
    // changes how the kernel backs the range, which is ours.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + len) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    Some(aligned as *mut u8)
}

/// Unmaps a block from [`map`].
///
/// # Safety
/// `p` and `bytes` are a block [`map`] returned (as shrunk by [`shrink`]),
/// and nothing uses it afterwards.
#[cfg(all(target_os = "linux", not(miri)))]
pub(crate) unsafe fn unmap(p: *mut u8, bytes: usize) {
    // SAFETY: per the contract, the whole mapping is ours to drop.
    unsafe { libc::munmap(p as *mut libc::c_void, pages(bytes)) };
}

/// Gives back the end of a block from [`map`], keeping its first
/// `new_bytes` bytes in place.
///
/// # Safety
/// `p` and `old_bytes` are a block [`map`] returned (as shrunk before),
/// `new_bytes <= old_bytes`, and nothing uses the part past `new_bytes`.
#[cfg(all(target_os = "linux", not(miri)))]
pub(crate) unsafe fn shrink(p: *mut u8, old_bytes: usize, new_bytes: usize) {
    let (keep, had) = (pages(new_bytes), pages(old_bytes));
    if had > keep {
        // SAFETY: per the contract, the pages past `keep` are unused.
        unsafe { libc::munmap(p.add(keep) as *mut libc::c_void, had - keep) };
    }
}

/// A block of `new_bytes` (more than `old_bytes`) whose start is the
/// whole 2 MiB pieces of the block at `p`, moved there by the kernel (no
/// copy, and no page cleared again: those pages keep what they hold), the
/// rest fresh; the old block's remainder is unmapped. `None`, with the
/// old block untouched, if the kernel refuses. For reusing a cached block for a larger one (`block.rs`): a
/// growing heap's new to-space then faults in only what it adds.
///
/// # Safety
/// `p` and `old_bytes` are a block [`map`] returned (as shrunk by
/// [`shrink`]); on success it is gone (moved), and nothing uses it.
#[cfg(all(target_os = "linux", not(miri)))]
pub(crate) unsafe fn grow(p: *mut u8, old_bytes: usize, new_bytes: usize) -> Option<*mut u8> {
    let (had, want) = (pages(old_bytes), pages(new_bytes));
    // Only whole 2 MiB pieces move: a shrunk block's last piece is in
    // small pages (`shrink` split it), and moved to the new block it
    // would keep the fresh part after it from starting a huge page.
    let keep = had / LARGE_BYTES * LARGE_BYTES;
    if want <= had || keep == 0 {
        return None;
    }
    // A fresh aligned mapping of the new size, its start then replaced by
    // the old pages (both 2 MiB aligned: huge pages move whole).
    let to = map(new_bytes)?;
    // SAFETY: both ranges are mappings we own (per the contract, and
    // `map` just made `to`); MREMAP_FIXED replaces `to..to + keep` with
    // the old block's first `keep` bytes and unmaps them there.
    let moved = unsafe {
        libc::mremap(
            p as *mut libc::c_void,
            keep,
            keep,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            to as *mut libc::c_void,
        )
    };
    if moved == libc::MAP_FAILED {
        // SAFETY: `to` is the mapping just made, unused.
        unsafe { unmap(to, want) };
        return None;
    }
    if had > keep {
        // SAFETY: the old block's tail, still mapped where it was, ours
        // and unused (the caller gave the whole block up).
        unsafe { libc::munmap(p.add(keep) as *mut libc::c_void, had - keep) };
    }
    Some(to)
}

#[cfg(not(all(target_os = "linux", not(miri))))]
pub(crate) unsafe fn grow(_p: *mut u8, _old_bytes: usize, _new_bytes: usize) -> Option<*mut u8> {
    unreachable!("no large blocks here (is_large)")
}

#[cfg(not(all(target_os = "linux", not(miri))))]
pub(crate) fn map(_bytes: usize) -> Option<*mut u8> {
    unreachable!("no large blocks here (is_large)")
}

#[cfg(not(all(target_os = "linux", not(miri))))]
pub(crate) unsafe fn unmap(_p: *mut u8, _bytes: usize) {
    unreachable!("no large blocks here (is_large)")
}

#[cfg(not(all(target_os = "linux", not(miri))))]
pub(crate) unsafe fn shrink(_p: *mut u8, _old_bytes: usize, _new_bytes: usize) {
    unreachable!("no large blocks here (is_large)")
}
