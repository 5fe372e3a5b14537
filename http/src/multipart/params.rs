//! Header parameters (`type; name=value; name="quoted"; name*=UTF-8''pct`), as in
//! `Content-Type` and `Content-Disposition` (RFC 9110 §5.6.6, RFC 8187 ext-values). Pure.

use crate::percent::decode_strict;

/// A header value split into its leading value (lowercased) and its parameters (names
/// lowercased, quoted values unescaped); `None` when the grammar breaks.
pub(crate) fn parse(value: &str) -> Option<(String, Vec<(String, String)>)> {
    let (head, mut rest) = value.split_once(';').unwrap_or((value, ""));
    let head = head.trim().to_ascii_lowercase();
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches([' ', '\t', ';']);
        if rest.is_empty() {
            return Some((head, params));
        }
        let (name, after) = rest.split_once('=')?;
        let name = name.trim().to_ascii_lowercase();
        let after = after.trim_start_matches([' ', '\t']);
        let (val, next) = match after.strip_prefix('"') {
            Some(quoted) => unquote(quoted)?,
            None => {
                let end = after.find(';').unwrap_or(after.len());
                (after[..end].trim_end().to_string(), &after[end..])
            }
        };
        if name.is_empty() {
            return None;
        }
        params.push((name, val));
        rest = next;
    }
}

/// The quoted-string starting after its opening quote: its text and what follows the close.
fn unquote(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => out.push(chars.next()?.1),
            c => out.push(c),
        }
    }
    None
}

/// The value of parameter `name`, preferring the RFC 8187 form `name*` (UTF-8 only).
pub(crate) fn get(params: &[(String, String)], name: &str) -> Option<String> {
    let star = format!("{name}*");
    let extended = params
        .iter()
        .find(|(n, _)| *n == star)
        .and_then(|(_, v)| ext_value(v));
    extended.or_else(|| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    })
}

/// Decodes `charset'language'pct-encoded` (RFC 8187) when the charset is UTF-8.
fn ext_value(v: &str) -> Option<String> {
    let mut it = v.splitn(3, '\'');
    let (charset, _lang, text) = (it.next()?, it.next()?, it.next()?);
    if !charset.eq_ignore_ascii_case("utf-8") {
        return None;
    }
    decode_strict(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_quoted_strings_and_escapes() {
        let (head, p) = parse(r#"form-data; name="a \"b\"; c"; filename=plain.txt ;x="""#).unwrap();
        assert_eq!(head, "form-data");
        assert_eq!(get(&p, "name").as_deref(), Some(r#"a "b"; c"#));
        assert_eq!(get(&p, "filename").as_deref(), Some("plain.txt"));
        assert_eq!(get(&p, "x").as_deref(), Some(""));
    }

    #[test]
    fn extended_values_win_and_decode_utf8() {
        let (_, p) = parse(
            "attachment; filename=\"fallback.txt\"; filename*=UTF-8''na%C3%AFve%20%E2%82%AC.txt",
        )
        .unwrap();
        assert_eq!(get(&p, "filename").as_deref(), Some("naïve €.txt"));
        let (_, p) = parse("a; filename=x; filename*=iso-8859-1''%E9").unwrap();
        assert_eq!(get(&p, "filename").as_deref(), Some("x"));
    }

    #[test]
    fn broken_grammar_is_none() {
        assert!(parse("form-data; name=\"unterminated").is_none());
        assert!(parse("form-data; novalue").is_none());
    }
}
