//! Files for native processes (`lona_runtime::io::fs`) and the blocking
//! pool they run on.

mod common;

use lona_runtime::io::{fs, spawn_blocking};
use lona_runtime::Builder;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("lona-io-fs-{}-{name}", std::process::id()))
}

#[test]
fn whole_files_directories_and_lines() {
    let rt = Builder::default()
        .workers(common::workers(2))
        .build()
        .unwrap();
    let r = rt.block_on(|_ctx| async move {
        let d = tmp("dir");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a.txt");
        fs::write(&p, "one\ntwo\r\n").await.unwrap();
        fs::append(&p, "three").await.unwrap();
        assert_eq!(fs::read_to_string(&p).await.unwrap(), "one\ntwo\r\nthree");
        assert_eq!(fs::read(&p).await.unwrap().len(), 14);
        fs::write(d.join("b.txt"), vec![0u8; 10]).await.unwrap();
        assert_eq!(
            fs::read_dir(&d).await.unwrap(),
            vec![p.clone(), d.join("b.txt")]
        );
        let mut lines = fs::Lines::open(&p, 1000).await.unwrap();
        let mut got = Vec::new();
        while let Some(l) = lines.next_line().await.unwrap() {
            got.push(l);
        }
        assert_eq!(got, ["one", "two", "three"]);
        // A line past the limit is an error, not a buffer without end.
        fs::write(&p, vec![b'x'; 200_000]).await.unwrap();
        let mut lines = fs::Lines::open(&p, 100_000).await.unwrap();
        let e = lines.next_line().await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        // Errors are the system's.
        let e = fs::read(d.join("missing")).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        assert!(!fs::exists(d.join("missing")).await.unwrap());
        fs::remove_file(&p).await.unwrap();
        fs::remove_file(d.join("b.txt")).await.unwrap();
        std::fs::remove_dir(&d).unwrap();
        true
    });
    assert_eq!(r, Ok(true));
}

#[test]
fn blocking_jobs_never_hold_a_worker() {
    // One worker: while 8 jobs each sleep on the pool, a process on the
    // only worker runs (before any job is done).
    let rt = Builder::default().workers(1).build().unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let r = rt.block_on(|ctx| async move {
        let me = ctx.pid();
        let mut jobs = Vec::new();
        for i in 0..8u64 {
            let d = d.clone();
            jobs.push(spawn_blocking(move || {
                std::thread::sleep(Duration::from_millis(300));
                d.fetch_add(1, SeqCst);
                i
            }));
        }
        let d2 = d.clone();
        ctx.spawn(move |ctx| async move { ctx.send(me, d2.load(SeqCst)).await })
            .await
            .unwrap();
        let finished_when_it_ran: usize = ctx.receive().await;
        let mut sum = 0;
        for j in jobs {
            sum += j.await.unwrap();
        }
        (finished_when_it_ran, sum)
    });
    assert_eq!(r, Ok((0, 28)));
    assert_eq!(done.load(SeqCst), 8);
}

#[test]
fn a_panicking_job_is_an_error_and_the_pool_goes_on() {
    let rt = Builder::default().workers(1).build().unwrap();
    let r = rt.block_on(|_ctx| async move {
        let e = spawn_blocking(|| -> u8 { panic!("job panics") }).await;
        let after = spawn_blocking(|| 7u8).await;
        (e.is_err(), after.unwrap())
    });
    assert_eq!(r, Ok((true, 7)));
}
