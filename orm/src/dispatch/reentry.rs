//! The reentrancy guard: a [`Db`](crate::Db) call made from inside a closure running on the
//! same database would wait for the connection its own caller holds (the one writer thread
//! waiting for itself, a pool thread parked for good, or a second PostgreSQL connection outside
//! the caller's transaction). Each call carries the chain of databases whose closures it runs
//! inside; the closure runs with that chain marked on its fiber (or its connection thread), so
//! a nested call finds its own database there and returns [`Error::Reentrant`] at once.

use std::cell::RefCell;

use crate::error::{Error, Result};

moria_runtime::fiber_local! {
    /// The databases (by identity) whose closures the current fiber or thread is running.
    static ENTERED: RefCell<Vec<usize>> = RefCell::new(Vec::new());
}

/// The chain a call on database `id` runs its closure under, or `Reentrant` when the caller is
/// already inside a closure of `id`.
pub(crate) fn enter(id: usize) -> Result<Vec<usize>> {
    ENTERED.with(|e| {
        let outer = e.borrow();
        if outer.contains(&id) {
            return Err(Error::Reentrant);
        }
        let mut chain = Vec::with_capacity(outer.len() + 1);
        chain.extend_from_slice(&outer);
        chain.push(id);
        Ok(chain)
    })
}

/// Runs `f` with `chain` marked as entered; the previous mark comes back afterwards, also when
/// `f` unwinds.
pub(crate) fn within<R>(chain: Vec<usize>, f: impl FnOnce() -> R) -> R {
    struct Restore(Vec<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = std::mem::take(&mut self.0);
            ENTERED.with(|e| *e.borrow_mut() = previous);
        }
    }
    let _restore = Restore(ENTERED.with(|e| e.replace(chain)));
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_refuses_its_own_databases_and_is_restored_after() {
        let chain = enter(1).unwrap();
        within(chain, || {
            assert!(matches!(enter(1), Err(Error::Reentrant)));
            let inner = enter(2).unwrap();
            assert_eq!(inner, [1, 2]);
            within(inner, || assert!(matches!(enter(1), Err(Error::Reentrant))));
            assert!(enter(2).is_ok());
        });
        assert_eq!(enter(1).unwrap(), [1]);
    }
}
