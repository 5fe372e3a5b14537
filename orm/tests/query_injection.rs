//! Injection attempts through values, field names and raw fragments leave the database intact.

mod common;

use common::Person;
use moria_orm::{from_json, Conn, Error, Mode, Op, Order, Query};

const ATTACKS: &[&str] = &[
    "x'; DROP TABLE Person; --",
    "' OR '1'='1",
    "\" OR \"1\"=\"1",
    "1; DELETE FROM Person",
    "a\0b",
    "Robert'); DROP TABLE Students;--",
];

fn setup() -> Conn {
    let c = Conn::open(":memory:", Mode::Memory).unwrap();
    c.ensure_schema::<Person>().unwrap();
    c.add(&mut Person::new("victim", "x", 1)).unwrap();
    c
}

fn intact(c: &Conn) {
    assert!(c.get::<Person>(1).unwrap().name == "victim", "row 1 intact");
}

#[test]
fn values_are_bound_and_stored_verbatim() {
    let c = setup();
    for (i, a) in ATTACKS.iter().enumerate() {
        let mut p = Person::new(a, a, i as i64);
        c.add(&mut p).unwrap();
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
    assert_eq!(
        c.list::<Person>(&Query::new()).unwrap().len(),
        ATTACKS.len() + 1
    );
}

#[test]
fn names_from_outside_are_checked() {
    let c = setup();
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

#[test]
fn raw_fragments_cannot_carry_literals_or_statements() {
    let c = setup();
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
