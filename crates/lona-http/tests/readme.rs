//! The README's HTTP example, verbatim, so it cannot rot.

use lona_runtime::io::TcpListener;
use lona_runtime::Runtime;

#[test]
fn readme_http_example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let rt = Runtime::builder().workers(2).build()?;
    rt.block_on(|ctx| async move {
        use lona_http::{HttpServer, Request, Response};

        // Inside a process (this example is tests/readme.rs in lona-http): the
        // acceptor in a process of its own, then a process per connection.
        let listener = TcpListener::bind("127.0.0.1:0".parse()?)?;
        let addr = listener.local_addr()?;
        HttpServer::new()
            .max_body_bytes(1 << 20)
            .spawn(&ctx, listener, |req: Request| match req.path.as_str() {
                "/" => Response::text("hello\n"),
                "/json" => Response::json(serde_json::json!({ "hello": req.query_param("name") })),
                _ => Response::not_found(),
            })
            .await?;
        let resp = lona_http::get(&ctx, &format!("http://{addr}/json?name=lona")).await?;
        assert_eq!(
            (resp.status, resp.body.as_ref()),
            (200, &br#"{"hello":"lona"}"#[..])
        );
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })??;
    Ok(())
}
