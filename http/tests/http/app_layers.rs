//! Layers in-process: the documented order (router-wide first added outermost, then the
//! route's own), request ids in and out, CORS preflight and simple requests, the rate limit's
//! 429 + `Retry-After`, the deadline's 504, security headers, Basic auth with plain and hashed
//! passwords and per-user rights, Bearer JWTs with claims checks, and the compression layer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use moria_crypto::encoding::base64;
use moria_crypto::jwt::{JwtKey, Validation};
use moria_http::layer::{
    read_only, BasicAuth, BearerAuth, Compress, Cors, Deadline, RateLimit, RequestId,
    SecurityHeaders,
};
use moria_http::testing::TestRequest;
use moria_http::{HandlerResult, Next, Request, Response, Router};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body(format!("hello {}", req.user().unwrap_or("anonymous")));
    Ok(())
}

/// A layer that records its name before and after what it wraps.
fn tracer(
    log: &Arc<Mutex<Vec<String>>>,
    name: &'static str,
) -> impl Fn(&mut Request<'_>, &mut Response, Next<'_>) -> HandlerResult + Send + Sync + 'static {
    let log = Arc::clone(log);
    move |req: &mut Request<'_>, res: &mut Response, next: Next<'_>| -> HandlerResult {
        log.lock().unwrap().push(format!("{name}>"));
        next.run(req, res);
        log.lock()
            .unwrap()
            .push(format!("<{name} {}", res.status_code()));
        Ok(())
    }
}

#[test]
fn layers_run_in_the_documented_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .get("/a", hello)
        .with(tracer(&log, "route1"))
        .with(tracer(&log, "route2"))
        .get("/b", hello)
        .layer(tracer(&log, "outer"))
        .layer(tracer(&log, "inner"));
    TestRequest::get("/a").send(&app);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer>",
            "inner>",
            "route1>",
            "route2>",
            "<route2 200",
            "<route1 200",
            "<inner 200",
            "<outer 200"
        ]
    );
    log.lock().unwrap().clear();
    TestRequest::get("/missing").send(&app);
    assert_eq!(
        *log.lock().unwrap(),
        ["outer>", "inner>", "<inner 404", "<outer 404"]
    );
}

#[test]
fn request_ids_come_in_and_go_out() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let app = Router::new()
        .get(
            "/",
            move |req: &mut Request<'_>, _: &mut Response| -> HandlerResult {
                s.lock().unwrap().push(req.request_id().map(String::from));
                Ok(())
            },
        )
        .layer(RequestId::new());
    let res = TestRequest::get("/")
        .header("X-Request-Id", "abc-123")
        .send(&app);
    assert_eq!(res.header("x-request-id"), Some("abc-123"));
    let a = TestRequest::get("/")
        .header("X-Request-Id", "a b\"c")
        .send(&app);
    let b = TestRequest::get("/").send(&app);
    let (a, b) = (
        a.header("x-request-id").unwrap(),
        b.header("x-request-id").unwrap(),
    );
    assert_ne!(a, b);
    assert!(!a.contains(' '));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].as_deref(), Some("abc-123"));
    assert_eq!(seen[1].as_deref(), Some(a));
    // Errors keep the id too.
    let res = TestRequest::get("/nothing").send(&app);
    assert_eq!(res.status(), 404);
    assert!(res.header("x-request-id").is_some());
}

