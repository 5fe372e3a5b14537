//! Request path → a relative path under the root, or why not. Pure: no file-system access.
//!
//! The connection already percent-decoded the path exactly once and refused invalid escapes,
//! invalid UTF-8 (so overlong encodings such as `%c0%ae`) and NUL with a 400. What is left to
//! refuse here works on the decoded text, so `%2e%2e`, `..%2f` and `%5c` are caught like their
//! literal forms, while a double-encoded `%252e%252e` stays the literal name `%2e%2e`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Why a request path cannot name a file under the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// Not a path a conforming client sends: `.` or `..` segments, backslashes, control
    /// characters, or no leading `/` (400).
    Malformed,
    /// A hidden (dot) segment while hidden files are refused (403).
    Hidden,
    /// Outside the mount prefix (404).
    OutsidePrefix,
}

/// A validated path relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelPath<'a> {
    /// Segments joined with `/`, without leading or trailing slash; empty for the root itself.
    /// Borrowed from the request path unless empty segments had to be dropped.
    pub rel: Cow<'a, str>,
    /// Whether the request path ended with `/` (a bare mount prefix did not).
    pub trailing_slash: bool,
}

/// Checks a decoded request path and maps it under the root, after stripping `prefix` (a
/// normalised mount point such as `/static`, or empty). Empty segments (`a//b`) collapse.
pub(crate) fn validate<'a>(
    path: &'a str,
    prefix: &str,
    allow_hidden: bool,
) -> Result<RelPath<'a>, Rejection> {
    if !path.starts_with('/') {
        return Err(Rejection::Malformed);
    }
    let rest = match path.strip_prefix(prefix) {
        Some(r) if r.is_empty() || r.starts_with('/') => r,
        _ => return Err(Rejection::OutsidePrefix),
    };
    let segments = || rest.split('/').filter(|s| !s.is_empty());
    for segment in segments() {
        if segment == "." || segment == ".." {
            return Err(Rejection::Malformed);
        }
        if segment.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(Rejection::Malformed);
        }
        if segment.starts_with('.') && !allow_hidden {
            return Err(Rejection::Hidden);
        }
    }
    let trailing_slash = rest.ends_with('/');
    let inner = rest.strip_prefix('/').unwrap_or(rest);
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    let rel = if inner.is_empty() || !inner.split('/').any(str::is_empty) {
        // Nothing to collapse: the request's own text (the usual case, no allocation).
        Cow::Borrowed(inner)
    } else {
        Cow::Owned(segments().collect::<Vec<_>>().join("/"))
    };
    Ok(RelPath {
        rel,
        trailing_slash,
    })
}

/// Characters kept as they are in a path written back into a URL (RFC 3986 `pchar` and `/`).
fn is_path_safe(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&c)
}

/// Appends `text` percent-encoded for use in a URL path (`/` kept).
pub(crate) fn encode_path_into(text: &str, out: &mut String) {
    for &c in text.as_bytes() {
        if is_path_safe(c) {
            out.push(c as char);
        } else {
            let _ = write!(out, "%{c:02X}");
        }
    }
}

/// Appends `text` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`)
/// percent-encoded: safe in a query value and in an RFC 8187 `filename*`.
pub(crate) fn encode_component_into(text: &str, out: &mut String) {
    for &c in text.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            out.push(c as char);
        } else {
            let _ = write!(out, "%{c:02X}");
        }
    }
}

/// The `Location` of the redirect that adds the trailing slash to a directory: built from the
/// validated segments (so it always starts with exactly one `/` and can never point to another
/// host), percent-encoded, with the query kept.
pub(crate) fn directory_location(prefix: &str, rel: &str, query: Option<&str>) -> String {
    let mut loc = String::with_capacity(prefix.len() + rel.len() + 8);
    encode_path_into(prefix, &mut loc);
    loc.push('/');
    if !rel.is_empty() {
        encode_path_into(rel, &mut loc);
        loc.push('/');
    }
    if let Some(q) = query {
        loc.push('?');
        loc.push_str(q);
    }
    loc
}

/// Normalises a mount prefix: leading `/`, no trailing `/`, `/` alone becomes empty.
pub(crate) fn normalise_prefix(prefix: &str) -> String {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("/{trimmed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str) -> (String, bool) {
        let r = validate(path, "", false).expect(path);
        (r.rel.into_owned(), r.trailing_slash)
    }

    #[test]
    fn a_path_without_empty_segments_is_borrowed_and_one_with_them_collapses() {
        for (path, rel) in [("/a/b.txt", "a/b.txt"), ("/a/", "a"), ("/", ""), ("//", "")] {
            let r = validate(path, "", false).unwrap();
            assert!(matches!(r.rel, Cow::Borrowed(_)), "{path:?}");
            assert_eq!(r.rel, rel);
        }
        for (path, rel) in [("/a//b", "a/b"), ("///a", "a"), ("/a///", "a")] {
            let r = validate(path, "", false).unwrap();
            assert!(matches!(r.rel, Cow::Owned(_)), "{path:?}");
            assert_eq!(r.rel, rel);
        }
    }

    #[test]
    fn plain_paths_map_under_the_root() {
        assert_eq!(ok("/"), (String::new(), true));
        assert_eq!(ok("/a.txt"), ("a.txt".into(), false));
        assert_eq!(ok("/dir/"), ("dir".into(), true));
        assert_eq!(ok("//a///b"), ("a/b".into(), false));
        assert_eq!(validate("/....//x", "", false), Err(Rejection::Hidden));
        assert_eq!(validate("/....//x", "", true).unwrap().rel, "..../x");
        assert_eq!(ok("/%2e%2e/x"), ("%2e%2e/x".into(), false));
        assert_eq!(
            ok("/\u{ff0e}\u{ff0e}/x"),
            ("\u{ff0e}\u{ff0e}/x".into(), false)
        );
    }

    #[test]
    fn dot_segments_backslashes_and_controls_are_malformed() {
        for p in [
            "/..",
            "/../x",
            "/a/../b",
            "/a/..",
            "/.",
            "/./a",
            "/a\\..\\b",
            "/a\u{1}",
            "a",
            "",
        ] {
            assert_eq!(validate(p, "", true), Err(Rejection::Malformed), "{p:?}");
        }
    }

    #[test]
    fn hidden_segments_are_refused_unless_allowed() {
        assert_eq!(validate("/.env", "", false), Err(Rejection::Hidden));
        assert_eq!(
            validate("/a/.git/config", "", false),
            Err(Rejection::Hidden)
        );
        assert_eq!(validate("/.env", "", true).unwrap().rel, ".env");
    }

    #[test]
    fn prefix_is_stripped_on_a_segment_boundary() {
        assert_eq!(validate("/static/a", "/static", false).unwrap().rel, "a");
        assert_eq!(validate("/static", "/static", false).unwrap().rel, "");
        assert_eq!(
            validate("/staticx/a", "/static", false),
            Err(Rejection::OutsidePrefix)
        );
        assert_eq!(normalise_prefix("/static/"), "/static");
        assert_eq!(normalise_prefix("/"), "");
    }

    #[test]
    fn redirect_location_stays_on_this_host() {
        assert_eq!(directory_location("", "evil.com", None), "/evil.com/");
        assert_eq!(
            directory_location("", "a b/c", Some("x=1")),
            "/a%20b/c/?x=1"
        );
        assert_eq!(directory_location("/static", "", None), "/static/");
        assert_eq!(directory_location("", "caf\u{e9}", None), "/caf%C3%A9/");
    }
}
