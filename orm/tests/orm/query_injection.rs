//! Injection attempts through values, field names and raw fragments leave the database intact.

use crate::common::{self, Engine, Person};
use moria_orm::{from_json, Conn, Error, Op, Order, Query};

const ATTACKS: &[&str] = &[
    "x'; DROP TABLE Person; --",
    "' OR '1'='1",
    "\" OR \"1\"=\"1",
    "1; DELETE FROM Person",
    "a\0b",
    "Robert'); DROP TABLE Students;--",
];

fn setup(kind: Engine) -> Conn {
    let c = common::conn(kind);
    c.ensure_schema::<Person>().unwrap();
    c.add(&mut Person::new("victim", "x", 1)).unwrap();
    c
}

fn intact(c: &Conn) {
    assert!(c.get::<Person>(1).unwrap().name == "victim", "row 1 intact");
}

fn values_are_bound_and_stored_verbatim(kind: Engine) {
    let c = setup(kind);
    let mut stored = 0;
    for (i, a) in ATTACKS.iter().enumerate() {
        let mut p = Person::new(a, a, i as i64);
        if kind == Engine::Postgres && a.contains('\0') {
            // PostgreSQL text cannot hold NUL: the value is refused whole, nothing stored.
            let e = c.add(&mut p).unwrap_err();
            assert_eq!(e.sqlstate(), Some("22021"), "{e}");
            continue;
        }
        c.add(&mut p).unwrap();
        stored += 1;
        assert_eq!(c.get::<Person>(p.id).unwrap().name, *a);
        let found = c.list::<Person>(&Query::new().eq("name", *a)).unwrap();
        assert_eq!(found.len(), 1, "{a:?} matched exactly its own row");
        assert_eq!(
            c.list::<Person>(&Query::new().filter("city", Op::Like, *a))
                .unwrap()
                .len(),
            1
        );
    }
    intact(&c);
    assert_eq!(c.list::<Person>(&Query::new()).unwrap().len(), stored + 1);
}

fn names_from_outside_are_checked(kind: Engine) {
    let c = setup(kind);
    for a in ATTACKS
        .iter()
        .chain(&["name = name", "id) OR (1=1", "rowid"])
    {
        for q in [
            Query::new().eq(a, 1),
            Query::new().order_by(a, Order::Asc),
            Query::new().select(&[a]),
            Query::new().null(a, true),
        ] {
            let out = c
                .list::<Person>(&q)
                .and_then(|_| c.write_json::<Person, _>(&q, Default::default(), &mut Vec::new()));
            assert!(
                matches!(out, Err(Error::UnknownField { .. })),
                "{a:?}: {out:?}"
            );
        }
        let json = format!("{{{}:1}}", serde_json::to_string(a).unwrap());
        assert!(matches!(
            from_json::<Person>(json.as_bytes()),
            Err(Error::UnknownField { .. })
        ));
    }
    intact(&c);
}

fn raw_fragments_cannot_carry_literals_or_statements(kind: Engine) {
    let c = setup(kind);
    for frag in [
        "name = 'victim'",
        "1=1; DROP TABLE Person",
        "1=1 -- ",
        "1=1 /* */",
    ] {
        assert!(matches!(
            c.delete_where::<Person>(&Query::new().sql(frag, &[])),
            Err(Error::UnsafeSql(_))
        ));
    }
    assert!(matches!(
        c.count::<Person>(&Query::new().sql("name = ? AND city = ?", &[&"victim"])),
        Err(Error::ParamCount {
            placeholders: 2,
            values: 1
        })
    ));
    intact(&c);
}

both!(
    values_are_bound_and_stored_verbatim,
    names_from_outside_are_checked,
    raw_fragments_cannot_carry_literals_or_statements,
);
