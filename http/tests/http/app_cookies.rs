//! Cookies in-process: reading `Cookie`, writing `Set-Cookie`, and signed and encrypted
//! cookies that survive a key rotation and read as absent when tampered with or expired.

use std::time::Duration;

use moria_http::app::{Cookie, EncryptedCookies, SameSite, SignedCookies};
use moria_http::testing::TestRequest;
use moria_http::{HandlerResult, Request, Response, Router};

struct Jars {
    signed: SignedCookies,
    sealed: EncryptedCookies,
}

fn set(jars: &Jars, _req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let base = Cookie::new("user", "ada lovelace")
        .path("/")
        .http_only()
        .secure()
        .same_site(SameSite::Lax);
    jars.signed.set(res, &base)?;
    jars.sealed.set(
        res,
        &Cookie::new("cart", "42 items").max_age(Duration::from_secs(3600)),
    )?;
    res.set_cookie(&Cookie::new("theme", "dark"))?;
    Ok(())
}

fn get(jars: &Jars, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let user = jars.signed.get(req, "user");
    let cart = jars.sealed.get(req, "cart");
    res.body(format!(
        "user={} cart={} theme={}",
        user.as_deref().unwrap_or("-"),
        cart.as_deref().unwrap_or("-"),
        req.cookie("theme").unwrap_or("-")
    ));
    Ok(())
}

fn app(keys: &[&[u8]]) -> Router<Jars> {
    Router::with_state(Jars {
        signed: SignedCookies::new(keys).unwrap(),
        sealed: EncryptedCookies::new(keys).unwrap(),
    })
    .get("/set", set)
    .get("/get", get)
}

/// The `Cookie` header a browser would send back for these `Set-Cookie` values.
fn cookie_header(set_cookies: Vec<&str>) -> String {
    set_cookies
        .iter()
        .map(|c| c.split(';').next().unwrap())
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn cookies_round_trip_through_a_key_rotation() {
    let old = app(&[&[1; 32]]);
    let res = TestRequest::get("/set").send(&old);
    let set: Vec<&str> = res.headers_named("set-cookie").collect();
    assert_eq!(set.len(), 3);
    assert!(
        set[0].ends_with("; Path=/; Secure; HttpOnly; SameSite=Lax"),
        "{}",
        set[0]
    );
    assert!(set[1].contains("; Max-Age=3600"), "{}", set[1]);
    // "items" (five letters) stands for the plaintext: a random ciphertext holds "42" in one
    // run of about eighty, and five given letters practically never.
    assert!(
        !set[1].contains("items"),
        "the encrypted value is hidden: {}",
        set[1]
    );
    assert_eq!(set[2], "theme=dark");
    let jar = cookie_header(set);
    let rotated = app(&[&[2; 32], &[1; 32]]);
    let res = TestRequest::get("/get")
        .header("Cookie", &jar)
        .send(&rotated);
    assert_eq!(res.text(), "user=ada lovelace cart=42 items theme=dark");
    let retired = app(&[&[2; 32]]);
    let res = TestRequest::get("/get")
        .header("Cookie", &jar)
        .send(&retired);
    assert_eq!(res.text(), "user=- cart=- theme=dark");
}

#[test]
fn tampered_cookies_read_as_absent() {
    let app = app(&[&[1; 32]]);
    let res = TestRequest::get("/set").send(&app);
    let jar = cookie_header(res.headers_named("set-cookie").collect());
    let forged = jar
        .replacen("user=0.", "user=0.YWRtaW4", 1)
        .replacen("cart=", "cart=AAAA", 1);
    let res = TestRequest::get("/get")
        .header("Cookie", &forged)
        .send(&app);
    assert_eq!(
        (res.status(), res.text()),
        (200, "user=- cart=- theme=dark")
    );
    let res = TestRequest::get("/get")
        .header("Cookie", "user=; cart=%%%; theme")
        .send(&app);
    assert_eq!((res.status(), res.text()), (200, "user=- cart=- theme=-"));
}

#[test]
fn an_invalid_cookie_is_a_500_not_a_split_response() {
    let app = Router::new().get(
        "/",
        |_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            res.set_cookie(&Cookie::new("a", "x\r\nSet-Cookie: evil=1"))?;
            Ok(())
        },
    );
    let res = TestRequest::get("/").send(&app);
    assert_eq!(res.status(), 500);
    assert_eq!(res.header("set-cookie"), None);
}
