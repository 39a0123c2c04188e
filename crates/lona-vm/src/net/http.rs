//! `:packet :http` (Erlang's `{packet, http_bin}`): an HTTP/1.x request
//! head parsed in Rust, by the `httparse` crate, into the request map
//! `lona.http` hands its handlers (the body is read after it, by length).

use std::fmt::Write as _;

use lona_term::{Heap, Term, View};

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
        "GET" => lona_term::kw!("get"),
        "HEAD" => lona_term::kw!("head"),
        "POST" => lona_term::kw!("post"),
        "PUT" => lona_term::kw!("put"),
        "DELETE" => lona_term::kw!("delete"),
        "PATCH" => lona_term::kw!("patch"),
        "OPTIONS" => lona_term::kw!("options"),
        "TRACE" => lona_term::kw!("trace"),
        "CONNECT" => lona_term::kw!("connect"),
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
    // Header names lower-cased in one reused buffer; a repeated header
    // (rare) has its values joined.
    let mut hs: Vec<(Term<'h>, Term<'h>)> = Vec::with_capacity(req.headers.len());
    let mut name = String::new();
    for h in req.headers.iter() {
        name.clear();
        name.push_str(h.name);
        name.make_ascii_lowercase();
        let value = String::from_utf8_lossy(h.value);
        let value = value.trim();
        match hs
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(name.as_str()))
        {
            Some((_, v)) => {
                let joined = format!("{}, {value}", v.as_str().unwrap_or(""));
                *v = heap.string(&joined);
            }
            None => hs.push((heap.string(&name), heap.string(value))),
        }
    }
    // The keys in the map's order (by name), so it is built sorted.
    let map = heap.map(&[
        (lona_term::kw!("headers"), heap.map(&hs)),
        (lona_term::kw!("method"), method),
        (lona_term::kw!("protocol"), heap.string(protocol)),
        (
            lona_term::kw!("query-string"),
            query.map_or(Term::NIL, |q| heap.string(q)),
        ),
        (lona_term::kw!("uri"), heap.string(uri)),
    ]);
    Head::Request(map, n)
}

/// The reason phrase HTTP gives `status` (`"Status"` for one not known):
/// the one table, `lona_http::reason`, which the Rust API's server uses.
pub(crate) fn reason(status: i64) -> &'static str {
    match u16::try_from(status).map(lona_http::reason) {
        Ok(r) if !r.is_empty() => r,
        _ => "Status",
    }
}

/// Why a response could not be encoded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EncodeError {
    /// A status outside 100-999.
    Status,
    /// A header name or value holding CR or LF (response splitting).
    Header,
}

/// Writes a response's head and body into `out`: the status line, each
/// header of `headers` (a map, or nil) but `content-length` and
/// `connection`, which it writes itself, then the body. Names and values
/// are written as `str` writes them; one holding CR or LF is refused.
pub(crate) fn encode_response(
    out: &mut Vec<u8>,
    status: i64,
    headers: Term<'_>,
    body: &[u8],
    close: bool,
) -> Result<(), EncodeError> {
    let head = encode_head(status, headers, body.len(), close)?;
    out.reserve(head.len() + body.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(body);
    Ok(())
}

/// A response's head alone, for a body of `body_len` bytes sent after it
/// (`encode_response` has the rules).
pub(crate) fn encode_head(
    status: i64,
    headers: Term<'_>,
    body_len: usize,
    close: bool,
) -> Result<String, EncodeError> {
    if !(100..=999).contains(&status) {
        return Err(EncodeError::Status);
    }
    let mut head = String::with_capacity(128);
    let _ = write!(head, "HTTP/1.1 {status} {}\r\n", reason(status));
    if let View::Map(m) = headers.view() {
        let mut field = String::new();
        for (k, v) in m.iter() {
            field.clear();
            match k.view() {
                View::Keyword(a) => field.push_str(a.name()),
                _ => crate::print::display_into(&mut field, k),
            }
            let name_len = field.len();
            if field.eq_ignore_ascii_case("content-length")
                || field.eq_ignore_ascii_case("connection")
            {
                continue;
            }
            field.push_str(": ");
            crate::print::display_into(&mut field, v);
            if field.contains(['\r', '\n']) || name_len == 0 {
                return Err(EncodeError::Header);
            }
            head.push_str(&field);
            head.push_str("\r\n");
        }
    }
    let _ = write!(head, "content-length: {body_len}\r\n");
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    Ok(head)
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

    #[test]
    fn responses_are_encoded_and_bad_ones_refused() {
        let h = Heap::new();
        let headers = h.map(&[
            (h.string("Content-Type"), h.string("text/plain")),
            (Term::keyword("status"), h.int(7)),
            (h.string("Content-Length"), h.string("999")),
            (h.string("connection"), h.string("keep-alive")),
        ]);
        let mut out = Vec::new();
        encode_response(&mut out, 404, headers, b"gone", true).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        assert!(text.contains("Content-Type: text/plain\r\n"), "{text}");
        // A keyword name is written without its colon.
        assert!(text.contains("\r\nstatus: 7\r\n"), "{text}");
        // The caller's length and connection are replaced by the real ones.
        assert!(
            !text.contains("999") && !text.contains("keep-alive"),
            "{text}"
        );
        assert!(
            text.ends_with("content-length: 4\r\nconnection: close\r\n\r\ngone"),
            "{text}"
        );
        let mut out = Vec::new();
        encode_response(&mut out, 299, Term::NIL, b"", false).unwrap();
        assert_eq!(out, b"HTTP/1.1 299 Status\r\ncontent-length: 0\r\n\r\n");
        for status in [99, 1000, -1] {
            let r = encode_response(&mut Vec::new(), status, Term::NIL, b"", false);
            assert_eq!(r, Err(EncodeError::Status));
        }
        // Response splitting: CR or LF in a name or a value.
        for (k, v) in [("x", "a\r\nset-cookie: evil"), ("x\ny", "v"), ("", "v")] {
            let hs = h.map(&[(h.string(k), h.string(v))]);
            let r = encode_response(&mut Vec::new(), 200, hs, b"", false);
            assert_eq!(r, Err(EncodeError::Header), "{k:?} {v:?}");
        }
    }
}
