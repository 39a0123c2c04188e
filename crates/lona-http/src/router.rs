//! [`Router`]: a [`Handler`] that picks another by method and path
//! pattern, with `:name` path parameters.
//!
//! Matching, for a request:
//! 1. The path (as sent, before decoding) is cut at each `/`; a pattern
//!    matches when it has as many segments, each literal one equal and
//!    each `:name` one non-empty (the parameter is that segment,
//!    percent-decoded). `/users` and `/users/` are different paths.
//! 2. Of the routes whose pattern matches, the first added for the
//!    request's method answers; a `HEAD` request with no `HEAD` route is
//!    answered by the `GET` one (the server sends no body for `HEAD`).
//! 3. If patterns match but none for the method: `405 Method Not Allowed`
//!    with an `allow` header listing the methods that would have been
//!    answered (RFC 9110 §15.5.6).
//! 4. If no pattern matches: the fallback handler, or `404 Not Found`.

use std::fmt;

use lona_runtime::Ctx;

use crate::handler::{DynHandler, Handler};
use crate::headers::Method;
use crate::request::{decode, Request};
use crate::response::Response;

/// Routes requests by method and path to other handlers (the module
/// doc's rules: first match wins, `HEAD` falls back on `GET`, `405` with
/// `allow`, `404`). Path patterns are `/`-separated segments, literal or
/// `:name`; [`Request::param`] gives a parameter's value.
///
/// ```
/// use lona_http::{HttpServer, Request, Response, Router, WithCtx};
/// use lona_runtime::{io::TcpListener, Ctx, Runtime};
///
/// async fn user(ctx: &Ctx, req: Request) -> Response {
///     Response::text(format!("user {} (in {})\n", req.param("id").unwrap(), ctx.pid()))
/// }
///
/// let router = Router::new()
///     .get("/", |_: Request| Response::text("home\n"))
///     .get("/users/:id", WithCtx(user))
///     .post("/users", |req: Request| Response::bytes(req.body).with_status(201));
///
/// let rt = Runtime::builder().workers(2).build().unwrap();
/// let got = rt.block_on(|ctx| async move {
///     let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
///     let addr = listener.local_addr().unwrap();
///     HttpServer::new().spawn(&ctx, listener, router).await.unwrap();
///     let a = lona_http::get(&ctx, &format!("http://{addr}/users/7")).await.unwrap();
///     let b = lona_http::get(&ctx, &format!("http://{addr}/users")).await.unwrap();
///     (a.body_text().unwrap().starts_with("user 7 "), b.status, b.header("allow").map(str::to_owned))
/// });
/// assert_eq!(got.unwrap(), (true, 405, Some("POST".to_owned())));
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<Route>,
    fallback: Option<Box<dyn DynHandler>>,
}

struct Route {
    method: Method,
    pattern: String,
    segments: Vec<Segment>,
    handler: Box<dyn DynHandler>,
}

/// A matched route's parameters, name and value.
type Params = Vec<(String, String)>;

enum Segment {
    Literal(String),
    Param(String),
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field(
                "routes",
                &self
                    .routes
                    .iter()
                    .map(|r| format!("{} {}", r.method, r.pattern))
                    .collect::<Vec<_>>(),
            )
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

/// The segments of a path or pattern: `/a/b` is `["a", "b"]`, `/` is
/// `[""]`.
fn segments(path: &str) -> std::str::Split<'_, char> {
    path.strip_prefix('/').unwrap_or(path).split('/')
}

impl Route {
    /// The parameters, if `path` matches the pattern.
    fn matches(&self, path: &str) -> Option<Params> {
        let mut params = Vec::new();
        let mut given = segments(path);
        for seg in &self.segments {
            let s = given.next()?;
            match seg {
                Segment::Literal(l) if l == s => {}
                Segment::Literal(_) => return None,
                Segment::Param(_) if s.is_empty() => return None,
                Segment::Param(name) => params.push((name.clone(), decode(s, false).into_owned())),
            }
        }
        given.next().is_none().then_some(params)
    }
}

impl Router {
    /// A router with no routes (everything is 404).
    pub fn new() -> Router {
        Router::default()
    }

