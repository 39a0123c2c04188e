//! The README's example, verbatim, so it cannot rot.

use lona_runtime::{Down, Exit, Reason, Runtime};

#[test]
fn readme_links_and_monitors_example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let rt = Runtime::builder().workers(2).build()?;
    rt.block_on(|ctx| async move {
        // A monitor: a one-way `Down` message when the process ends.
        let (worker, mref) = ctx
            .spawn_monitor(|ctx| async move {
                let n: u32 = ctx.receive().await;
                if n == 0 {
                    ctx.exit(Reason::from("zero")).await;
                }
            })
            .await?;
        ctx.send(worker, 0u32).await;
        let down: Down = ctx.receive().await;
        assert_eq!((down.mref, down.reason), (mref, Reason::from("zero")));

        // A link: crashes travel both ways; trapping exits turns them into
        // `Exit` messages, which is how a supervisor restarts its children.
        ctx.trap_exit(true).await;
        let child = ctx.spawn_link(|_ctx| async move { panic!("boom") }).await?;
        let exit: Exit = ctx.receive().await;
        assert_eq!(exit.from, child);
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })??;
    Ok(())
}
