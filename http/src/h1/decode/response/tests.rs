//! Response-head parser unit tests: one per framing rule and violation.

use super::*;
use crate::h1::decode::scan::HeadScan;
use crate::limits::Limits;

fn parse_as(raw: &[u8], head_request: bool) -> Result<ResponseHead, Violation> {
    let bounds = HeadScan::default()
        .scan(raw, &Limits::default())
        .map_err(Violation::from_failure)?
        .expect("complete head");
    parse_response(&raw[..bounds.end], bounds.start, 100, head_request)
}

fn parse(raw: &[u8]) -> Result<ResponseHead, Violation> {
    parse_as(raw, false)
}

fn framing_of(raw: &[u8]) -> Result<BodyFraming, Violation> {
    parse(raw).map(|h| h.framing)
}

#[test]
fn status_line_fields_and_length() {
    let h = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b \r\n\r\n").unwrap();
    assert_eq!(h.status, 200);
    assert_eq!(h.reason, "OK");
    assert_eq!(h.version, Version::Http11);
    assert_eq!(h.framing, BodyFraming::Length(5));
    assert!(h.keep_alive);
    assert_eq!(h.fields[1], ("X-A".to_owned(), b"b".to_vec()));
}

#[test]
fn empty_reason_with_or_without_space() {
    assert_eq!(parse(b"HTTP/1.1 404 \r\n\r\n").unwrap().reason, "");
    assert_eq!(parse(b"HTTP/1.1 404\r\n\r\n").unwrap().status, 404);
}

#[test]
fn malformed_status_lines() {
    for raw in [
        &b"HTTP/1.1 20 OK\r\n\r\n"[..],
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 099 OK\r\n\r\n",
        b"HTTP/1.1  200 OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        b"HTTP/1.1 200 O\x01K\r\n\r\n",
    ] {
        assert_eq!(
            parse(raw).unwrap_err(),
            Violation::BadStatusLine,
            "{:?}",
            String::from_utf8_lossy(raw)
        );
    }
    assert_eq!(
        parse(b"HTTP/2.0 200 OK\r\n\r\n").unwrap_err(),
        Violation::UnsupportedVersion
    );
}

#[test]
fn rule_1_no_body_for_head_1xx_204_304() {
    let with_length = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
    assert_eq!(
        parse_as(with_length, true).unwrap().framing,
        BodyFraming::None
    );
    for status in [
        "100 Continue",
        "103 Early Hints",
        "204 No Content",
        "304 Not Modified",
    ] {
        let raw = format!("HTTP/1.1 {status}\r\nContent-Length: 10\r\n\r\n");
        assert_eq!(
            framing_of(raw.as_bytes()),
            Ok(BodyFraming::None),
            "{status}"
        );
    }
}

#[test]
fn rule_3_length_with_chunked_is_refused() {
    let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
    assert_eq!(framing_of(raw), Err(Violation::LengthWithChunked));
}

#[test]
fn rule_4_chunked_final_once() {
    assert_eq!(
        framing_of(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Ok(BodyFraming::Chunked)
    );
    for te in ["gzip", "chunked, gzip", "chunked, chunked", "gzip, chunked"] {
        let raw = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n");
        assert_eq!(
            framing_of(raw.as_bytes()),
            Err(Violation::UnsupportedTransferCoding),
            "{te}"
        );
    }
}

#[test]
fn rule_5_lengths_must_agree() {
    assert_eq!(
        framing_of(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n"),
        Err(Violation::ConflictingContentLength)
    );
    assert_eq!(
        framing_of(b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\n"),
        Err(Violation::ConflictingContentLength)
    );
    assert_eq!(
        framing_of(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n"),
        Ok(BodyFraming::Length(3))
    );
    for bad in ["-1", "0x10", "", "1 2", "99999999999999999999999"] {
        let raw = format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n");
        assert_eq!(
            framing_of(raw.as_bytes()),
            Err(Violation::BadContentLength),
            "{bad}"
        );
    }
}

#[test]
fn rule_8_until_close_is_not_reusable() {
    let h = parse(b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
    assert_eq!(h.framing, BodyFraming::UntilClose);
    assert!(!h.keep_alive);
}

#[test]
fn connection_close_and_http10_keep_alive() {
    assert!(
        !parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .keep_alive
    );
    assert!(
        !parse(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .keep_alive
    );
    assert!(
        parse(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .keep_alive
    );
}

#[test]
fn switching_protocols_is_never_reused() {
    let h = parse(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n").unwrap();
    assert_eq!(h.framing, BodyFraming::None);
    assert!(!h.keep_alive);
}

#[test]
fn field_grammar_is_the_servers() {
    for raw in [
        &b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nX : x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n",
    ] {
        assert_eq!(
            parse(raw).unwrap_err(),
            Violation::BadHeader,
            "{:?}",
            String::from_utf8_lossy(raw)
        );
    }
}

#[test]
fn too_many_headers() {
    let mut raw = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..101 {
        raw.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    assert_eq!(parse(&raw).unwrap_err(), Violation::TooManyHeaders);
}
