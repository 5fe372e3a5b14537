//! Schema evolution: a model gains fields, the database is reopened, old rows are intact.

mod common;

use common::TempDir;
use moria_orm::{model, Conn, Error, Mode, Query};

mod v1 {
    moria_orm::model! {
        pub struct Account as "Account" {
            pub name: String [unique],
            pub balance: f64,
        }
    }
}

mod v2 {
    moria_orm::model! {
        pub struct Account as "Account" {
            pub name: String [unique],
            pub balance: f64,
            pub email: Option<String> [unique],
            pub visits: i64 [index],
            pub vip: bool,
            pub avatar: Vec<u8>,
        }
    }
}

#[test]
fn added_fields_keep_old_rows_intact() {
    let dir = TempDir::new("schema");
    let path = dir.file("evolve.db");
    let ids: Vec<i64> = {
        let c = Conn::open(&path, Mode::Full).unwrap();
        c.ensure_schema::<v1::Account>().unwrap();
        (0..3)
            .map(|i| {
                c.add(&mut v1::Account {
                    name: format!("acct{i}"),
                    balance: f64::from(i) + 0.5,
                    ..Default::default()
                })
                .unwrap()
            })
            .collect()
    };

    let c = Conn::open(&path, Mode::Full).unwrap();
    c.ensure_schema::<v2::Account>().unwrap();
    c.ensure_schema::<v2::Account>().unwrap();
    for (i, id) in ids.iter().enumerate() {
        let a: v2::Account = c.get(*id).unwrap();
        assert_eq!(a.name, format!("acct{i}"));
        assert_eq!(a.balance, i as f64 + 0.5);
        assert_eq!(
            (a.email, a.visits, a.vip, a.avatar.len()),
            (None, 0, false, 0)
        );
    }
    let mut new = v2::Account {
        name: "new".into(),
        email: Some("a@b".into()),
        visits: 3,
        vip: true,
        avatar: vec![1, 2],
        ..Default::default()
    };
    c.add(&mut new).unwrap();
    assert_eq!(c.get::<v2::Account>(new.id).unwrap(), new);
    let mut twin = new.clone();
    twin.id = 0;
    twin.name = "twin".into();
    assert!(
        matches!(c.add(&mut twin), Err(Error::Conflict { .. })),
        "new unique index is enforced"
    );

    // The old model still reads and writes its subset of columns.
    let old: v1::Account = c.get(ids[0]).unwrap();
    assert_eq!(old.name, "acct0");
    let mut older = v1::Account {
        name: "legacy".into(),
        ..Default::default()
    };
    c.add(&mut older).unwrap();
    assert_eq!(c.count::<v2::Account>(&Query::new()).unwrap(), 5);
    let indexes: i64 = c
        .sqlite()
        .unwrap()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='index' AND tbl_name='Account'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 3, "name, email and visits indexes");
}

model! {
    struct Bad as "bad name" { x: i64 }
}

#[test]
fn invalid_table_names_are_refused() {
    let c = Conn::open(":memory:", Mode::Memory).unwrap();
    assert!(matches!(
        c.ensure_schema::<Bad>(),
        Err(Error::InvalidName(n)) if n == "bad name"
    ));
}
