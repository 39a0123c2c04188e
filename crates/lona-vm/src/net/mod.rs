//! Sockets for Lonala processes: the `tcp` namespace.
//!
//! Lonala is not `async`: a built-in cannot wait. So each operation is a
//! built-in that does what it can at once (`accept*`, `recv*`, `send*`,
//! `connected*`, on non-blocking sockets), and says `:wait` when it
//! cannot; it has then armed a waker that sends the caller
//! `[:lona.io/ready s]` when the socket becomes ready. The Lonala
//! functions of `lib/tcp.lona` wrap them: try, and on `:wait` receive the
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

/// The keyword for an I/O error, as Erlang's `inet` and `file` name them.
pub(crate) fn error_name(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc_errno::EADDRINUSE) => "eaddrinuse",
        Some(libc_errno::EADDRNOTAVAIL) => "eaddrnotavail",
        Some(libc_errno::ECONNREFUSED) => "econnrefused",
        Some(libc_errno::ECONNRESET) => "econnreset",
        Some(libc_errno::ECONNABORTED) => "econnaborted",
        Some(libc_errno::EPIPE) => "epipe",
        Some(libc_errno::EMFILE) => "emfile",
        Some(libc_errno::ENFILE) => "enfile",
        Some(libc_errno::EACCES) => "eacces",
        Some(libc_errno::ETIMEDOUT) => "etimedout",
        Some(libc_errno::ENETUNREACH) => "enetunreach",
        Some(libc_errno::EHOSTUNREACH) => "ehostunreach",
        Some(libc_errno::ENOTCONN) => "enotconn",
        Some(libc_errno::ENOENT) => "enoent",
        Some(libc_errno::EISDIR) => "eisdir",
        Some(libc_errno::ENOTDIR) => "enotdir",
        Some(libc_errno::EEXIST) => "eexist",
        Some(libc_errno::ENOSPC) => "enospc",
        Some(libc_errno::EBADF) => "ebadf",
        _ => match e.kind() {
            std::io::ErrorKind::TimedOut => "timeout",
            std::io::ErrorKind::UnexpectedEof => "closed",
            std::io::ErrorKind::InvalidData => "badarg",
            _ => "einval",
        },
    }
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

/// The Linux error numbers `error_name` knows (std's `io::Error` keeps
/// the number; these are the stable values of Linux's `errno.h`).
mod libc_errno {
    pub const ENOENT: i32 = 2;
    pub const EBADF: i32 = 9;
    pub const EEXIST: i32 = 17;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const ENOSPC: i32 = 28;
    pub const EACCES: i32 = 13;
    pub const EMFILE: i32 = 24;
    pub const ENFILE: i32 = 23;
    pub const EPIPE: i32 = 32;
    pub const EADDRINUSE: i32 = 98;
    pub const EADDRNOTAVAIL: i32 = 99;
    pub const ENETUNREACH: i32 = 101;
    pub const ECONNABORTED: i32 = 103;
    pub const ECONNRESET: i32 = 104;
    pub const ENOTCONN: i32 = 107;
    pub const ETIMEDOUT: i32 = 110;
    pub const ECONNREFUSED: i32 = 111;
    pub const EHOSTUNREACH: i32 = 113;
}
