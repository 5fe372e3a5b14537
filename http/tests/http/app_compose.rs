//! Composition in-process: nested routers see the path below their prefix and answer their
//! own 404, 405 + `Allow`, HEAD and OPTIONS; mounted static files keep the whole path; the
//! router's own routes win over a mount; a fallback catches the rest.

use moria_http::testing::TestRequest;
use moria_http::{HandlerResult, Request, Response, Router, StaticFiles};

fn echo(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let params: Vec<String> = req.params().map(|(k, v)| format!("{k}={v}")).collect();
    res.body(format!("{} {}", req.path(), params.join(",")));
    Ok(())
}

fn app(static_root: &std::path::Path) -> Router {
    let users = Router::new()
        .get("/users/:id", echo)
        .post("/users", echo)
        .get("/", echo);
    let files = StaticFiles::builder(static_root)
        .prefix("/static")
        .build()
        .unwrap();
    Router::new()
        .get("/api/version", echo)
        .nest("/api", Router::new().nest("/v1", users))
        .mount("/static", files)
}

#[test]
fn nested_routers_see_the_path_below_their_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let res = TestRequest::get("/api/v1/users/7").send(&app);
    assert_eq!((res.status(), res.text()), (200, "/users/7 id=7"));
    assert_eq!(TestRequest::get("/api/v1").send(&app).text(), "/ ");
    assert_eq!(TestRequest::get("/api/v1/").send(&app).text(), "/ ");
    assert_eq!(
        TestRequest::get("/api/version").send(&app).text(),
        "/api/version "
    );
    assert_eq!(TestRequest::get("/api/v1x").send(&app).status(), 404);
    assert_eq!(TestRequest::get("/apix").send(&app).status(), 404);
}

#[test]
fn status_405_head_and_options_hold_across_nesting() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path());
    let res = TestRequest::delete("/api/v1/users/7").send(&app);
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS"));
    let res = TestRequest::new("OPTIONS", "/api/v1/users").send(&app);
    assert_eq!(
        (res.status(), res.header("allow")),
        (204, Some("POST, OPTIONS"))
    );
    let res = TestRequest::new("HEAD", "/api/v1/users/3").send(&app);
    assert_eq!((res.status(), res.body()), (200, &b""[..]));
    assert_eq!(TestRequest::get("/api/v1/nothing").send(&app).status(), 404);
}

#[test]
fn static_files_mount_at_a_prefix_and_a_fallback_catches_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "file a").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let app = app(dir.path());
    let res = TestRequest::get("/static/a.txt").send(&app);
    assert_eq!((res.status(), res.text()), (200, "file a"));
    let res = TestRequest::get("/static/sub").send(&app);
    assert_eq!(
        (res.status(), res.header("location")),
        (301, Some("/static/sub/"))
    );
    let res = TestRequest::post("/static/a.txt").send(&app);
    assert_eq!(
        (res.status(), res.header("allow")),
        (405, Some("GET, HEAD"))
    );
    let with_fallback = app.fallback(|_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        res.status(418).body("fallback");
        Ok(())
    });
    let res = TestRequest::get("/elsewhere").send(&with_fallback);
    assert_eq!((res.status(), res.text()), (418, "fallback"));
}
