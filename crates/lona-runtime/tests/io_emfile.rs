//! Out of file descriptors: `accept` fails with `EMFILE`, the listener
//! keeps its pending connections, and accepts them once descriptors are
//! freed. Its own test binary: it lowers this process's descriptor limit.

use lona_runtime::io::{TcpListener, TcpStream};
use lona_runtime::Builder;

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").unwrap().count() as u64
}

fn set_fd_limit(n: u64) -> u64 {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut old), 0);
        let new = libc::rlimit {
            rlim_cur: n,
            rlim_max: old.rlim_max,
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &new), 0);
    }
    old.rlim_cur
}

#[test]
fn accept_at_the_descriptor_limit_fails_then_recovers() {
    let rt = Builder::default().workers(1).build().unwrap();
    let r = rt.block_on(|_ctx| async move {
        let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        // 20 clients, connected (the kernel completes them in the backlog).
        let mut clients = Vec::new();
        for _ in 0..20 {
            clients.push(TcpStream::connect(addr).await.unwrap());
        }
        // Room for 5 more descriptors.
        let old = set_fd_limit(open_fds() + 5);
        let mut accepted = Vec::new();
        let err = loop {
            match listener.accept().await {
                Ok((s, _)) => accepted.push(s),
                Err(e) => break e,
            }
            assert!(accepted.len() <= 20, "the limit was not enforced");
        };
        let got_before = accepted.len();
        // Free descriptors: the rest are accepted.
        accepted.clear();
        set_fd_limit(old);
        let mut rest = 0;
        while got_before + rest < 20 {
            listener.accept().await.unwrap();
            rest += 1;
        }
        (err.raw_os_error(), got_before, rest)
    });
    let (errno, before, rest) = r.unwrap();
    assert_eq!(errno, Some(libc::EMFILE));
    assert!(before < 20, "{before}");
    assert_eq!(before + rest, 20);
}
