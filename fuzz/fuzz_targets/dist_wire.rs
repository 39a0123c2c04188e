//! The distribution's packet reader (`lona_vm::dist::wire::parse`), fed
//! what a hostile peer could send after the handshake. The oracle uses
//! what was read: a control message written again reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_vm::dist::wire;

fuzz_target!(|data: &[u8]| {
    if let Ok(c) = wire::parse(data) {
        let mut again = Vec::new();
        c.write(&mut again);
        assert_eq!(wire::parse(&again[4..]).as_ref(), Ok(&c));
    }
});
