//! Schema evolution: a model gains fields, the database is reopened, old rows are intact.

use crate::common::{self, Engine, TempDir};
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

fn added_fields_keep_old_rows_intact(kind: Engine) {
    let dir = TempDir::new("schema");
    let path = dir.file("evolve.db");
    let url = (kind == Engine::Postgres).then(common::pg_url);
    // Opens the same database again: the file, or the same schema on the server.
    let open = || match &url {
        None => Conn::open(&path, Mode::Full).unwrap(),
        Some(u) => Conn::connect(u).unwrap(),
    };
    let ids: Vec<i64> = {
        let c = open();
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

    let c = open();
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
    let indexes: i64 = match kind {
        Engine::Sqlite => c
            .sqlite()
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='index' AND tbl_name='Account'",
                [],
                |r| r.get(0),
            )
            .unwrap(),
        Engine::Postgres => c
            .pg()
            .unwrap()
            .query_one(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() \
                 AND tablename = 'Account' AND indexname <> 'Account_pkey'",
                &[],
            )
            .unwrap()
            .get(0)
            .unwrap(),
    };
    assert_eq!(indexes, 3, "name, email and visits indexes");
}

model! {
    struct Bad as "bad name" { x: i64 }
}

fn invalid_table_names_are_refused(kind: Engine) {
    let c = common::conn(kind);
    assert!(matches!(
        c.ensure_schema::<Bad>(),
        Err(Error::InvalidName(n)) if n == "bad name"
    ));
}

both!(
    added_fields_keep_old_rows_intact,
    invalid_table_names_are_refused
);
