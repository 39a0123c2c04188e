//! [`Headers`], [`Method`] and [`Version`]: the parts a request and a
//! response share.
//!
//! Header names compare without regard to case (RFC 9110 §5.1); names of
//! received headers are stored lower-case, names given by a handler are
//! written as given. Names and values given are `Cow<'static, str>`, so a
//! constant header (`("content-type", "text/plain")`) costs no copy;
//! received ones share one buffer.

use std::borrow::Cow;
use std::fmt;

/// An ordered list of header fields. A name may appear more than once
/// (`append`); [`Headers::get`] gives the first.
///
/// Received headers: names lower-case, values trimmed of surrounding
/// white space, bytes that are not UTF-8 replaced by U+FFFD (header
/// values are ASCII in practice; RFC 9110 §5.5 calls other bytes
/// "opaque data"). They are kept in one buffer, so a request's headers
/// cost two allocations however many there are.
#[derive(Clone, Default)]
pub struct Headers {
    list: Vec<(Text, Text)>,
    /// The received fields' names and values, one after another; the
    /// `Text::Raw` spans of `list` point into it.
    raw: String,
}

/// A name or a value: given (by a handler, or a constant), or received
/// (a span of [`Headers::raw`]).
#[derive(Clone)]
enum Text {
    Given(Cow<'static, str>),
    Raw(usize, usize),
}

impl Text {
    /// The text, reading a received one from `raw` (its `Headers::raw`).
    fn text<'a>(&'a self, raw: &'a str) -> &'a str {
        match self {
            Text::Given(s) => s,
            Text::Raw(start, end) => &raw[*start..*end],
        }
    }
}

impl Headers {
    /// No headers.
    pub const fn new() -> Headers {
        Headers {
            list: Vec::new(),
            raw: String::new(),
        }
    }

    /// No headers, with room for `n`.
    pub fn with_capacity(n: usize) -> Headers {
        Headers {
            list: Vec::with_capacity(n),
            raw: String::new(),
        }
    }

    /// The value of the first header called `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Every value of the headers called `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// Whether a header called `name` is there.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Whether the comma-separated lists of the headers called `name`
    /// hold `token` (any case): `has_token("connection", "close")`.
    pub fn has_token(&self, name: &str, token: &str) -> bool {
        self.get_all(name)
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// Adds a header, after any of the same name.
    pub fn append(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) {
        self.list
            .push((Text::Given(name.into()), Text::Given(value.into())));
    }

    /// Sets the header `name` to `value`, replacing every one of that name.
    pub fn insert(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) {
        let name = name.into();
        self.remove(&name);
        self.list
            .push((Text::Given(name), Text::Given(value.into())));
    }

    /// Removes every header called `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.list.len();
        let raw = &self.raw;
        self.list
            .retain(|(k, _)| !k.text(raw).eq_ignore_ascii_case(name));
        self.list.len() != before
    }

    /// The headers in order, as `(name, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.list
            .iter()
            .map(|(k, v)| (k.text(&self.raw), v.text(&self.raw)))
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Received headers: names lower-cased, values trimmed, all in one
    /// buffer.
    pub(crate) fn from_parsed(parsed: &[httparse::Header<'_>]) -> Headers {
        let size = parsed
            .iter()
            .map(|p| p.name.len() + p.value.len())
            .sum::<usize>();
        let mut h = Headers {
            list: Vec::with_capacity(parsed.len()),
            raw: String::with_capacity(size),
        };
        for p in parsed {
            let start = h.raw.len();
            // httparse admits only token characters (ASCII) in a name.
            h.raw.push_str(p.name);
            h.raw[start..].make_ascii_lowercase();
            let name = Text::Raw(start, h.raw.len());
            let start = h.raw.len();
            h.raw.push_str(&String::from_utf8_lossy(trim(p.value)));
            h.list.push((name, Text::Raw(start, h.raw.len())));
        }
        h
    }
}

/// Equal when they hold the same fields in the same order, however each
/// is stored.
impl PartialEq for Headers {
    fn eq(&self, other: &Headers) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Headers {}

fn trim(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|b| !b.is_ascii_whitespace());
    let end = v.iter().rposition(|b| !b.is_ascii_whitespace());
    match (start, end) {
        (Some(s), Some(e)) => &v[s..=e],
        _ => &[],
    }
}

impl fmt::Debug for Headers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K, V> FromIterator<(K, V)> for Headers
where
    K: Into<Cow<'static, str>>,
    V: Into<Cow<'static, str>>,
{
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Headers {
        Headers {
            list: iter
                .into_iter()
                .map(|(k, v)| (Text::Given(k.into()), Text::Given(v.into())))
                .collect(),
            raw: String::new(),
        }
    }
}

impl<K, V, const N: usize> From<[(K, V); N]> for Headers
where
    K: Into<Cow<'static, str>>,
    V: Into<Cow<'static, str>>,
{
    fn from(a: [(K, V); N]) -> Headers {
        a.into_iter().collect()
    }
}

/// A request method (RFC 9110 §9). The nine standard ones are variants;
/// any other token is [`Method::Other`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Patch,
    Options,
    Trace,
    Connect,
    /// Any other method token, as sent (methods are case-sensitive).
    Other(String),
}

impl Method {
    /// The method of a request line's token.
    pub fn from_token(token: &str) -> Method {
        match token {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            "TRACE" => Method::Trace,
            "CONNECT" => Method::Connect,
            other => Method::Other(other.to_owned()),
        }
    }

