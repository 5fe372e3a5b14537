//! `tracing` (feature on in the tests): each request runs in a `request` span that records its
//! method, target, route pattern, status, duration and `X-Request-Id`; events the handler logs
//! land in their own request's span although eight requests are handled at once and their
//! fibers yield and move between workers (`trace::FiberRegistry`). The handler logs through
//! `log` too, which the subscriber leaves alone. A process of its own (`common::process`): it
//! installs the global subscriber.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::common::process::own_process;
use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Router, Server};
use moria_runtime::trace::FiberRegistry;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Fields of every span by id, and every event as (its `id` field, its span's id).
#[derive(Default)]
struct Seen {
    spans: HashMap<u64, HashMap<String, String>>,
    events: Vec<(String, Option<u64>)>,
}

static SEEN: Mutex<Option<Seen>> = Mutex::new(None);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_string(),
            format!("{value:?}").trim_matches('"').to_string(),
        );
    }
}

struct Capture;

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        fields.insert("name".to_string(), attrs.metadata().name().to_string());
        attrs.record(&mut Fields(&mut fields));
        let mut seen = SEEN.lock().unwrap();
        seen.get_or_insert_with(Seen::default)
            .spans
            .insert(id.into_u64(), fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut seen = SEEN.lock().unwrap();
        let seen = seen.get_or_insert_with(Seen::default);
        if let Some(fields) = seen.spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let span = ctx.event_span(event).map(|s| s.id().into_u64());
        let mut seen = SEEN.lock().unwrap();
        let seen = seen.get_or_insert_with(Seen::default);
        seen.events
            .push((fields.remove("id").unwrap_or_default(), span));
    }
}

fn user(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let id = req.param("id").unwrap_or("?").to_string();
    for step in 0..20 {
        tracing::info!(id = id.as_str(), step, "working");
        moria_runtime::yield_now();
        if step % 5 == 0 {
            moria_runtime::sleep(Duration::from_millis(1));
        }
    }
    log::info!("log still works for {id}");
    res.header("X-Request-Id", format!("req-{id}")).body(id);
    Ok(())
}

#[test]
fn request_spans_follow_their_fibers() {
    if !own_process(module_path!(), "request_spans_follow_their_fibers") {
        return;
    }
    tracing::subscriber::set_global_default(FiberRegistry::default().with(Capture)).unwrap();
    let server = start(
        Server::builder(),
        Router::new().get("/trace/users/:id", user),
    );
    let addr = server.local_addr();
    let clients: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let raw = format!("GET /trace/users/{i} HTTP/1.1\r\nHost: h\r\n\r\n");
                exchange(addr, raw.as_bytes())
            })
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap().status, 200);
    }
    stop(&server);

    let seen = SEEN.lock().unwrap();
    let seen = seen.as_ref().expect("spans were seen");
    let requests: Vec<&HashMap<String, String>> = seen
        .spans
        .values()
        .filter(|f| f["name"] == "request")
        .collect();
    assert_eq!(requests.len(), 8);
    for f in &requests {
        let id = f["target"].trim_start_matches("/trace/users/");
        assert_eq!(f["method"], "GET");
        assert_eq!(f["route"], "/trace/users/:id");
        assert_eq!(f["status"], "200");
        assert_eq!(f["request_id"], format!("req-{id}"));
        assert!(f["duration_us"].parse::<u64>().is_ok(), "{f:?}");
    }
    assert_eq!(seen.events.len(), 8 * 20);
    for (id, span) in &seen.events {
        let span = span.and_then(|s| seen.spans.get(&s));
        let target = span.map(|f| f["target"].as_str());
        assert_eq!(
            target,
            Some(format!("/trace/users/{id}").as_str()),
            "an event of request {id} in another span"
        );
    }
}
