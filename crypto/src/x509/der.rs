//! Just enough DER to put an externally made signature on a PKCS#10 request: split the
//! outer SEQUENCE into its elements and encode a SEQUENCE and a BIT STRING.

use crate::error::{Error, Result};

/// The elements (whole TLVs) directly inside the DER SEQUENCE `der`.
pub(crate) fn sequence_elements(der: &[u8]) -> Result<Vec<&[u8]>> {
    let (tag, content, rest) = tlv(der)?;
    if tag != 0x30 || !rest.is_empty() {
        return Err(malformed());
    }
    let mut elements = Vec::new();
    let mut inside = content;
    while !inside.is_empty() {
        let (_, _, rest) = tlv(inside)?;
        let whole = inside.len() - rest.len();
        elements.push(&inside[..whole]);
        inside = rest;
    }
    Ok(elements)
}

/// A SEQUENCE of already encoded elements.
pub(crate) fn sequence(elements: &[&[u8]]) -> Vec<u8> {
    let content: Vec<u8> = elements.concat();
    with_header(0x30, &content)
}

/// A BIT STRING holding `bytes` (no unused bits).
pub(crate) fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(bytes.len() + 1);
    content.push(0);
    content.extend_from_slice(bytes);
    with_header(0x03, &content)
}

fn with_header(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// One TLV: its tag, its content and what follows it.
fn tlv(der: &[u8]) -> Result<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first().ok_or_else(malformed)?;
    let (&first, rest) = rest.split_first().ok_or_else(malformed)?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err(malformed());
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| acc << 8 | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return Err(malformed());
    }
    Ok((tag, &rest[..len], &rest[len..]))
}

fn malformed() -> Error {
    Error::InvalidInput {
        what: "DER",
        reason: "truncated or not a SEQUENCE".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_rebuild() {
        let inner = [&[0x02, 0x01, 0x05][..], &[0x04, 0x00][..]];
        let seq = sequence(&inner);
        assert_eq!(sequence_elements(&seq).unwrap(), inner.to_vec());
        let long = bit_string(&[7u8; 300]);
        assert_eq!(&long[..4], &[0x03, 0x82, 0x01, 0x2d]);
        assert!(sequence_elements(&[0x30, 0x05, 0x02]).is_err());
        assert!(sequence_elements(&[0x02, 0x00]).is_err());
    }
}
