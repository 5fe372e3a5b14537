//! Scoped fibers: fibers that borrow from the caller and are all joined before `scope` returns.

use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex as StdMutex, PoisonError};

use crate::error::panic_message;
use crate::fiber::{spawn, JoinError, JoinHandle};

/// What the scope keeps of each child: its handle until joined, and an unobserved panic.
#[derive(Default)]
struct Child {
    handle: StdMutex<Option<JoinHandle<()>>>,
    panic: StdMutex<Option<String>>,
}

impl Child {
    fn join(&self) {
        let handle = self
            .handle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            // The body catches its own panic, so joining cannot fail.
            let _ = handle.join();
        }
    }
}

/// Spawns fibers that may borrow anything living longer than `'env`.
pub struct Scope<'env> {
    children: StdMutex<Vec<Arc<Child>>>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// A handle on a scoped fiber.
pub struct ScopedJoinHandle<'scope, T> {
    child: Arc<Child>,
    packet: Arc<StdMutex<Option<T>>>,
    _scope: PhantomData<&'scope ()>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the fiber; its panic comes back as an error (and no longer fails the scope).
    pub fn join(self) -> Result<T, JoinError> {
        self.child.join();
        if let Some(message) = self
            .child
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            return Err(JoinError::from_message(message));
        }
        let value = self
            .packet
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        value.ok_or_else(|| JoinError::from_message("scoped fiber produced no value".into()))
    }
}

impl<'env> Scope<'env> {
    /// Spawns a fiber that may borrow from the enclosing stack frame.
    pub fn spawn<'scope, F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'env,
        T: Send + 'env,
    {
        let child = Arc::new(Child::default());
        let packet = Arc::new(StdMutex::new(None));
        let (their_child, their_packet) = (child.clone(), packet.clone());
        let body: Box<dyn FnOnce() + Send + 'env> =
            Box::new(move || match catch_unwind(AssertUnwindSafe(f)) {
                Ok(v) => *their_packet.lock().unwrap_or_else(PoisonError::into_inner) = Some(v),
                Err(p) => {
                    *their_child
                        .panic
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(panic_message(&*p))
                }
            });
        // SAFETY: only the lifetime is erased. `scope` joins every child (also when its body
        // panics, through `JoinAll`) before 'env ends, so nothing the body borrows is used
        // after it is gone.
        let body: Box<dyn FnOnce() + Send + 'static> = unsafe { std::mem::transmute(body) };
        *child.handle.lock().unwrap_or_else(PoisonError::into_inner) = Some(spawn(body));
        self.children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(child.clone());
        ScopedJoinHandle {
            child,
            packet,
            _scope: PhantomData,
        }
    }

    /// Joins every child, including those spawned while joining; returns the first
    /// unobserved panic.
    fn join_all(&self) -> Option<String> {
        let mut first_panic = None;
        loop {
            let batch =
                std::mem::take(&mut *self.children.lock().unwrap_or_else(PoisonError::into_inner));
            if batch.is_empty() {
                return first_panic;
            }
            for child in batch {
                child.join();
                let panic = child
                    .panic
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                first_panic = first_panic.or(panic);
            }
        }
    }
}

/// Joins all children when dropped, so a panicking scope body still waits for them.
struct JoinAll<'a, 'env>(&'a Scope<'env>);

impl Drop for JoinAll<'_, '_> {
    fn drop(&mut self) {
        self.0.join_all();
    }
}

/// Runs `f` with a scope; returns once every fiber spawned in it has finished. A scoped fiber's
/// panic that no handle observed is resumed in the caller.
pub fn scope<'env, F, R>(f: F) -> R
where
    F: FnOnce(&Scope<'env>) -> R,
{
    let scope = Scope {
        children: StdMutex::new(Vec::new()),
        _env: PhantomData,
    };
    let guard = JoinAll(&scope);
    let result = f(&scope);
    std::mem::forget(guard);
    if let Some(message) = scope.join_all() {
        panic!("a scoped fiber panicked: {message}");
    }
    result
}
