//! What answers requests: the [`Handler`] trait and its closure forms
//! ([`Async`], [`WithCtx`], [`boxed`]), and the type-erased handler a
//! [`Router`](crate::Router) keeps.

use std::future::Future;
use std::pin::Pin;

use lona_runtime::Ctx;

use crate::request::Request;
use crate::response::Response;

/// What answers requests. It runs in the connection's process, one request
/// at a time; a panic answers 500 and ends that process only (rule 8 of
/// `server.rs`'s module doc). The forms, from the simplest:
///
/// | form | for |
/// |---|---|
/// | `\|req: Request\| Response::text("hi")` | answers computed at once |
/// | [`Async`]`(\|req: Request\| async move { .. })` | `async` work that needs no process |
/// | [`WithCtx`]`(handle)`, `async fn handle(ctx: &Ctx, req: Request) -> Response` | calling other processes through the connection's [`Ctx`] |
/// | [`WithCtx`]`(`[`boxed`]`(move \|ctx, req\| Box::pin(async move { .. })))` | the same, with state captured |
/// | a type of yours implementing this trait | anything, state included |
/// | [`Router`](crate::Router) | dispatching on method and path |
///
/// ```
/// use lona_http::{Handler, Request, Response};
/// use lona_runtime::Ctx;
///
/// struct WhoAmI;
/// impl Handler for WhoAmI {
///     async fn call(&self, ctx: &Ctx, _req: Request) -> Response {
///         Response::text(format!("served by {}\n", ctx.pid()))
///     }
/// }
/// ```
///
/// A closure's argument needs its type written (`|req: Request| ...`):
/// it is known through this trait, which Rust does not infer closure
/// arguments from.
pub trait Handler: Send + Sync + 'static {
    /// The response to `req`.
    fn call(&self, ctx: &Ctx, req: Request) -> impl Future<Output = Response> + Send;
}

impl<F> Handler for F
where
    F: Fn(Request) -> Response + Send + Sync + 'static,
{
    fn call(&self, _ctx: &Ctx, req: Request) -> impl Future<Output = Response> + Send {
        std::future::ready(self(req))
    }
}

/// An `async` handler: `Async(|req| async move { ... })`. It gets no
/// [`Ctx`]; [`WithCtx`] gives one.
#[derive(Clone, Copy, Debug)]
pub struct Async<F>(pub F);

impl<F, Fut> Handler for Async<F>
where
    F: Fn(Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send,
{
    fn call(&self, _ctx: &Ctx, req: Request) -> impl Future<Output = Response> + Send {
        (self.0)(req)
    }
}

/// An `async` handler given the connection process's [`Ctx`], to call
/// other processes (a `lona_otp` server, a registered name) while it
/// answers. Its function is any [`CtxFn`]:
///
/// - an `async fn(&Ctx, Request) -> Response`;
/// - an `async` closure that captures nothing:
///   `WithCtx(async |ctx: &Ctx, req: Request| { .. })`;
/// - with captured state (an `async` closure that captures is not a plain
///   `Fn`, so the future is boxed): `WithCtx(boxed(move |ctx, req| { let
///   s = s.clone(); Box::pin(async move { .. }) }))`; or a type
///   implementing [`Handler`].
///
/// ```
/// use lona_http::{HttpServer, Request, Response, WithCtx};
/// use lona_runtime::{io::TcpListener, Ctx, Runtime};
///
/// // Asks the process registered as "counter" for a number.
/// async fn count(ctx: &Ctx, _req: Request) -> Response {
///     ctx.send_name("counter", ctx.pid()).await.unwrap();
///     let n: u64 = ctx.receive().await;
///     Response::text(format!("{n}\n"))
/// }
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let got = rt.block_on(|ctx| async move {
///     let counter = ctx.spawn(|ctx| async move {
///         for n in 1u64.. {
///             let from: lona_runtime::Pid = ctx.receive().await;
///             ctx.send(from, n).await;
///         }
///     }).await.unwrap();
///     ctx.register_pid("counter", counter).await.unwrap();
///     let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
///     let addr = listener.local_addr().unwrap();
///     HttpServer::new().spawn(&ctx, listener, WithCtx(count)).await.unwrap();
///     let a = lona_http::get(&ctx, &format!("http://{addr}/")).await.unwrap();
///     let b = lona_http::get(&ctx, &format!("http://{addr}/")).await.unwrap();
///     (a.body_text().unwrap().to_owned(), b.body_text().unwrap().to_owned())
/// });
/// assert_eq!(got.unwrap(), ("1\n".to_owned(), "2\n".to_owned()));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WithCtx<F>(pub F);

impl<F> Handler for WithCtx<F>
where
    F: for<'a> CtxFn<'a>,
{
    fn call(&self, ctx: &Ctx, req: Request) -> impl Future<Output = Response> + Send {
        self.0.call_with(ctx, req)
    }
}

/// A function `(&'a Ctx, Request) -> impl Future<Output = Response> + 'a`
/// (for every `'a`): what [`WithCtx`] runs. Implemented for every such
/// `Fn`; not to be implemented by hand.
pub trait CtxFn<'a>: Send + Sync + 'static {
    /// The response's future, which may borrow the `Ctx`.
    type Future: Future<Output = Response> + Send + 'a;
    /// Call the function.
    fn call_with(&self, ctx: &'a Ctx, req: Request) -> Self::Future;
}

impl<'a, F, Fut> CtxFn<'a> for F
where
    F: Fn(&'a Ctx, Request) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response> + Send + 'a,
{
    type Future = Fut;
    fn call_with(&self, ctx: &'a Ctx, req: Request) -> Fut {
        self(ctx, req)
    }
}

/// A boxed response future borrowing the connection's [`Ctx`], what a
/// closure given to [`boxed`] returns.
pub type ResponseFuture<'a> = Pin<Box<dyn Future<Output = Response> + Send + 'a>>;

/// `f` as it is: this only tells Rust the closure's signature, so that a
/// closure capturing state can borrow the `Ctx` in its future
/// (`move |ctx, req| Box::pin(async move { .. })`, no types written).
///
/// ```
/// use lona_http::{boxed, Response, WithCtx};
/// use std::sync::Arc;
///
/// let greeting = Arc::new(String::from("hello"));
/// let _handler = WithCtx(boxed(move |ctx, _req| {
///     let greeting = greeting.clone();
///     Box::pin(async move { Response::text(format!("{greeting} from {}\n", ctx.pid())) })
/// }));
/// ```
pub fn boxed<F>(f: F) -> F
where
    F: for<'a> Fn(&'a Ctx, Request) -> ResponseFuture<'a> + Send + Sync + 'static,
{
    f
}

/// A [`Handler`] behind a pointer, its future boxed: what a router keeps.
pub(crate) trait DynHandler: Send + Sync + 'static {
    fn call_dyn<'a>(&'a self, ctx: &'a Ctx, req: Request) -> ResponseFuture<'a>;
}

impl<H: Handler> DynHandler for H {
    fn call_dyn<'a>(&'a self, ctx: &'a Ctx, req: Request) -> ResponseFuture<'a> {
        Box::pin(self.call(ctx, req))
    }
}
