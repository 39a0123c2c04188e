//! Large messages in pieces (Erlang's distribution fragments,
//! `DFLAG_FRAGMENTS`; called pieces here, since a `Fragment` is a heap
//! fragment, `lona_term`'s message): a packet as a sender made it, with
//! its large binaries referenced rather than copied ([`Packet`]); cutting
//! it into pieces ([`pieces`]); joining the pieces a peer sends
//! ([`Assembler`]). `wire.rs` reads a fragment's
//! header (`wire::frame`).

use lona_term::SharedBinary;

use super::wire::{WireError, DIST_FRAG_CONT, DIST_FRAG_HEADER, HEADER, R, VERSION};

/// A packet a local process encoded for a peer: `bytes` (length prefix
/// included) with its large binaries not copied in but referenced, each
/// written in place at its offset
/// ([`lona_term::etf::encode_node_spliced`]), as BEAM's distribution
/// writes refc binaries with `writev`.
pub struct Packet {
    /// The packet's own bytes.
    pub bytes: Vec<u8>,
    /// `(offset, binary)`: the binary's bytes come after `bytes[..offset]`
    /// (offsets ascending).
    pub splices: Vec<(usize, SharedBinary)>,
}

impl Packet {
    /// A packet with nothing spliced.
    pub fn whole(bytes: Vec<u8>) -> Packet {
        Packet {
            bytes,
            splices: Vec::new(),
        }
    }

    /// Its length on the wire (length prefix included).
    pub fn len(&self) -> usize {
        self.bytes.len() + self.splices.iter().map(|(_, b)| b.len()).sum::<usize>()
    }

    /// True for a packet of no bytes (never one we send).
    #[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its bytes in order, as slices (no empty one).
    pub fn segments(&self) -> Vec<&[u8]> {
        let mut v = Vec::with_capacity(2 * self.splices.len() + 1);
        let mut from = 0;
        for (at, b) in &self.splices {
            v.push(&self.bytes[from..*at]);
            v.push(&b[..]);
            from = *at;
        }
        v.push(&self.bytes[from..]);
        v.retain(|s| !s.is_empty());
        v
    }

    /// Appends its bytes to `out` (a copy of any spliced binary).
    pub fn append_to(&self, out: &mut Vec<u8>) {
        for s in self.segments() {
            out.extend_from_slice(s);
        }
    }
}

/// The fragments of a whole packet we wrote (length prefix included),
/// given as its `segments` in order, as message `seq`, each `(its length
/// prefix and header, the message's bytes it carries, as slices of the
/// segments)`: at most `size` bytes of the message each. The packet's
/// own prefix and header must lie in its first segment.
pub fn pieces<'a>(
    segments: &[&'a [u8]],
    seq: u64,
    size: usize,
) -> impl Iterator<Item = (Vec<u8>, Vec<&'a [u8]>)> {
    let skip = 4 + HEADER.len();
    let mut segs: std::collections::VecDeque<&'a [u8]> = segments.iter().copied().collect();
    let first = segs.pop_front().unwrap_or_default();
    segs.push_front(&first[skip.min(first.len())..]);
    let total: usize = segs.iter().map(|s| s.len()).sum();
    let size = size.max(1);
    let count = total.div_ceil(size).max(1) as u64;
    (0..count).map(move |i| {
        // The next `size` bytes (or what is left), across segments.
        let mut parts = Vec::new();
        let mut want = size;
        while want > 0 {
            let Some(s) = segs.pop_front() else { break };
            if s.len() > want {
                parts.push(&s[..want]);
                segs.push_front(&s[want..]);
                want = 0;
            } else {
                want -= s.len();
                if !s.is_empty() {
                    parts.push(s);
                }
            }
        }
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let first = i == 0;
        let mut h = Vec::with_capacity(23);
        let n = 18 + usize::from(first) + len;
        h.extend_from_slice(&(n as u32).to_be_bytes());
        h.push(VERSION);
        h.push(if first {
            DIST_FRAG_HEADER
        } else {
            DIST_FRAG_CONT
        });
        h.extend_from_slice(&seq.to_be_bytes());
        h.extend_from_slice(&(count - i).to_be_bytes());
        if first {
            h.push(0); // no atom cache references
        }
        (h, parts)
    })
}

/// At most this many fragmented messages under way on one connection.
pub const MAX_SEQUENCES: usize = 4096;

/// Joins a connection's fragmented messages. The memory held for the
/// messages under way (what came, or the room reserved for what a first
/// fragment announces, whichever is more) counts against a limit, so a
/// peer's fragment counts cannot make it reserve more; and their number
/// is limited too ([`MAX_SEQUENCES`]).
pub struct Assembler {
    open: std::collections::HashMap<u64, Partial>,
    /// The sum of the `held` of the messages under way.
    bytes: usize,
    limit: usize,
}

