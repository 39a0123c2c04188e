//! [`Response`]: what a handler answers (and what the client gets back),
//! its constructors, and the standard reason phrases.

use std::borrow::Cow;

use crate::headers::Headers;

/// An HTTP response. The body is a `Cow`, so a constant body
/// (`Response::text("hello\n")`) is never copied.
///
/// The server frames the body itself: it writes `content-length` (none
/// for 1xx, 204 and 304, and no body for those or for a `HEAD`
/// request), `date` unless the handler set one, and `connection` as the
/// connection requires; a handler's own `content-length`,
/// `transfer-encoding` and `connection` headers are not written
/// (`connection: close` from a handler closes the connection after this
/// response). A status outside 200–999 or a header that is not a valid
/// field (a name that is not a token, a value with CR, LF or another
/// control character) makes the server answer 500 instead, and log why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Headers,
    pub body: Cow<'static, [u8]>,
}

impl Default for Response {
    fn default() -> Response {
        Response::new(200)
    }
}

impl Response {
    /// A response with `status`, no headers, an empty body.
    pub fn new(status: u16) -> Response {
        Response {
            status,
            headers: Headers::new(),
            body: Cow::Borrowed(&[]),
        }
    }

    /// 200 with a `text/plain; charset=utf-8` body.
    pub fn text(body: impl Into<Cow<'static, str>>) -> Response {
        Response::new(200)
            .with_header("content-type", "text/plain; charset=utf-8")
            .with_body(match body.into() {
                Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                Cow::Owned(s) => Cow::Owned(s.into_bytes()),
            })
    }

    /// 200 with an `application/json` body: JSON text (a `&'static str`
    /// or `String`, sent as it is) or a `serde_json::Value` (serialized).
    ///
    /// ```
    /// use lona_http::Response;
    /// let a = Response::json(r#"{"ok": true}"#);
    /// let b = Response::json(serde_json::json!({"ok": true}));
    /// assert_eq!(b.body.as_ref(), br#"{"ok":true}"#);
    /// assert_eq!(a.headers.get("content-type"), Some("application/json"));
    /// ```
    pub fn json(body: impl Into<Json>) -> Response {
        Response::new(200)
            .with_header("content-type", "application/json")
            .with_body(match body.into().0 {
                Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
                Cow::Owned(s) => Cow::Owned(s.into_bytes()),
            })
    }

    /// 200 with a binary body (`application/octet-stream`).
    pub fn bytes(body: impl Into<Cow<'static, [u8]>>) -> Response {
        Response::new(200)
            .with_header("content-type", "application/octet-stream")
            .with_body(body)
    }

    /// 404, `not found\n`.
    pub fn not_found() -> Response {
        Response::text("not found\n").with_status(404)
    }

    /// This response with another status.
    pub fn with_status(mut self, status: u16) -> Response {
        self.status = status;
        self
    }

    /// This response with the header `name` set to `value` (replacing any
    /// of that name).
    pub fn with_header(
        mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) -> Response {
        self.headers.insert(name, value);
        self
    }

    /// This response with another body.
    pub fn with_body(mut self, body: impl Into<Cow<'static, [u8]>>) -> Response {
        self.body = body.into();
        self
    }

    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// The body as text, if it is UTF-8.
    pub fn body_text(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.body)
    }
}

/// A JSON body for [`Response::json`]: JSON text, or a
/// `serde_json::Value` serialized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Json(pub Cow<'static, str>);

impl From<&'static str> for Json {
    fn from(s: &'static str) -> Json {
        Json(Cow::Borrowed(s))
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json(Cow::Owned(s))
    }
}

impl From<serde_json::Value> for Json {
    fn from(v: serde_json::Value) -> Json {
        Json(Cow::Owned(v.to_string()))
    }
}

impl From<&serde_json::Value> for Json {
    fn from(v: &serde_json::Value) -> Json {
        Json(Cow::Owned(v.to_string()))
    }
}

/// The standard reason phrase of `status` (RFC 9110 §15), or `""`.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors() {
        let r = Response::text("hi");
        assert_eq!((r.status, r.body.as_ref()), (200, &b"hi"[..]));
        assert!(matches!(r.body, Cow::Borrowed(_)));
        assert_eq!(r.header("Content-Type"), Some("text/plain; charset=utf-8"));
        let r = Response::text(format!("{}", 42)).with_status(201);
        assert_eq!((r.status, r.body_text()), (201, Ok("42")));
        let r = Response::json(String::from("[1]"));
        assert_eq!(r.body.as_ref(), b"[1]");
        let r = Response::not_found();
        assert_eq!(r.status, 404);
        assert_eq!(reason(431), "Request Header Fields Too Large");
        assert_eq!(reason(299), "");
    }
}
