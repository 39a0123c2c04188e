//! The decoder's memory use stays linear in the size of its input, even for
//! truncated input whose nested containers each declare as many elements
//! as the length check lets through.
//!
//! This test binary installs a counting global allocator, so it lives in its
//! own file and its tests take a lock: every allocation of the process is
//! counted, and the tests must not measure each other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use lona_term::{decode, DecodeError, Heap};

/// Wraps the system allocator, tracking the bytes currently allocated and
/// the peak since the last [`reset_peak`].
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::SeqCst) + by;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

fn shrank(by: usize) {
    CURRENT.fetch_sub(by, Ordering::SeqCst);
}

// SAFETY: every call is forwarded unchanged to `System`; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Serializes the tests of this binary, since the counters are global.
static LOCK: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the peak number of bytes allocated
/// on top of what was live when it started.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let out = f();
    let peak = PEAK.load(Ordering::SeqCst);
    (out, peak.saturating_sub(base))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    (64 - v.leading_zeros() as usize).max(1).div_ceil(7)
}

/// At most `len` bytes of `'L' 0x01` followed by nothing but container
/// headers (vector, list, map in turn), each nested in the one
/// before and declaring the largest element count the decoder's length
/// check accepts for the bytes that follow it. With `nil_first`, every
/// container also gets one `nil` element before the next header, so each
/// open container holds an item. The input ends before any container is
/// complete. With `room == 0` the result is exactly `len` bytes long;
/// otherwise at least the last `room` bytes of `len` are left for the
/// caller to fill.
fn truncated_nest(len: usize, nil_first: bool, room: usize) -> Vec<u8> {
    let mut out = vec![b'L', 1];
    let filler = usize::from(nil_first);
    for kind in (0..3).cycle() {
        // Header: tag, count. The count's varint is at most 10 bytes; find
        // the largest count that fits what remains after it.
        let fixed = 1;
        let mut best = None;
        for count_len in 1..=10 {
            let Some(rest) = len.checked_sub(out.len() + fixed + count_len) else {
                break;
            };
            let n = match kind {
                0 => rest,                   // vector: 1 byte per element
                1 => rest.saturating_sub(1), // list: n elements and a tail
                _ => rest / 2,               // map: 2 bytes per entry
            } as u64;
            if n >= 1 && varint_len(n) <= count_len {
                best = Some(n);
                break;
            }
        }
        let Some(n) = best else { break };
        if out.len() + fixed + varint_len(n) + filler + room >= len {
            break;
        }
        out.push([11, 12, 13][kind]);
        put_varint(&mut out, n);
        if nil_first {
            out.push(0);
        }
    }
    if room == 0 {
        // Fill what is left: floats (complete items, 9 bytes each), then an
        // unterminated integer varint, so the input ends mid-term.
        while len - out.len() >= 10 {
            out.push(6);
            out.extend([0; 8]);
        }
        if out.len() < len {
            out.push(4);
            out.resize(len, 0x80);
        }
    }
    assert!(out.len() <= len);
    out
}

/// Peak bytes allocated while decoding `bytes` into a fresh heap, and the
/// decoder's answer.
fn decode_peak(bytes: &[u8]) -> (Result<(), DecodeError>, usize) {
    let heap = Heap::new();
    let (res, peak) = peak_during(|| decode(&heap, bytes).map(|_| ()));
    drop(heap);
    (res, peak)
}

/// Fails unless peak memory is at most 64 bytes per input byte plus 64 KiB.
fn assert_linear(what: &str, len: usize, peak: usize) {
    let bound = 64 * len + 64 * 1024;
    assert!(
        peak <= bound,
        "{what}: decoding {len} bytes peaked at {peak} bytes, over the bound of {bound} \
         (~{}x the input)",
        peak / len.max(1)
    );
}

#[test]
fn truncated_nested_containers_use_linear_memory() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    for len in [4 * 1024, 64 * 1024, 512 * 1024] {
        for nil_first in [false, true] {
            let bytes = truncated_nest(len, nil_first, 0);
            assert_eq!(bytes.len(), len);
            let (res, peak) = decode_peak(&bytes);
            assert_eq!(
                res,
                Err(DecodeError::UnexpectedEnd),
                "len {len}, nil_first {nil_first}"
            );
            assert_linear(
                &format!("nested containers, nil_first {nil_first}"),
                bytes.len(),
                peak,
            );
        }
    }
}

#[test]
fn huge_declared_lengths_are_rejected_in_linear_memory() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // ~100,000 open containers, each claiming all the rest of the input,
    // then a header with a count of u32::MAX or u64::MAX for each tag that
    // has a count, then padding to the length the outer headers declare.
    let len = 400 * 1024;
    let nest = truncated_nest(len, false, 32);
    for tag in [5u8, 7, 8, 9, 10, 11, 12, 13] {
        for count in [u64::from(u32::MAX), u64::MAX] {
            let mut bytes = nest.clone();
            bytes.push(tag);
            if tag == 5 {
                bytes.push(0); // sign
            }
            put_varint(&mut bytes, count);
            bytes.resize(len, 0);
            let (res, peak) = decode_peak(&bytes);
            assert_eq!(res, Err(DecodeError::LengthTooLarge), "tag {tag}");
            assert_linear(&format!("tag {tag}, count {count}"), bytes.len(), peak);
        }
    }
}

#[test]
fn small_headers_and_complete_inputs_use_linear_memory() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let n = 128 * 1024;
    let mut cases: Vec<(&str, Vec<u8>, bool)> = Vec::new();
    // The smallest container headers, one element each: the most open
    // containers per input byte.
    for (name, header) in [
        ("vectors", &[11u8, 1][..]),
        ("lists", &[12, 1][..]),
        ("maps", &[13, 1][..]),
    ] {
        let mut b = vec![b'L', 1];
        while b.len() + header.len() < n {
            b.extend_from_slice(header);
        }
        cases.push((name, b.clone(), false));
        // complete them: one nil for each vector, a nil tail
        // for each list (its one element is the next list), and a nil value
        // for each map (its key is the next map).
        b.push(0);
        if header[0] == 12 || header[0] == 13 {
            let depth = (b.len() - 3) / header.len();
            b.extend(std::iter::repeat_n(0, depth));
        }
        cases.push((name, b, true));
    }
    // Flat containers of nils.
    let m = n - 8;
    let mut b = vec![b'L', 1, 11];
    put_varint(&mut b, m as u64);
    b.resize(b.len() + m, 0);
    cases.push(("flat vector", b, true));
    let mut b = vec![b'L', 1, 12];
    put_varint(&mut b, m as u64);
    b.resize(b.len() + m + 1, 0);
    cases.push(("flat list", b, true));
    let mut b = vec![b'L', 1, 13];
    let m = n / 8;
    put_varint(&mut b, m as u64);
    for i in 0..m {
        b.push(4);
        put_varint(&mut b, i as u64);
        b.push(0);
    }
    cases.push(("flat map", b, true));

    for (name, bytes, complete) in cases {
        let heap = Heap::new();
        let (res, peak) = peak_during(|| decode(&heap, &bytes).map(|_| ()));
        assert_eq!(res.is_ok(), complete, "{name}: {res:?}");
        if let Ok(t) = decode(&heap, &bytes) {
            let again = decode(&heap, &lona_term::encode(t).unwrap());
            assert!(again == Ok(t), "{name} round-trips");
        }
        assert_linear(name, bytes.len(), peak);
    }
}
