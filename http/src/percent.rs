//! Percent-decoding for HTTP: paths (strict, exactly once), query strings (lenient, `+` as
//! space), and strict decoding for callers that must refuse bad escapes (the ORM's REST
//! parameters). The PostgreSQL driver, which must not depend on HTTP, decodes its URLs with the
//! percent-encoding crate.

use std::borrow::Cow;

fn hex(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).map(|d| d as u8)
}

/// What `+` means and what a malformed `%` escape does.
#[derive(Clone, Copy)]
struct Rules {
    plus_is_space: bool,
    lenient: bool,
}

/// The one percent-decoder: appends the bytes `raw` stands for to `out`; `false` on a malformed
/// escape unless `rules.lenient`, which keeps it as it is.
fn unescape(raw: &[u8], rules: Rules, out: &mut Vec<u8>) -> bool {
    out.reserve(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' if rules.plus_is_space => out.push(b' '),
            b'%' => match (
                raw.get(i + 1).and_then(|&h| hex(h)),
                raw.get(i + 2).and_then(|&l| hex(l)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ if rules.lenient => out.push(b'%'),
                _ => return false,
            },
            c => out.push(c),
        }
        i += 1;
    }
    true
}

/// Decodes a path into `out`: every `%XX` must be valid, the result valid UTF-8 without NUL.
/// Returns `false` when the path is malformed.
pub(crate) fn decode_path_into(raw: &[u8], out: &mut String) -> bool {
    out.clear();
    let mut bytes = std::mem::take(out).into_bytes();
    let rules = Rules {
        plus_is_space: false,
        lenient: false,
    };
    if !unescape(raw, rules, &mut bytes) || bytes.contains(&0) {
        return false;
    }
    match String::from_utf8(bytes) {
        Ok(s) => {
            *out = s;
            true
        }
        Err(_) => false,
    }
}

/// Decodes one query-string component: `+` is a space, invalid escapes are kept as they are,
/// invalid UTF-8 is replaced.
pub fn decode_component(s: &str) -> Cow<'_, str> {
    if !s.bytes().any(|c| c == b'%' || c == b'+') {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::new();
    let rules = Rules {
        plus_is_space: true,
        lenient: true,
    };
    unescape(s.as_bytes(), rules, &mut out);
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Decodes `s` strictly: every `%XX` valid and the result UTF-8, else `None`; `+` is a space
/// when `plus_is_space` (form encoding), itself otherwise (URL parts).
pub fn decode_strict(s: &str, plus_is_space: bool) -> Option<String> {
    let mut out = Vec::new();
    let rules = Rules {
        plus_is_space,
        lenient: false,
    };
    if !unescape(s.as_bytes(), rules, &mut out) {
        return None;
    }
    String::from_utf8(out).ok()
}

/// The `name=value` pairs of a query string, decoded; a name without `=` has an empty value.
pub fn query_pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode_component(k), decode_component(v)),
            None => (decode_component(p), Cow::Borrowed("")),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(raw: &str) -> Option<String> {
        let mut s = String::new();
        decode_path_into(raw.as_bytes(), &mut s).then_some(s)
    }

    #[test]
    fn paths_decode_once() {
        assert_eq!(path("/a%20b").as_deref(), Some("/a b"));
        assert_eq!(path("/%252e").as_deref(), Some("/%2e"));
        assert_eq!(path("/caf%C3%A9").as_deref(), Some("/café"));
    }

    #[test]
    fn malformed_paths_are_refused() {
        for p in ["/%", "/%2", "/%zz", "/%00", "/%c0%ae", "/%ff"] {
            assert_eq!(path(p), None, "{p}");
        }
    }

    #[test]
    fn query_components() {
        let pairs: Vec<_> = query_pairs("a=1&b=x+y&c&d=%41%zz&&").collect();
        assert_eq!(pairs.len(), 4);
        assert_eq!(
            pairs[1],
            (Cow::Borrowed("b"), Cow::Owned::<str>("x y".into()))
        );
        assert_eq!(pairs[2].1, "");
        assert_eq!(pairs[3].1, "A%zz");
    }

    #[test]
    fn strict_decoding() {
        assert_eq!(
            decode_strict("a+b%2B%C3%A9", true).as_deref(),
            Some("a b+é")
        );
        assert_eq!(decode_strict("a+b%2F", false).as_deref(), Some("a+b/"));
        for bad in ["%", "%4", "%zz", "%ff"] {
            assert_eq!(decode_strict(bad, true), None, "{bad}");
        }
    }
}