struct Partial {
    /// The id the next fragment must have.
    next: u64,
    body: Vec<u8>,
    /// Bytes counted against the limit for this message: its capacity.
    held: usize,
}

impl Assembler {
    /// An assembler for messages of at most `limit` bytes in all.
    pub fn new(limit: usize) -> Assembler {
        Assembler {
            open: Default::default(),
            bytes: 0,
            limit,
        }
    }

    /// The number of messages under way (the fuzz target's oracle).
    #[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
    pub fn under_way(&self) -> usize {
        self.open.len()
    }

    fn take(&mut self, n: usize) -> R<()> {
        match self.bytes.checked_add(n) {
            Some(b) if b <= self.limit => {
                self.bytes = b;
                Ok(())
            }
            _ => Err(WireError("fragmented messages larger than the limit")),
        }
    }

    /// The first fragment of message `seq` of `count` (> 1) fragments.
    pub fn first(&mut self, seq: u64, count: u64, body: &[u8]) -> R<()> {
        if self.open.contains_key(&seq) {
            return Err(WireError("a fragmented message started twice"));
        }
        if self.open.len() >= MAX_SEQUENCES {
            return Err(WireError("too many fragmented messages under way"));
        }
        self.take(body.len())?;
        // Room for the fragments to come, as large as this one, at most
        // 16 MiB up front and within what the limit has left: the room is
        // counted as held, so reservations cannot add up past the limit.
        let guess = (count.min(256) as usize)
            .saturating_mul(body.len())
            .min(16 << 20)
            .min(self.limit - self.bytes + body.len())
            .max(body.len());
        self.bytes += guess - body.len();
        let mut v = Vec::with_capacity(guess);
        v.extend_from_slice(body);
        self.open.insert(
            seq,
            Partial {
                next: count - 1,
                body: v,
                held: guess,
            },
        );
        Ok(())
    }

