//! The code heap: memory for machine code that can be given back one
//! function at a time (`docs/jit.md`, section 7, "Code heap").
//!
//! # The protocol (Linux)
//!
//! 1. At start, one range of address space is reserved, twice the code
//!    space: a *run* half and a *write* half, both inaccessible, neither
//!    memory.
//! 2. Memory comes from one `memfd`, [`CHUNK`] bytes at a time: chunk `k`
//!    is the file's bytes `k * CHUNK ..`, mapped shared at `k * CHUNK` in
//!    both halves: read and execute in the run half, read and write in
//!    the write half. The page tables change only where a chunk is added,
//!    never under code another thread runs (no `mprotect` of a page in
//!    use), and adjacent chunks are one kernel mapping per half (Linux
//!    allows 65,530 mappings: a mapping per function once ran out).
//! 3. [`CodeHeap::alloc`] takes the smallest free range that fits (best
//!    fit, [`GRAIN`]-aligned: ranges of free space indexed by address and
//!    by size, coalesced when freed), else adds chunks at the top; it
//!    gives the code's two addresses, `(run, write)`. Past the reserved
//!    range it gives nothing (the function stays interpreted).
//! 4. The compiler writes the code through the write address, patched for
//!    where it will run, then calls [`CodeHeap::finish`] (on aarch64 the
//!    instruction caches are made coherent; on x86-64 nothing is needed)
//!    and only then publishes the run address (a Release store).
//! 5. [`CodeHeap::free`] takes back a function's range once no thread runs
//!    or will enter it (its caller's promise). A chunk left with no live
//!    byte gives its pages back to the system (a hole punched in the
//!    `memfd`): its mappings stay, and when reused it is memory again
//!    (zero pages, written before run). So memory follows the live code,
//!    and address space only grows when no freed range fits.
//!
//! # Elsewhere
//!
//! On other Unix systems (no `memfd`) there is one view: each function
//! gets fresh whole pages, made writable, written, then read and execute
//! (`mprotect`, pages no other thread runs), and freed code is *never*
//! reused (only counted). Without Unix there is no code heap and nothing
//! is compiled.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

/// The unit in which memory is mapped and given back.
pub(crate) const CHUNK: usize = 1 << 20;

/// Every function starts at a multiple of this (a cache line; above any
/// alignment Cranelift asks of a function and its constants).
pub(crate) const GRAIN: usize = 64;

/// Memory for machine code, up to a fixed amount of address space.
pub(crate) struct CodeHeap {
    /// The run and write views' first bytes (the same on systems without
    /// `memfd`).
    rx: usize,
    rw: usize,
    /// The bytes of address space each view has.
    reserve: usize,
    /// Bytes of the views in use so far: whole chunks (Linux), or up to
    /// the last page handed out.
    top: usize,
    /// Live bytes in each chunk (whole grains), and whether its pages
    /// were given back (at 0 live bytes) and not used since.
    used: Vec<(usize, bool)>,
    /// Free ranges, `offset → length` and `(length, offset)`.
    by_addr: BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
    /// Bytes of live code, as asked for.
    live: usize,
    /// Chunks whose pages were given back and not used since.
    released: usize,
    /// The `memfd` (Linux).
    fd: i32,
}

impl CodeHeap {
    /// A code heap of `reserve` bytes of code space (rounded to chunks).
    pub(crate) fn new(reserve: usize) -> io::Result<CodeHeap> {
        let reserve = reserve.div_ceil(CHUNK).max(1) * CHUNK;
        let (rx, rw, fd) = sys::reserve(reserve)?;
        Ok(CodeHeap {
            rx,
            rw,
            reserve,
            top: 0,
            used: Vec::new(),
            by_addr: BTreeMap::new(),
            by_size: BTreeSet::new(),
            live: 0,
            released: 0,
            fd,
        })
    }

    /// Room for `len` bytes of code: where it will run and where to write
    /// it (see the protocol). `None` when the code space is full.
    pub(crate) fn alloc(&mut self, len: usize) -> Option<(*const u8, *mut u8)> {
        let n = len.max(1).div_ceil(GRAIN) * GRAIN;
        let off = self.place(n)?;
        self.live += len;
        Some(((self.rx + off) as *const u8, (self.rw + off) as *mut u8))
    }

