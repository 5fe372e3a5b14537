//! [`Message`] (what `read` returns and `send` takes), [`CloseFrame`], and the close codes a
//! peer may send (RFC 6455 §7.4).

/// A WebSocket message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A text message (valid UTF-8).
    Text(String),
    /// A binary message.
    Binary(Vec<u8>),
    /// A ping (already answered with a pong when read).
    Ping(Vec<u8>),
    /// A pong.
    Pong(Vec<u8>),
    /// The peer's close frame (already answered when read); nothing follows it.
    Close(Option<CloseFrame>),
}

/// The code and reason of a close frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseFrame {
    /// The status code (1000: normal closure).
    pub code: u16,
    /// Why, as UTF-8 text (at most 123 bytes).
    pub reason: String,
}

/// Normal closure.
pub const CLOSE_NORMAL: u16 = 1000;
/// The endpoint is going away (server shutdown, idle timeout).
pub const CLOSE_GOING_AWAY: u16 = 1001;

impl From<String> for Message {
    fn from(s: String) -> Message {
        Message::Text(s)
    }
}

impl From<&str> for Message {
    fn from(s: &str) -> Message {
        Message::Text(s.to_string())
    }
}

impl From<Vec<u8>> for Message {
    fn from(b: Vec<u8>) -> Message {
        Message::Binary(b)
    }
}

impl From<&[u8]> for Message {
    fn from(b: &[u8]) -> Message {
        Message::Binary(b.to_vec())
    }
}

/// Whether a peer may send `code` in a close frame (§7.4.1, §7.4.2): 1000–1003, 1007–1011
/// (and 1012–1014, registered since), 3000–4999.
pub(crate) fn is_valid_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// Parses a close frame's payload (`Err` if it breaks §5.5.1).
pub(crate) fn parse_close(payload: &[u8]) -> Result<Option<CloseFrame>, super::Error> {
    match payload {
        [] => Ok(None),
        [_] => Err(super::Error::Protocol("close frame of one byte")),
        [a, b, reason @ ..] => {
            let code = u16::from_be_bytes([*a, *b]);
            if !is_valid_close_code(code) {
                return Err(super::Error::Protocol("invalid close code"));
            }
            let reason = std::str::from_utf8(reason).map_err(|_| super::Error::InvalidUtf8)?;
            Ok(Some(CloseFrame {
                code,
                reason: reason.to_string(),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_payloads_follow_the_rfc() {
        assert_eq!(parse_close(&[]).unwrap(), None);
        assert!(parse_close(&[3]).is_err());
        assert!(parse_close(&[0x03, 0xe7]).is_err()); // 999
        assert!(parse_close(&[0x03, 0xed]).is_err()); // 1005
        assert!(parse_close(&[0x03, 0xe8, 0xff]).is_err());
        let f = parse_close(&[0x03, 0xe8, b'o', b'k']).unwrap().unwrap();
        assert_eq!((f.code, f.reason.as_str()), (1000, "ok"));
        assert!(parse_close(&[0x0b, 0xb8]).unwrap().is_some()); // 3000
    }
}
