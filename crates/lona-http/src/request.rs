//! [`Request`]: what a handler is given (and what the client sends), and
//! query-string decoding.

use std::borrow::Cow;
use std::net::SocketAddr;

use crate::headers::{Headers, Method, Version};

/// An HTTP request, read whole: the body is in memory (bounded by the
/// server's [`max_body_bytes`](crate::HttpServer::max_body_bytes)), already
/// de-chunked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: Method,
    /// The path of the request target, as sent (percent-encoded), without
    /// the query: `/search` for `GET /search?q=lona`. An absolute-form
    /// target (`http://host/x`) gives its path (`/x`).
    pub path: String,
    /// The query, without the `?`: `Some("q=lona")`; see
    /// [`Request::query_param`].
    pub query: Option<String>,
    pub version: Version,
    pub headers: Headers,
    pub body: Vec<u8>,
    /// The peer's address, when the server knows it.
    pub remote_addr: Option<SocketAddr>,
    /// The path parameters a [`Router`](crate::Router) matched, in the
    /// pattern's order, percent-decoded: `[("id", "7")]` for `/users/7`
    /// against `/users/:id`; see [`Request::param`]. Empty elsewhere.
    pub params: Vec<(String, String)>,
}

impl Request {
    /// A request for `target` (a path with an optional `?query`), HTTP/1.1,
    /// no headers, no body.
    pub fn new(method: Method, target: &str) -> Request {
        let (path, query) = split_target(target);
        Request {
            method,
            path: path.to_owned(),
            query: query.map(str::to_owned),
            version: Version::Http11,
            headers: Headers::new(),
            body: Vec::new(),
            remote_addr: None,
            params: Vec::new(),
        }
    }

    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// The decoded value of the first query parameter called `name`
    /// (`application/x-www-form-urlencoded`: `+` is a space, `%XX` a
    /// byte): `Some("a b")` for `?name=a+b`, `Some("")` for `?name`.
    pub fn query_param(&self, name: &str) -> Option<String> {
        query_pairs(self.query.as_deref().unwrap_or(""))
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }

    /// The body as text, if it is UTF-8.
    pub fn body_text(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.body)
    }

    /// The path parameter `name` a [`Router`](crate::Router) matched
    /// (percent-decoded): `Some("7")` for `:id` in `/users/:id` and a
    /// request for `/users/7`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Splits a request target into its path and query; an absolute-form
/// target loses its scheme and authority, an empty path becomes `/`.
pub(crate) fn split_target(target: &str) -> (&str, Option<&str>) {
    let target = target.split_once('#').map_or(target, |(t, _)| t);
    let target = match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find(['/', '?']).map_or("/", |i| &rest[i..]),
        None => target,
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    (if path.is_empty() { "/" } else { path }, query)
}

/// The decoded `(name, value)` pairs of a query string, in order.
pub fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query.split('&').filter(|kv| !kv.is_empty()).map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (form_decode(k), form_decode(v))
    })
}

/// Decodes `application/x-www-form-urlencoded` text: `+` is a space,
/// `%XX` a byte (a `%` not followed by two hex digits stays as it is);
/// bytes that are not UTF-8 become U+FFFD.
pub fn form_decode(s: &str) -> Cow<'_, str> {
    decode(s, true)
}

/// `%XX` decoded (invalid UTF-8 replaced), and `+` as a space when
/// `plus_is_space` (forms; not in paths).
pub(crate) fn decode(s: &str, plus_is_space: bool) -> Cow<'_, str> {
    if !(s.contains('%') || plus_is_space && s.contains('+')) {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' => match (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split() {
        assert_eq!(split_target("/a/b?x=1&y"), ("/a/b", Some("x=1&y")));
        assert_eq!(split_target("/a"), ("/a", None));
        assert_eq!(split_target("http://h:1/p?q"), ("/p", Some("q")));
        assert_eq!(split_target("http://h:1"), ("/", None));
        assert_eq!(split_target("http://h?q"), ("/", Some("q")));
        assert_eq!(split_target("/p#frag"), ("/p", None));
        assert_eq!(split_target("*"), ("*", None));
    }

    #[test]
    fn query_params_decode() {
        let mut r = Request::new(Method::Get, "/x?name=a+b%21&e=&flag&name=second&bad=%zz%4");
        assert_eq!(r.query_param("name").as_deref(), Some("a b!"));
        assert_eq!(r.query_param("e").as_deref(), Some(""));
        assert_eq!(r.query_param("flag").as_deref(), Some(""));
        assert_eq!(r.query_param("bad").as_deref(), Some("%zz%4"));
        assert_eq!(r.query_param("none"), None);
        r.query = Some("u=%C3%A9%FF".into());
        assert_eq!(r.query_param("u").as_deref(), Some("é\u{fffd}"));
        r.query = None;
        assert_eq!(r.query_param("u"), None);
    }
}
