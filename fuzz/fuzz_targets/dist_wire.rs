//! The distribution's packet reader (`lona_vm::dist::wire::frame`, and
//! its `Assembler` for fragments), fed what a hostile peer could send
//! after the handshake. The oracle uses what was read: a control message
//! written again reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_vm::dist::{pieces, wire};

/// The oracle: a control message read from hostile bytes, written again,
/// reads back the same.
fn round_trips(c: &wire::Control<'_>) {
    let mut again = Vec::new();
    c.write(&mut again);
    assert_eq!(wire::parse(&again[4..]).as_ref(), Ok(c));
}

fuzz_target!(|data: &[u8]| {
    // The input is a connection's packets, each a 2-byte length and its
    // bytes: whole packets and fragments, joined as a reader does.
    let mut asm = pieces::Assembler::new(1 << 20);
    let mut rest = data;
    while rest.len() >= 2 {
        let n = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let p = &rest[2..2 + n];
        rest = &rest[2 + n..];
        match wire::frame(p) {
            Ok(wire::Frame::Whole(c)) => round_trips(&c),
            Ok(wire::Frame::First { seq, count, body }) => {
                let _ = asm.first(seq, count, body);
            }
            Ok(wire::Frame::Next { seq, id, data }) => {
                if let Ok(Some(body)) = asm.next(seq, id, data) {
                    if let Ok(c) = wire::parse_body(&body) {
                        round_trips(&c);
                    }
                }
            }
            Err(_) => {}
        }
    }
});
