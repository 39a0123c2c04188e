//! `:packet :http` (Erlang's `{packet, http_bin}`): an HTTP/1.x request
//! head parsed in Rust, by the `httparse` crate, into the request map
//! `lona.http` hands its handlers (the body is read after it, by length).

use lona_term::{Heap, Term};

/// The most header lines a request may have (more: `:too-many-headers`).
pub(crate) const MAX_HEADERS: usize = 100;

/// What parsing the front of a buffer gave.
pub(crate) enum Head<'h> {
    /// A request map, and the bytes of its head (to drain).
    Request(Term<'h>, usize),
    /// Not all there yet.
    Partial,
    /// Not HTTP (`:bad-request`), or too many headers.
    Error(&'static str),
}

/// Parses the request head at the front of `buf` into `{:method :uri
/// :query-string :protocol :headers}` on `heap`: the method a keyword
/// when it is one of HTTP's nine (else its name, a string), header names
/// lower-case, a repeated header's values joined by ", ".
pub(crate) fn parse<'h>(heap: &'h Heap, buf: &[u8]) -> Head<'h> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Head::Partial,
        Err(httparse::Error::TooManyHeaders) => return Head::Error("too-many-headers"),
        Err(_) => return Head::Error("bad-request"),
    };
    let method = match req.method.unwrap_or("") {
        "GET" => Term::keyword("get"),
        "HEAD" => Term::keyword("head"),
        "POST" => Term::keyword("post"),
        "PUT" => Term::keyword("put"),
        "DELETE" => Term::keyword("delete"),
        "PATCH" => Term::keyword("patch"),
        "OPTIONS" => Term::keyword("options"),
        "TRACE" => Term::keyword("trace"),
        "CONNECT" => Term::keyword("connect"),
        other => heap.string(other),
    };
    let target = req.path.unwrap_or("/");
    let (uri, query) = match target.split_once('?') {
        Some((u, q)) => (u, Some(q)),
        None => (target, None),
    };
    let protocol = if req.version == Some(0) {
        "HTTP/1.0"
    } else {
        "HTTP/1.1"
    };
    let mut pairs: Vec<(String, String)> = Vec::with_capacity(req.headers.len());
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        let value = String::from_utf8_lossy(h.value).trim().to_string();
        match pairs.iter_mut().find(|(k, _)| *k == name) {
            Some((_, v)) => {
                v.push_str(", ");
                v.push_str(&value);
            }
            None => pairs.push((name, value)),
        }
    }
    let hs: Vec<(Term<'_>, Term<'_>)> = pairs
        .iter()
        .map(|(k, v)| (heap.string(k), heap.string(v)))
        .collect();
    let map = heap.map(&[
        (Term::keyword("method"), method),
        (Term::keyword("uri"), heap.string(uri)),
        (
            Term::keyword("query-string"),
            query.map_or(Term::NIL, |q| heap.string(q)),
        ),
        (Term::keyword("protocol"), heap.string(protocol)),
        (Term::keyword("headers"), heap.map(&hs)),
    ]);
    Head::Request(map, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_partial_heads_wait_and_garbage_is_refused() {
        let h = Heap::new();
        let full = b"GET /a?x=1 HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\n\r\nBODY";
        match parse(&h, full) {
            Head::Request(m, n) => {
                assert_eq!(n, full.len() - 4);
                let s = m.to_string();
                assert!(s.contains(":method :get"), "{s}");
                assert!(s.contains(":uri \"/a\""), "{s}");
                assert!(s.contains(":query-string \"x=1\""), "{s}");
                assert!(s.contains("\"x-a\" \"1, 2\""), "{s}");
                assert!(s.contains("\"host\" \"h\""), "{s}");
            }
            _ => panic!("not parsed"),
        }
        assert!(matches!(
            parse(&h, b"GET / HTTP/1.1\r\nHost:"),
            Head::Partial
        ));
        assert!(matches!(
            parse(&h, b"\x00\x01garbage\r\n\r\n"),
            Head::Error("bad-request")
        ));
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend(format!("h{i}: v\r\n").bytes());
        }
        many.extend(b"\r\n");
        assert!(matches!(parse(&h, &many), Head::Error("too-many-headers")));
        match parse(&h, b"BREW /pot HTTP/1.0\r\n\r\n") {
            Head::Request(m, _) => {
                let s = m.to_string();
                assert!(s.contains(":method \"BREW\""), "{s}");
                assert!(s.contains("HTTP/1.0"), "{s}");
            }
            _ => panic!("not parsed"),
        }
    }
}
