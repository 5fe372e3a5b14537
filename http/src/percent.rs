//! Percent-decoding for paths (strict, exactly once) and query strings (lenient, `+` as space).

use std::borrow::Cow;

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes a path into `out`: every `%XX` must be valid, the result valid UTF-8 without NUL.
/// Returns `false` when the path is malformed.
pub(crate) fn decode_path_into(raw: &[u8], out: &mut String) -> bool {
    out.clear();
    let mut bytes = std::mem::take(out).into_bytes();
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c == b'%' {
            match (
                raw.get(i + 1).and_then(|&h| hex(h)),
                raw.get(i + 2).and_then(|&l| hex(l)),
            ) {
                (Some(h), Some(l)) => bytes.push(h << 4 | l),
                _ => return false,
            }
            i += 3;
        } else {
            bytes.push(c);
            i += 1;
        }
    }
    if bytes.contains(&0) {
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
    let raw = s.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => match (
                raw.get(i + 1).and_then(|&h| hex(h)),
                raw.get(i + 2).and_then(|&l| hex(l)),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 3;
                }
                _ => {
                    out.push(b'%');
                    i += 1;
                }
            },
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
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
}