    /// Fragment `id` of message `seq`: the message's bytes (control and
    /// message, for `wire::parse_body`) when it was the last.
    pub fn next(&mut self, seq: u64, id: u64, data: &[u8]) -> R<Option<Vec<u8>>> {
        let p = self
            .open
            .get(&seq)
            .ok_or(WireError("a fragment of no message under way"))?;
        if id != p.next {
            return Err(WireError("a fragment out of order"));
        }
        // Beyond the room held, the buffer grows to twice its room (or
        // just enough, if the limit has no more left), and the growth
        // counts against the limit before it is allocated.
        let after = p.body.len() + data.len();
        if after > p.held {
            let want = (p.held * 2).max(after);
            let left = self.limit.saturating_sub(self.bytes);
            let to = if want - p.held <= left { want } else { after };
            self.take(to - p.held)?;
            let p = self.open.get_mut(&seq).expect("looked up above");
            p.body.reserve_exact(to - p.body.len());
            p.held = to;
        }
        let p = self.open.get_mut(&seq).expect("looked up above");
        p.body.extend_from_slice(data);
        p.next -= 1;
        if p.next > 0 {
            return Ok(None);
        }
        let p = self.open.remove(&seq).expect("looked up above");
        self.bytes -= p.held;
        Ok(Some(p.body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::wire::{
        frame, parse, parse_body, Control, Frame, WirePid, DIST_HEADER, UNUSED,
    };
    use lona_term::etf::tag::*;

    /// A `SEND` packet carrying a binary of `n` bytes.
    fn big_send(n: usize) -> Vec<u8> {
        let mut msg = vec![BINARY_EXT];
        msg.extend_from_slice(&(n as u32).to_be_bytes());
        msg.extend((0..n).map(|i| (i * 7) as u8));
        let mut out = Vec::new();
        Control::Send {
            sender: false,
            from: UNUSED,
            to: WirePid::of("b@h", (1, 2, 3)),
            msg: &msg,
        }
        .write(&mut out);
        out
    }

    #[test]
    fn fragments_join_to_the_whole_message() {
        for (n, size) in [(200_000, 65_536), (1000, 7), (65_536 * 2, 65_536), (50, 1)] {
            let whole = big_send(n);
            let want = parse(&whole[4..]).unwrap();
            let body_len = whole.len() - 4 - HEADER.len();
            let mut asm = Assembler::new(1 << 30);
            let mut done = None;
            let mut count = 0;
            // The packet in one piece, and cut as a spliced packet is
            // (one cut at the binary, a cut every 333 bytes).
            let cut_at = whole.len() - n;
            let pieces: Vec<&[u8]> = whole.chunks(333).collect();
            let split: Vec<&[u8]> = [&whole[..7], &whole[7..cut_at]]
                .into_iter()
                .chain(whole[cut_at..].chunks(333))
                .collect();
            let one: Vec<(Vec<u8>, Vec<&[u8]>)> = super::pieces(&[&whole], 42, size).collect();
            for other in [&pieces, &split] {
                let cut: Vec<(Vec<u8>, Vec<u8>)> = super::pieces(other, 42, size)
                    .map(|(h, parts)| (h, parts.concat()))
                    .collect();
                let one: Vec<(Vec<u8>, Vec<u8>)> =
                    one.iter().map(|(h, p)| (h.clone(), p.concat())).collect();
                assert_eq!(cut, one, "the same fragments however the packet is cut");
            }
            for (i, (head, data)) in one.iter().enumerate() {
                count += 1;
                let mut packet = head.clone();
                packet.extend_from_slice(&data.concat());
                let len = u32::from_be_bytes(packet[..4].try_into().unwrap()) as usize;
                assert_eq!(len, packet.len() - 4);
                match frame(&packet[4..]).unwrap() {
                    Frame::First { seq, count, body } => {
                        assert_eq!((i, seq), (0, 42));
                        assert_eq!(count as usize, body_len.div_ceil(size));
                        asm.first(seq, count, body).unwrap();
                    }
                    Frame::Next { seq, id, data } => {
                        assert!(done.is_none());
                        done = asm.next(seq, id, data).unwrap();
                    }
                    Frame::Whole(_) => panic!("a whole packet among fragments"),
                }
            }
            assert_eq!(count, body_len.div_ceil(size));
            let body = done.expect("the last fragment completes the message");
            assert_eq!(parse_body(&body), Ok(want));
            assert_eq!(asm.under_way(), 0);
            assert_eq!(asm.bytes, 0);
        }
    }

    #[test]
    fn fragments_out_of_order_or_over_the_limit_are_errors() {
        let whole = big_send(10_000);
        let frags: Vec<(Vec<u8>, Vec<&[u8]>)> = pieces(&[&whole], 9, 1000).collect();
        let (count, body) = match frame(&[&frags[0].0[4..], &frags[0].1.concat()].concat()) {
            Ok(Frame::First { count, body, .. }) => (count, body.to_vec()),
            other => panic!("{other:?}"),
        };
        let mut asm = Assembler::new(1 << 20);
        asm.first(9, count, &body).unwrap();
        assert!(asm.first(9, count, &body).is_err(), "started twice");
        assert!(asm.next(8, count - 1, b"x").is_err(), "no such message");
        assert!(asm.next(9, count - 2, b"x").is_err(), "skips one");
        assert!(asm.next(9, count, b"x").is_err(), "repeats one");
        // A limit smaller than the message.
        let mut small = Assembler::new(5_000);
        small.first(1, count, &body).unwrap();
        let mut err = None;
        for id in (1..count).rev() {
            if let Err(e) = small.next(1, id, &body) {
                err = Some(e);
                break;
            }
        }
        assert!(err.is_some(), "over the limit");
        // A huge claimed count reserves little.
        let mut a = Assembler::new(1 << 30);
        a.first(2, u64::MAX, b"abc").unwrap();
        assert!(a.open[&2].body.capacity() <= 16 << 20);
        // A count of 0, and atom cache references, are malformed.
        let mut p = vec![VERSION, DIST_FRAG_HEADER];
        p.extend_from_slice(&[0; 16]);
        p.push(0);
        assert!(frame(&p).is_err());
        assert!(frame(&[VERSION, DIST_HEADER, 1, 0]).is_err());
        // First fragments that announce large messages cannot reserve
        // more than the limit between them: the peer is cut off first.
        let mut greedy = Assembler::new(64 << 20);
        let chunk = vec![0u8; 64 << 10];
        let mut refused = false;
        for seq in 0..MAX_SEQUENCES as u64 {
            if greedy.first(seq, 1 << 40, &chunk).is_err() {
                refused = true;
                break;
            }
            let reserved: usize = greedy.open.values().map(|p| p.body.capacity()).sum();
            assert!(reserved <= 64 << 20, "reserved {reserved}");
            assert_eq!(
                greedy.bytes,
                greedy.open.values().map(|p| p.held).sum::<usize>()
            );
        }
        assert!(refused, "the limit cut the reservations off");
        // Too many messages under way.
        let mut many = Assembler::new(1 << 30);
        for seq in 0..MAX_SEQUENCES as u64 {
            many.first(seq, 3, b"a").unwrap();
        }
        assert!(many.first(u64::MAX, 3, b"a").is_err());
    }
}
