//! Routing by method and path pattern: `/users/:id` binds one segment, `/static/*rest` binds the
//! rest of the path. The most specific pattern wins (static over parameter over rest). A path
//! that matches no pattern is 404; one matched only under other methods is 405 with `Allow`
//! (HEAD is served by GET routes; OPTIONS answers 204 with `Allow` unless routed).
//!
//! A router carries application state (`Router::with_state`) handed to handlers as `&S`,
//! layers (router-wide and per route, see [`crate::app::layer`]), nested routers and mounted
//! handlers under a prefix (routes of the router itself win over a mount; a mounted router
//! answers its own 404/405/OPTIONS), a fallback and an error renderer.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::app::endpoint::{Endpoint, IntoEndpoint};
use crate::app::{HttpError, Layer, Next, Renderer};
use crate::handler::{Handler, HandlerResult};
use crate::method::Method;
use crate::metrics::RouteStat;
use crate::request::Request;
use crate::response::{respond_error, Response};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Static(String),
    Param(String),
    Rest(String),
}

impl Segment {
    fn rank(&self) -> u8 {
        match self {
            Segment::Static(_) => 2,
            Segment::Param(_) => 1,
            Segment::Rest(_) => 0,
        }
    }
}

struct Route<S> {
    method: Method,
    other: Option<String>,
    segments: Vec<Segment>,
    endpoint: Endpoint<S>,
    layers: Vec<Arc<dyn Layer>>,
    /// The route's request figures (per pattern: label cardinality stays bounded).
    stat: Arc<RouteStat>,
}

/// A handler serving every path under a prefix.
struct Mount {
    prefix: String,
    /// Whether the handler sees the path without the prefix (`nest`) or whole (`mount`).
    strip: bool,
    handler: Box<dyn Handler>,
}

impl Mount {
    /// The path below the prefix (`/` for the prefix itself), if `path` is under it.
    fn rest<'p>(&self, path: &'p str) -> Option<&'p str> {
        let rest = path.strip_prefix(self.prefix.as_str())?;
        match rest {
            "" => Some("/"),
            r if r.starts_with('/') => Some(r),
            _ => None,
        }
    }
}

/// A request router with application state `S` (none by default); itself a [`Handler`].
pub struct Router<S = ()> {
    state: Arc<S>,
    routes: Vec<Route<S>>,
    mounts: Vec<Mount>,
    fallback: Option<Box<dyn Handler>>,
    layers: Vec<Arc<dyn Layer>>,
    renderer: Option<Renderer>,
}

impl Default for Router {
    fn default() -> Self {
        Router::with_state(())
    }
}

/// Parses `/a/:b/*c` into segments.
///
/// # Panics
/// On a pattern that does not start with `/`, an empty parameter name, or a `*rest` segment
/// that is not last: these are programming errors, caught at start-up.
fn parse_pattern(pattern: &str) -> Vec<Segment> {
    let Some(body) = pattern.strip_prefix('/') else {
        panic!("route pattern {pattern:?} must start with '/'");
    };
    let parts: Vec<&str> = body.split('/').collect();
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            if let Some(name) = p.strip_prefix(':') {
                assert!(
                    !name.is_empty(),
                    "route pattern {pattern:?}: empty parameter name"
                );
                Segment::Param(name.to_string())
            } else if let Some(name) = p.strip_prefix('*') {
                assert!(
                    !name.is_empty(),
                    "route pattern {pattern:?}: empty rest name"
                );
                assert!(
                    i + 1 == n,
                    "route pattern {pattern:?}: *{name} must be the last segment"
                );
                Segment::Rest(name.to_string())
            } else {
                Segment::Static(p.to_string())
            }
        })
        .collect()
}

/// Whether `path` matches `segments`.
fn matches(segments: &[Segment], path: &str) -> bool {
    let mut rest = path.strip_prefix('/').unwrap_or(path);
    for (i, seg) in segments.iter().enumerate() {
        if let Segment::Rest(_) = seg {
            return true;
        }
        let (part, tail) = match rest.find('/') {
            Some(j) => (&rest[..j], Some(&rest[j + 1..])),
            None => (rest, None),
        };
        match seg {
            Segment::Static(s) if s != part => return false,
            Segment::Param(_) if part.is_empty() => return false,
            _ => {}
        }
        match tail {
            Some(t) => rest = t,
            None => {
                return i + 1 == segments.len() || matches!(segments[i + 1..], [Segment::Rest(_)])
            }
        }
    }
    false
}

/// Binds the parameters of a matching `path` to `segments` through `push`.
fn bind(segments: &[Segment], path: &str, mut push: impl FnMut(&str, &str)) {
    let mut rest = path.strip_prefix('/').unwrap_or(path);
    for seg in segments {
        let (part, tail) = match rest.find('/') {
            Some(j) => (&rest[..j], &rest[j + 1..]),
            None => (rest, ""),
        };
        match seg {
            Segment::Rest(name) => {
                push(name, rest);
                return;
            }
            Segment::Param(name) => push(name, part),
            Segment::Static(_) => {}
        }
        rest = tail;
    }
}

