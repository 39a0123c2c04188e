//! Supervisor reports (rule 8) go through the `log` crate, target
//! `lona::otp::supervisor`: a started child (info), a crashed child
//! (error, with its reason), the restart intensity reached (error).
//! (Its own test binary: it installs the one global logger.)

mod common;
use common::{pid_of, restarted, run, worker, Log};
use lona_otp::{Strategy, Supervisor};
use lona_runtime::{Down, Reason};
use std::sync::Mutex;
use std::time::Duration;

static RECORDS: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Capture;
impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == "lona::otp::supervisor"
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            RECORDS
                .lock()
                .unwrap()
                .push((r.level(), r.args().to_string()));
        }
    }
    fn flush(&self) {}
}

#[test]
fn supervisor_reports_starts_crashes_and_intensity() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    run(|ctx| async move {
        ctx.trap_exit(true).await;
        let log = Log::default();
        let s = Supervisor::new(Strategy::OneForOne)
            .intensity(1, Duration::from_secs(60))
            .child(worker("reported", &log))
            .start_link(&ctx, None)
            .await
            .unwrap();
        let p = pid_of(&ctx, &s, "reported").await.unwrap();
        ctx.send_exit(p, Reason::from("first crash")).await;
        let p = restarted(&ctx, &s, "reported", p).await;
        let m = ctx.monitor(s.pid()).await;
        ctx.send_exit(p, Reason::from("second crash")).await;
        ctx.receive_where(move |d: &Down| d.mref == m).await;
    });
    let records = RECORDS.lock().unwrap().clone();
    let has = |level: log::Level, words: &[&str]| {
        records
            .iter()
            .any(|(l, m)| *l == level && words.iter().all(|w| m.contains(w)))
    };
    assert!(
        has(log::Level::Info, &["started child", "\"reported\""]),
        "{records:#?}"
    );
    assert!(
        has(
            log::Level::Error,
            &["child_terminated", "\"reported\"", "first crash"]
        ),
        "{records:#?}"
    );
    assert!(
        has(log::Level::Error, &["reached_max_restart_intensity"]),
        "{records:#?}"
    );
}
