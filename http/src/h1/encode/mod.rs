//! Head encoding for both roles: the response head (`response.rs`, the server's) and the
//! request head (`request.rs`, the client's) share the framing line a [`Length`] writes and the
//! rule that only the codec writes it ([`is_framing_field`]). The fields themselves are checked
//! where they are set, with `moria_streams::http_grammar::{is_token, is_field_value}`.

mod request;
mod response;

pub(crate) use request::encode_request;
pub(crate) use response::{has, ConnHeader, HeadEncoder, HeadToSend};

/// How a message body is delimited on the wire, as the head declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Length {
    /// No body by definition (1xx, 204, 304; a request without one): no length header at all.
    Bodyless,
    /// `Content-Length: n`.
    Known(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Delimited by closing the connection (HTTP/1.0 with an unknown length).
    Close,
}

impl Length {
    /// Appends the framing field line this length needs, if any.
    pub(crate) fn encode(self, out: &mut Vec<u8>) {
        match self {
            Length::Bodyless | Length::Close => {}
            Length::Known(n) => {
                out.extend_from_slice(b"Content-Length: ");
                out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Length::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        }
    }
}

/// Whether `name` is Content-Length or Transfer-Encoding: fields the codec writes from a
/// [`Length`], which a caller's own fields may never carry.
pub(crate) fn is_framing_field(name: &str) -> bool {
    name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_length_writes_its_one_framing_line() {
        let line = |l: Length| {
            let mut out = Vec::new();
            l.encode(&mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(line(Length::Known(42)), "Content-Length: 42\r\n");
        assert_eq!(line(Length::Chunked), "Transfer-Encoding: chunked\r\n");
        assert_eq!(line(Length::Bodyless), "");
        assert_eq!(line(Length::Close), "");
        assert!(is_framing_field("Transfer-Encoding"));
        assert!(!is_framing_field("Content-Type"));
    }
}