#[test]
fn cors_answers_preflights_and_marks_allowed_origins() {
    let app = Router::new().get("/data", hello).put("/data", hello).layer(
        Cors::new()
            .allow_origin("https://app.example")
            .allow_methods(&["GET", "PUT"])
            .allow_headers(&["content-type", "x-token"])
            .expose_headers(&["x-request-id"])
            .allow_credentials()
            .max_age(600),
    );
    let res = TestRequest::new("OPTIONS", "/data")
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "PUT")
        .header("Access-Control-Request-Headers", "x-token")
        .send(&app);
    assert_eq!(res.status(), 204);
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert_eq!(res.header("access-control-allow-methods"), Some("GET, PUT"));
    assert_eq!(
        res.header("access-control-allow-headers"),
        Some("content-type, x-token")
    );
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    assert_eq!(res.header("access-control-max-age"), Some("600"));
    let res = TestRequest::new("OPTIONS", "/data")
        .header("Origin", "https://app.example")
        .header("Access-Control-Request-Method", "DELETE")
        .send(&app);
    assert_eq!(res.status(), 403);
    let res = TestRequest::new("OPTIONS", "/data")
        .header("Origin", "https://evil.example")
        .header("Access-Control-Request-Method", "GET")
        .send(&app);
    assert_eq!(res.status(), 403);
    let res = TestRequest::get("/data")
        .header("Origin", "https://app.example")
        .send(&app);
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert_eq!(
        res.header("access-control-expose-headers"),
        Some("x-request-id")
    );
    assert_eq!(res.header("vary"), Some("Origin"));
    let res = TestRequest::get("/data")
        .header("Origin", "https://evil.example")
        .send(&app);
    assert_eq!(
        (res.status(), res.header("access-control-allow-origin")),
        (200, None)
    );
    let res = TestRequest::get("/data").send(&app);
    assert_eq!(res.header("access-control-allow-origin"), None);
    let any = Router::new()
        .get("/", hello)
        .layer(Cors::new().allow_any_origin());
    let res = TestRequest::get("/")
        .header("Origin", "https://x.example")
        .send(&any);
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
}

#[test]
fn the_rate_limit_answers_429_with_retry_after_per_client() {
    let app = Router::new()
        .get("/", hello)
        .layer(RateLimit::new(0.001, 2));
    let a: std::net::SocketAddr = "10.0.0.1:1000".parse().unwrap();
    let b: std::net::SocketAddr = "10.0.0.2:1000".parse().unwrap();
    for _ in 0..2 {
        assert_eq!(TestRequest::get("/").peer(a).send(&app).status(), 200);
    }
    let res = TestRequest::get("/").peer(a).send(&app);
    assert_eq!(res.status(), 429);
    let wait: u64 = res.header("retry-after").unwrap().parse().unwrap();
    assert!(wait >= 1, "{wait}");
    assert_eq!(TestRequest::get("/").peer(b).send(&app).status(), 200);
}

#[test]
fn a_handler_past_its_deadline_answers_504() {
    let slow = |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        let due = req.deadline().expect("the layer sets a deadline");
        // Wait until the deadline has passed (no sleep: the clock decides).
        while std::time::Instant::now() <= due {
            std::thread::yield_now();
        }
        res.body("too late");
        Ok(())
    };
    let app = Router::new()
        .get("/slow", slow)
        .with(Deadline::new(Duration::from_millis(1)))
        .get("/fast", hello)
        .with(Deadline::new(Duration::from_secs(600)));
    let res = TestRequest::get("/slow").send(&app);
    assert_eq!(res.status(), 504);
    assert!(!res.text().contains("too late"));
    assert_eq!(TestRequest::get("/fast").send(&app).status(), 200);
}

#[test]
fn security_headers_fill_in_what_the_handler_left_out() {
    let app = Router::new()
        .get(
            "/",
            |_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
                res.header("X-Frame-Options", "SAMEORIGIN");
                Ok(())
            },
        )
        .layer(
            SecurityHeaders::new()
                .hsts(31_536_000)
                .content_security_policy("default-src 'self'"),
        );
    let res = TestRequest::get("/").send(&app);
    assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(res.header("x-frame-options"), Some("SAMEORIGIN"));
    assert_eq!(res.headers_named("x-frame-options").count(), 1);
    assert_eq!(res.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(
        res.header("strict-transport-security"),
        Some("max-age=31536000; includeSubDomains")
    );
    assert_eq!(
        res.header("content-security-policy"),
        Some("default-src 'self'")
    );
}

fn basic(user_pass: &str) -> String {
    format!("Basic {}", base64(user_pass.as_bytes()))
}

