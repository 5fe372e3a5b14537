//! Constant-time comparison for secrets (MACs, tokens, password hashes).

/// True when `a` and `b` are equal; the time taken depends only on the lengths, never on
/// where the contents differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // Lengths are public (tags and digests have fixed sizes); `memcmp::eq` panics on a mismatch.
    a.len() == b.len() && openssl::memcmp::eq(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_contents_and_lengths() {
        assert!(constant_time_eq(b"", b""));
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret!"));
    }
}
