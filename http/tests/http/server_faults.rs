//! One bad handler costs one connection: a handler that overflows its fiber stack (a large frame
//! or deep recursion) or a response body that panics after its head was sent ends only its own
//! connection; the slot is reclaimed, the server keeps serving and shuts down promptly, and
//! each fault is counted. Over the connection cap, TLS clients are answered 503 too.

use crate::common::tls::{connect_tls, start_tls, Fixture};
use crate::common::*;
use moria_http::{Body, HandlerResult, Request, Response, Server};

/// Far beyond the default 128 KiB fiber stack.
const BIG_FRAME: usize = 1024 * 1024;

#[inline(never)]
pub(crate) fn big_frame() -> u8 {
    let frame = std::hint::black_box([7u8; BIG_FRAME]);
    frame[BIG_FRAME / 2]
}

/// Recursion with small frames that write nearly every word on the way down (from some of the
/// starting offsets it reaches the stack's very last word, which the engine alone answers
/// with `exit(1)`).
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    // Opaque after the call, so no optimiser turns the recursion into a loop.
    std::hint::black_box(1 + recurse(std::hint::black_box(depth + 1)))
}

#[inline(never)]
fn recurse_from_offset(words: usize) -> u64 {
    let mut frame = [0u64; 16];
    frame[words % 16] = std::hint::black_box(words as u64);
    std::hint::black_box(&frame);
    match words {
        0 => recurse(0),
        _ => recurse_from_offset(words - 1),
    }
}

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    match req.path() {
        "/big-frame" => {
            res.body(format!("{}", big_frame()));
        }
        path if path.starts_with("/recurse/") => {
            let offset = path["/recurse/".len()..].parse().unwrap_or(0);
            res.body(format!("{}", recurse_from_offset(offset)));
        }
        "/panicking-body" => {
            res.body(Body::stream(|w| {
                w.write_all(b"some bytes")?;
                w.flush()?;
                panic!("the body source broke");
            }));
        }
        path => {
            res.body(format!("ok {path}"));
        }
    }
    Ok(())
}

fn get(s: &mut dyn ClientConn, path: &str) {
    write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
}

fn overflowing_handlers_cost_one_connection_each(path: &str) {
    for tls in [false, true] {
        // Two slots, five overflows: without reclaiming, the third client would be refused.
        let f = Fixture::start(tls, Server::builder().max_connections(2), handler);
        let mut keep = f.connect();
        get(&mut *keep, "/before");
        assert_eq!(
            read_response(&mut *keep, false).unwrap().text(),
            "ok /before"
        );
        for i in 0..5 {
            let mut s = f.connect();
            get(&mut *s, &path.replace("{i}", &i.to_string()));
            if !f.is_tls() {
                // Nothing of the response had started: the server answers for the dead fiber.
                let r = read_response(&mut *s, false).expect("an answer for the dead handler");
                assert_eq!(r.status, 500);
            }
            assert_closed(&mut *s);
        }
        // The surviving connection and new ones are served.
        get(&mut *keep, "/after");
        assert_eq!(
            read_response(&mut *keep, false).unwrap().text(),
            "ok /after"
        );
        let mut fresh = f.connect();
        get(&mut *fresh, "/fresh");
        assert_eq!(
            read_response(&mut *fresh, false).unwrap().text(),
            "ok /fresh"
        );
        let stats = f.server.stats();
        assert_eq!((stats.reclaimed, stats.refused), (5, 0));
        drop(fresh);
        stop(&f.server);
    }
}

#[test]
fn a_handler_with_a_huge_frame_costs_one_connection() {
    overflowing_handlers_cost_one_connection_each("/big-frame");
}

#[test]
fn a_handler_recursing_without_end_costs_one_connection() {
    overflowing_handlers_cost_one_connection_each("/recurse/{i}");
}

#[test]
fn a_panicking_body_closes_only_its_connection() {
    for tls in [false, true] {
        let f = Fixture::start(tls, Server::builder(), handler);
        let mut other = f.connect();
        let mut s = f.connect();
        get(&mut *s, "/panicking-body");
        let raw = read_until_closed(&mut *s);
        let text = String::from_utf8_lossy(&raw);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(
            !text.ends_with("0\r\n\r\n"),
            "a panicked body was terminated: {text}"
        );
        assert_eq!(f.server.stats().body_panics, 1);
        get(&mut *other, "/other");
        assert_eq!(
            read_response(&mut *other, false).unwrap().text(),
            "ok /other"
        );
        stop(&f.server);
    }
}

#[test]
fn tls_clients_over_the_cap_get_503() {
    let t = start_tls(Server::builder().max_connections(1), handler);
    let addr = t.server.local_addr();
    let mut first = connect_tls(addr, &t.pem);
    get(&mut first, "/first");
    assert_eq!(
        read_response(&mut first, false).unwrap().text(),
        "ok /first"
    );
    let mut second = connect_tls(addr, &t.pem);
    get(&mut second, "/second");
    let r = read_response(&mut second, false).expect("an answer at the cap");
    assert_eq!(r.status, 503);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_closed(&mut second);
    assert_eq!(t.server.stats().refused, 1);
    stop(&t.server);
}
