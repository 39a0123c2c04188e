//! Crash reports go through `log` (target `lona::crash`): an abnormal end
//! of a process nobody links to or monitors is reported with its pid and
//! reason (and for a panic its message and location); watched or normal
//! ends, and ends caused by another process's exit signal, are not. Its own binary: it installs a logger.

use lona_runtime::{Builder, Down, Reason};
use std::sync::Mutex;

static RECORDS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

struct Capture;
impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        RECORDS
            .lock()
            .unwrap()
            .push((r.target().to_string(), r.args().to_string()));
    }
    fn flush(&self) {}
}

#[test]
fn unwatched_crashes_are_reported_and_watched_ones_are_not() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let rt = Builder::default().workers(1).build().unwrap();
    let (crashed, custom) = rt
        .block_on(|ctx| async move {
            let a = ctx
                .spawn(|_| async { panic!("unwatched boom") })
                .await
                .unwrap();
            let b = ctx
                .spawn(|ctx| async move {
                    ctx.exit(Reason::from("bad state")).await;
                })
                .await
                .unwrap();
            // Watched crash and unwatched normal/shutdown ends: no report.
            let (w, _) = ctx
                .spawn_monitor(|_| async { panic!("watched boom") })
                .await
                .unwrap();
            ctx.receive_where(move |d: &Down| d.pid == w).await;
            ctx.spawn(|_| async {}).await.unwrap();
            ctx.spawn(|ctx| async move {
                ctx.exit(Reason::Shutdown).await;
            })
            .await
            .unwrap();
            // Ended by another process's exit signal: not its own crash.
            let victim = ctx
                .spawn(|ctx| async move { ctx.receive::<()>().await })
                .await
                .unwrap();
            ctx.send_exit(victim, Reason::from("killed by main")).await;
            while ctx.is_alive(victim).await {
                ctx.yield_now().await;
            }
            while ctx.is_alive(a).await || ctx.is_alive(b).await {
                ctx.yield_now().await;
            }
            (a, b)
        })
        .unwrap();
    drop(rt);
    let recs = RECORDS.lock().unwrap().clone();
    let crash: Vec<_> = recs
        .iter()
        .filter(|(t, _)| t == "lona::crash")
        .map(|(_, m)| m.clone())
        .collect();
    assert_eq!(crash.len(), 2, "{crash:#?}");
    let panic_rep = crash
        .iter()
        .find(|m| m.contains("unwatched boom"))
        .expect("panic reported");
    assert!(panic_rep.contains(&crashed.to_string()), "{panic_rep}");
    assert!(
        panic_rep.contains("crash_report.rs:"),
        "location in {panic_rep}"
    );
    let exit_rep = crash
        .iter()
        .find(|m| m.contains("bad state"))
        .expect("exit reported");
    assert!(exit_rep.contains(&custom.to_string()));
}
