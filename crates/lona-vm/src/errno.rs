//! The names Erlang's `inet` and `file` give I/O errors (`:enoent`,
//! `:econnrefused`, ...): what a file or socket built-in answers when the
//! system refuses. Below both `files.rs` and `net/`, which use it.

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

/// The Linux error numbers `error_name` knows (std's `io::Error` keeps
/// the number; these are the stable values of Linux's `errno.h`).
pub(crate) mod libc_errno {
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
