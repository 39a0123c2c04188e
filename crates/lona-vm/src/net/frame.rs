//! Packet framing, Erlang's `{packet, ...}`: how a byte stream becomes the
//! messages a Lonala process receives, and how what it sends is framed.
//!
//! | `:packet` | a packet is | sent as |
//! | --- | --- | --- |
//! | `:raw` (default) | whatever has arrived (or exactly `n` bytes for `(recv s n)`) | the bytes |
//! | `:line` | bytes through the next `\n` (kept) | the bytes |
//! | `:http` | for `recv`: an HTTP request head, parsed into a map (`http.rs`) | the bytes |
//! | `1`, `2`, `4` | a big-endian length header of that many bytes, then that many bytes (header removed) | header + bytes |
//!
//! A packet longer than the socket's `:packet-size` (default 8 MB) is an
//! error (`:emsgsize`), so a peer claiming a 4 GB packet or sending a line
//! without end cannot make the node buffer it.

/// A socket's framing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Packet {
    Raw,
    Line,
    Len(u8),
    /// An HTTP request head, parsed (`http.rs`), for `recv`; in active
    /// mode and for `send` it is `:raw`.
    Http,
}

/// The default `:packet-size`.
pub(crate) const DEFAULT_MAX: usize = 8 << 20;

/// A packet that cannot be: longer than the limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

/// Takes the next complete packet from the front of `buf`, if there is
/// one. `want` is `recv`'s length for `:raw` (0: whatever is there).
/// `scanned` is how many bytes at the front of `buf` a `:line` search
/// already found without a line end (the socket keeps it between calls;
/// 0 when unknown): each search looks only at what arrived since, so a
/// long line fed a byte at a time costs its length once, not its length
/// squared.
pub(crate) fn take(
    packet: Packet,
    buf: &mut Vec<u8>,
    scanned: &mut usize,
    want: usize,
    max: usize,
) -> Result<Option<Vec<u8>>, TooLong> {
    if packet != Packet::Line {
        *scanned = 0;
    }
    match packet {
        Packet::Raw | Packet::Http => {
            if buf.is_empty() || buf.len() < want {
                Ok(None)
            } else if want == 0 {
                Ok(Some(std::mem::take(buf)))
            } else {
                Ok(Some(buf.drain(..want).collect()))
            }
        }
        Packet::Line => {
            let from = (*scanned).min(buf.len());
            match memchr::memchr(b'\n', &buf[from..]).map(|i| i + from) {
                Some(i) if i < max => {
                    *scanned = 0;
                    Ok(Some(buf.drain(..=i).collect()))
                }
                Some(_) => Err(TooLong),
                None if buf.len() >= max => Err(TooLong),
                None => {
                    *scanned = buf.len();
                    Ok(None)
                }
            }
        }
        Packet::Len(k) => {
            let k = k as usize;
            if buf.len() < k {
                return Ok(None);
            }
            let n = buf[..k].iter().fold(0usize, |n, &b| (n << 8) | b as usize);
            if n > max {
                return Err(TooLong);
            }
            if buf.len() < k + n {
                return Ok(None);
            }
            let body = buf[k..k + n].to_vec();
            buf.drain(..k + n);
            Ok(Some(body))
        }
    }
}

/// The length header `:packet` `k` (1, 2 or 4) puts before a packet of
/// `len` bytes, in the first `k` bytes of the array (`None`: too long
/// for the header).
pub(crate) fn header(k: u8, len: usize) -> Option<[u8; 4]> {
    let k = usize::from(k);
    if k < 8 && len >> (8 * k) != 0 {
        return None;
    }
    let mut h = [0u8; 4];
    for (i, b) in h[..k].iter_mut().enumerate() {
        *b = (len >> (8 * (k - 1 - i))) as u8;
    }
    Some(h)
}

