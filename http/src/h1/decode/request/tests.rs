//! Parser unit tests: one per RFC 9112 rule and limit, over `&[u8]`.

use super::*;
use crate::h1::decode::scan::HeadScan;

/// The head as the connection gets it ([`take_head`] over the whole input, the one-pass path
/// where it applies), checked against the scanned path (scan, then parse exactly the head).
fn parse_with(raw: &[u8], limits: &Limits) -> Result<Head, Failure> {
    let mut head = Head::default();
    let taken = take_head(&mut HeadScan::default(), raw, limits, &mut head)
        .map(|b| b.expect("complete head"));
    let scanned = scanned(raw, limits);
    match (&taken, &scanned) {
        (Ok(a), Ok((b, h))) => {
            assert_eq!(a, b, "bounds");
            assert_eq!(format!("{head:?}"), format!("{h:?}"), "heads");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "failures"),
        _ => panic!("one pass gave {taken:?}, the scanned path {scanned:?}"),
    }
    taken.map(|_| head)
}

/// The scanned path alone: the scanner finds the end, the parser reads exactly the head.
fn scanned(raw: &[u8], limits: &Limits) -> Result<(HeadBounds, Head), Failure> {
    let bounds = HeadScan::default()
        .scan(raw, limits)?
        .expect("complete head");
    let mut head = Head::default();
    let end = parse_head(&raw[..bounds.end], bounds.start, limits, &mut head)?;
    assert_eq!(end, bounds.end, "the parser ends where the scanner does");
    Ok((bounds, head))
}

fn parse(raw: &[u8]) -> Result<Head, Failure> {
    parse_with(raw, &Limits::default())
}

/// Parses `raw` under `limits`, asserts it is refused with `status`, and returns the failure
/// (for the cases that also name which one).
#[track_caller]
fn refused_with(raw: impl AsRef<[u8]>, limits: &Limits, status: u16) -> Failure {
    let raw = raw.as_ref();
    let shown = String::from_utf8_lossy(raw);
    let failure = match parse_with(raw, limits) {
        Ok(head) => panic!("{shown:?} was accepted: {head:?}"),
        Err(failure) => failure,
    };
    assert_eq!(failure.status(), status, "{shown:?}: {failure:?}");
    failure
}

/// [`refused_with`] under the default limits.
#[track_caller]
fn refused(raw: impl AsRef<[u8]>, status: u16) -> Failure {
    refused_with(raw, &Limits::default(), status)
}

fn field<'a>(raw: &'a [u8], head: &Head, name: &str) -> Option<&'a [u8]> {
    head.fields
        .iter()
        .find(|(n, _)| n.get(raw).eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, v)| v.get(raw))
}

#[test]
fn simple_get() {
    let raw = b"GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n";
    let h = parse(raw).unwrap();
    assert_eq!(h.method, Method::Get);
    assert_eq!(h.version, Version::Http11);
    assert_eq!(h.target.get(raw), b"/a/b?x=1&y=2");
    assert_eq!(h.path.get(raw), b"/a/b");
    assert_eq!(h.query.unwrap().get(raw), b"x=1&y=2");
    assert_eq!(h.fields.len(), 2);
    assert_eq!(field(raw, &h, "accept"), Some(&b"*/*"[..]));
    assert_eq!(h.framing, Framing::Empty);
    assert!(h.keep_alive);
}

#[test]
fn values_are_trimmed_of_ows() {
    let raw = b"GET / HTTP/1.1\r\nHost:a\r\nX-A: \t v v \t\r\nX-B:\r\n\r\n";
    let h = parse(raw).unwrap();
    assert_eq!(field(raw, &h, "x-a"), Some(&b"v v"[..]));
    assert_eq!(field(raw, &h, "x-b"), Some(&b""[..]));
}

#[test]
fn bare_lf_line_endings_are_tolerated() {
    let raw = b"GET / HTTP/1.1\nHost: a\n\n";
    assert!(parse(raw).is_ok());
}

#[test]
fn leading_empty_line_is_ignored() {
    let raw = b"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
    assert_eq!(parse(raw).unwrap().path.get(raw), b"/");
}

