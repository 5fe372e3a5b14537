//! REST semantics through `Rest::handle` (no HTTP): round trips, every error status,
//! batch atomicity, and injection attempts through every parameter.

use crate::common::{self, Engine, Every, Person};
use moria_orm::{Query, Rest, RestRequest, RestResponse};
use serde_json::{json, Value};

fn rest(kind: Engine) -> Rest {
    let db = common::db(kind);
    db.ensure_schema::<Person>().unwrap();
    db.ensure_schema::<Every>().unwrap();
    Rest::new(db, "root").table::<Person>().table::<Every>()
}

fn call(r: &Rest, method: &str, target: &str, body: &str) -> RestResponse {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    r.handle(&RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
    })
}

fn json_of(r: &RestResponse) -> Value {
    serde_json::from_slice(&r.body)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&r.body)))
}

fn expect_error(r: &RestResponse, status: u16, mention: &str) {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    let v = json_of(r);
    assert_eq!(v["errorCode"], json!(status));
    let text = v["errorText"].as_str().unwrap();
    assert!(
        text.contains(mention),
        "{text:?} should mention {mention:?}"
    );
}

fn count(r: &Rest) -> i64 {
    r.db().count::<Person>(Query::new()).unwrap()
}

fn crud_round_trip(kind: Engine) {
    let r = rest(kind);
    let created = call(
        &r,
        "POST",
        "/root/Person",
        r#"{"name":"Ada","city":"London","age":36}"#,
    );
    assert_eq!(created.status, 201);
    assert_eq!(
        created.headers,
        [("Location", "/root/Person/1".to_string())]
    );
    assert_eq!(json_of(&created), json!({"id": 1}));

    let got = call(&r, "GET", "/root/person/1", "");
    assert_eq!(got.status, 200, "table names are case-insensitive");
    assert_eq!(
        json_of(&got),
        json!({"id":1,"name":"Ada","city":"London","age":36})
    );

    let put = call(&r, "PUT", "/root/Person/1", r#"{"age":37}"#);
    assert_eq!(put.status, 200);
    assert_eq!(
        json_of(&put),
        json!({"id":1,"name":"Ada","city":"London","age":37})
    );

    call(
        &r,
        "POST",
        "/root/Person",
        r#"{"name":"Bob","city":"Paris","age":20}"#,
    );
    let list = call(
        &r,
        "GET",
        "/root/Person?where=age%3E=21&select=name,age",
        "",
    );
    assert_eq!(json_of(&list), json!([{"name":"Ada","age":37}]));
    let compact = call(
        &r,
        "GET",
        "/root/Person?sort=-age&format=compact&select=id",
        "",
    );
    assert_eq!(
        json_of(&compact),
        json!({"fieldCount":1,"values":["id",1,2],"rowCount":2})
    );
    let page = call(&r, "GET", "/root/Person?sort=name&limit=1&offset=1", "");
    assert_eq!(json_of(&page)[0]["name"], json!("Bob"));

    let del = call(&r, "DELETE", "/root/Person/1", "");
    assert_eq!((del.status, del.body.len()), (204, 0));
    expect_error(
        &call(&r, "GET", "/root/Person/1", ""),
        404,
        "no row with id 1",
    );
    expect_error(&call(&r, "DELETE", "/root/Person/1", ""), 404, "id 1");
}

fn every_type_over_rest(kind: Engine) {
    let r = rest(kind);
    let body = r#"{"i":-5,"small":7,"f":2.5,"b":true,"s":"é\"","bytes":"AAEC","maybe_i":null,"maybe_s":"x"}"#;
    assert_eq!(call(&r, "POST", "/root/Every", body).status, 201);
    let v = json_of(&call(&r, "GET", "/root/Every/1", ""));
    for (k, want) in [
        ("i", json!(-5)),
        ("small", json!(7)),
        ("f", json!(2.5)),
        ("b", json!(true)),
        ("s", json!("é\"")),
        ("bytes", json!("AAEC")),
        ("maybe_i", Value::Null),
        ("maybe_s", json!("x")),
    ] {
        assert_eq!(v[k], want, "{k}");
    }
    assert!(v["created"].as_i64().unwrap() > 0);
    let by_bool = call(
        &r,
        "GET",
        "/root/Every?where=b=true&where=bytes=AAEC&select=id",
        "",
    );
    assert_eq!(json_of(&by_bool), json!([{"id":1}]));
    expect_error(&call(&r, "GET", "/root/Every?where=b=maybe", ""), 400, "b");
    expect_error(&call(&r, "GET", "/root/Every?where=f=abc", ""), 400, "f");
}

fn error_statuses(kind: Engine) {
    let r = rest(kind).max_body(64);
    call(&r, "POST", "/root/Person", r#"{"name":"Ada"}"#);
    expect_error(
        &call(&r, "POST", "/root/Person", "{\"name\":"),
        400,
        "invalid JSON",
    );
    expect_error(
        &call(&r, "POST", "/root/Person", r#"{"nom":"x"}"#),
        400,
        "nom",
    );
    expect_error(
        &call(&r, "POST", "/root/Person", r#"{"age":"old"}"#),
        400,
        "age",
    );
    expect_error(&call(&r, "POST", "/root/Person", "[]"), 400, "object");
    expect_error(&call(&r, "POST", "/root/Person", ""), 400, "empty body");
    expect_error(
        &call(&r, "POST", "/root/Person", r#"{"name":"Ada"}"#),
        409,
        "name",
    );
    expect_error(
        &call(&r, "PUT", "/root/Person/1", r#"{"id":2}"#),
        400,
        "differs",
    );
    expect_error(&call(&r, "PUT", "/root/Person/9", r#"{"age":1}"#), 404, "9");
    expect_error(&call(&r, "GET", "/root/Nope/1", ""), 404, "Nope");
    expect_error(&call(&r, "GET", "/other/Person/1", ""), 404, "other");
    expect_error(&call(&r, "GET", "/root/Person/abc", ""), 400, "abc");
    expect_error(&call(&r, "GET", "/root/Person/-1", ""), 400, "-1");
    expect_error(&call(&r, "GET", "/root/Person/1/x", ""), 400, "path");
    expect_error(
        &call(&r, "GET", "/root/Person?limit=20000", ""),
        400,
        "limit",
    );
    let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(100));
    expect_error(&call(&r, "POST", "/root/Person", &big), 413, "64");
    let m = call(&r, "PATCH", "/root/Person/1", "");
    assert_eq!(m.status, 405);
    assert!(m.headers.iter().any(|(k, _)| *k == "Allow"));
    assert_eq!(count(&r), 1, "nothing written by the failures");
}

fn batch_is_all_or_nothing(kind: Engine) {
    let r = rest(kind);
    call(&r, "POST", "/root/Person", r#"{"name":"taken"}"#);
    let ops: Vec<Value> = (0..10)
        .flat_map(|i| {
            let name = if i == 4 {
                "taken".to_string()
            } else {
                format!("n{i}")
            };
            [json!("POST"), json!({"name": name, "age": i})]
        })
        .collect();
    let body = json!({ "Person": ops }).to_string();
    expect_error(&call(&r, "PUT", "/root/Batch", &body), 409, "name");
    assert_eq!(count(&r), 1, "row 5 of 10 failed: nothing inserted");

    // Tables run in the order written (Person before Every), not sorted.
    let body = r#"{"Person":["POST",{"name":"a"},"SIMPLE",["b","Lyon",3],"PUT",{"id":1,"age":99},"DELETE",1],"Every":["POST",{"i":1}]}"#;
    let ok = call(&r, "PUT", "/root/Batch", body);
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    let text = String::from_utf8(ok.body).unwrap();
    assert!(text.starts_with(r#"{"Person":["#), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let ids: Vec<i64> = v["Person"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_i64().unwrap())
        .collect();
    // SQLite numbers from max(id)+1; the PostgreSQL sequence kept counting through the
    // failed batch above.
    let first = if kind == Engine::Sqlite { 2 } else { ids[0] };
    assert_eq!(ids, [first, first + 1, 1, 1], "{text}");
    assert_eq!(v["Every"], json!([1]), "{text}");
    assert_eq!(count(&r), 2);
    assert_eq!(r.db().get::<Person>(first + 1).unwrap().city, "Lyon");

    for bad in [
        r#"{"Person":["POST"]}"#,
        r#"{"Person":["GET",1]}"#,
        r#"{"Person":["DELETE","1"]}"#,
        r#"{"Person":["PUT",{"age":1}]}"#,
        r#"{"Person":["SIMPLE",["a"]]}"#,
        r#"{"Person":["POST",{"name":"z"}],"Ghost":["POST",{}]}"#,
        r#"["POST",{}]"#,
    ] {
        assert_eq!(call(&r, "PUT", "/root/Batch", bad).status / 100, 4, "{bad}");
    }
    let later_failure = r#"{"Person":["POST",{"name":"fresh"},"DELETE",999]}"#;
    expect_error(&call(&r, "PUT", "/root/Batch", later_failure), 404, "999");
    assert_eq!(count(&r), 2, "no partial batch");
}

fn injection_through_every_parameter_is_rejected_or_inert(kind: Engine) {
    let r = rest(kind);
    call(&r, "POST", "/root/Person", r#"{"name":"victim","age":1}"#);
    let attacks = [
        "/root/Person?where=name=x%27%3B%20DROP%20TABLE%20Person%3B--",
        "/root/Person?where=name=%27%20OR%20%271%27=%271",
        "/root/Person?where=age=1%20OR%201=1",
        "/root/Person?select=name,(SELECT%20sql%20FROM%20sqlite_master)",
        "/root/Person?select=*",
        "/root/Person?sort=name;DROP%20TABLE%20Person",
        "/root/Person?sort=(CASE%20WHEN%201=1%20THEN%20name%20END)",
        "/root/Person?where=name%20IS%20NOT%20NULL%20OR%20name=x",
        "/root/Person?limit=1;DROP",
        "/root/Person?offset=1%20UNION%20SELECT",
        "/root/Person%3BDROP/1",
        "/root/Person/1%20OR%201=1",
        "/root/sqlite_master",
    ];
    for a in attacks {
        let resp = call(&r, "GET", a, "");
        match resp.status {
            200 => assert_eq!(json_of(&resp), json!([]), "{a} matched rows"),
            400 | 404 => {}
            other => panic!("{a}: status {other}"),
        }
    }
    let v = json_of(&call(&r, "GET", "/root/Person/1", ""));
    assert_eq!(v["name"], json!("victim"));
    assert_eq!(count(&r), 1);
}

both!(
    crud_round_trip,
    every_type_over_rest,
    error_statuses,
    batch_is_all_or_nothing,
    injection_through_every_parameter_is_rejected_or_inert,
);
