//! The opening handshake's pure parts (RFC 6455 §4): the `Sec-WebSocket-Accept` value (SHA-1
//! and base64 from moria-crypto), a client's random key, token lists in `Connection` and
//! `Upgrade`, and subprotocol choice.

use super::error::{Error, Result};

/// The GUID every accept value is computed with (§1.3).
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The only protocol version (§4.1).
pub(crate) const VERSION: &str = "13";

/// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`.
pub(crate) fn accept_key(key: &[u8]) -> Result<String> {
    let mut h = moria_crypto::Hasher::new("sha1").map_err(|e| Error::Handshake(e.to_string()))?;
    h.update(key).map_err(|e| Error::Handshake(e.to_string()))?;
    h.update(GUID)
        .map_err(|e| Error::Handshake(e.to_string()))?;
    let d = h.finish().map_err(|e| Error::Handshake(e.to_string()))?;
    Ok(moria_crypto::encoding::base64(&d))
}

/// A fresh `Sec-WebSocket-Key`: 16 random bytes, base64.
pub(crate) fn client_key() -> Result<String> {
    let mut k = [0u8; 16];
    moria_crypto::rng::fill(&mut k).map_err(|e| Error::Handshake(e.to_string()))?;
    Ok(moria_crypto::encoding::base64(&k))
}

/// Whether a key is base64 of 16 bytes (§4.2.1 item 5).
pub(crate) fn is_valid_key(key: &[u8]) -> bool {
    std::str::from_utf8(key)
        .ok()
        .and_then(|k| moria_crypto::encoding::from_base64(k.trim()))
        .is_some_and(|k| k.len() == 16)
}

/// Whether any comma-separated element of `values` is `token` (case-insensitive).
pub(crate) fn has_token<'a>(values: impl IntoIterator<Item = &'a [u8]>, token: &str) -> bool {
    values.into_iter().any(|v| {
        v.split(|&c| c == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

/// The first protocol the client listed (in `values`) that `ours` has.
pub(crate) fn choose_protocol<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
    ours: &[String],
) -> Option<String> {
    values
        .into_iter()
        .flat_map(|v| v.split(|&c| c == b','))
        .filter_map(|t| std::str::from_utf8(t.trim_ascii()).ok())
        .find(|t| ours.iter().any(|o| o == t))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_example_key_gives_the_rfc_accept_value() {
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ==").unwrap(),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert!(is_valid_key(b"dGhlIHNhbXBsZSBub25jZQ=="));
        assert!(!is_valid_key(b"dGhlIHNhbXBsZQ=="));
        assert!(is_valid_key(client_key().unwrap().as_bytes()));
    }

    #[test]
    fn tokens_and_protocols() {
        assert!(has_token([&b"keep-alive, Upgrade"[..]], "upgrade"));
        assert!(!has_token([&b"keep-alive"[..]], "upgrade"));
        let ours = vec!["chat".to_string(), "v2".to_string()];
        assert_eq!(
            choose_protocol([&b"x, v2"[..], b"chat"], &ours).as_deref(),
            Some("v2")
        );
        assert_eq!(choose_protocol([&b"x"[..]], &ours), None);
    }
}
