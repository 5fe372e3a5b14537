//! Request head encoding: request line, Host, caller fields (validated by the client with
//! `moria_streams::http_grammar::{is_token, is_field_value}`), framing.

use super::Length;

/// Appends `METHOD target HTTP/1.1`, `Host` (unless `fields` has one), `fields` (already
/// validated), the framing line for `length`, and the empty line.
pub(crate) fn encode_request(
    out: &mut Vec<u8>,
    method: &str,
    target: &str,
    host: &str,
    fields: &[(String, String)],
    length: Length,
) {
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !fields.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in fields {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    length.encode(out);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_line_host_fields_and_length() {
        let mut out = Vec::new();
        let fields = [("Accept".to_owned(), "*/*".to_owned())];
        encode_request(
            &mut out,
            "POST",
            "/a?b=1",
            "h:8080",
            &fields,
            Length::Known(5),
        );
        assert_eq!(
            out,
            b"POST /a?b=1 HTTP/1.1\r\nHost: h:8080\r\nAccept: */*\r\nContent-Length: 5\r\n\r\n"
        );
    }

    #[test]
    fn caller_host_wins_and_chunked_is_declared() {
        let mut out = Vec::new();
        let fields = [("host".to_owned(), "other".to_owned())];
        encode_request(&mut out, "PUT", "/", "h", &fields, Length::Chunked);
        assert_eq!(
            out,
            b"PUT / HTTP/1.1\r\nhost: other\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
    }
}
