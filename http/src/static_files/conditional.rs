//! Conditional requests (RFC 9110 §13): the four preconditions evaluated in the order of
//! §13.2.2 against the representation's entity tag and modification time. Pure.

use crate::request::Request;

/// The precondition header fields of a request.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Conditions<'a> {
    pub if_match: Option<&'a [u8]>,
    pub if_unmodified_since: Option<&'a [u8]>,
    pub if_none_match: Option<&'a [u8]>,
    pub if_modified_since: Option<&'a [u8]>,
}

impl<'a> Conditions<'a> {
    /// The fields of `req`.
    pub(crate) fn of(req: &Request<'a>) -> Conditions<'a> {
        Conditions {
            if_match: req.header("if-match"),
            if_unmodified_since: req.header("if-unmodified-since"),
            if_none_match: req.header("if-none-match"),
            if_modified_since: req.header("if-modified-since"),
        }
    }
}

/// What the preconditions decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Precondition {
    /// Serve the request normally.
    Proceed,
    /// 304 Not Modified.
    NotModified,
    /// 412 Precondition Failed.
    Failed,
}

/// Evaluates `c` for a GET or HEAD (`safe`) or another method, against the current `etag`
/// (quoted) and modification time in whole seconds.
pub(crate) fn evaluate(c: &Conditions<'_>, safe: bool, etag: &str, mtime: u64) -> Precondition {
    // §13.2.2 step 1: If-Match, strong comparison; step 2: If-Unmodified-Since, only
    // without If-Match, ignored when not a valid date.
    if let Some(v) = c.if_match {
        if !list_matches(v, etag, true) {
            return Precondition::Failed;
        }
    } else if let Some(t) = c.if_unmodified_since.and_then(date) {
        if mtime > t {
            return Precondition::Failed;
        }
    }
    // Step 3: If-None-Match, weak comparison; step 4: If-Modified-Since, only without
    // If-None-Match and only for GET/HEAD.
    if let Some(v) = c.if_none_match {
        if list_matches(v, etag, false) {
            return if safe {
                Precondition::NotModified
            } else {
                Precondition::Failed
            };
        }
    } else if let Some(t) = c.if_modified_since.filter(|_| safe).and_then(date) {
        if mtime <= t {
            return Precondition::NotModified;
        }
    }
    Precondition::Proceed
}

/// An HTTP date in seconds since the epoch (`None` when invalid: the field is then ignored).
fn date(v: &[u8]) -> Option<u64> {
    let t = httpdate::parse_http_date(std::str::from_utf8(v).ok()?.trim()).ok()?;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

/// Whether `*` or one entity tag of the list `v` matches `etag` (§8.8.3.2: strong comparison
/// needs both tags strong; weak comparison ignores the `W/` prefixes).
fn list_matches(v: &[u8], etag: &str, strong: bool) -> bool {
    let v = v.trim_ascii();
    if v == b"*" {
        return true;
    }
    let (ours_weak, ours) = split_weak(etag.as_bytes());
    if strong && ours_weak {
        return false;
    }
    EntityTags(v).any(|(weak, tag)| tag == ours && !(strong && weak))
}

fn split_weak(tag: &[u8]) -> (bool, &[u8]) {
    match tag.strip_prefix(b"W/") {
        Some(t) => (true, t),
        None => (false, tag),
    }
}

/// The entity tags of a comma-separated list, as `(weak, "quoted")`; commas inside quotes do
/// not split, and parsing stops at the first malformed element.
struct EntityTags<'a>(&'a [u8]);

impl<'a> Iterator for EntityTags<'a> {
    type Item = (bool, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.0.trim_ascii_start();
        let rest = rest
            .iter()
            .position(|&c| c != b',' && c != b' ' && c != b'\t')
            .map_or(&rest[rest.len()..], |i| &rest[i..]);
        let (weak, body) = split_weak(rest);
        if body.first() != Some(&b'"') {
            self.0 = &[];
            return None;
        }
        let Some(end) = body[1..].iter().position(|&c| c == b'"') else {
            self.0 = &[];
            return None;
        };
        let tag = &body[..end + 2];
        self.0 = &body[end + 2..];
        Some((weak, tag))
    }
}

#[cfg(test)]
mod tests {
    use super::Precondition::*;
    use super::*;

    const TAG: &str = "\"abc\"";
    const T: u64 = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT
    const AT: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";
    const BEFORE: &[u8] = b"Sun, 06 Nov 1994 08:49:36 GMT";

    fn eval(c: Conditions<'_>) -> Precondition {
        evaluate(&c, true, TAG, T)
    }

    #[test]
    fn if_none_match() {
        let c = |v: &'static [u8]| Conditions {
            if_none_match: Some(v),
            ..Default::default()
        };
        assert_eq!(eval(c(b"\"abc\"")), NotModified);
        assert_eq!(eval(c(b"W/\"abc\"")), NotModified);
        assert_eq!(eval(c(b"\"x\", \"abc\"")), NotModified);
        assert_eq!(eval(c(b"\"x,y\",\"abc\"")), NotModified);
        assert_eq!(eval(c(b"*")), NotModified);
        assert_eq!(eval(c(b"\"x\"")), Proceed);
        assert_eq!(eval(c(b"abc")), Proceed);
        assert_eq!(evaluate(&c(b"\"abc\""), false, TAG, T), Failed);
    }

    #[test]
    fn if_match_is_strong() {
        let c = |v: &'static [u8]| Conditions {
            if_match: Some(v),
            ..Default::default()
        };
        assert_eq!(eval(c(b"\"abc\"")), Proceed);
        assert_eq!(eval(c(b"*")), Proceed);
        assert_eq!(eval(c(b"W/\"abc\"")), Failed);
        assert_eq!(eval(c(b"\"nope\"")), Failed);
        assert_eq!(evaluate(&c(b"\"abc\""), true, "W/\"abc\"", T), Failed);
    }

    #[test]
    fn dates() {
        let ims = |v: &'static [u8]| Conditions {
            if_modified_since: Some(v),
            ..Default::default()
        };
        assert_eq!(eval(ims(AT)), NotModified);
        assert_eq!(eval(ims(BEFORE)), Proceed);
        assert_eq!(eval(ims(b"garbage")), Proceed);
        assert_eq!(evaluate(&ims(AT), false, TAG, T), Proceed);
        let ius = |v: &'static [u8]| Conditions {
            if_unmodified_since: Some(v),
            ..Default::default()
        };
        assert_eq!(eval(ius(AT)), Proceed);
        assert_eq!(eval(ius(BEFORE)), Failed);
        assert_eq!(eval(ius(b"garbage")), Proceed);
    }

    #[test]
    fn precedence() {
        // If-None-Match wins over If-Modified-Since; If-Match over If-Unmodified-Since.
        let c = Conditions {
            if_none_match: Some(b"\"other\""),
            if_modified_since: Some(AT),
            ..Default::default()
        };
        assert_eq!(eval(c), Proceed);
        let c = Conditions {
            if_match: Some(b"\"abc\""),
            if_unmodified_since: Some(BEFORE),
            ..Default::default()
        };
        assert_eq!(eval(c), Proceed);
        let c = Conditions {
            if_match: Some(b"\"nope\""),
            if_none_match: Some(b"\"abc\""),
            ..Default::default()
        };
        assert_eq!(eval(c), Failed);
    }
}