    /// Makes the `len` bytes written at `rx`'s write address runnable by
    /// every thread (step 4).
    ///
    /// # Safety
    /// `rx` and `len` are an [`alloc`](CodeHeap::alloc)'s, not freed.
    pub(crate) unsafe fn finish(&mut self, rx: *const u8, len: usize) {
        // SAFETY: per the contract, a range this heap handed out.
        unsafe { sys::finish(rx, len) }
    }

    /// Gives back the code at `rx` of `len` bytes.
    ///
    /// # Safety
    /// `rx` and `len` are those of one [`alloc`](CodeHeap::alloc) of this
    /// heap, not freed since; no thread runs that code, is stopped in it
    /// (a return address into it on any stack), or will enter it: the
    /// memory is given to other code.
    pub(crate) unsafe fn free(&mut self, rx: *const u8, len: usize) {
        let off = (rx as usize)
            .checked_sub(self.rx)
            .filter(|&o| o < self.top)
            .expect("freed code is the code heap's");
        self.live -= len;
        let n = len.max(1).div_ceil(GRAIN) * GRAIN;
        self.unplace(off, n);
    }

    /// Bytes of live code.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// Bytes of memory the code heap holds: the views in use, less the
    /// chunks given back.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn held(&self) -> usize {
        self.top - self.released * CHUNK
    }

    /// Bytes of address space in use in each view (never shrinks).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn extent(&self) -> usize {
        self.top
    }
}

#[cfg(target_os = "linux")]
impl CodeHeap {
    /// The offset of a free range of `n` bytes (a multiple of `GRAIN`),
    /// now taken; chunks are added until one fits.
    fn place(&mut self, n: usize) -> Option<usize> {
        loop {
            if let Some(&(len, off)) = self.by_size.range((n, 0)..).next() {
                self.take_free(off, len);
                if len > n {
                    self.put_free(off + n, len - n);
                }
                self.account(off, n, true);
                return Some(off);
            }
            if self.top + CHUNK > self.reserve {
                return None;
            }
            let k = self.top / CHUNK;
            // SAFETY: chunk `k` is in the reservation, past every chunk
            // mapped so far: no code runs there.
            unsafe { sys::map(self.fd, self.rx, self.rw, k) }.ok()?;
            self.top += CHUNK;
            self.used.push((0, false));
            self.unplace_raw(k * CHUNK, CHUNK);
        }
    }

    /// Frees `[off, off + n)`, coalescing, and gives back chunks left
    /// empty.
    fn unplace(&mut self, off: usize, n: usize) {
        self.unplace_raw(off, n);
        self.account(off, n, false);
    }

    fn unplace_raw(&mut self, mut off: usize, mut n: usize) {
        // The free range before, if it ends here.
        if let Some((&o, &l)) = self.by_addr.range(..off).next_back() {
            assert!(o + l <= off, "code freed twice at offset {off:#x}");
            if o + l == off {
                self.take_free(o, l);
                off = o;
                n += l;
            }
        }
        // The free range after, if it starts at the end.
        if let Some((&o, &l)) = self.by_addr.range(off..).next() {
            assert!(off + n <= o, "code freed twice at offset {o:#x}");
            if o == off + n {
                self.take_free(o, l);
                n += l;
            }
        }
        self.put_free(off, n);
    }