/// `data` framed for sending (`None`: too long for the header).
#[cfg(test)]
fn frame(packet: Packet, data: &[u8]) -> Option<Vec<u8>> {
    match packet {
        Packet::Raw | Packet::Line | Packet::Http => Some(data.to_vec()),
        Packet::Len(k) => {
            let mut v = header(k, data.len())?[..usize::from(k)].to_vec();
            v.extend_from_slice(data);
            Some(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_takes_what_is_there_or_exactly_n() {
        let mut b = b"hello".to_vec();
        assert_eq!(
            take(Packet::Raw, &mut b, &mut 0, 3, DEFAULT_MAX),
            Ok(Some(b"hel".to_vec()))
        );
        assert_eq!(take(Packet::Raw, &mut b, &mut 0, 3, DEFAULT_MAX), Ok(None));
        assert_eq!(
            take(Packet::Raw, &mut b, &mut 0, 0, DEFAULT_MAX),
            Ok(Some(b"lo".to_vec()))
        );
        assert_eq!(take(Packet::Raw, &mut b, &mut 0, 0, DEFAULT_MAX), Ok(None));
    }

    #[test]
    fn lines_keep_their_newline_and_are_bounded() {
        let mut b = b"one\ntwo\nthr".to_vec();
        assert_eq!(
            take(Packet::Line, &mut b, &mut 0, 0, 100),
            Ok(Some(b"one\n".to_vec()))
        );
        assert_eq!(
            take(Packet::Line, &mut b, &mut 0, 0, 100),
            Ok(Some(b"two\n".to_vec()))
        );
        assert_eq!(take(Packet::Line, &mut b, &mut 0, 0, 100), Ok(None));
        let mut long = vec![b'x'; 10];
        assert_eq!(take(Packet::Line, &mut long, &mut 0, 0, 10), Err(TooLong));
    }

    /// A line arriving a byte at a time is searched once: each search
    /// starts where the last one ended (it would find nothing new if it
    /// looked at the old bytes again: `scanned` says they hold no `\n`).
    #[test]
    fn a_dripping_line_is_scanned_once() {
        let mut b = Vec::new();
        let mut scanned = 0;
        for _ in 0..1000 {
            b.push(b'x');
            assert_eq!(
                take(Packet::Line, &mut b, &mut scanned, 0, 1 << 20),
                Ok(None)
            );
            assert_eq!(scanned, b.len());
        }
        b.extend_from_slice(b"yz\nrest");
        assert_eq!(
            take(Packet::Line, &mut b, &mut scanned, 0, 1 << 20).map(|p| p.map(|p| p.len())),
            Ok(Some(1003))
        );
        assert_eq!((scanned, &b[..]), (0, &b"rest"[..]));
        // Another framing resets the hint (it takes bytes of its own).
        let mut scanned = 3;
        assert_eq!(
            take(Packet::Raw, &mut b, &mut scanned, 2, 100),
            Ok(Some(b"re".to_vec()))
        );
        assert_eq!(scanned, 0);
    }

    #[test]
    fn length_headers_round_trip_and_hostile_lengths_are_refused() {
        for k in [1u8, 2, 4] {
            let mut b = frame(Packet::Len(k), b"abc").unwrap();
            b.extend(frame(Packet::Len(k), b"").unwrap());
            b.extend(&frame(Packet::Len(k), b"zz").unwrap()[..2]);
            assert_eq!(
                take(Packet::Len(k), &mut b, &mut 0, 0, 100),
                Ok(Some(b"abc".to_vec()))
            );
            assert_eq!(
                take(Packet::Len(k), &mut b, &mut 0, 0, 100),
                Ok(Some(Vec::new()))
            );
            assert_eq!(take(Packet::Len(k), &mut b, &mut 0, 0, 100), Ok(None));
        }
        // A header claiming 4 GB: refused before anything is buffered.
        let mut b = vec![0xff, 0xff, 0xff, 0xff, 1];
        assert_eq!(
            take(Packet::Len(4), &mut b, &mut 0, 0, DEFAULT_MAX),
            Err(TooLong)
        );
        assert_eq!(frame(Packet::Len(1), &[0; 256]), None);
        assert_eq!(frame(Packet::Len(1), &[0; 255]).map(|v| v.len()), Some(256));
    }
}

/// Bytes from a socket claim anything: framing any bytes, fed in any
/// pieces, never panics, never holds more than it must, and gives the same
/// packets however the bytes were split (the oracle: one feed of all).
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn packets(packet: Packet, chunks: &[Vec<u8>], max: usize) -> (Vec<Vec<u8>>, bool) {
        let mut buf = Vec::new();
        let mut scanned = 0;
        let mut out = Vec::new();
        for c in chunks {
            buf.extend_from_slice(c);
            loop {
                match take(packet, &mut buf, &mut scanned, 0, max) {
                    Ok(Some(p)) => {
                        if packet != Packet::Raw {
                            assert!(p.len() <= max, "a packet past the limit");
                        }
                        out.push(p)
                    }
                    Ok(None) => break,
                    Err(TooLong) => return (out, true),
                }
            }
        }
        (out, false)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 8 } else { 256 }))]
        #[test]
        fn any_bytes_in_any_pieces(
            data in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(0usize..600, 0..8),
            kind in 0usize..5,
            max in 1usize..300,
        ) {
            let packet = [Packet::Raw, Packet::Line, Packet::Len(1), Packet::Len(2), Packet::Len(4)][kind];
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut at = 0;
            for c in cuts {
                chunks.push(data[at..c].to_vec());
                at = c;
            }
            chunks.push(data[at..].to_vec());
            let (pieces, err1) = packets(packet, &chunks, max);
            let (whole, err2) = packets(packet, std::slice::from_ref(&data), max);
            if packet == Packet::Raw {
                // Raw packets are whatever arrived: the same bytes in order.
                prop_assert_eq!(pieces.concat(), whole.concat());
            } else {
                prop_assert_eq!(err1, err2);
                prop_assert_eq!(pieces, whole);
            }
        }

        #[test]
        fn http_heads_from_any_bytes(data in proptest::collection::vec(any::<u8>(), 0..400)) {
            let h = lona_term::Heap::new();
            let mut with_head = b"GET / HTTP/1.1\r\n".to_vec();
            with_head.extend_from_slice(&data);
            for bytes in [&data, &with_head] {
                if let crate::net::http::Head::Request(m, n) = crate::net::http::parse(&h, bytes) {
                    prop_assert!(n <= bytes.len());
                    // The oracle uses what was decoded: print it, compare it.
                    let s = m.to_string();
                    prop_assert!(s.contains(":headers"));
                    prop_assert!(lona_term::equal(m, m));
                    let _ = lona_term::term_hash(m);
                }
            }
        }
    }
}
