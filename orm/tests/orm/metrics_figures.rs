//! The ORM's metrics, read from a scrape (moria-runtime's `gather`): statements and their
//! duration histogram by backend grow with the statements run on SQLite and on the test
//! PostgreSQL, and the exposition names each family once.

use moria_orm::Query;
use moria_runtime::metrics::{gather, Format};

use crate::common::{self, Engine, Person};

/// The value of the sample `series` (exact text before the value) in a scrape, 0 if absent.
fn sample(series: &str) -> f64 {
    let text = gather(Format::Prometheus);
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

fn statements_are_counted(kind: Engine, backend: &str) {
    let db = common::db(kind);
    db.ensure_schema::<Person>().unwrap();
    let count = format!("moria_orm_statements_total{{backend=\"{backend}\"}}");
    let hist = format!("moria_orm_statement_duration_seconds_count{{backend=\"{backend}\"}}");
    let before = (sample(&count), sample(&hist));
    let run = common::runtime();
    run.run(move || {
        for i in 0..5 {
            db.add(Person::new(&format!("p{i}"), "Oslo", i)).unwrap();
        }
        assert_eq!(db.count::<Person>(Query::new()).unwrap(), 5);
    })
    .unwrap();
    let after = (sample(&count), sample(&hist));
    // Other tests run statements at the same time: at least ours were counted.
    assert!(
        after.0 - before.0 >= 6.0,
        "{backend}: {before:?} -> {after:?}"
    );
    assert!(
        after.1 - before.1 >= 6.0,
        "{backend}: {before:?} -> {after:?}"
    );
}

#[test]
fn sqlite_statements_are_counted_and_timed() {
    statements_are_counted(Engine::Sqlite, "sqlite");
}

#[test]
fn postgres_statements_are_counted_and_timed() {
    statements_are_counted(Engine::Postgres, "postgres");
}

#[test]
fn every_family_is_named_once() {
    common::db(Engine::Sqlite);
    let text = gather(Format::Prometheus);
    let mut seen = std::collections::HashSet::new();
    for name in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
        assert!(seen.insert(name.to_string()), "{name} twice");
    }
    assert!(seen
        .iter()
        .any(|n| n.starts_with("moria_orm_pg_shared_queue_depth")));
}
