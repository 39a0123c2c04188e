//! `Router` and `WithCtx` end to end on 127.0.0.1, through the raw client:
//! dispatch by method and path, path parameters, `HEAD` by `GET`, 405
//! with `allow`, 404 and the fallback; handlers given the connection's
//! `Ctx` (an `async fn`, an `async` closure, a boxed closure with state)
//! calling another process.

mod common;

use common::{start, Raw};
use lona_http::{boxed, HttpServer, Request, Response, Router, WithCtx};
use lona_runtime::{Ctx, Pid};
use std::sync::Arc;
use std::time::Duration;

fn server() -> HttpServer {
    HttpServer::new().idle_timeout(Duration::from_secs(10))
}

fn users() -> Router {
    Router::new()
        .get("/", |_: Request| Response::text("home\n"))
        .get("/users/me", |_: Request| Response::text("me\n"))
        .get("/users/:id", |req: Request| {
            Response::text(format!("user {}\n", req.param("id").unwrap()))
        })
        .post("/users", |req: Request| {
            Response::bytes(req.body).with_status(201)
        })
        .delete("/users/:id/posts/:post", |req: Request| {
            Response::text(format!("{:?}\n", req.params))
        })
}

#[test]
fn routes_by_method_and_path_with_parameters() {
    let srv = start(server(), users());
    let mut c = Raw::connect(srv.addr);
    assert_eq!(c.get("/").text(), "home\n");
    assert_eq!(c.get("/users/7").text(), "user 7\n");
    assert_eq!(c.get("/users/a%20b").text(), "user a b\n", "decoded");
    assert_eq!(c.get("/users/me").text(), "me\n", "the first match wins");
    assert_eq!(
        c.get("/users/7?x=1").text(),
        "user 7\n",
        "the query is not the path"
    );
    c.send(b"POST /users HTTP/1.1\r\nhost: t\r\ncontent-length: 3\r\n\r\nabc");
    let r = c.response();
    assert_eq!((r.status, r.text()), (201, "abc"));
    c.send(b"DELETE /users/3/posts/9 HTTP/1.1\r\nhost: t\r\n\r\n");
    assert_eq!(
        c.response().text(),
        "[(\"id\", \"3\"), (\"post\", \"9\")]\n"
    );
}

#[test]
fn head_is_answered_by_get_without_a_body() {
    let srv = start(server(), users());
    let mut c = Raw::connect(srv.addr);
    c.send(b"HEAD /users/42 HTTP/1.1\r\nhost: t\r\n\r\n");
    let r = c.try_response(true).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("8"), "as GET's body");
    assert!(r.body.is_empty());
    // The connection goes on: no stray body was sent.
    assert_eq!(c.get("/users/1").text(), "user 1\n");
}

#[test]
fn wrong_method_is_405_with_allow_and_unknown_path_404() {
    let srv = start(server(), users());
    let mut c = Raw::connect(srv.addr);
    let r = c.get("/users");
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
    c.send(b"PUT /users/7 HTTP/1.1\r\nhost: t\r\ncontent-length: 0\r\n\r\n");
    let r = c.response();
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    for path in ["/nope", "/users/7/", "/users/", "//", "/users/7/posts"] {
        assert_eq!(c.get(path).status, 404, "{path}");
    }
    // Served on after them all, on the same connection.
    assert_eq!(c.get("/").text(), "home\n");
}

#[test]
fn the_fallback_answers_what_no_pattern_matches() {
    let router = users().fallback(|req: Request| {
        Response::text(format!("fallback {}\n", req.path)).with_status(418)
    });
    let srv = start(server(), router);
    let mut c = Raw::connect(srv.addr);
    let r = c.get("/elsewhere");
    assert_eq!((r.status, r.text()), (418, "fallback /elsewhere\n"));
    assert_eq!(
        c.get("/users").status,
        405,
        "a known path is not a fallback's"
    );
}

/// Starts a process registered as `name` that answers each pid it gets
/// with the next number.
async fn counter(ctx: &Ctx, name: &str) {
    let p = ctx
        .spawn(|ctx| async move {
            for n in 1u64.. {
                let from: Pid = ctx.receive().await;
                ctx.send(from, n).await;
            }
        })
        .await
        .unwrap();
    ctx.register_pid(name, p).await.unwrap();
}

async fn next(ctx: &Ctx, name: &str) -> u64 {
    ctx.send_name(name, ctx.pid()).await.unwrap();
    ctx.receive().await
}

async fn by_fn(ctx: &Ctx, req: Request) -> Response {
    Response::text(format!(
        "fn {} {}\n",
        req.param("who").unwrap_or("-"),
        next(ctx, "counter").await
    ))
}

#[test]
fn handlers_with_the_ctx_call_other_processes() {
    let prefix = Arc::new(String::from("boxed"));
    let router = Router::new()
        .get("/fn/:who", WithCtx(by_fn))
        .get(
            "/closure",
            WithCtx(async |ctx: &Ctx, _req: Request| {
                Response::text(format!("closure {}\n", next(ctx, "counter").await))
            }),
        )
        .get(
            "/boxed",
            WithCtx(boxed(move |ctx, _req| {
                let prefix = prefix.clone();
                Box::pin(async move {
                    Response::text(format!("{prefix} {}\n", next(ctx, "counter").await))
                })
            })),
        )
        .get(
            "/pid",
            WithCtx(async |ctx: &Ctx, _req: Request| Response::text(ctx.pid().to_string())),
        );
    let srv = start(server(), router);
    srv.rt
        .block_on(|ctx| async move { counter(&ctx, "counter").await })
        .unwrap();
    let mut c = Raw::connect(srv.addr);
    assert_eq!(c.get("/fn/ann").text(), "fn ann 1\n");
    assert_eq!(c.get("/closure").text(), "closure 2\n");
    assert_eq!(c.get("/boxed").text(), "boxed 3\n");
    // Each connection's requests run in that connection's process.
    let a = c.get("/pid").text().to_owned();
    assert_eq!(c.get("/pid").text(), a);
    let b = Raw::connect(srv.addr).get("/pid").text().to_owned();
    assert_ne!(a, b, "another connection, another process");
    // A `WithCtx` serves without a router too.
    let srv2 = start(server(), WithCtx(by_fn));
    srv2.rt
        .block_on(|ctx| async move { counter(&ctx, "counter").await })
        .unwrap();
    let r = Raw::connect(srv2.addr).get("/x");
    assert_eq!(r.text(), "fn - 1\n", "no router, so no parameter");
}