    /// Counts `[off, off + n)` live (`taken`) or not in each chunk it
    /// covers; a chunk left empty gives its pages back.
    fn account(&mut self, off: usize, n: usize, taken: bool) {
        let (first, last) = (off / CHUNK, (off + n - 1) / CHUNK);
        for k in first..=last {
            let lo = off.max(k * CHUNK);
            let hi = (off + n).min((k + 1) * CHUNK);
            let (u, gone) = &mut self.used[k];
            if taken {
                if *gone {
                    *gone = false;
                    self.released -= 1;
                }
                *u += hi - lo;
            } else {
                *u -= hi - lo;
                // SAFETY: no live code in chunk `k`: nothing runs there
                // (the promise of `free`'s callers).
                if *u == 0 && unsafe { sys::release(self.fd, k) } {
                    *gone = true;
                    self.released += 1;
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl CodeHeap {
    /// Fresh whole pages for `n` bytes: never reused.
    fn place(&mut self, n: usize) -> Option<usize> {
        let page = sys::page_size();
        let n = n.div_ceil(page) * page;
        if self.top + n > self.reserve {
            return None;
        }
        let off = self.top;
        // SAFETY: fresh pages of the reservation: no code runs there.
        unsafe { sys::writable(self.rx + off, n) }.ok()?;
        self.top += n;
        Some(off)
    }

    /// Freed code is only counted: its pages stay as they are.
    fn unplace(&mut self, _off: usize, _n: usize) {}
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl CodeHeap {
    fn take_free(&mut self, off: usize, len: usize) {
        self.by_addr.remove(&off);
        self.by_size.remove(&(len, off));
    }

    fn put_free(&mut self, off: usize, len: usize) {
        self.by_addr.insert(off, len);
        self.by_size.insert((len, off));
    }
}

impl Drop for CodeHeap {
    /// Unmaps everything: only a heap none of whose code can run again
    /// may be dropped (the compiler's lives as long as the OS process).
    fn drop(&mut self) {
        // SAFETY: the views and the descriptor are this heap's alone.
        unsafe { sys::unreserve(self.rx, self.reserve, self.fd) };
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use super::CHUNK;
    use std::io;

    /// Reserves both views (`2 * len` bytes of address space) and makes
    /// the `memfd`: `(run view, write view, fd)`.
    pub(super) fn reserve(len: usize) -> io::Result<(usize, usize, libc::c_int)> {
        // SAFETY: a new anonymous mapping at an address of the kernel's
        // choosing touches no existing memory.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid NUL-terminated name; the descriptor is ours.
        let fd = unsafe { libc::memfd_create(c"lona-code".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: the reservation just made, used by nothing.
            unsafe { libc::munmap(base, 2 * len) };
            return Err(e);
        }
        Ok((base as usize, base as usize + len, fd))
    }

    /// Maps chunk `k` into both views (growing the file).
    ///
    /// # Safety
    /// Chunk `k` of both views is in the reservation and unused.
    pub(super) unsafe fn map(fd: libc::c_int, rx: usize, rw: usize, k: usize) -> io::Result<()> {
        let at = (k * CHUNK) as libc::off_t;
        // SAFETY: our descriptor; growing it changes no mapped byte.
        if unsafe { libc::ftruncate(fd, at + CHUNK as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        for (base, prot) in [
            (rx, libc::PROT_READ | libc::PROT_EXEC),
            (rw, libc::PROT_READ | libc::PROT_WRITE),
        ] {
            // SAFETY: MAP_FIXED replaces only the reserved, unused pages
            // of chunk `k` (the caller's promise).
            let p = unsafe {
                libc::mmap(
                    (base + k * CHUNK) as *mut libc::c_void,
                    CHUNK,
                    prot,
                    libc::MAP_SHARED | libc::MAP_FIXED,
                    fd,
                    at,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Gives chunk `k`'s pages back to the system (its mappings stay);
    /// whether it could.
    ///
    /// # Safety
    /// No code in chunk `k` runs or will run until written again.
    pub(super) unsafe fn release(fd: libc::c_int, k: usize) -> bool {
        // SAFETY: our descriptor; the caller's promise for the contents.
        unsafe {
            libc::fallocate(
                fd,
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                (k * CHUNK) as libc::off_t,
                CHUNK as libc::off_t,
            ) == 0
        }
    }

    /// Makes written code runnable: nothing on x86-64 (its instruction
    /// fetch sees stores, and the code is published by a Release store);
    /// elsewhere the instruction caches are cleaned and every core's
    /// pipeline flushed.
    ///
    /// # Safety
    /// `rx`, `len`: code this heap handed out.
    pub(super) unsafe fn finish(rx: *const u8, len: usize) {
        #[cfg(not(target_arch = "x86_64"))]
        {
            use wasmtime_internal_jit_icache_coherence as icache;
            // SAFETY: a mapped, readable range (the caller's promise).
            unsafe { icache::clear_cache(rx.cast(), len) }.expect("icache flush");
            icache::pipeline_flush_mt().expect("pipeline flush");
        }
        #[cfg(target_arch = "x86_64")]
        let _ = (rx, len);
    }

    /// Unmaps both views and closes the file.
    ///
    /// # Safety
    /// No code of this heap runs or will run.
    pub(super) unsafe fn unreserve(rx: usize, len: usize, fd: libc::c_int) {
        // SAFETY: the reservation made by `reserve` (both views) and its
        // descriptor, per the caller no longer used.
        unsafe {
            libc::munmap(rx as *mut libc::c_void, 2 * len);
            libc::close(fd);
        }
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
mod sys {
    use std::io;

    pub(super) fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
    }

    /// Reserves one view of `len` bytes: `(view, view, 0)`.
    pub(super) fn reserve(len: usize) -> io::Result<(usize, usize, i32)> {
        // SAFETY: a new anonymous mapping at an address of the kernel's
        // choosing touches no existing memory.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANON,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok((base as usize, base as usize, 0))
    }

    /// Makes fresh pages writable.
    ///
    /// # Safety
    /// The pages are the reservation's, handed out to no one yet.
    pub(super) unsafe fn writable(at: usize, len: usize) -> io::Result<()> {
        // SAFETY: per the caller, pages no code runs in.
        let r = unsafe {
            libc::mprotect(
                at as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Makes written code read and execute only (its pages are its own),
    /// and the instruction caches coherent.
    ///
    /// # Safety
    /// `rx`, `len`: code this heap handed out, written.
    pub(super) unsafe fn finish(rx: *const u8, len: usize) {
        let page = page_size();
        let n = len.max(1).div_ceil(page) * page;
        // SAFETY: the pages handed out for this code alone.
        let r = unsafe {
            libc::mprotect(
                rx as *mut libc::c_void,
                n,
                libc::PROT_READ | libc::PROT_EXEC,
            )
        };
        assert!(r == 0, "mprotect: {}", io::Error::last_os_error());
        #[cfg(not(target_arch = "x86_64"))]
        {
            use wasmtime_internal_jit_icache_coherence as icache;
            // SAFETY: a mapped, readable range.
            unsafe { icache::clear_cache(rx.cast(), len) }.expect("icache flush");
            icache::pipeline_flush_mt().expect("pipeline flush");
        }
    }

    /// Unmaps the view.
    ///
    /// # Safety
    /// No code of this heap runs or will run.
    pub(super) unsafe fn unreserve(rx: usize, len: usize, _fd: i32) {
        // SAFETY: the reservation made by `reserve`, per the caller no
        // longer used.
        unsafe { libc::munmap(rx as *mut libc::c_void, len) };
    }
}

#[cfg(not(unix))]
mod sys {
    use std::io;

    pub(super) fn reserve(_len: usize) -> io::Result<(usize, usize, i32)> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no code heap on this system",
        ))
    }

    pub(super) fn page_size() -> usize {
        4096
    }

    pub(super) unsafe fn writable(_at: usize, _len: usize) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub(super) unsafe fn finish(_rx: *const u8, _len: usize) {}

    pub(super) unsafe fn unreserve(_rx: usize, _len: usize, _fd: i32) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Writes `len` bytes of `b` through the write view.
    fn fill(rw: *mut u8, len: usize, b: u8) {
        // SAFETY: an allocation of `len` bytes, writable.
        unsafe { std::ptr::write_bytes(rw, b, len) }
    }

    /// Whether the run view shows `len` bytes of `b` at `rx`.
    fn holds(rx: *const u8, len: usize, b: u8) -> bool {
        // SAFETY: an allocation of `len` bytes, readable.
        unsafe { std::slice::from_raw_parts(rx, len) }
            .iter()
            .all(|&x| x == b)
    }

    #[test]
    fn what_is_written_is_seen_and_freed_space_is_reused() {
        let mut h = CodeHeap::new(4 * CHUNK).unwrap();
        let (rx, rw) = h.alloc(100).unwrap();
        assert_ne!(rx as usize, rw as usize);
        assert_eq!(rx as usize % GRAIN, 0);
        fill(rw, 100, 0xc3);
        assert!(holds(rx, 100, 0xc3));
        assert_eq!((h.live(), h.extent()), (100, CHUNK));
        let (rx2, rw2) = h.alloc(1).unwrap();
        assert_eq!(rx2 as usize, rx as usize + 128);
        fill(rw2, 1, 7);
        // SAFETY: allocated above, not freed, never run.
        unsafe { h.free(rx, 100) };
        assert_eq!(h.live(), 1);
        assert!(holds(rx2, 1, 7));
        // The first fit is the space just freed.
        let (rx3, _) = h.alloc(128).unwrap();
        assert_eq!(rx3, rx);
        // SAFETY: as above.
        unsafe {
            h.free(rx2, 1);
            h.free(rx3, 128)
        };
        assert_eq!(h.live(), 0);
        // The empty chunk gave its pages back.
        assert_eq!(h.held(), 0);
        let (rx4, rw4) = h.alloc(CHUNK).unwrap();
        assert_eq!((rx4, h.extent(), h.held()), (rx, CHUNK, CHUNK));
        fill(rw4, CHUNK, 1);
        assert!(holds(rx4, CHUNK, 1));
    }

    #[test]
    fn many_sizes_past_several_chunks_reuse_and_stay_put() {
        let mut h = CodeHeap::new(64 * CHUNK).unwrap();
        // A cheap pseudo-random sequence of sizes, 1 byte to 40 KiB.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut size = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + (x % 40_000) as usize
        };
        let mut extent = None;
        for round in 0..4 {
            let mut live = Vec::new();
            let mut total = 0;
            for i in 0.. {
                if total >= 5 * CHUNK {
                    break;
                }
                let n = size();
                let (rx, rw) = h.alloc(n).unwrap();
                let b = i as u8;
                fill(rw, n, b);
                live.push((rx, n, b));
                total += n;
                // Every third allocation, one freed, out of order.
                if i % 3 == 2 {
                    let (rx, n, _) = live.swap_remove(live.len() / 2);
                    // SAFETY: allocated here, freed once, never run.
                    unsafe { h.free(rx, n) };
                    total -= n;
                }
            }
            assert_eq!(h.live(), live.iter().map(|l| l.1).sum::<usize>());
            for &(rx, n, b) in &live {
                assert!(holds(rx, n, b), "round {round}: code overwritten");
            }
            for (rx, n, _) in live {
                // SAFETY: as above.
                unsafe { h.free(rx, n) };
            }
            assert_eq!(h.live(), 0);
            assert!(h.held() < CHUNK, "round {round}: {} bytes held", h.held());
            // Freed space is reused: the same work needs no more address
            // space than the first time (a little slack for where the
            // sizes fall).
            let e = *extent.get_or_insert(h.extent());
            assert!(
                h.extent() <= e + CHUNK,
                "round {round}: grew to {}",
                h.extent()
            );
        }
    }

    #[test]
    fn code_bigger_than_a_chunk_and_a_full_heap() {
        let mut h = CodeHeap::new(4 * CHUNK).unwrap();
        let (a, wa) = h.alloc(CHUNK + 1000).unwrap();
        let (b, wb) = h.alloc(2 * CHUNK).unwrap();
        fill(wa, CHUNK + 1000, 1);
        fill(wb, 2 * CHUNK, 2);
        assert!(holds(a, CHUNK + 1000, 1) && holds(b, 2 * CHUNK, 2));
        assert!(h.alloc(CHUNK).is_none(), "past the reservation");
        // SAFETY: allocated above, never run.
        unsafe { h.free(a, CHUNK + 1000) };
        let (c, _) = h.alloc(CHUNK).unwrap();
        assert_eq!(c, a);
        // SAFETY: as above.
        unsafe {
            h.free(b, 2 * CHUNK);
            h.free(c, CHUNK)
        };
        assert_eq!((h.live(), h.held()), (0, 0));
        // All of it again, in one piece.
        let (d, wd) = h.alloc(4 * CHUNK).unwrap();
        assert_eq!(d, a);
        fill(wd, 4 * CHUNK, 3);
        assert!(holds(d, 4 * CHUNK, 3));
    }

    /// Machine code written through the write view runs from the run
    /// view, and so does other code written where it was once freed.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn written_code_runs_and_so_does_code_in_its_place() {
        let mut h = CodeHeap::new(CHUNK).unwrap();
        let mut run = |k: u8| {
            // mov eax, k; ret
            let code = [0xb8, k, 0, 0, 0, 0xc3];
            let (rx, rw) = h.alloc(code.len()).unwrap();
            // SAFETY: `code.len()` writable bytes; then made runnable,
            // and run: a function of no arguments returning `k` in eax.
            let got = unsafe {
                std::ptr::copy_nonoverlapping(code.as_ptr(), rw, code.len());
                h.finish(rx, code.len());
                std::mem::transmute::<*const u8, extern "C" fn() -> u32>(rx)()
            };
            assert_eq!(got, k as u32);
            // SAFETY: it returned; nothing runs it again.
            unsafe { h.free(rx, code.len()) };
            rx
        };
        let first = run(42);
        assert_eq!(run(43), first);
    }
}
