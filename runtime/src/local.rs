//! Fiber-local storage: the replacement for `thread_local!` in fiber code.
//!
//! Fibers migrate between worker threads at every wait, so a `thread_local!` read after a yield
//! may see another fiber's value. A `fiber_local!` value belongs to one fiber, is created on first
//! access, and is dropped when the fiber ends. Outside fibers it falls back to the thread.

use std::any::TypeId;

/// A key to a per-fiber value, declared with [`fiber_local!`](crate::fiber_local).
pub struct FiberLocal<T: 'static> {
    key: crate::engine::coroutine::LocalKey<T>,
}

impl<T: 'static> FiberLocal<T> {
    /// The key [`fiber_local!`](crate::fiber_local) builds from its initializer and a type
    /// unique to the declaration; only std types cross the API, so the engine stays hidden.
    #[doc(hidden)]
    pub const fn __new(init: fn() -> T, id: fn() -> TypeId) -> Self {
        FiberLocal {
            key: crate::engine::coroutine::LocalKey {
                __init: init,
                __key: id,
            },
        }
    }

    /// Runs `f` with this fiber's value, creating it on first use.
    pub fn with<R>(&'static self, f: impl FnOnce(&T) -> R) -> R {
        self.key.with(f)
    }
}

/// Declares fiber-local values: `fiber_local! { static NAME: Type = init; }`.
#[macro_export]
macro_rules! fiber_local {
    ($(#[$attr:meta])* $vis:vis static $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $(#[$attr])* $vis static $name: $crate::local::FiberLocal<$t> = {
            fn __init() -> $t {
                $init
            }
            fn __key() -> ::std::any::TypeId {
                struct __Key;
                ::std::any::TypeId::of::<__Key>()
            }
            $crate::local::FiberLocal::__new(__init, __key)
        };
        $crate::fiber_local!($($rest)*);
    };
    () => {};
}
