//! ECDSA signature forms: DER (X.509, `openssl dgst`) and fixed-size `r || s` (JWS,
//! PKCS#11).

use openssl::bn::BigNum;
use openssl::ecdsa::EcdsaSig;

use crate::error::{Error, Result};

/// The fixed-size `r || s` form of a DER signature, each half `coord_len` bytes.
pub(crate) fn der_to_raw(der: &[u8], coord_len: usize) -> Result<Vec<u8>> {
    let sig = EcdsaSig::from_der(der).map_err(|_| Error::BadSignature)?;
    let len = i32::try_from(coord_len).map_err(|_| Error::BadSignature)?;
    let mut raw = sig.r().to_vec_padded(len)?;
    raw.extend(sig.s().to_vec_padded(len)?);
    Ok(raw)
}

/// The DER form of a fixed-size `r || s` signature; [`Error::BadSignature`] if its length is
/// not twice `coord_len`.
pub(crate) fn raw_to_der(raw: &[u8], coord_len: usize) -> Result<Vec<u8>> {
    if raw.len() != 2 * coord_len {
        return Err(Error::BadSignature);
    }
    let (r, s) = raw.split_at(coord_len);
    let sig = EcdsaSig::from_private_components(BigNum::from_slice(r)?, BigNum::from_slice(s)?)?;
    Ok(sig.to_der()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_convert_both_ways() {
        let mut raw = vec![0u8; 64];
        raw[31] = 5;
        raw[63] = 7;
        let der = raw_to_der(&raw, 32).unwrap();
        assert_eq!(der_to_raw(&der, 32).unwrap(), raw);
        assert!(matches!(
            raw_to_der(&raw[1..], 32),
            Err(Error::BadSignature)
        ));
        assert!(matches!(der_to_raw(b"junk", 32), Err(Error::BadSignature)));
    }
}