/// Orders two matching patterns: more specific first, segment by segment.
fn specificity(a: &[Segment], b: &[Segment]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.rank().cmp(&y.rank()) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

impl Router {
    /// An empty router without state (everything is 404).
    pub fn new() -> Router {
        Router::default()
    }
}

impl<S: Send + Sync + 'static> Router<S> {
    /// An empty router whose handlers may take `&S` first (`fn h(app: &S, req, res)`); plain
    /// handlers stay handlers.
    pub fn with_state(state: S) -> Router<S> {
        Router {
            state: Arc::new(state),
            routes: Vec::new(),
            mounts: Vec::new(),
            fallback: None,
            layers: Vec::new(),
            renderer: None,
        }
    }

    /// The state handed to handlers.
    pub fn state(&self) -> &Arc<S> {
        &self.state
    }

    /// Routes `method` requests whose path matches `pattern` to `handler`.
    ///
    /// # Panics
    /// On a malformed pattern (see the module docs).
    pub fn route<M>(self, method: Method, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.push(method, None, pattern, handler.into_endpoint())
    }

    /// Routes an extension method (e.g. `PROPFIND`) by name.
    pub fn route_other<M>(
        self,
        method: &str,
        pattern: &str,
        handler: impl IntoEndpoint<S, M>,
    ) -> Self {
        let other = Some(method.to_string());
        self.push(Method::Other, other, pattern, handler.into_endpoint())
    }

    fn push(
        mut self,
        method: Method,
        other: Option<String>,
        pattern: &str,
        endpoint: Endpoint<S>,
    ) -> Self {
        let stat = RouteStat::register(other.as_deref().unwrap_or(method.as_str()), pattern);
        self.routes.push(Route {
            method,
            other,
            segments: parse_pattern(pattern),
            endpoint,
            layers: Vec::new(),
            stat,
        });
        self
    }

    /// GET (and HEAD) `pattern`.
    pub fn get<M>(self, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.route(Method::Get, pattern, handler)
    }

    /// POST `pattern`.
    pub fn post<M>(self, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.route(Method::Post, pattern, handler)
    }

    /// PUT `pattern`.
    pub fn put<M>(self, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.route(Method::Put, pattern, handler)
    }

    /// DELETE `pattern`.
    pub fn delete<M>(self, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.route(Method::Delete, pattern, handler)
    }

    /// PATCH `pattern`.
    pub fn patch<M>(self, pattern: &str, handler: impl IntoEndpoint<S, M>) -> Self {
        self.route(Method::Patch, pattern, handler)
    }

    /// Adds `layer` around the route added last (after the router's own layers, after
    /// routing; layers added first run outermost).
    ///
    /// # Panics
    /// When no route was added yet (a programming error, caught at start-up).
    pub fn with(mut self, layer: impl Layer) -> Self {
        let Some(route) = self.routes.last_mut() else {
            panic!("Router::with needs a route to wrap");
        };
        route.layers.push(Arc::new(layer));
        self
    }

    /// Adds `layer` around the whole router: it sees every request before routing (404, 405
    /// and OPTIONS answers included); layers added first run outermost.
    pub fn layer(mut self, layer: impl Layer) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Serves every path under `prefix` (`/api`: `/api` and `/api/...`) with `router` (any
    /// handler), which sees the path with the prefix removed (`/api/users` → `/users`).
    ///
    /// # Panics
    /// On a prefix that does not start with `/`.
    pub fn nest(self, prefix: &str, router: impl Handler) -> Self {
        self.push_mount(prefix, true, router)
    }

    /// Serves every path under `prefix` with `handler`, which sees the whole path (for
    /// [`crate::StaticFiles`] built with the same `prefix`).
    ///
    /// # Panics
    /// On a prefix that does not start with `/`.
    pub fn mount(self, prefix: &str, handler: impl Handler) -> Self {
        self.push_mount(prefix, false, handler)
    }

    fn push_mount(mut self, prefix: &str, strip: bool, handler: impl Handler) -> Self {
        assert!(
            prefix.starts_with('/'),
            "prefix {prefix:?} must start with '/'"
        );
        self.mounts.push(Mount {
            prefix: prefix.trim_end_matches('/').to_string(),
            strip,
            handler: Box::new(handler),
        });
        self
    }

    /// Serves requests no route matches (instead of 404).
    pub fn fallback(mut self, handler: impl Handler) -> Self {
        self.fallback = Some(Box::new(handler));
        self
    }

    /// Renders the errors of this router's handlers and layers (default: problem details,
    /// [`crate::app::render::problem_json`]); also used for its 404 and 405 answers.
    pub fn error_renderer(
        mut self,
        f: impl Fn(&HttpError, &Request<'_>, &mut Response) + Send + Sync + 'static,
    ) -> Self {
        self.renderer = Some(Arc::new(f));
        self
    }

    fn method_matches(route: &Route<S>, req: &Request<'_>, method: Method) -> bool {
        route.method == method
            && (method != Method::Other || route.other.as_deref() == Some(req.method_str()))
    }

    /// The most specific route for `method` matching `path`.
    fn find(&self, req: &Request<'_>, method: Method, path: &str) -> Option<&Route<S>> {
        self.routes
            .iter()
            .filter(|r| Self::method_matches(r, req, method) && matches(&r.segments, path))
            .max_by(|a, b| specificity(&a.segments, &b.segments))
    }

    /// The `Allow` value for `path`, if any route matches it.
    fn allow(&self, path: &str) -> Option<String> {
        let mut names: Vec<&str> = Vec::new();
        for r in self.routes.iter().filter(|r| matches(&r.segments, path)) {
            let name = r.other.as_deref().unwrap_or(r.method.as_str());
            if !names.contains(&name) {
                names.push(name);
            }
            if r.method == Method::Get && !names.contains(&"HEAD") {
                names.push("HEAD");
            }
        }
        if names.is_empty() {
            return None;
        }
        if !names.contains(&"OPTIONS") {
            names.push("OPTIONS");
        }
        Some(names.join(", "))
    }
}

impl<S: Send + Sync + 'static> Router<S> {
    /// Routes one request: a route, else a mount, else the fallback, else 404/405/OPTIONS.
    fn dispatch(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        let method = req.method();
        let path: &str = req.path;
        let mut route = self.find(req, method, path);
        if route.is_none() && method == Method::Head {
            route = self.find(req, Method::Get, path);
        }
        if let Some(route) = route {
            let segments = &route.segments;
            req.set_params(|p| bind(segments, path, |k, v| p.push(k, v)));
            req.set_route(&route.stat);
            let state = &*self.state;
            if route.layers.is_empty() {
                return (route.endpoint)(state, req, res);
            }
            Next::new(&route.layers, &|req, res| (route.endpoint)(state, req, res)).run(req, res);
            return Ok(());
        }
        if let Some((mount, rest)) = self
            .mounts
            .iter()
            .find_map(|m| m.rest(path).map(|rest| (m, rest)))
        {
            if mount.strip {
                req.path = rest;
            }
            let result = mount.handler.handle(req, res);
            req.path = path;
            return result;
        }
        if let Some(f) = &self.fallback {
            return f.handle(req, res);
        }
        let rendered = req.ext.renderer.is_some();
        match self.allow(path) {
            None if rendered => return Err(HttpError::not_found("no such resource").into()),
            None => respond_error(res, 404),
            Some(allow) if method == Method::Options => {
                res.status(204).header("Allow", allow);
            }
            Some(allow) if rendered => return Err(HttpError::method_not_allowed(&allow).into()),
            Some(allow) => {
                respond_error(res, 405);
                res.header("Allow", allow);
            }
        }
        Ok(())
    }
}

impl<S: Send + Sync + 'static> Handler for Router<S> {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        if let Some(r) = &self.renderer {
            req.ext.touch().renderer = Some(Arc::clone(r));
        }
        if self.layers.is_empty() {
            return self.dispatch(req, res);
        }
        Next::new(&self.layers, &|req, res| self.dispatch(req, res)).run(req, res);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        matches(&parse_pattern(pattern), path)
    }

    fn b(pattern: &str, path: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        bind(&parse_pattern(pattern), path, |k, v| {
            out.push((k.to_string(), v.to_string()))
        });
        out
    }

    #[test]
    fn static_patterns() {
        assert!(m("/", "/"));
        assert!(!m("/", "/a"));
        assert!(m("/a/b", "/a/b"));
        assert!(!m("/a/b", "/a/b/"));
        assert!(!m("/a/b", "/a"));
        assert!(!m("/a", "/a/b"));
    }

    #[test]
    fn params() {
        assert!(m("/users/:id", "/users/42"));
        assert!(!m("/users/:id", "/users/"));
        assert!(!m("/users/:id", "/users/42/x"));
        assert_eq!(
            b("/users/:id/posts/:p", "/users/7/posts/9"),
            vec![("id".into(), "7".into()), ("p".into(), "9".into())]
        );
    }

    #[test]
    fn rest() {
        assert!(m("/static/*rest", "/static/a/b.css"));
        assert!(m("/static/*rest", "/static/"));
        assert!(m("/static/*rest", "/static"));
        assert!(!m("/static/*rest", "/other/a"));
        assert_eq!(
            b("/static/*rest", "/static/a/b.css"),
            vec![("rest".into(), "a/b.css".into())]
        );
        assert_eq!(
            b("/static/*rest", "/static"),
            vec![("rest".into(), "".into())]
        );
    }

    #[test]
    fn specificity_prefers_static() {
        let s = parse_pattern("/users/me");
        let p = parse_pattern("/users/:id");
        let r = parse_pattern("/users/*rest");
        assert_eq!(specificity(&s, &p), Ordering::Greater);
        assert_eq!(specificity(&p, &r), Ordering::Greater);
    }

    #[test]
    #[should_panic(expected = "must be the last segment")]
    fn rest_must_be_last() {
        parse_pattern("/a/*rest/b");
    }
}
