//! Routing by method and path pattern: `/users/:id` binds one segment, `/static/*rest` binds the
//! rest of the path. The most specific pattern wins (static over parameter over rest). A path
//! that matches no pattern is 404; one matched only under other methods is 405 with `Allow`
//! (HEAD is served by GET routes; OPTIONS answers 204 with `Allow` unless routed).

use std::cmp::Ordering;
use std::sync::Arc;

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

struct Route {
    method: Method,
    other: Option<String>,
    segments: Vec<Segment>,
    handler: Box<dyn Handler>,
    stat: Arc<RouteStat>,
}

/// A request router; itself a [`Handler`].
#[derive(Default)]
pub struct Router {
    routes: Vec<Route>,
    fallback: Option<Box<dyn Handler>>,
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
    /// An empty router (everything is 404).
    pub fn new() -> Router {
        Router::default()
    }

    /// Routes `method` requests whose path matches `pattern` to `handler`.
    ///
    /// # Panics
    /// On a malformed pattern (see the module docs).
    pub fn route(mut self, method: Method, pattern: &str, handler: impl Handler) -> Router {
        self.routes.push(Route {
            method,
            other: None,
            segments: parse_pattern(pattern),
            handler: Box::new(handler),
            stat: RouteStat::register(method.as_str(), pattern),
        });
        self
    }

    /// Routes an extension method (e.g. `PROPFIND`) by name.
    pub fn route_other(mut self, method: &str, pattern: &str, handler: impl Handler) -> Router {
        self.routes.push(Route {
            method: Method::Other,
            other: Some(method.to_string()),
            segments: parse_pattern(pattern),
            handler: Box::new(handler),
            stat: RouteStat::register(method, pattern),
        });
        self
    }

    /// GET (and HEAD) `pattern`.
    pub fn get(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Get, pattern, handler)
    }

    /// POST `pattern`.
    pub fn post(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Post, pattern, handler)
    }

    /// PUT `pattern`.
    pub fn put(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Put, pattern, handler)
    }

    /// DELETE `pattern`.
    pub fn delete(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Delete, pattern, handler)
    }

    /// PATCH `pattern`.
    pub fn patch(self, pattern: &str, handler: impl Handler) -> Router {
        self.route(Method::Patch, pattern, handler)
    }

    /// Serves requests no route matches (instead of 404).
    pub fn fallback(mut self, handler: impl Handler) -> Router {
        self.fallback = Some(Box::new(handler));
        self
    }

    fn method_matches(route: &Route, req: &Request<'_>, method: Method) -> bool {
        route.method == method
            && (method != Method::Other || route.other.as_deref() == Some(req.method_str()))
    }

    /// The most specific route for `method` matching `path`.
    fn find(&self, req: &Request<'_>, method: Method, path: &str) -> Option<&Route> {
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

impl Handler for Router {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
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
            return route.handler.handle(req, res);
        }
        if let Some(f) = &self.fallback {
            return f.handle(req, res);
        }
        match self.allow(path) {
            None => respond_error(res, 404),
            Some(allow) if method == Method::Options => {
                res.status(204).header("Allow", allow);
            }
            Some(allow) => {
                respond_error(res, 405);
                res.header("Allow", allow);
            }
        }
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
