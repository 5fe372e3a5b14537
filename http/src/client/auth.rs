//! Credentials answered on `401 Unauthorized`: Digest (RFC 7616: SHA-256 and MD5, their
//! `-sess` forms, `qop=auth` with a client nonce and nonce count) preferred over Basic
//! (RFC 7617).

/// A user name and password.
#[derive(Clone)]
pub(crate) struct Credentials {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// One challenge of a `WWW-Authenticate` field: its scheme and auth-params.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Challenge {
    scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The `Authorization` value answering the strongest challenge this client supports among
/// `fields` (the `WWW-Authenticate` values) for `method` on `uri`, if any.
pub(crate) fn answer<'a>(
    creds: &Credentials,
    fields: impl Iterator<Item = &'a [u8]>,
    method: &str,
    uri: &str,
) -> Option<String> {
    let all: Vec<Challenge> = fields
        .filter_map(|v| std::str::from_utf8(v).ok())
        .flat_map(parse_challenges)
        .collect();
    let digest = |alg: &str| {
        all.iter().find(|c| {
            c.scheme.eq_ignore_ascii_case("digest")
                && c.param("algorithm")
                    .unwrap_or("MD5")
                    .trim_end_matches("-sess")
                    .eq_ignore_ascii_case(alg)
        })
    };
    if let Some(c) = digest("SHA-256").or_else(|| digest("MD5")) {
        let mut cnonce = [0u8; 16];
        moria_crypto::rng::fill(&mut cnonce).ok()?;
        let cnonce = moria_crypto::encoding::hex(&cnonce);
        return digest_answer(creds, c, method, uri, &cnonce, 1);
    }
    all.iter()
        .any(|c| c.scheme.eq_ignore_ascii_case("basic"))
        .then(|| {
            let plain = format!("{}:{}", creds.user, creds.password);
            format!("Basic {}", moria_crypto::encoding::base64(plain.as_bytes()))
        })
}

/// The Digest response of RFC 7616 §3.4 (`qop=auth`, or the RFC 2069 form when the server
/// offers no qop); `None` when the challenge lacks a nonce or offers only `auth-int`.
fn digest_answer(
    creds: &Credentials,
    c: &Challenge,
    method: &str,
    uri: &str,
    cnonce: &str,
    nc: u32,
) -> Option<String> {
    let algorithm = c.param("algorithm").unwrap_or("MD5");
    let hash_name = if algorithm.to_ascii_uppercase().starts_with("SHA-256") {
        "sha256"
    } else {
        "md5"
    };
    let h = |s: &str| moria_crypto::hash(hash_name, s.as_bytes()).map(|d| d.to_hex());
    let realm = c.param("realm").unwrap_or_default();
    let nonce = c.param("nonce")?;
    let qop = match c.param("qop") {
        None => None,
        Some(offered) => {
            if !offered
                .split(',')
                .any(|q| q.trim().eq_ignore_ascii_case("auth"))
            {
                return None;
            }
            Some("auth")
        }
    };
    let mut ha1 = h(&format!("{}:{realm}:{}", creds.user, creds.password)).ok()?;
    if algorithm.to_ascii_lowercase().ends_with("-sess") {
        ha1 = h(&format!("{ha1}:{nonce}:{cnonce}")).ok()?;
    }
    let ha2 = h(&format!("{method}:{uri}")).ok()?;
    let nc = format!("{nc:08x}");
    let response = match qop {
        Some(qop) => h(&format!("{ha1}:{nonce}:{nc}:{cnonce}:{qop}:{ha2}")),
        None => h(&format!("{ha1}:{nonce}:{ha2}")),
    }
    .ok()?;
    let mut out = format!(
        "Digest username={}, realm={}, nonce={}, uri={}, algorithm={algorithm}, response=\"{response}\"",
        quote(&creds.user),
        quote(realm),
        quote(nonce),
        quote(uri)
    );
    if let Some(qop) = qop {
        out.push_str(&format!(", qop={qop}, nc={nc}, cnonce=\"{cnonce}\""));
    }
    if let Some(opaque) = c.param("opaque") {
        out.push_str(&format!(", opaque={}", quote(opaque)));
    }
    Some(out)
}

