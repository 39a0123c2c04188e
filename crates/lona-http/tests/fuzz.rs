//! Random and mutated bytes on a connection: whatever arrives, the server
//! answers with well-formed responses (each a status it may give, its
//! body as long as it says) and/or closes, and goes on serving a good
//! client afterwards. One server serves every case.

mod common;

use common::{handler, start, Raw, Running};
use lona_http::HttpServer;
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::Duration;

fn server() -> &'static Running {
    static S: OnceLock<Running> = OnceLock::new();
    S.get_or_init(|| {
        start(
            HttpServer::new()
                .max_header_bytes(2048)
                .max_body_bytes(4096)
                .idle_timeout(Duration::from_secs(5)),
            handler,
        )
    })
}

/// Valid requests the mutations start from.
const SEEDS: &[&[u8]] = &[
    b"GET /a?b=c HTTP/1.1\r\nhost: t\r\n\r\n",
    b"POST /echo HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello",
    b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n",
    b"PUT /echo HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\nhi",
    b"GET /x HTTP/1.1\r\n\r\nGET /y HTTP/1.1\r\nconnection: close\r\n\r\n",
];

#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    Repeat(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (
            any::<usize>(),
            prop_oneof![
                Just(b'\r'),
                Just(b'\n'),
                Just(b':'),
                Just(b' '),
                any::<u8>()
            ]
        )
            .prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), 1..3000usize).prop_map(|(i, n)| Mutation::Repeat(i, n)),
    ]
}

fn mutate(seed: &[u8], ms: &[Mutation]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for m in ms {
        if v.is_empty() {
            break;
        }
        let at = |i: usize| i % v.len();
        match *m {
            Mutation::Flip(i, b) => {
                let i = at(i);
                v[i] ^= b | 1;
            }
            Mutation::Insert(i, b) => {
                let i = at(i);
                v.insert(i, b);
            }
            Mutation::Delete(i) => {
                let i = at(i);
                v.remove(i);
            }
            Mutation::Truncate(i) => {
                let i = at(i);
                v.truncate(i);
            }
            Mutation::Repeat(i, n) => {
                let i = at(i);
                let b = v[i];
                v.splice(i..i, std::iter::repeat_n(b, n));
            }
        }
    }
    v
}

/// Sends `bytes` (in two writes, split at `split`), ends the writing
/// half, and checks everything that comes back until the server closes.
fn check(bytes: &[u8], split: usize) {
    let srv = server();
    let mut c = Raw::connect(srv.addr);
    let split = split % (bytes.len() + 1);
    c.send(&bytes[..split]);
    c.send(&bytes[split..]);
    c.s.shutdown(std::net::Shutdown::Write).unwrap();
    let mut answers = 0;
    // `try_response` panics on anything that is not a whole response.
    while let Some(r) = c.try_response(false) {
        assert!(
            [100, 200, 204, 400, 408, 413, 417, 431, 500, 501].contains(&r.status),
            "status {} for {:?}",
            r.status,
            String::from_utf8_lossy(bytes)
        );
        answers += 1;
        assert!(
            answers < 100,
            "more answers than requests could be in {} bytes",
            bytes.len()
        );
    }
    // And a good client is served.
    let mut good = Raw::connect(srv.addr);
    assert_eq!(good.get("/ok").text(), "GET /ok -\n");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn mutated_requests(seed in 0..SEEDS.len(), ms in prop::collection::vec(mutation(), 1..6), split in any::<usize>()) {
        check(&mutate(SEEDS[seed], &ms), split);
    }

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600), split in any::<usize>()) {
        check(&bytes, split);
    }

    #[test]
    fn valid_prefix_then_random_bytes(
        seed in 0..SEEDS.len(),
        tail in prop::collection::vec(any::<u8>(), 0..300),
        split in any::<usize>(),
    ) {
        let mut bytes = SEEDS[seed].to_vec();
        bytes.extend_from_slice(&tail);
        check(&bytes, split);
    }
}
