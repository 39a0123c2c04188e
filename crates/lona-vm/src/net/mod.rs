//! Sockets for Lonala processes: the `tcp` namespace.
//!
//! Lonala is not `async`: a built-in cannot wait. So each operation is a
//! built-in that does what it can at once (`accept*`, `recv*`, `send*`,
//! `connected*`, on non-blocking sockets), and says `:wait` when it
//! cannot; it has then armed a waker that sends the caller
//! `[:lona.io/ready s]` when the socket becomes ready. The Lonala
//! functions of `lonala/tcp.lona` wrap them: try, and on `:wait` receive the
//! ready message (with the caller's timeout), then try again. A process
//! waiting on a socket is therefore waiting in `receive`, and receives
//! anything else meanwhile only if it asks for it.
//!
//! A socket term is a reference (`table.rs`); each socket has a *port
//! process* (`port.rs`) linked to its owner, which closes the socket when
//! the owner ends, reads in active mode, and writes what `send` could not
//! write at once. Framing (`:packet`) is in `frame.rs`.

pub(crate) mod frame;
pub(crate) mod http;
pub(crate) mod port;
pub(crate) mod table;

pub(crate) use crate::errno::error_name;
use crate::errno::libc_errno;

/// Runs `f` with this thread's 64 KB read buffer (a socket read lands here
/// first: allocating and zeroing one per read cost more than the read).
pub(crate) fn with_read_buf<R>(f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; 64 * 1024]);
    }
    BUF.with(|b| match b.try_borrow_mut() {
        Ok(mut b) => f(&mut b),
        // Re-entered (never expected): a buffer of its own.
        Err(_) => f(&mut vec![0; 64 * 1024]),
    })
}

/// The keyword for an error reading or writing a connected stream: as
/// Erlang's `gen_tcp` (without `show_econnreset`), a peer that reset the
/// connection, or a write after the peer left (`EPIPE`), is `:closed`.
pub(crate) fn stream_error_name(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc_errno::ECONNRESET | libc_errno::EPIPE) => "closed",
        _ => error_name(e),
    }
}
