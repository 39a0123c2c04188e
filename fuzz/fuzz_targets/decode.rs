//! Feeds arbitrary bytes to the term decoder, and whatever decodes to the
//! oracle the default test suite also uses
//! (`crates/lona-term/tests/oracle/mod.rs`): printed, compared and hashed
//! with itself and copies, deep-copied to another heap and sent through a
//! fragment, re-encoded, collected. Functions never decode, so there is
//! nothing to call.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/lona-term/tests/oracle/mod.rs"]
mod oracle;

fuzz_target!(|data: &[u8]| {
    // names the fuzzer can find, so keywords decode (no new ones do)
    static SEED: std::sync::Once = std::sync::Once::new();
    SEED.call_once(|| {
        for n in ["a", "b", "ok", "k", "s"] {
            lona_term::Term::keyword(n);
        }
    });
    let _ = oracle::check(data);
});