#[test]
fn basic_auth_checks_passwords_and_rights() {
    let hashed = BasicAuth::hash_password("upload-pw").unwrap();
    let auth = BasicAuth::new("files")
        .user("reader", "read-pw")
        .user_hashed("writer", &hashed)
        .unwrap()
        .rights(|user, req| user == "writer" || read_only(req.method()));
    let app = Router::new().get("/f", hello).put("/f", hello).layer(auth);
    let res = TestRequest::get("/f").send(&app);
    assert_eq!(res.status(), 401);
    assert_eq!(
        res.header("www-authenticate"),
        Some("Basic realm=\"files\", charset=\"UTF-8\"")
    );
    let res = TestRequest::get("/f")
        .header("Authorization", &basic("reader:read-pw"))
        .send(&app);
    assert_eq!((res.status(), res.text()), (200, "hello reader"));
    let res = TestRequest::put("/f")
        .header("Authorization", &basic("reader:read-pw"))
        .send(&app);
    assert_eq!(res.status(), 403);
    let res = TestRequest::put("/f")
        .header("Authorization", &basic("writer:upload-pw"))
        .send(&app);
    assert_eq!((res.status(), res.text()), (200, "hello writer"));
    for bad in ["reader:wrong", "writer:read-pw", "nobody:x", "reader"] {
        let res = TestRequest::get("/f")
            .header("Authorization", &basic(bad))
            .send(&app);
        assert_eq!(res.status(), 401, "{bad}");
    }
}

#[test]
fn bearer_auth_verifies_tokens_and_claims() {
    let key = JwtKey::hs256(&[7u8; 32]).unwrap();
    let auth = BearerAuth::new(
        JwtKey::hs256(&[7u8; 32]).unwrap(),
        Validation::new().issuer("moria"),
    )
    .claims(|c| match c.get("role").and_then(|r| r.as_str()) {
        Some("admin") => Ok(()),
        _ => Err("admin role required".into()),
    });
    let app = Router::new()
        .get("/admin", hello)
        .with(auth)
        .get("/open", hello);
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let token = |claims: serde_json::Value| format!("Bearer {}", key.sign(&claims).unwrap());
    let good = token(serde_json::json!({"iss":"moria","exp":exp,"sub":"ada","role":"admin"}));
    let res = TestRequest::get("/admin")
        .header("Authorization", &good)
        .send(&app);
    assert_eq!((res.status(), res.text()), (200, "hello ada"));
    let user = token(serde_json::json!({"iss":"moria","exp":exp,"sub":"bob","role":"user"}));
    let res = TestRequest::get("/admin")
        .header("Authorization", &user)
        .send(&app);
    assert_eq!(res.status(), 403);
    let expired = token(serde_json::json!({"iss":"moria","exp":1,"role":"admin"}));
    for bad in [expired.as_str(), "Bearer a.b.c", "Basic eDp5"] {
        let res = TestRequest::get("/admin")
            .header("Authorization", bad)
            .send(&app);
        assert_eq!(res.status(), 401, "{bad}");
        assert!(res
            .header("www-authenticate")
            .unwrap()
            .starts_with("Bearer"));
    }
    assert_eq!(TestRequest::get("/admin").send(&app).status(), 401);
    assert_eq!(
        TestRequest::get("/open").send(&app).text(),
        "hello anonymous"
    );
}

#[test]
fn the_compression_layer_gzips_what_it_wraps() {
    let page = "moria ".repeat(1000);
    let app = Router::new()
        .get(
            "/big",
            move |_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
                res.content_type("text/plain").body(page.clone());
                Ok(())
            },
        )
        .with(Compress::default());
    let res = TestRequest::get("/big")
        .header("Accept-Encoding", "gzip")
        .send(&app);
    assert_eq!(res.header("content-encoding"), Some("gzip"));
    assert!(res.body().len() < 1000, "{}", res.body().len());
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(res.body()), &mut text)
        .unwrap();
    assert_eq!(text.len(), 6000);
    let res = TestRequest::get("/big").send(&app);
    assert_eq!(
        (res.header("content-encoding"), res.body().len()),
        (None, 6000)
    );
}
