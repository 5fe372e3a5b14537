//! Public keys as PKCS#11 attributes: reading them from a token, and the curve parameters
//! for generating EC keys on one.

use cryptoki::object::{Attribute, AttributeType, ObjectHandle};
use cryptoki::session::Session;
use openssl::bn::{BigNum, BigNumContext};
use openssl::ec::{EcGroup, EcKey, EcPoint};
use openssl::nid::Nid;
use openssl::pkey::PKey;
use openssl::rsa::Rsa;

use super::hsm_error;
use crate::error::{Error, Result};
use crate::keys::{KeyKind, PublicKey};

/// DER of the named-curve OID of P-256 (1.2.840.10045.3.1.7).
const P256_PARAMS: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
/// DER of the named-curve OID of P-384 (1.3.132.0.34).
const P384_PARAMS: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

/// `CKA_EC_PARAMS` for a curve of `kind`, `None` for other key types.
pub(super) fn ec_params(kind: KeyKind) -> Option<&'static [u8]> {
    match kind {
        KeyKind::EcdsaP256 => Some(P256_PARAMS),
        KeyKind::EcdsaP384 => Some(P384_PARAMS),
        _ => None,
    }
}

/// The public key object `handle` (EC P-256/P-384 or RSA) as a [`PublicKey`].
pub(super) fn read(session: &Session, handle: ObjectHandle) -> Result<PublicKey> {
    let attrs = session
        .get_attributes(
            handle,
            &[
                AttributeType::EcParams,
                AttributeType::EcPoint,
                AttributeType::Modulus,
                AttributeType::PublicExponent,
            ],
        )
        .map_err(hsm_error)?;
    let (mut params, mut point, mut n, mut e) = (None, None, None, None);
    for attr in attrs {
        match attr {
            Attribute::EcParams(v) => params = Some(v),
            Attribute::EcPoint(v) => point = Some(v),
            Attribute::Modulus(v) => n = Some(v),
            Attribute::PublicExponent(v) => e = Some(v),
            _ => {}
        }
    }
    let pkey = match (params, point, n, e) {
        (Some(params), Some(point), _, _) => {
            let nid = match &params[..] {
                P256_PARAMS => Nid::X9_62_PRIME256V1,
                P384_PARAMS => Nid::SECP384R1,
                _ => {
                    return Err(Error::MalformedKey(
                        "token key on an unsupported curve".into(),
                    ))
                }
            };
            let group = EcGroup::from_curve_name(nid)?;
            let mut ctx = BigNumContext::new()?;
            let point = EcPoint::from_bytes(&group, unwrap_octet_string(&point), &mut ctx)
                .map_err(|e| Error::MalformedKey(format!("token EC point: {e}")))?;
            PKey::from_ec_key(EcKey::from_public_key(&group, &point)?)?
        }
        (_, _, Some(n), Some(e)) => PKey::from_rsa(Rsa::from_public_components(
            BigNum::from_slice(&n)?,
            BigNum::from_slice(&e)?,
        )?)?,
        _ => {
            return Err(Error::MalformedKey(
                "token key is neither EC nor RSA".into(),
            ))
        }
    };
    PublicKey::from_pkey(pkey)
}

/// `CKA_EC_POINT` is a DER OCTET STRING around the point (PKCS#11 2.40); some modules give
/// the bare point.
fn unwrap_octet_string(value: &[u8]) -> &[u8] {
    match value {
        [0x04, len, rest @ ..] if usize::from(*len) == rest.len() && *len < 0x80 => rest,
        [0x04, 0x81, len, rest @ ..] if usize::from(*len) == rest.len() => rest,
        bare => bare,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ec_point_wrapping() {
        let point = [4u8; 65];
        let mut wrapped = vec![0x04, 65];
        wrapped.extend(point);
        assert_eq!(unwrap_octet_string(&wrapped), &point[..]);
        assert_eq!(unwrap_octet_string(&point), &point[..]);
        let long = [4u8; 97];
        let mut wrapped = vec![0x04, 0x81, 97];
        wrapped.extend(long);
        assert_eq!(unwrap_octet_string(&wrapped), &long[..]);
    }
}