#[test]
fn http10_defaults_to_close() {
    let h = parse(b"GET / HTTP/1.0\r\n\r\n").unwrap();
    assert_eq!(h.version, Version::Http10);
    assert!(!h.keep_alive);
    let h = parse(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").unwrap();
    assert!(h.keep_alive);
}

#[test]
fn connection_close_on_11() {
    let h = parse(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, close\r\n\r\n").unwrap();
    assert!(!h.keep_alive);
}

#[test]
fn later_minor_version_is_served_as_11() {
    assert_eq!(
        parse(b"GET / HTTP/1.7\r\nHost: a\r\n\r\n").unwrap().version,
        Version::Http11
    );
}

#[test]
fn unsupported_versions_are_505() {
    for v in ["HTTP/2.0", "HTTP/0.9", "HTTP/3.1"] {
        let raw = format!("GET / {v}\r\nHost: a\r\n\r\n");
        assert_eq!(
            refused(raw.as_bytes(), 505),
            Failure::UnsupportedVersion,
            "{v}"
        );
    }
}

#[test]
fn malformed_versions_are_400() {
    for v in [
        "HTTP/1",
        "http/1.1",
        "HTTP/1.1x",
        "HTTP/11.1",
        "HTTX/1.1",
        "",
    ] {
        let raw = format!("GET / {v}\r\nHost: a\r\n\r\n");
        refused(raw.as_bytes(), 400);
    }
}

#[test]
fn request_line_needs_single_spaces() {
    for l in [
        "GET  / HTTP/1.1",
        "GET / HTTP/1.1 ",
        " GET / HTTP/1.1",
        "GET /",
        "GET",
    ] {
        let raw = format!("{l}\r\nHost: a\r\n\r\n");
        refused(raw.as_bytes(), 400);
    }
}

#[test]
fn method_must_be_a_token() {
    assert_eq!(
        refused(b"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadMethod
    );
    let h = parse(b"PURGE / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_eq!(h.method, Method::Other);
}

#[test]
fn common_methods_and_their_look_alikes() {
    // The four recognised by their first bytes, and names that share those bytes.
    for (m, want) in [
        ("GET", Method::Get),
        ("PUT", Method::Put),
        ("POST", Method::Post),
        ("HEAD", Method::Head),
        ("GETS", Method::Other),
        ("POSTS", Method::Other),
        ("HEADER", Method::Other),
        ("PUTT", Method::Other),
        ("get", Method::Other),
    ] {
        let raw = format!("{m} /x HTTP/1.1\r\nHost: a\r\n\r\n");
        let h = parse(raw.as_bytes()).unwrap();
        assert_eq!(h.method, want, "{m}");
        assert_eq!(field(raw.as_bytes(), &h, "host"), Some(&b"a"[..]), "{m}");
        assert_eq!(h.method_span.get(raw.as_bytes()), m.as_bytes());
        assert_eq!(h.path.get(raw.as_bytes()), b"/x");
    }
    // Two spaces after a common method are still one too many.
    assert_eq!(
        refused(b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadRequestLine
    );
}

#[test]
fn usual_and_other_version_endings() {
    for (line, version) in [
        ("GET / HTTP/1.1\r\n", Version::Http11),
        ("GET / HTTP/1.1\n", Version::Http11),
        ("GET / HTTP/1.0\r\n", Version::Http10),
        ("GET / HTTP/1.9\r\n", Version::Http11),
    ] {
        let raw = format!("{line}Host: a\r\n\r\n");
        assert_eq!(parse(raw.as_bytes()).unwrap().version, version, "{line:?}");
    }
    assert_eq!(
        refused(b"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
        Failure::BadRequestLine
    );
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\r\nHost: a\r\n\r\n", 400),
        Failure::BareCr
    );
}

#[test]
fn target_rejects_non_ascii_and_controls() {
    assert_eq!(
        refused(b"GET /\xc3\xa9 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadTarget
    );
    assert_eq!(
        refused(b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadTarget
    );
    assert_eq!(
        refused(b"GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadTarget
    );
}

#[test]
fn absolute_form_target() {
    let raw = b"GET http://example.com:80/x/y?q HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let h = parse(raw).unwrap();
    assert_eq!(h.path.get(raw), b"/x/y");
    assert_eq!(h.query.unwrap().get(raw), b"q");
    let raw = b"GET http://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n";
    let p = parse(raw).unwrap().path;
    assert_eq!(p.start, p.end);
}

#[test]
fn asterisk_form_only_for_options() {
    assert!(parse(b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n").is_ok());
    assert_eq!(
        refused(b"GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        Failure::BadTarget
    );
}

#[test]
fn obs_fold_is_400() {
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n  folded\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::ObsFold);
    let raw = b"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::ObsFold);
}

#[test]
fn whitespace_before_colon_is_400() {
    let raw = b"GET / HTTP/1.1\r\nHost : a\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::WhitespaceBeforeColon);
}

#[test]
fn bad_field_names_are_400() {
    for l in ["NoColon", ": empty", "X(y): z", "X\x01: y"] {
        let raw = format!("GET / HTTP/1.1\r\nHost: a\r\n{l}\r\n\r\n");
        assert_eq!(
            refused(raw.as_bytes(), 400),
            Failure::BadHeaderName,
            "{l:?}"
        );
    }
}

#[test]
fn control_characters_in_values_are_400() {
    for c in [0u8, 1, 0x0b, 0x1f, 0x7f] {
        let mut raw = b"GET / HTTP/1.1\r\nHost: a\r\nX: a".to_vec();
        raw.push(c);
        raw.extend_from_slice(b"b\r\n\r\n");
        assert_eq!(refused(&raw, 400), Failure::BadHeaderValue, "byte {c}");
    }
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\t!\r\n\r\n";
    assert!(parse(raw).is_ok(), "obs-text and HTAB are allowed");
}

#[test]
fn bare_cr_is_400() {
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::BareCr);
    let raw = b"GET / HTTP/1.1\r\r\nHost: a\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::BareCr);
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nX\r: b\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::BareCr);
}

#[test]
fn host_rules() {
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\n\r\n", 400),
        Failure::MissingHost
    );
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400),
        Failure::DuplicateHost
    );
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
        Failure::BadHost
    );
    assert_eq!(
        refused(b"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        Failure::BadHost
    );
    assert!(parse(b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n").is_ok());
    assert!(
        parse(b"GET / HTTP/1.1\r\nHost:\r\n\r\n").is_ok(),
        "empty Host is valid"
    );
    assert!(
        parse(b"GET / HTTP/1.0\r\n\r\n").is_ok(),
        "HTTP/1.0 needs no Host"
    );
}

#[test]
fn content_length_rules() {
    let h = parse(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 42\r\n\r\n").unwrap();
    assert_eq!(h.framing, Framing::Length(42));
    let h = parse(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n").unwrap();
    assert_eq!(h.framing, Framing::Empty);
    let h =
        parse(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 7, 7\r\nContent-Length: 7\r\n\r\n")
            .unwrap();
    assert_eq!(h.framing, Framing::Length(7));
    for v in [
        "",
        "-1",
        "+1",
        "1 2",
        "0x10",
        "1,",
        "18446744073709551616",
        "١",
    ] {
        let raw = format!("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: {v}\r\n\r\n");
        assert_eq!(
            refused(raw.as_bytes(), 400),
            Failure::BadContentLength,
            "{v:?}"
        );
    }
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::ConflictingContentLength);
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::ConflictingContentLength);
}

#[test]
fn body_over_limit_is_413() {
    let l = Limits {
        max_body: 10,
        ..Limits::default()
    };
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n";
    assert_eq!(refused_with(raw, &l, 413), Failure::BodyTooLarge);
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n";
    assert_eq!(parse_with(raw, &l).unwrap().framing, Framing::Length(10));
}

#[test]
fn transfer_encoding_rules() {
    let te = |v: &str| {
        let raw = format!("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: {v}\r\n\r\n");
        parse(raw.as_bytes()).map(|h| h.framing)
    };
    assert_eq!(te("chunked"), Ok(Framing::Chunked));
    assert_eq!(te("Chunked"), Ok(Framing::Chunked));
    assert_eq!(te("chunked, chunked"), Err(Failure::ChunkedNotFinal));
    assert_eq!(te("chunked, gzip"), Err(Failure::ChunkedNotFinal));
    assert_eq!(te("gzip, chunked"), Err(Failure::UnsupportedTransferCoding));
    assert_eq!(te("gzip"), Err(Failure::UnsupportedTransferCoding));
    assert_eq!(te(""), Err(Failure::UnsupportedTransferCoding));
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(refused(raw, 501), Failure::UnsupportedTransferCoding);
    let raw =
        b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n";
    assert_eq!(
        refused(raw, 400),
        Failure::ContentLengthWithTransferEncoding
    );
    let raw = b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(refused(raw, 400), Failure::TransferEncodingOnHttp10);
}

#[test]
fn expectations() {
    let h = parse(b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\n\r\n").unwrap();
    assert!(h.expect_continue);
    let raw = b"POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n";
    assert_eq!(refused(raw, 417), Failure::UnknownExpectation);
    let h = parse(b"POST / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n").unwrap();
    assert!(!h.expect_continue, "HTTP/1.0 ignores Expect");
}

#[test]
fn too_many_headers_is_431() {
    let l = Limits {
        max_headers: 3,
        ..Limits::default()
    };
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\n\r\n";
    assert!(parse_with(raw, &l).is_ok());
    let raw = b"GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n";
    assert_eq!(refused_with(raw, &l, 431), Failure::TooManyHeaders);
}

#[test]
fn head_is_reusable() {
    let mut head = Head::default();
    let l = Limits::default();
    let a = b"POST /a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
    parse_head(a, 0, &l, &mut head).unwrap();
    let b = b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n";
    parse_head(b, 0, &l, &mut head).unwrap();
    assert_eq!(head.fields.len(), 1);
    assert!(!head.expect_continue);
    assert_eq!(head.framing, Framing::Empty);
    assert!(head.query.is_none());
}

mod fuzz {
    //! Arbitrary bytes never panic the scanner or the parser (the fuzz target, on stable).
    use super::*;
    use proptest::prelude::*;

    fn run(raw: &[u8], limits: &Limits) {
        let mut scan = HeadScan::default();
        let mut head = Head::default();
        // Feed in two pieces, as a socket would, then compare with one read.
        let cut = raw.len() / 2;
        let first = take_head(&mut scan, &raw[..cut], limits, &mut head);
        let split = match first {
            Ok(None) => take_head(&mut scan, raw, limits, &mut head),
            other => other,
        };
        let mut whole_head = Head::default();
        let whole = take_head(&mut HeadScan::default(), raw, limits, &mut whole_head);
        assert_eq!(split, whole);
        if let Ok(Some(_)) = whole {
            assert_eq!(format!("{head:?}"), format!("{whole_head:?}"));
        }
        if let Ok(Some(b)) = whole {
            // Every span of a successful parse lies inside the head.
            for (n, v) in &whole_head.fields {
                assert!(n.end as usize <= b.end && v.end as usize <= b.end);
            }
            assert!(whole_head.target.end as usize <= b.end);
        }
    }

    fn small_limits() -> Limits {
        Limits {
            max_request_line: 64,
            max_head: 256,
            max_headers: 4,
            max_body: 1000,
            ..Limits::default()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..600)) {
            run(&raw, &Limits::default());
            run(&raw, &small_limits());
        }

        #[test]
        fn mutated_requests_never_panic(
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..8),
            cut in 0usize..200,
        ) {
            let mut raw = b"POST /a/b?c=d HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n".to_vec();
            for (i, b) in flips {
                let i = i % raw.len();
                raw[i] = b;
            }
            raw.truncate(cut.max(1).min(raw.len()));
            run(&raw, &Limits::default());
            run(&raw, &small_limits());
        }

        #[test]
        fn header_soup_never_panics(lines in proptest::collection::vec("[ -~\t\r\n:]{0,40}", 0..12)) {
            let mut raw = b"GET / HTTP/1.1\r\n".to_vec();
            for l in lines {
                raw.extend_from_slice(l.as_bytes());
                raw.extend_from_slice(b"\r\n");
            }
            raw.extend_from_slice(b"\r\n");
            run(&raw, &Limits::default());
            run(&raw, &small_limits());
        }
    }
}

/// A target, its path, its query, and whether the path holds an escape.
type TargetCase = (&'static [u8], &'static [u8], Option<&'static [u8]>, bool);

#[test]
fn escapes_are_noted_in_the_path_only() {
    let cases: [TargetCase; 7] = [
        (b"/a%20b", b"/a%20b", None, true),
        (b"/a?x=%20", b"/a", Some(b"x=%20"), false),
        (b"/a%2F?x=%20", b"/a%2F", Some(b"x=%20"), true),
        (b"/?", b"/", Some(b""), false),
        (b"http://h%41st/p", b"/p", None, false),
        (b"http://h%41st/p%41?q", b"/p%41", Some(b"q"), true),
        (b"http://host?q=%41", b"", Some(b"q=%41"), false),
    ];
    for (target, path, query, escaped) in cases {
        let mut raw = b"GET ".to_vec();
        raw.extend_from_slice(target);
        raw.extend_from_slice(b" HTTP/1.1\r\nHost: h\r\n\r\n");
        let h = parse(&raw).unwrap();
        let shown = String::from_utf8_lossy(target);
        assert_eq!(h.path.get(&raw), path, "{shown}");
        assert_eq!(h.query.map(|q| q.get(&raw)), query, "{shown}");
        assert_eq!(h.path_escaped, escaped, "{shown}");
    }
}

#[test]
fn versions_not_followed_by_crlf_are_still_found() {
    let h = parse(b"GET / HTTP/1.1\nHost: h\n\n").unwrap();
    assert_eq!(h.version, Version::Http11);
    for (raw, failure) in [
        (
            &b"GET / HTTP/1.10\r\nHost: h\r\n\r\n"[..],
            Failure::BadVersion,
        ),
        (
            b"GET / HTTP/1.1 \r\nHost: h\r\n\r\n",
            Failure::BadRequestLine,
        ),
    ] {
        assert_eq!(refused(raw, 400), failure);
    }
}
