//! [`FiberRegistry`] (feature `tracing`): `tracing-subscriber`'s span registry with the current
//! span kept per fiber instead of per thread.
//!
//! `tracing-subscriber`'s `Registry` keeps the stack of entered spans in a thread-local. A fiber
//! that enters a span, waits, and resumes on another worker would leave its span on the first
//! thread (where the next fiber's events would land in it) and find the other thread's stack.
//! This registry keeps the stack in fiber-local storage (a thread's own outside fibers), so a
//! span entered in a fiber is current in that fiber only, wherever it runs. Span data, ids and
//! lookups stay the inner `Registry`'s, so every `Layer` (fmt, OpenTelemetry, ...) works on it:
//!
//! ```ignore
//! use tracing_subscriber::layer::SubscriberExt;
//! let subscriber = moria_runtime::trace::FiberRegistry::default().with(my_layer);
//! tracing::subscriber::set_global_default(subscriber)?;
//! ```
//!
//! Install it as the global default: `tracing::subscriber::set_default` is itself thread-local.

use std::cell::RefCell;

use tracing_core::span::{Attributes, Current, Id, Record};
use tracing_core::subscriber::{Interest, Subscriber};
use tracing_core::{dispatcher, Event, LevelFilter, Metadata};
use tracing_subscriber::registry::{LookupSpan, Registry, SpanData};

crate::fiber_local! {
    /// The spans this fiber has entered and not exited, innermost last.
    static ENTERED: RefCell<Vec<Id>> = RefCell::new(Vec::new());
}

/// A `tracing` subscriber registry whose current span belongs to the fiber.
#[derive(Debug, Default)]
pub struct FiberRegistry {
    inner: Registry,
}

/// The innermost span this fiber entered.
fn current_id() -> Option<Id> {
    ENTERED.with(|s| s.borrow().last().cloned())
}

impl Subscriber for FiberRegistry {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        self.inner.register_callsite(m)
    }

    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.inner.enabled(m)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        self.inner.max_level_hint()
    }

    /// A span without an explicit parent gets this fiber's current span as its parent.
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        match current_id() {
            Some(parent) if attrs.is_contextual() => self.inner.new_span(&Attributes::child_of(
                parent,
                attrs.metadata(),
                attrs.values(),
            )),
            _ => self.inner.new_span(attrs),
        }
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        self.inner.record(span, values)
    }

    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.inner.record_follows_from(span, follows)
    }

    fn event_enabled(&self, event: &Event<'_>) -> bool {
        self.inner.event_enabled(event)
    }

    fn event(&self, event: &Event<'_>) {
        self.inner.event(event)
    }

    /// Pushes `span` on this fiber's stack (and keeps it open while entered).
    fn enter(&self, span: &Id) {
        ENTERED.with(|s| s.borrow_mut().push(self.inner.clone_span(span)));
    }

    /// Pops the innermost entry of `span` from this fiber's stack.
    fn exit(&self, span: &Id) {
        let removed = ENTERED.with(|s| {
            let mut s = s.borrow_mut();
            let at = s.iter().rposition(|x| x == span)?;
            Some(s.remove(at))
        });
        if let Some(id) = removed {
            dispatcher::get_default(|d| d.try_close(id.clone()));
        }
    }

    fn clone_span(&self, id: &Id) -> Id {
        self.inner.clone_span(id)
    }

    fn try_close(&self, id: Id) -> bool {
        self.inner.try_close(id)
    }

    fn current_span(&self) -> Current {
        match current_id().and_then(|id| Some((self.inner.span_data(&id)?.metadata(), id))) {
            Some((meta, id)) => Current::new(id, meta),
            None => Current::none(),
        }
    }
}

impl<'a> LookupSpan<'a> for FiberRegistry {
    type Data = <Registry as LookupSpan<'a>>::Data;

    fn span_data(&'a self, id: &Id) -> Option<Self::Data> {
        self.inner.span_data(id)
    }
}
