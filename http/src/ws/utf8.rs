//! Incremental UTF-8 validation of a text message as its bytes arrive: a message fails at its
//! first invalid byte (RFC 6455 §8.1), not when it ends.

/// Validates a growing byte buffer from where the last call stopped.
#[derive(Default)]
pub(crate) struct Utf8Check {
    /// Bytes of the buffer known to be valid UTF-8 (a character cut at the end is not yet).
    valid: usize,
}

impl Utf8Check {
    /// Checks `buf[self.valid..]`: `false` at an invalid byte; an incomplete character at the
    /// end is fine until [`finish`](Self::finish).
    pub(crate) fn feed(&mut self, buf: &[u8]) -> bool {
        match std::str::from_utf8(&buf[self.valid..]) {
            Ok(_) => {
                self.valid = buf.len();
                true
            }
            Err(e) => {
                self.valid += e.valid_up_to();
                e.error_len().is_none()
            }
        }
    }

    /// Whether the whole `buf` (the complete message) is valid; resets for the next message.
    pub(crate) fn finish(&mut self, buf: &[u8]) -> bool {
        let ok = self.feed(buf) && self.valid == buf.len();
        self.valid = 0;
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_between_pieces_is_fine_a_bad_byte_fails_at_once() {
        let text = "κόσμε".as_bytes();
        let mut c = Utf8Check::default();
        assert!(c.feed(&text[..1]));
        assert!(c.feed(&text[..4]));
        assert!(c.finish(text));
        assert!(!c.finish(&text[..1]));
        assert!(!c.feed(&[0xce, 0xba, 0xff]));
        let mut c = Utf8Check::default();
        assert!(!c.feed(&[0xf5])); // can never start a character
    }
}
