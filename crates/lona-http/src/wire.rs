//! Writing heads: a response's status line and headers (server), a
//! request's (client), the checks that keep a handler's header from
//! splitting a response, and the `date` header, formatted once a second
//! per thread.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::headers::Headers;
use crate::response::{reason, Response};

/// What the server says about the connection in a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConnHeader {
    /// Nothing (HTTP/1.1 keep-alive is the default).
    None,
    /// `connection: keep-alive` (an HTTP/1.0 client that asked for it).
    KeepAlive,
    /// `connection: close`.
    Close,
}

/// Whether a response with `status` may have a body (RFC 9112 §6.3).
pub(crate) fn status_has_body(status: u16) -> bool {
    !(status < 200 || status == 204 || status == 304)
}

/// Headers the framing is decided for by this crate, not by the handler.
fn framed_here(name: &str) -> bool {
    ["content-length", "transfer-encoding", "connection"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}

/// A token character (RFC 9110 §5.6.2).
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Why a header cannot be written, if it cannot.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(tchar) {
        return Err(format!("invalid header name {name:?}"));
    }
    if !value
        .bytes()
        .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
    {
        return Err(format!("invalid value of header {name:?}: {value:?}"));
    }
    Ok(())
}

/// Appends `n` in decimal.
pub(crate) fn push_num(out: &mut Vec<u8>, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends the status line and headers of `resp` (and the blank line),
/// with `content-length: body_len` when `body_len` is given. Nothing is
/// appended when a status or header is invalid: the error says why.
pub(crate) fn response_head(
    out: &mut Vec<u8>,
    resp: &Response,
    body_len: Option<usize>,
    conn: ConnHeader,
) -> Result<(), String> {
    if !(200..=999).contains(&resp.status) {
        return Err(format!("invalid status {}", resp.status));
    }
    for (k, v) in resp.headers.iter() {
        check_header(k, v)?;
    }
    out.extend_from_slice(b"HTTP/1.1 ");
    push_num(out, resp.status as usize);
    out.push(b' ');
    out.extend_from_slice(reason(resp.status).as_bytes());
    out.extend_from_slice(b"\r\n");
    let mut dated = false;
    for (k, v) in resp.headers.iter() {
        if framed_here(k) {
            continue;
        }
        dated |= k.eq_ignore_ascii_case("date");
        push_header(out, k, v);
    }
    if !dated {
        out.extend_from_slice(b"date: ");
        push_date(out);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(n) = body_len {
        out.extend_from_slice(b"content-length: ");
        push_num(out, n);
        out.extend_from_slice(b"\r\n");
    }
    match conn {
        ConnHeader::None => {}
        ConnHeader::KeepAlive => out.extend_from_slice(b"connection: keep-alive\r\n"),
        ConnHeader::Close => out.extend_from_slice(b"connection: close\r\n"),
    }
    out.extend_from_slice(b"\r\n");
    Ok(())
}

/// Appends a plain error response: `status`, a one-line text body,
/// `connection: close`.
pub(crate) fn error_response(out: &mut Vec<u8>, status: u16) {
    let body = reason(status);
    let resp = Response::new(status).with_header("content-type", "text/plain; charset=utf-8");
    let r = response_head(out, &resp, Some(body.len() + 1), ConnHeader::Close);
    debug_assert!(r.is_ok());
    out.extend_from_slice(body.as_bytes());
    out.push(b'\n');
}

/// Appends a request head: the request line, `host`, the caller's
/// headers (but its own `content-length`, `transfer-encoding` and
/// `connection`), `content-length` when `body_len` is given, and
/// `connection: close`.
pub(crate) fn request_head(
    out: &mut Vec<u8>,
    method: &str,
    target: &str,
    host: &str,
    headers: &Headers,
    body_len: Option<usize>,
) -> Result<(), String> {
    if method.is_empty() || !method.bytes().all(tchar) {
        return Err(format!("invalid method {method:?}"));
    }
    if target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(format!("invalid request target {target:?}"));
    }
    for (k, v) in headers.iter() {
        check_header(k, v)?;
    }
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !headers.contains("host") {
        push_header(out, "host", host);
    }
    for (k, v) in headers.iter() {
        if !framed_here(k) {
            push_header(out, k, v);
        }
    }
    if let Some(n) = body_len {
        out.extend_from_slice(b"content-length: ");
        push_num(out, n);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"connection: close\r\n\r\n");
    Ok(())
}

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(b"\r\n");
}

thread_local! {
    /// The second the cached date is of, and the date.
    static DATE: Cell<(u64, [u8; 29])> = const { Cell::new((u64::MAX, [0; 29])) };
}

/// Appends the current time as an IMF-fixdate (`Sun, 06 Nov 1994
/// 08:49:37 GMT`), formatted at most once a second per thread.
pub(crate) fn push_date(out: &mut Vec<u8>) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (at, mut date) = DATE.get();
    if at != now {
        date = http_date(now);
        DATE.set((now, date));
    }
    out.extend_from_slice(&date);
}

/// The IMF-fixdate of `secs` after the Unix epoch.
pub(crate) fn http_date(secs: u64) -> [u8; 29] {
    const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[((days + 4) % 7) as usize]);
    let two = |o: &mut [u8], v: u64| {
        o[0] = b'0' + (v / 10 % 10) as u8;
        o[1] = b'0' + (v % 10) as u8;
    };
    two(&mut out[5..7], day);
    out[8..11].copy_from_slice(MONTHS[(month - 1) as usize]);
    two(&mut out[12..14], year / 100);
    two(&mut out[14..16], year);
    two(&mut out[17..19], h);
    two(&mut out[20..22], m);
    two(&mut out[23..25], s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(&http_date(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(&http_date(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(&http_date(951_782_400), b"Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(&http_date(4_102_444_799), b"Thu, 31 Dec 2099 23:59:59 GMT");
    }

    #[test]
    fn numbers() {
        for n in [0, 7, 10, 13, 999, 1_000_000, usize::MAX] {
            let mut v = Vec::new();
            push_num(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
        }
    }

    #[test]
    fn response_heads() {
        let mut out = Vec::new();
        let r = Response::text("x")
            .with_header("Date", "then")
            .with_header("content-length", "99")
            .with_header("X-Y", "a\tb");
        response_head(&mut out, &r, Some(1), ConnHeader::Close).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\nDate: then\r\n\
             X-Y: a\tb\r\ncontent-length: 1\r\nconnection: close\r\n\r\n"
        );
    }

    #[test]
    fn invalid_heads_are_refused_whole() {
        let mut out = Vec::new();
        for r in [
            Response::new(200).with_header("x", "a\r\nset-cookie: evil"),
            Response::new(200).with_header("bad name", "v"),
            Response::new(200).with_header("", "v"),
            Response::new(99),
            Response::new(1000),
        ] {
            assert!(response_head(&mut out, &r, Some(0), ConnHeader::None).is_err());
        }
        assert!(out.is_empty());
        let h = Headers::from([("x", "\n")]);
        assert!(request_head(&mut out, "GET", "/", "h", &h, None).is_err());
        assert!(request_head(&mut out, "GET", "/a b", "h", &Headers::new(), None).is_err());
        assert!(request_head(&mut out, "G T", "/", "h", &Headers::new(), None).is_err());
        assert!(out.is_empty());
    }
}
