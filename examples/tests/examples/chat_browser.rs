//! The chat example in headless Chromium (over WebDriver): two browsers open its page and join
//! one room under two names; one sends a message through the form, and the other shows it,
//! under the sender's name; a name with markup is shown as text. Also the handshake's refusals
//! as a client that is not a browser sees them.

use serde_json::Value;

use crate::common::start;
use crate::common::webdriver::Browser;

/// The messages a page shows, as `name: text` (a notice as `* text`).
fn shown(browser: &Browser) -> Vec<String> {
    let v = browser.script(
        "return Array.from(document.querySelectorAll('#log li')).map(li => \
           li.classList.contains('notice') ? '* ' + li.textContent \
           : li.querySelector('b').textContent + ': ' + li.lastChild.textContent)",
    );
    v.as_array()
        .expect("messages")
        .iter()
        .map(|m| m.as_str().unwrap_or_default().to_string())
        .collect()
}

/// Waits (in the page, up to the driver's script timeout) until the log shows a line
/// containing `text`.
fn wait_for(browser: &Browser, text: &str) {
    let js = format!(
        "const done = arguments[arguments.length - 1]; const want = {};\
         const seen = () => document.querySelector('#log').textContent.includes(want);\
         if (seen()) return done(true);\
         new MutationObserver((_, o) => {{ if (seen()) {{ o.disconnect(); done(true); }} }})\
           .observe(document.querySelector('#log'), {{ childList: true, subtree: true }});",
        Value::from(text)
    );
    assert_eq!(
        browser.script_async(&js),
        Value::Bool(true),
        "{text:?} shown"
    );
}

/// Opens the page as `name` (already percent-encoded for a query) in `room` and waits until
/// the socket is open.
fn join(browser: &Browser, base: &str, room: &str, name: &str) {
    browser.goto(&format!("{base}/?room={room}&name={name}"));
    browser.find(&format!("body[data-joined='{room}']"));
}

#[test]
fn two_pages_in_one_room_see_each_others_messages() {
    let server = start(
        env!("CARGO_BIN_EXE_chat"),
        &["--listen", "127.0.0.1:0", "--workers", "1"],
        &[],
    );
    let base = format!("http://{}", server.addr);
    let alice = Browser::start();
    let bob = Browser::start();
    join(&alice, &base, "lobby", "alice");
    join(&bob, &base, "lobby", "%3Cb%3Ebob%3C%2Fb%3E");
    wait_for(&bob, "you joined #lobby with 1 others");

    let text = alice.find("#text");
    alice.send_keys(&text, "hello from alice");
    alice.click(&alice.find("#send button"));
    wait_for(&bob, "hello from alice");
    wait_for(&alice, "hello from alice");
    assert!(shown(&bob).contains(&"alice: hello from alice".to_string()));

    let text = bob.find("#text");
    bob.send_keys(&text, "hi <i>alice</i> & all");
    bob.click(&bob.find("#send button"));
    wait_for(&alice, "hi <i>alice</i> & all");
    assert!(shown(&alice).contains(&"<b>bob</b>: hi <i>alice</i> & all".to_string()));
    // Shown as text, never as markup.
    let tags = alice.script("return document.querySelectorAll('#log li i, #log li b b').length");
    assert_eq!(tags, Value::from(0));
}

#[test]
fn a_request_that_is_not_a_handshake_is_refused() {
    let server = start(
        env!("CARGO_BIN_EXE_chat"),
        &["--listen", "127.0.0.1:0", "--workers", "1"],
        &[],
    );
    let client = moria_http::client::Client::new().expect("client");
    let get = |path: &str| {
        let res = client
            .get(&format!("http://{}{path}", server.addr))
            .send()
            .expect("answer");
        let version = res
            .headers()
            .get("sec-websocket-version")
            .map(str::to_string);
        (res.status(), version)
    };
    assert_eq!(get("/ws/lobby?name=ann"), (426, Some("13".to_string())));
    assert_eq!(get("/ws/lobby").0, 400);
    assert_eq!(get(&format!("/ws/lobby?name={}", "n".repeat(41))).0, 400);
    let page = client
        .get(&format!("http://{}/", server.addr))
        .send()
        .expect("page");
    assert_eq!(page.status(), 200);
    assert!(page.text().expect("body").contains("new WebSocket("));
}
