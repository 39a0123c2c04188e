//! Message bodies on the wire (RFC 9112 §6): how a message says its body
//! ends ([`framing`]), and reading it whole, by length, chunked, or to
//! the end of the stream, always within a limit.
//!
//! A declared length is never trusted: a `content-length` above the limit
//! is refused before anything is read, and a body (of any framing) grows
//! as its bytes arrive, never by more than 64 KiB ahead of them.
//! Chunked bodies are decoded with `httparse`'s chunk-size parser; chunk
//! extensions are ignored, and trailers are parsed and dropped.

use std::io;

use crate::headers::Headers;
use crate::io::Io;

/// How a body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// After this many bytes (0: no body).
    Length(u64),
    /// `transfer-encoding: chunked`.
    Chunked,
    /// At the end of the stream (responses only).
    ToEof,
}

/// Why a message's framing is unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FramingError {
    /// Conflicting or malformed lengths, or chunked not last (400).
    Malformed,
    /// A transfer coding other than chunked (501).
    Unsupported,
}

/// The framing the headers say (RFC 9112 §6.3); `none` is what a message
/// with neither header has (no body for a request, to the end of the
/// stream for a response).
pub(crate) fn framing(headers: &Headers, none: Framing) -> Result<Framing, FramingError> {
    if headers.contains("transfer-encoding") {
        if headers.contains("content-length") {
            // Both: a smuggling attempt or a broken peer (§6.3 rule 3).
            return Err(FramingError::Malformed);
        }
        let codings: Vec<&str> = headers
            .get_all("transfer-encoding")
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let is_chunked = |c: &str| c.eq_ignore_ascii_case("chunked");
        let chunked = codings.iter().filter(|c| is_chunked(c)).count();
        return match codings.last() {
            None => Err(FramingError::Malformed),
            // Chunked once, and last: the body's end is known; other
            // codings under it are not supported.
            Some(last) if is_chunked(last) && chunked == 1 => match codings.len() {
                1 => Ok(Framing::Chunked),
                _ => Err(FramingError::Unsupported),
            },
            // Chunked twice, or not last: the end cannot be found.
            _ if chunked > 0 => Err(FramingError::Malformed),
            _ => Err(FramingError::Unsupported),
        };
    }
    let mut length = None;
    for v in headers.get_all("content-length").flat_map(|v| v.split(',')) {
        let v = v.trim();
        if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(FramingError::Malformed);
        }
        let n: u64 = v.parse().map_err(|_| FramingError::Malformed)?;
        if length.is_some_and(|l| l != n) {
            return Err(FramingError::Malformed);
        }
        length = Some(n);
    }
    Ok(length.map_or(none, Framing::Length))
}

/// Why a body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// More than the limit (413).
    TooLarge,
    /// Not a valid chunked body (400).
    Malformed,
    /// The stream failed, ended early (`UnexpectedEof`) or timed out.
    Io(io::Error),
}

impl From<io::Error> for BodyError {
    fn from(e: io::Error) -> BodyError {
        BodyError::Io(e)
    }
}

/// The longest chunk-size line (with extensions) accepted.
const MAX_CHUNK_LINE: usize = 4096;

/// Reads a body framed as `framing`, of at most `max` bytes; trailers may
/// take up to `max_trailers` bytes.
pub(crate) async fn read_body(
    io: &mut Io<'_>,
    framing: Framing,
    max: usize,
    max_trailers: usize,
) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    match framing {
        Framing::Length(0) => {}
        Framing::Length(n) => {
            if n > max as u64 {
                return Err(BodyError::TooLarge);
            }
            io.read_into(n as usize, &mut body).await?;
        }
        Framing::Chunked => read_chunked(io, &mut body, max, max_trailers).await?,
        Framing::ToEof => loop {
            let unread = io.unread().len();
            if body.len() + unread > max {
                return Err(BodyError::TooLarge);
            }
            body.extend_from_slice(io.unread());
            io.consume(unread);
            if io.fill(64 * 1024).await? == 0 {
                break;
            }
        },
    }
    Ok(body)
}

