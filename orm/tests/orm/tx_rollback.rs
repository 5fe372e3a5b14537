//! Transactions: commit on Ok, roll back on Err and on panic, savepoints when nested.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::common::{self, Engine, Person};
use moria_orm::{Conn, Error, Query};

fn setup(kind: Engine) -> Conn {
    let c = common::conn(kind);
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

fn ok_commits(kind: Engine) {
    let c = setup(kind);
    let id = c
        .transaction(|c| c.add(&mut Person::new("a", "x", 1)))
        .unwrap();
    assert!(c.exists::<Person>(id).unwrap());
}

fn err_rolls_back(kind: Engine) {
    let c = setup(kind);
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

fn user_error_type_rolls_back(kind: Engine) {
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
    let c = setup(kind);
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

fn panic_rolls_back_and_the_connection_stays_usable(kind: Engine) {
    let c = setup(kind);
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

fn nested_levels_roll_back_independently(kind: Engine) {
    let c = setup(kind);
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

fn explicit_guard_commit_and_rollback(kind: Engine) {
    let c = setup(kind);
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

both!(
    ok_commits,
    err_rolls_back,
    user_error_type_rolls_back,
    panic_rolls_back_and_the_connection_stays_usable,
    nested_levels_roll_back_independently,
    explicit_guard_commit_and_rollback,
);
