//! `tracing` on fibers: two fibers each enter their own span and hold it while they yield to
//! each other and sleep (resuming on whichever worker is free); with `trace::FiberRegistry` as
//! the global subscriber, every event lands in its own fiber's span, although the fibers share
//! workers and move between them. A process of its own: it installs the global subscriber.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::Duration;

use moria_runtime::trace::FiberRegistry;
use moria_runtime::{sleep, spawn, yield_now, Runtime};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// One event as the layer saw it: the fiber that logged it, the span current at that moment,
/// and the thread it ran on.
#[derive(Debug)]
struct Seen {
    fiber: String,
    span: Option<&'static str>,
    thread: ThreadId,
}

static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// Rounds each fiber runs: an event, a yield, and every tenth round a short sleep.
const ROUNDS: usize = 400;

struct Capture;

struct FiberField(String);

impl Visit for FiberField {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "fiber" {
            self.0 = value.to_string();
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fiber = FiberField(String::new());
        event.record(&mut fiber);
        let span = ctx.event_span(event).map(|s| s.name());
        SEEN.lock().unwrap().push(Seen {
            fiber: fiber.0,
            span,
            thread: std::thread::current().id(),
        });
    }
}

fn fiber(tag: &'static str) {
    let span = match tag {
        "a" => tracing::info_span!("span_a"),
        _ => tracing::info_span!("span_b"),
    };
    let _entered = span.enter();
    for round in 0..ROUNDS {
        tracing::info!(fiber = tag, round, "tick");
        yield_now();
        if round % 10 == 0 {
            sleep(Duration::from_millis(1));
        }
    }
}

#[test]
fn every_event_lands_in_its_own_fibers_span() {
    let runtime = Runtime::builder().workers(2).build().expect("runtime");
    tracing::subscriber::set_global_default(FiberRegistry::default().with(Capture))
        .expect("the global subscriber");
    runtime
        .run(|| {
            let a = spawn(|| fiber("a"));
            let b = spawn(|| fiber("b"));
            a.join().expect("fiber a");
            b.join().expect("fiber b");
        })
        .expect("run");
    let seen = SEEN.lock().unwrap();
    assert_eq!(seen.len(), 2 * ROUNDS);
    let mut threads: HashMap<&str, HashSet<ThreadId>> = HashMap::new();
    let mut wrong = 0;
    for s in seen.iter() {
        let want = format!("span_{}", s.fiber);
        if s.span != Some(want.as_str()) {
            wrong += 1;
        }
        threads.entry(&s.fiber).or_default().insert(s.thread);
    }
    assert_eq!(wrong, 0, "events outside their fiber's span");
    // The point of the test: the fibers shared a worker and moved between workers.
    let shared = threads["a"].intersection(&threads["b"]).count();
    assert!(
        shared >= 1,
        "the fibers never ran on the same worker: {threads:?}"
    );
    let moved = threads.values().filter(|t| t.len() >= 2).count();
    assert!(moved >= 1, "no fiber moved between workers: {threads:?}");
    eprintln!(
        "{} events, each in its fiber's span; fiber a ran on {} threads, b on {}, {} shared",
        seen.len(),
        threads["a"].len(),
        threads["b"].len(),
        shared
    );
}
