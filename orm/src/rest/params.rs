//! List parameters from a query string: `select`, `where` (repeatable), `sort`, `limit`,
//! `offset`, `format`. Nothing here reaches SQL: names are checked against the model and values
//! are bound when the [`Query`](crate::Query) is built.
//!
//! - `select=id,name` — columns in the output.
//! - `where=age>=18&where=city=Paris` — AND of `field op value`, op one of `= != < <= > >= ~`
//!   (`~` is LIKE); the value is typed by the field (integer, number, boolean, text, base64).
//! - `sort=age,-name` — ascending, `-` for descending.
//! - `limit=10&offset=20`, `format=compact` for mORMot's non-expanded JSON.

use moria_http::percent::decode_strict;

use crate::error::{Error, Result};
use crate::query::{Op, Order};

/// Parsed list parameters, names not yet checked against a model.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ListParams {
    pub(crate) select: Option<Vec<String>>,
    pub(crate) filters: Vec<(String, Op, String)>,
    pub(crate) sort: Vec<(String, Order)>,
    pub(crate) limit: Option<i64>,
    pub(crate) offset: Option<i64>,
    pub(crate) compact: bool,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::BadRequest(msg.into())
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a space).
fn percent_decode(s: &str) -> Result<String> {
    decode_strict(s, true)
        .ok_or_else(|| bad(format!("bad percent-escape or non-UTF-8 text in {s:?}")))
}

/// `field op value` from one `where` parameter.
fn parse_filter(cond: &str) -> Result<(String, Op, String)> {
    let name_len = cond
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    let (name, rest) = cond.split_at(name_len);
    const OPS: [(&str, Op); 7] = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("!=", Op::Ne),
        ("=", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("~", Op::Like),
    ];
    let (op, value) = OPS
        .iter()
        .find_map(|(sym, op)| rest.strip_prefix(sym).map(|v| (*op, v)))
        .filter(|_| !name.is_empty())
        .ok_or_else(|| bad(format!("where {cond:?}: expected `field op value`")))?;
    Ok((name.to_owned(), op, value.to_owned()))
}

fn parse_count(name: &str, v: &str) -> Result<i64> {
    v.parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| bad(format!("{name}={v:?}: expected a non-negative integer")))
}

impl ListParams {
    /// Parses a raw query string (without `?`); unknown or repeated single parameters are errors.
    pub(crate) fn parse(query: &str) -> Result<Self> {
        let mut p = ListParams::default();
        for pair in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let key = percent_decode(k)?;
            let value = percent_decode(v)?;
            let once = |seen: bool| {
                if seen {
                    Err(bad(format!("parameter {key:?} given twice")))
                } else {
                    Ok(())
                }
            };
            match key.as_str() {
                "select" => {
                    once(p.select.is_some())?;
                    p.select = Some(value.split(',').map(str::to_owned).collect());
                }
                "where" => p.filters.push(parse_filter(&value)?),
                "sort" => {
                    once(!p.sort.is_empty())?;
                    for s in value.split(',') {
                        p.sort.push(match s.strip_prefix('-') {
                            Some(name) => (name.to_owned(), Order::Desc),
                            None => (s.to_owned(), Order::Asc),
                        });
                    }
                }
                "limit" => {
                    once(p.limit.is_some())?;
                    p.limit = Some(parse_count("limit", &value)?);
                }
                "offset" => {
                    once(p.offset.is_some())?;
                    p.offset = Some(parse_count("offset", &value)?);
                }
                "format" => match value.as_str() {
                    "compact" => p.compact = true,
                    "expanded" => p.compact = false,
                    other => return Err(bad(format!("format={other:?}: compact or expanded"))),
                },
                other => return Err(bad(format!("unknown parameter {other:?}"))),
            }
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_list_query() {
        let p = ListParams::parse(
            "select=id,name&where=age%3E%3D18&where=name~A%25&where=city=S%C3%A3o+Paulo&sort=-age,name&limit=5&offset=10&format=compact",
        )
        .unwrap();
        assert_eq!(p.select.unwrap(), ["id", "name"]);
        assert_eq!(
            p.filters,
            [
                ("age".into(), Op::Ge, "18".into()),
                ("name".into(), Op::Like, "A%".into()),
                ("city".into(), Op::Eq, "São Paulo".into()),
            ]
        );
        assert_eq!(
            p.sort,
            [("age".into(), Order::Desc), ("name".into(), Order::Asc)]
        );
        assert_eq!((p.limit, p.offset, p.compact), (Some(5), Some(10), true));
    }

    #[test]
    fn operators_and_values_keep_their_text() {
        assert_eq!(
            parse_filter("a!=x=y").unwrap(),
            ("a".into(), Op::Ne, "x=y".into())
        );
        assert_eq!(
            parse_filter("a<=").unwrap(),
            ("a".into(), Op::Le, String::new())
        );
        assert_eq!(
            parse_filter("a<b").unwrap(),
            ("a".into(), Op::Lt, "b".into())
        );
    }

    #[test]
    fn malformed_input_is_a_bad_request() {
        for q in [
            "limit=-1",
            "limit=ten",
            "offset=1&offset=2",
            "where==1",
            "where=age",
            "where=age%20OR%201=1",
            "format=xml",
            "drop=1",
            "where=%zz",
            "where=a=%FF",
        ] {
            assert!(
                matches!(ListParams::parse(q), Err(Error::BadRequest(_))),
                "{q} accepted"
            );
        }
    }
}
