//! Transactions: commit on Ok, roll back on Err and on panic, savepoints when nested.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::Person;
use moria_orm::{Conn, Error, Mode, Query};

fn setup() -> Conn {
    let c = Conn::open(":memory:", Mode::Memory).unwrap();
    c.ensure_schema::<Person>().unwrap();
    c
}

fn count(c: &Conn) -> i64 {
    c.count::<Person>(&Query::new()).unwrap()
}

/// The names of the stored people.
fn names(c: &Conn) -> Vec<String> {
    c.list::<Person>(&Query::new())
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect()
}

#[test]
fn ok_commits() {
    let c = setup();
    let id = c
        .transaction(|c| c.add(&mut Person::new("a", "x", 1)))
        .unwrap();
    assert!(c.exists::<Person>(id).unwrap());
}

#[test]
fn err_rolls_back() {
    let c = setup();
    let mut inside = 0;
    let out: Result<(), Error> = c.transaction(|c| {
        c.add(&mut Person::new("a", "x", 1))?;
        inside = count(c);
        c.add(&mut Person::new("a", "x", 2))?;
        Ok(())
    });
    assert!(matches!(out, Err(Error::Conflict { .. })), "{out:?}");
    // The first row was written inside the transaction, and is gone after it.
    assert_eq!((inside, count(&c)), (1, 0));
    assert!(!c.in_transaction());
}

#[test]
fn user_error_type_rolls_back() {
    #[derive(Debug)]
    enum AppError {
        Orm,
        Rule,
    }
    impl From<Error> for AppError {
        fn from(_: Error) -> Self {
            AppError::Orm
        }
    }
    let c = setup();
    let mut inside = 0;
    let out = c.transaction(|c| {
        c.add(&mut Person::new("a", "x", 1))?;
        inside = count(c);
        Err::<(), _>(AppError::Rule)
    });
    // The closure's own error comes back unchanged, not converted through From<Error>.
    assert!(matches!(out, Err(AppError::Rule)), "{out:?}");
    assert_eq!((inside, count(&c)), (1, 0));
    // An ORM error inside the closure converts to the user's type.
    let out = c.transaction(|c| -> Result<(), AppError> {
        c.add(&mut Person::new("b", "x", 1))?;
        c.add(&mut Person::new("b", "x", 2))?;
        Ok(())
    });
    assert!(matches!(out, Err(AppError::Orm)), "{out:?}");
    assert_eq!(count(&c), 0);
}

#[test]
fn panic_rolls_back_and_the_connection_stays_usable() {
    let c = setup();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = c.transaction(|c| -> Result<(), Error> {
            c.add(&mut Person::new("a", "x", 1))?;
            panic!("boom");
        });
    }));
    assert!(caught.is_err());
    assert_eq!(count(&c), 0);
    assert!(!c.in_transaction());
    c.add(&mut Person::new("b", "x", 1)).unwrap();
    assert_eq!(count(&c), 1);
}

#[test]
fn nested_levels_roll_back_independently() {
    let c = setup();
    c.transaction(|c| -> Result<(), Error> {
        c.add(&mut Person::new("outer", "x", 1))?;
        let inner = c.transaction(|c| -> Result<(), Error> {
            c.add(&mut Person::new("inner", "x", 2))?;
            c.transaction(|c| c.add(&mut Person::new("deepest", "x", 3)))?;
            Err(Error::Config("inner fails".into()))
        });
        assert!(
            matches!(&inner, Err(Error::Config(m)) if m == "inner fails"),
            "{inner:?}"
        );
        c.transaction(|c| c.add(&mut Person::new("second", "x", 4)))?;
        Ok(())
    })
    .unwrap();
    assert_eq!(names(&c), ["outer", "second"]);
}

#[test]
fn explicit_guard_commit_and_rollback() {
    let c = setup();
    let tx = c.begin().unwrap();
    tx.add(&mut Person::new("kept", "x", 1)).unwrap();
    tx.commit().unwrap();
    let tx = c.begin().unwrap();
    tx.add(&mut Person::new("dropped", "x", 1)).unwrap();
    tx.rollback().unwrap();
    {
        let tx = c.begin().unwrap();
        tx.add(&mut Person::new("dropped too", "x", 1)).unwrap();
    }
    assert_eq!(names(&c), ["kept"]);
}
