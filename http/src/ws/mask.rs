//! Masking (RFC 6455 §5.3): XOR with a 4-byte key, resumable at any offset into the payload.

/// XORs `buf` with `key`, as the payload bytes from `offset` on (so a payload can be unmasked
/// in pieces as it arrives).
pub(crate) fn apply(buf: &mut [u8], key: [u8; 4], offset: usize) {
    let mut k = [0u8; 4];
    for (i, b) in k.iter_mut().enumerate() {
        *b = key[(offset + i) % 4];
    }
    let word = u32::from_ne_bytes(k);
    let mut chunks = buf.chunks_exact_mut(4);
    for c in &mut chunks {
        let v = u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) ^ word;
        c.copy_from_slice(&v.to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= k[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_in_pieces_equals_masking_at_once() {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let data: Vec<u8> = (0..=255u8).cycle().take(1031).collect();
        let mut whole = data.clone();
        apply(&mut whole, key, 0);
        for (i, b) in whole.iter().enumerate() {
            assert_eq!(*b, data[i] ^ key[i % 4]);
        }
        let mut pieces = data.clone();
        let mut at = 0;
        for n in [1, 3, 7, 100, 920] {
            apply(&mut pieces[at..at + n], key, at);
            at += n;
        }
        assert_eq!(pieces, whole);
    }
}
