//! Batches: multi-row inserts spanning several statements, ids returned, all-or-nothing.

use crate::common::{self, Engine, Person};
use moria_orm::{Batch, Conn, Error, Query};

fn conn(kind: Engine, batch_params: usize) -> Conn {
    let c = common::conn(kind).with_batch_params(batch_params);
    c.ensure_schema::<Person>().unwrap();
    c
}

fn count(c: &Conn) -> i64 {
    c.count::<Person>(&Query::new()).unwrap()
}

fn row_5_of_10_violating_a_unique_index_inserts_nothing(kind: Engine) {
    // 8 parameters per statement = 2 rows: the failing row sits in the third statement.
    for params in [8, 1_000] {
        let c = conn(kind, params);
        c.add(&mut Person::new("taken", "x", 0)).unwrap();
        let mut b = Batch::new();
        for i in 0..10 {
            let name = if i == 4 {
                "taken".to_string()
            } else {
                format!("n{i}")
            };
            b.add(Person::new(&name, "c", i));
        }
        let err = c.batch_send(&mut b).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Conflict {
                    table: "Person",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(
            count(&c),
            1,
            "zero rows from the failed batch (params={params})"
        );
        assert!(!c.in_transaction());
    }
}

fn batch_returns_ids_in_order_across_statements(kind: Engine) {
    let c = conn(kind, 8);
    c.add(&mut Person::new("first", "x", 0)).unwrap();
    let mut b = Batch::with_capacity(25);
    for i in 0..25 {
        b.add(Person::new(&format!("n{i}"), "c", i));
    }
    let ids = c.batch_send(&mut b).unwrap();
    assert_eq!(ids, (2..27).collect::<Vec<i64>>());
    for (i, id) in ids.iter().enumerate() {
        let p: Person = c.get(*id).unwrap();
        assert_eq!((p.name, p.age), (format!("n{i}"), i as i64));
    }
}

fn mixed_operations_apply_together_or_not_at_all(kind: Engine) {
    let c = conn(kind, 1_000);
    let mut keep = Person::new("keep", "a", 1);
    let mut gone = Person::new("gone", "a", 2);
    c.add(&mut keep).unwrap();
    c.add(&mut gone).unwrap();

    let mut b = Batch::new();
    keep.age = 10;
    b.update(keep.clone());
    b.delete(gone.id);
    b.add(Person::new("added", "b", 3));
    b.delete(9_999);
    assert!(matches!(
        c.batch_send(&mut b),
        Err(Error::NotFound { id: 9_999, .. })
    ));
    assert_eq!(
        c.get::<Person>(keep.id).unwrap().age,
        1,
        "update rolled back"
    );
    assert!(c.exists::<Person>(gone.id).unwrap(), "delete rolled back");
    assert_eq!(count(&c), 2);

    let mut b = Batch::new();
    b.update(keep.clone());
    b.delete(gone.id);
    b.add(Person::new("added", "b", 3));
    let ids = c.batch_send(&mut b).unwrap();
    assert_eq!(ids[..2], [keep.id, gone.id]);
    assert_eq!(c.get::<Person>(keep.id).unwrap().age, 10);
    // Without AUTOINCREMENT SQLite may hand the deleted top id to the new row.
    assert_eq!(c.get::<Person>(ids[2]).unwrap().name, "added");
    assert_eq!(count(&c), 2);
}

fn forced_ids_mix_with_new_ones(kind: Engine) {
    let c = conn(kind, 8);
    let mut b = Batch::new();
    b.add(Person::new("a", "x", 1));
    let mut forced = Person::new("b", "x", 2);
    forced.id = 100;
    b.add(forced);
    b.add(Person::new("c", "x", 3));
    b.add(Person::new("d", "x", 4));
    assert_eq!(c.batch_send(&mut b).unwrap(), [1, 100, 101, 102]);
    assert_eq!(c.get::<Person>(101).unwrap().name, "c");
}

fn failed_batch_can_be_resent_after_fixing_it(kind: Engine) {
    let c = conn(kind, 1_000);
    let mut b = Batch::new();
    b.add(Person::new("same", "x", 1));
    b.add(Person::new("same", "x", 2));
    assert!(c.batch_send(&mut b).is_err());
    let mut fixed = Batch::new();
    fixed.add(Person::new("same", "x", 1));
    fixed.add(Person::new("other", "x", 2));
    let ids = c.batch_send(&mut fixed).unwrap();
    // SQLite numbers from max(id)+1; a PostgreSQL sequence is not rolled back, so the failed
    // attempt leaves a gap.
    let first = if kind == Engine::Sqlite { 1 } else { ids[0] };
    assert_eq!(ids, [first, first + 1]);
    assert_eq!(c.get::<Person>(ids[1]).unwrap().name, "other");
}

fn batch_inside_a_transaction_is_a_savepoint(kind: Engine) {
    let c = conn(kind, 1_000);
    let out: Result<(), Error> = c.transaction(|c| {
        let mut ok = Batch::new();
        ok.add(Person::new("a", "x", 1));
        c.batch_send(&mut ok)?;
        let mut bad = Batch::new();
        bad.add(Person::new("a", "x", 1));
        assert!(c.batch_send(&mut bad).is_err());
        assert_eq!(count(c), 1, "only the failed batch was undone");
        Ok(())
    });
    out.unwrap();
    assert_eq!(count(&c), 1);
}

both!(
    row_5_of_10_violating_a_unique_index_inserts_nothing,
    batch_returns_ids_in_order_across_statements,
    mixed_operations_apply_together_or_not_at_all,
    forced_ids_mix_with_new_ones,
    failed_batch_can_be_resent_after_fixing_it,
    batch_inside_a_transaction_is_a_savepoint,
);