async fn read_chunked(
    io: &mut Io<'_>,
    body: &mut Vec<u8>,
    max: usize,
    max_trailers: usize,
) -> Result<(), BodyError> {
    loop {
        let (line, size) = loop {
            match httparse::parse_chunk_size(io.unread()) {
                Ok(httparse::Status::Complete(x)) => break x,
                Ok(httparse::Status::Partial) if io.unread().len() < MAX_CHUNK_LINE => {
                    more(io, MAX_CHUNK_LINE).await?
                }
                _ => return Err(BodyError::Malformed),
            }
        };
        io.consume(line);
        if size == 0 {
            break;
        }
        if size > (max - body.len()) as u64 {
            return Err(BodyError::TooLarge);
        }
        io.read_into(size as usize, body).await?;
        while io.unread().len() < 2 {
            more(io, MAX_CHUNK_LINE).await?;
        }
        if &io.unread()[..2] != b"\r\n" {
            return Err(BodyError::Malformed);
        }
        io.consume(2);
    }
    // Trailers: header lines up to an empty line, dropped.
    loop {
        let mut fields = [httparse::EMPTY_HEADER; 32];
        match httparse::parse_headers(io.unread(), &mut fields) {
            Ok(httparse::Status::Complete((n, _))) => {
                io.consume(n);
                return Ok(());
            }
            Ok(httparse::Status::Partial) if io.unread().len() < max_trailers => {
                more(io, max_trailers).await?
            }
            Ok(httparse::Status::Partial) => return Err(BodyError::TooLarge),
            Err(_) => return Err(BodyError::Malformed),
        }
    }
}

/// Reads more, or fails with `UnexpectedEof` at the end of the stream.
async fn more(io: &mut Io<'_>, limit: usize) -> io::Result<()> {
    match io.fill(limit).await? {
        0 => Err(io::ErrorKind::UnexpectedEof.into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(h: &[(&'static str, &'static str)]) -> Result<Framing, FramingError> {
        framing(&h.iter().copied().collect(), Framing::Length(0))
    }

    #[test]
    fn framings() {
        use FramingError::*;
        assert_eq!(f(&[]), Ok(Framing::Length(0)));
        assert_eq!(f(&[("content-length", "12")]), Ok(Framing::Length(12)));
        assert_eq!(f(&[("content-length", "12, 12")]), Ok(Framing::Length(12)));
        assert_eq!(
            f(&[("content-length", "12"), ("content-length", "12")]),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            f(&[("content-length", "12"), ("content-length", "13")]),
            Err(Malformed)
        );
        assert_eq!(f(&[("content-length", "-1")]), Err(Malformed));
        assert_eq!(f(&[("content-length", "+1")]), Err(Malformed));
        assert_eq!(f(&[("content-length", "")]), Err(Malformed));
        assert_eq!(
            f(&[("content-length", "99999999999999999999")]),
            Err(Malformed)
        );
        assert_eq!(
            f(&[("content-length", "9999999999999999999")]),
            Ok(Framing::Length(9_999_999_999_999_999_999))
        );
        assert_eq!(f(&[("transfer-encoding", "Chunked")]), Ok(Framing::Chunked));
        assert_eq!(
            f(&[("transfer-encoding", "gzip, chunked")]),
            Err(Unsupported)
        );
        assert_eq!(f(&[("transfer-encoding", "gzip")]), Err(Unsupported));
        assert_eq!(f(&[("transfer-encoding", "chunked, gzip")]), Err(Malformed));
        assert_eq!(
            f(&[("transfer-encoding", "chunked, chunked")]),
            Err(Malformed)
        );
        assert_eq!(f(&[("transfer-encoding", " ")]), Err(Malformed));
        assert_eq!(
            f(&[("transfer-encoding", "chunked"), ("content-length", "3")]),
            Err(Malformed)
        );
        assert_eq!(
            framing(&crate::Headers::new(), Framing::ToEof),
            Ok(Framing::ToEof)
        );
    }
}