/// A quoted-string (RFC 9110 §5.6.4) holding `s`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The challenges of one `WWW-Authenticate` value (RFC 9110 §11.6.1): comma-separated items,
/// where an item starting with a bare token opens a new challenge and `name=value` items are
/// its parameters (values may be quoted strings holding commas).
fn parse_challenges(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    for item in split_items(value) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (first, rest) = match item.split_once([' ', '\t']) {
            Some((f, r)) if !f.contains('=') => (Some(f), r.trim()),
            _ => (None, item),
        };
        if let Some(scheme) = first.or((!item.contains('=')).then_some(item)) {
            out.push(Challenge {
                scheme: scheme.to_owned(),
                params: Vec::new(),
            });
            if first.is_none() {
                continue;
            }
        }
        let (Some(current), Some((name, value))) = (out.last_mut(), rest.split_once('=')) else {
            continue;
        };
        current
            .params
            .push((name.trim().to_owned(), unquote(value.trim())));
    }
    out
}

/// Splits at commas outside quoted strings.
fn split_items(value: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                items.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&value[start..]);
    items
}

/// The content of a quoted-string (escapes removed), or a token as it is.
fn unquote(v: &str) -> String {
    let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return v.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut escaped = false;
    for c in inner.chars() {
        if c == '\\' && !escaped {
            escaped = true;
        } else {
            out.push(c);
            escaped = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mufasa() -> Credentials {
        Credentials {
            user: "Mufasa".into(),
            password: "Circle of Life".into(),
        }
    }

    /// The challenge of RFC 7616 §3.9.1.
    fn rfc_challenge(algorithm: &str) -> String {
        format!(
            "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", \
             algorithm={algorithm}, nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", \
             opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""
        )
    }

    fn rfc_response(algorithm: &str) -> String {
        let c = &parse_challenges(&rfc_challenge(algorithm))[0];
        let cnonce = "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ";
        digest_answer(&mufasa(), c, "GET", "/dir/index.html", cnonce, 1).unwrap()
    }

    #[test]
    fn rfc7616_vectors_md5_and_sha256() {
        let md5 = rfc_response("MD5");
        assert!(
            md5.contains("response=\"8ca523f5e9506fed4657c9700eebdbec\""),
            "{md5}"
        );
        let sha = rfc_response("SHA-256");
        assert!(
            sha.contains(
                "response=\"753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1\""
            ),
            "{sha}"
        );
        assert!(sha.contains("qop=auth, nc=00000001"), "{sha}");
        assert!(sha.contains("opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""));
    }

    #[test]
    fn several_challenges_in_one_field() {
        let all = parse_challenges(
            "Basic realm=\"a, b\", Digest realm=\"r\", nonce=\"n\", qop=\"auth\", Bearer",
        );
        let schemes: Vec<_> = all.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["Basic", "Digest", "Bearer"]);
        assert_eq!(all[0].param("realm"), Some("a, b"));
        assert_eq!(all[1].param("qop"), Some("auth"));
    }

    #[test]
    fn strongest_supported_challenge_wins() {
        let (md5, sha) = (rfc_challenge("MD5"), rfc_challenge("SHA-256"));
        let fields = [&b"Basic realm=\"x\""[..], md5.as_bytes(), sha.as_bytes()];
        let got = answer(&mufasa(), fields.iter().copied(), "GET", "/").unwrap();
        assert!(
            got.starts_with("Digest ") && got.contains("algorithm=SHA-256"),
            "{got}"
        );
        let got = answer(
            &mufasa(),
            [&b"Basic realm=\"x\""[..]].into_iter(),
            "GET",
            "/",
        );
        assert_eq!(got.as_deref(), Some("Basic TXVmYXNhOkNpcmNsZSBvZiBMaWZl"));
        assert!(answer(&mufasa(), [&b"Bearer"[..]].into_iter(), "GET", "/").is_none());
        let int_only = b"Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\"";
        assert!(answer(&mufasa(), [&int_only[..]].into_iter(), "GET", "/").is_none());
    }

    #[test]
    fn quoting_escapes() {
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(unquote("\"a\\\"b\""), "a\"b");
    }
}
