//! [`Extensions`]: what layers leave on a request for the layers and handler after them — the
//! request id, the authenticated user, a deadline, the error renderer, and typed values.
//! Kept with the connection's pooled state and cleared between requests (no allocation while
//! no layer writes to it).

use std::any::Any;
use std::time::Instant;

use super::render::Renderer;

/// Per-request values set by layers (see [`crate::Request::extensions`]).
#[derive(Default)]
pub struct Extensions {
    /// Whether anything was written since the last clear (a request no layer touched costs
    /// one test to clear).
    used: bool,
    pub(crate) request_id: String,
    pub(crate) user: Option<String>,
    pub(crate) deadline: Option<Instant>,
    pub(crate) renderer: Option<Renderer>,
    values: Vec<Box<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Stores `value`, replacing an earlier value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.used = true;
        match self.values.iter_mut().find(|v| v.is::<T>()) {
            Some(slot) => *slot = Box::new(value),
            None => self.values.push(Box::new(value)),
        }
    }

    /// The value of type `T`, if a layer stored one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values.iter().find_map(|v| v.downcast_ref::<T>())
    }

    /// Sets the request id to `prefix-n` in hex, reusing the id's buffer.
    pub(crate) fn set_generated_id(&mut self, prefix: u32, n: u64) {
        use std::fmt::Write as _;
        self.used = true;
        self.request_id.clear();
        let _ = write!(self.request_id, "{prefix:08x}-{n:x}");
    }

    /// Marks the extensions written (every writer of a field calls this first).
    pub(crate) fn touch(&mut self) -> &mut Extensions {
        self.used = true;
        self
    }

    /// Back to empty, keeping the request id's capacity.
    #[inline]
    pub(crate) fn clear(&mut self) {
        if self.used {
            self.clear_used();
        }
    }

    #[cold]
    fn clear_used(&mut self) {
        self.used = false;
        self.request_id.clear();
        self.user = None;
        self.deadline = None;
        self.renderer = None;
        self.values.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_replace_their_own_kind() {
        let mut x = Extensions::default();
        x.insert(1u32);
        x.insert("a");
        x.insert(2u32);
        assert_eq!(x.get::<u32>(), Some(&2));
        assert_eq!(x.get::<&str>(), Some(&"a"));
        assert_eq!(x.get::<u64>(), None);
        x.clear();
        assert_eq!(x.get::<u32>(), None);
    }
}