    /// Route `method` requests for paths matching `pattern` to `handler`.
    ///
    /// # Panics
    /// If `pattern` does not start with `/`, has a `:` segment without a
    /// name, or names a parameter twice: a mistake in the program.
    pub fn route(mut self, method: Method, pattern: &str, handler: impl Handler) -> Router {
        assert!(
            pattern.starts_with('/'),
            "route pattern {pattern:?}: must start with '/'"
        );
        let mut names: Vec<&str> = Vec::new();
        let segs = segments(pattern)
            .map(|s| match s.strip_prefix(':') {
                Some(name) => {
                    assert!(
                        !name.is_empty(),
                        "route pattern {pattern:?}: a ':' segment needs a name"
                    );
                    assert!(
                        !names.contains(&name),
                        "route pattern {pattern:?}: the parameter {name:?} appears twice"
                    );
                    names.push(name);
                    Segment::Param(name.to_owned())
                }
                None => Segment::Literal(s.to_owned()),
            })
            .collect();
        self.routes.push(Route {
            method,
            pattern: pattern.to_owned(),
            segments: segs,
            handler: Box::new(handler),
        });
        self
    }

    /// [`Router::route`] for `GET` (and so `HEAD`).
    pub fn get(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Get, pattern, handler)
    }

    /// [`Router::route`] for `POST`.
    pub fn post(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Post, pattern, handler)
    }

    /// [`Router::route`] for `PUT`.
    pub fn put(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Put, pattern, handler)
    }

    /// [`Router::route`] for `PATCH`.
    pub fn patch(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Patch, pattern, handler)
    }

    /// [`Router::route`] for `DELETE`.
    pub fn delete(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Delete, pattern, handler)
    }

    /// What answers a path no pattern matches, instead of `404`.
    pub fn fallback(mut self, handler: impl Handler) -> Router {
        self.fallback = Some(Box::new(handler));
        self
    }

    /// The route for `method` and `path` and its parameters; else the
    /// methods whose patterns match (empty: no pattern does).
    fn find(&self, method: &Method, path: &str) -> Result<(&Route, Params), Vec<&Method>> {
        let mut get = None;
        let mut allowed: Vec<&Method> = Vec::new();
        for route in &self.routes {
            let Some(params) = route.matches(path) else {
                continue;
            };
            if route.method == *method {
                return Ok((route, params));
            }
            if *method == Method::Head && route.method == Method::Get && get.is_none() {
                get = Some((route, params));
            }
            if !allowed.contains(&&route.method) {
                allowed.push(&route.method);
            }
        }
        get.ok_or(allowed)
    }
}

impl Handler for Router {
    async fn call(&self, ctx: &Ctx, mut req: Request) -> Response {
        match self.find(&req.method, &req.path) {
            Ok((route, params)) => {
                req.params = params;
                route.handler.call_dyn(ctx, req).await
            }
            Err(allowed) if !allowed.is_empty() => {
                let mut allow: Vec<&str> = allowed.iter().map(|m| m.as_str()).collect();
                if allowed.contains(&&Method::Get) && !allowed.contains(&&Method::Head) {
                    allow.push("HEAD");
                }
                Response::text("method not allowed\n")
                    .with_status(405)
                    .with_header("allow", allow.join(", "))
            }
            Err(_) => match &self.fallback {
                Some(h) => h.call_dyn(ctx, req).await,
                None => Response::not_found(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(pattern: &str) -> Route {
        let r = Router::new().get(pattern, |_: Request| Response::new(200));
        r.routes.into_iter().next().unwrap()
    }

    fn params(pattern: &str, path: &str) -> Option<Vec<(String, String)>> {
        route(pattern).matches(path)
    }

    #[test]
    fn patterns_match_whole_paths_segment_by_segment() {
        assert_eq!(params("/", "/"), Some(vec![]));
        assert_eq!(params("/", "/a"), None);
        assert_eq!(params("/a", "/a"), Some(vec![]));
        assert_eq!(params("/a", "/a/"), None);
        assert_eq!(params("/a", "/ab"), None);
        assert_eq!(params("/a/b", "/a"), None);
        let p = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(params("/u/:id", "/u/7"), Some(vec![p("id", "7")]));
        assert_eq!(params("/u/:id", "/u/"), None, "a parameter is never empty");
        assert_eq!(params("/u/:id", "/u/7/x"), None);
        assert_eq!(
            params("/u/:id/posts/:post", "/u/a%20b/posts/c+d"),
            Some(vec![p("id", "a b"), p("post", "c+d")]),
            "percent-decoded; '+' is not a space in a path"
        );
    }

    #[test]
    #[should_panic(expected = "appears twice")]
    fn a_parameter_named_twice_is_refused() {
        route("/:a/:a");
    }

    #[test]
    #[should_panic(expected = "must start with '/'")]
    fn a_pattern_must_be_absolute() {
        route("a/b");
    }
}
