//! JSON: expanded and compact output written to a `Write`, models parsed with validation.

use crate::common::{self, Engine, Every, Person};
use moria_orm::{from_json, merge_json, to_json, Conn, Error, JsonFormat, Order, Query};
use serde_json::{json, Value};

fn people(kind: Engine) -> Conn {
    let c = common::conn(kind);
    c.ensure_schema::<Person>().unwrap();
    c.add(&mut Person::new("Ada \"the first\"", "Londön", 36))
        .unwrap();
    c.add(&mut Person::new("Bob", "Paris", 41)).unwrap();
    c
}

fn render(c: &Conn, q: &Query, f: JsonFormat) -> Value {
    let mut out = Vec::new();
    let n = c.write_json::<Person, _>(q, f, &mut out).unwrap();
    assert_eq!(n, 2, "row count returned");
    serde_json::from_slice(&out).unwrap()
}

fn expanded_rows(kind: Engine) {
    let c = people(kind);
    let v = render(
        &c,
        &Query::new().order_by("id", Order::Asc),
        JsonFormat::Expanded,
    );
    assert_eq!(
        v,
        json!([
            {"id": 1, "name": "Ada \"the first\"", "city": "Londön", "age": 36},
            {"id": 2, "name": "Bob", "city": "Paris", "age": 41},
        ])
    );
}

fn compact_rows_with_selected_columns(kind: Engine) {
    let c = people(kind);
    let q = Query::new()
        .select(&["id", "age"])
        .order_by("age", Order::Desc);
    let v = render(&c, &q, JsonFormat::Compact);
    assert_eq!(
        v,
        json!({"fieldCount": 2, "values": ["id", "age", 2, 41, 1, 36], "rowCount": 2})
    );
    let mut out = Vec::new();
    let empty = Query::new().eq("age", 0);
    c.write_json::<Person, _>(&empty, JsonFormat::Compact, &mut out)
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"fieldCount":4,"values":["id","name","city","age"],"rowCount":0}"#
    );
    let bad = Query::new().select(&["password"]);
    assert!(matches!(
        c.write_json::<Person, _>(&bad, JsonFormat::Compact, &mut Vec::new()),
        Err(Error::UnknownField { field, .. }) if field == "password"
    ));
}

fn one_row_by_id_matches_the_model_writer(kind: Engine) {
    let c = common::conn(kind);
    c.ensure_schema::<Every>().unwrap();
    let mut e = Every {
        i: -3,
        small: 7,
        f: 1.5,
        b: true,
        s: "é\n".into(),
        bytes: vec![0, 1, 2, 253],
        maybe_i: None,
        maybe_s: Some("x".into()),
        ..Default::default()
    };
    c.add(&mut e).unwrap();
    let mut out = Vec::new();
    c.write_json_by_id::<Every, _>(e.id, &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), to_json(&e));
    let v: Value = serde_json::from_str(&to_json(&e)).unwrap();
    assert_eq!(v["b"], json!(true));
    assert_eq!(v["bytes"], json!("AAEC/Q=="));
    assert_eq!(v["maybe_i"], Value::Null);
    let back: Every = from_json(to_json(&e).as_bytes()).unwrap();
    assert_eq!(back, e, "JSON round trip");
    assert!(matches!(
        c.write_json_by_id::<Every, _>(99, &mut Vec::new()),
        Err(Error::NotFound { id: 99, .. })
    ));
}

#[test]
fn parsing_names_the_bad_field() {
    let cases: [(&str, &str, &str); 6] = [
        (r#"{"name":"a","age":"old"}"#, "age", "an integer"),
        (r#"{"name":5}"#, "name", "a string"),
        (r#"{"b":1}"#, "b", "a boolean"),
        (r#"{"bytes":"not base64!"}"#, "bytes", "a base64 string"),
        (r#"{"maybe_i":1.5}"#, "maybe_i", "an integer or null"),
        (r#"{"small":4294967296}"#, "small", "an integer"),
    ];
    for (json, field, expected) in cases {
        let err = if field == "age" || field == "name" {
            from_json::<Person>(json.as_bytes()).unwrap_err()
        } else {
            from_json::<Every>(json.as_bytes()).unwrap_err()
        };
        match &err {
            Error::WrongType {
                field: f,
                expected: e,
                ..
            } => assert_eq!((f.as_str(), *e), (field, expected), "{json}"),
            other => panic!("{json}: {other}"),
        }
        assert!(err.to_string().contains(field));
    }
    let err = from_json::<Person>(br#"{"name":"a","admin":true}"#).unwrap_err();
    assert!(matches!(&err, Error::UnknownField { field, .. } if field == "admin"));
    assert!(err.to_string().contains("admin"));
    assert!(matches!(
        from_json::<Person>(b"{\"name\":"),
        Err(Error::Json(_))
    ));
    assert!(matches!(
        from_json::<Person>(b"[1]"),
        Err(Error::JsonShape(_))
    ));
    assert!(matches!(
        from_json::<Person>(br#"{"id":"7"}"#),
        Err(Error::WrongType { field, .. }) if field == "id"
    ));
}

#[test]
fn merge_reports_the_fields_it_set() {
    let mut p = Person::new("a", "b", 1);
    let set = merge_json(&mut p, br#"{"age":5,"id":3}"#).unwrap();
    assert_eq!(set, ["age"]);
    assert_eq!((p.id, p.age, p.name.as_str()), (3, 5, "a"));
}

both!(
    expanded_rows,
    compact_rows_with_selected_columns,
    one_row_by_id_matches_the_model_writer,
);
