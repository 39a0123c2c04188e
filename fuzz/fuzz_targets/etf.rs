//! Feeds arbitrary bytes to the Erlang external term format decoder
//! (`lona_term::etf`): it never panics, and whatever decodes encodes again
//! to bytes that decode to an equal term and encode to the same bytes;
//! likewise with a node context, where pids and references (tags 88, 90,
//! 103, 114) decode too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lona_term::{etf, Heap};

fuzz_target!(|data: &[u8]| {
    // names the fuzzer can find, so atoms decode (no new ones do)
    static SEED: std::sync::Once = std::sync::Once::new();
    SEED.call_once(|| {
        for n in ["a", "b", "ok", "k", "a@b"] {
            lona_term::Term::keyword(n);
        }
    });
    let h = Heap::new();
    if let Ok(t) = etf::decode(&h, data) {
        let again = etf::encode(t).expect("a decoded term encodes");
        let t2 = etf::decode(&h, &again).expect("a re-encoded term decodes");
        assert_eq!(t, t2);
        assert_eq!(etf::encode(t2).unwrap(), again);
    }
    let me = etf::Node {
        name: lona_term::Atom::new("a@b"),
        creation: 1,
    };
    let mut none = etf::AtomBudget::none();
    if let Ok(t) = etf::decode_node(&h, data, &mut none, &me) {
        let again = etf::encode_node(t, &me).expect("a decoded term encodes");
        let t2 = etf::decode_node(&h, &again, &mut none, &me).expect("a re-encoded term decodes");
        assert_eq!(t, t2);
        assert_eq!(etf::encode_node(t2, &me).unwrap(), again);
    }
});