    /// The token, as on the wire: `"GET"`.
    pub fn as_str(&self) -> &str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
            Method::Options => "OPTIONS",
            Method::Trace => "TRACE",
            Method::Connect => "CONNECT",
            Method::Other(s) => s,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The protocol version of a request: HTTP/1.0 or HTTP/1.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    Http10,
    Http11,
}

impl Version {
    /// `"HTTP/1.0"` or `"HTTP/1.1"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case_and_insert_replaces() {
        let mut h = Headers::from([("Content-Type", "text/plain"), ("x-a", "1")]);
        h.append("X-A", "2");
        assert_eq!(h.get("content-type"), Some("text/plain"));
        assert_eq!(h.get_all("x-a").collect::<Vec<_>>(), ["1", "2"]);
        h.insert("x-A", "3");
        assert_eq!(h.get_all("X-a").collect::<Vec<_>>(), ["3"]);
        assert!(h.remove("CONTENT-TYPE"));
        assert!(!h.contains("content-type"));
        assert_eq!(h.len(), 1);
    }

    /// Received fields (one buffer) and given ones (handler-set) mix:
    /// lookups, removal and equality see the same fields either way.
    #[test]
    fn received_fields_share_a_buffer_and_mix_with_given_ones() {
        let mut fields = [httparse::EMPTY_HEADER; 8];
        let mut req = httparse::Request::new(&mut fields);
        let head = b"GET / HTTP/1.1\r\nHost: a.example\r\nX-Multi:  one \r\nx-multi:two\r\nX-Bin: \xff\xfeok\r\nEmpty:\r\n\r\n";
        assert!(req.parse(head).unwrap().is_complete());
        let mut h = Headers::from_parsed(req.headers);
        assert_eq!(
            h.iter().collect::<Vec<_>>(),
            [
                ("host", "a.example"),
                ("x-multi", "one"),
                ("x-multi", "two"),
                ("x-bin", "\u{fffd}\u{fffd}ok"),
                ("empty", ""),
            ]
        );
        assert_eq!(h.get("HOST"), Some("a.example"));
        assert_eq!(
            h,
            Headers::from([
                ("host", "a.example"),
                ("x-multi", "one"),
                ("x-multi", "two"),
                ("x-bin", "\u{fffd}\u{fffd}ok"),
                ("empty", ""),
            ]),
            "equal to the same fields given"
        );
        assert!(h.remove("X-MULTI"));
        h.insert("Host", "b.example");
        h.append("x-multi", "three");
        assert_eq!(
            h.iter().collect::<Vec<_>>(),
            [
                ("x-bin", "\u{fffd}\u{fffd}ok"),
                ("empty", ""),
                ("Host", "b.example"),
                ("x-multi", "three"),
            ]
        );
        assert_ne!(h, Headers::new());
        assert_eq!(
            format!("{:?}", Headers::from([("a", "b")])),
            r#"{"a": "b"}"#
        );
    }

    #[test]
    fn tokens_in_lists() {
        let h = Headers::from([
            ("connection", "keep-alive, Upgrade"),
            ("Connection", "CLOSE "),
        ]);
        assert!(h.has_token("Connection", "close"));
        assert!(h.has_token("connection", "upgrade"));
        assert!(!h.has_token("connection", "clos"));
    }

    #[test]
    fn methods_round_trip() {
        for m in [
            "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
        ] {
            assert_eq!(Method::from_token(m).as_str(), m);
        }
        assert_eq!(Method::from_token("get"), Method::Other("get".into()));
    }
}
