//! Application handlers in-process (no socket): state handed as `&S`, plain functions beside
//! them, `HttpError` with `?` rendered as problem details, and every extractor refusing bad
//! input with the right 4xx (415, 400 with the JSON position, 413, bad path parameters).

use std::sync::atomic::{AtomicU64, Ordering};

use moria_http::testing::TestRequest;
use moria_http::{HandlerResult, HttpError, Request, Response, Router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

struct App {
    next_id: AtomicU64,
}

#[derive(Deserialize, Serialize)]
struct NewTask {
    title: String,
    priority: Option<i64>,
}

#[derive(Deserialize)]
struct Page {
    limit: u32,
    #[serde(default)]
    offset: u32,
}

fn create(app: &App, req: &mut Request<'_>, res: &mut Response) -> Result<(), HttpError> {
    let task: NewTask = req.json()?;
    if task.title.is_empty() {
        return Err(HttpError::new(422, "title must not be empty"));
    }
    let id = app.next_id.fetch_add(1, Ordering::Relaxed);
    res.status(201)
        .json(&serde_json::json!({"id": id, "title": task.title}))?;
    Ok(())
}

fn show(_app: &App, req: &mut Request<'_>, res: &mut Response) -> Result<(), HttpError> {
    let id: u64 = req.param_as("id")?;
    if id > 100 {
        return Err(HttpError::not_found(format!("no task {id}")));
    }
    res.json(&serde_json::json!({ "id": id }))?;
    Ok(())
}

fn list(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let page: Page = req.query_as()?;
    res.body(format!("limit={} offset={}", page.limit, page.offset));
    Ok(())
}

fn login(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    #[derive(Deserialize)]
    struct Form {
        user: String,
    }
    let form: Form = req.form()?;
    res.body(format!("hello {}", form.user));
    Ok(())
}

fn broken(_req: &mut Request<'_>, _res: &mut Response) -> HandlerResult {
    Err("the disk is on fire at /var/secret".into())
}

fn app() -> Router<App> {
    Router::with_state(App {
        next_id: AtomicU64::new(1),
    })
    .post("/tasks", create)
    .get("/tasks/:id", show)
    .get("/tasks", list)
    .post("/login", login)
    .get("/broken", broken)
}

fn problem(res: &moria_http::testing::TestResponse) -> Value {
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    res.json().unwrap()
}

fn detail(res: &moria_http::testing::TestResponse) -> String {
    problem(res)["detail"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn state_handlers_and_plain_handlers_share_a_router() {
    let app = app();
    let res = TestRequest::post("/tasks")
        .json(&NewTask {
            title: "write tests".into(),
            priority: Some(2),
        })
        .send(&app);
    assert_eq!(res.status(), 201);
    let v: Value = res.json().unwrap();
    assert_eq!(
        (v["id"].as_u64(), v["title"].as_str()),
        (Some(1), Some("write tests"))
    );
    let again = TestRequest::post("/tasks")
        .json(&serde_json::json!({"title": "b"}))
        .send(&app);
    assert_eq!(again.json::<Value>().unwrap()["id"], 2);
    let list = TestRequest::get("/tasks?limit=5").send(&app);
    assert_eq!(list.text(), "limit=5 offset=0");
}

#[test]
fn errors_become_problem_details() {
    let app = app();
    let res = TestRequest::get("/tasks/101").send(&app);
    assert_eq!(res.status(), 404);
    let p = problem(&res);
    assert_eq!(p["title"], "Not Found");
    assert_eq!(p["detail"], "no task 101");
    assert_eq!(p["status"], 404);
    let res = TestRequest::post("/tasks")
        .json(&serde_json::json!({"title": ""}))
        .send(&app);
    assert_eq!(res.status(), 422);
    // Anything that is not an HttpError is a 500 whose text never reaches the client.
    let res = TestRequest::get("/broken").send(&app);
    assert_eq!(res.status(), 500);
    assert!(!res.text().contains("secret"), "{}", res.text());
}

#[test]
fn json_bodies_are_checked() {
    let app = app();
    let res = TestRequest::post("/tasks")
        .header("Content-Type", "text/plain")
        .body("{}")
        .send(&app);
    assert_eq!(res.status(), 415);
    assert!(detail(&res).contains("application/json"));
    let res = TestRequest::post("/tasks").body("{}").send(&app);
    assert_eq!(res.status(), 415, "no Content-Type");
    let res = TestRequest::post("/tasks")
        .header("Content-Type", "application/json")
        .body("{\"title\": \n  \"x\",, }")
        .send(&app);
    assert_eq!(res.status(), 400);
    let p = problem(&res);
    assert_eq!(
        (p["line"].as_u64(), p["column"].as_u64()),
        (Some(2), Some(7))
    );
    let res = TestRequest::post("/tasks")
        .header("Content-Type", "application/json; charset=utf-8")
        .body("{\"title\": 5}")
        .send(&app);
    assert_eq!(res.status(), 400);
    assert!(detail(&res).contains("invalid type"));
    let big = format!("{{\"title\":\"{}\"}}", "x".repeat(1 << 20));
    let res = TestRequest::post("/tasks")
        .header("Content-Type", "application/json")
        .body(big)
        .send(&app);
    assert_eq!(res.status(), 413);
}

#[test]
fn query_form_and_path_parameters_are_checked() {
    let app = app();
    let res = TestRequest::get("/tasks/abc").send(&app);
    assert_eq!(res.status(), 400);
    let p = problem(&res);
    assert_eq!(p["parameter"], "id");
    assert!(p["detail"].as_str().unwrap().contains("path parameter id"));
    assert_eq!(TestRequest::get("/tasks/-1").send(&app).status(), 400);
    assert_eq!(TestRequest::get("/tasks").send(&app).status(), 400);
    assert_eq!(TestRequest::get("/tasks?limit=x").send(&app).status(), 400);
    let res = TestRequest::post("/login")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("user=ada%20l&x=1")
        .send(&app);
    assert_eq!(res.text(), "hello ada l");
    let res = TestRequest::post("/login").body("user=ada").send(&app);
    assert_eq!(res.status(), 415);
    let res = TestRequest::post("/login")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("nobody=1")
        .send(&app);
    assert_eq!(res.status(), 400);
}

#[test]
fn a_custom_renderer_formats_every_error() {
    let app = app().error_renderer(|e, _req, res| {
        res.status(e.status())
            .content_type("text/plain")
            .body(format!("oops: {}", e.message()));
    });
    let res = TestRequest::get("/tasks/101").send(&app);
    assert_eq!((res.status(), res.text()), (404, "oops: no task 101"));
    let res = TestRequest::get("/nothing").send(&app);
    assert_eq!((res.status(), res.text()), (404, "oops: no such resource"));
    let res = TestRequest::delete("/tasks").send(&app);
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("POST, GET, HEAD, OPTIONS"));
    let html = Router::new()
        .get(
            "/x",
            |_: &mut Request<'_>, _: &mut Response| -> HandlerResult {
                Err(HttpError::forbidden("<no>").into())
            },
        )
        .error_renderer(moria_http::app::render::html);
    let res = TestRequest::get("/x").send(&html);
    assert_eq!(res.status(), 403);
    assert!(res.text().contains("&lt;no&gt;"), "{}", res.text());
}
