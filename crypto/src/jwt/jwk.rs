//! One JSON Web Key (RFC 7517) as a verifying [`JwtKey`]: `RSA` (`n`, `e`), `EC` (`P-256`,
//! `P-384`: `x`, `y`) and `OKP` (`Ed25519`: `x`, RFC 8037).

use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Public};
use openssl::rsa::Rsa;
use serde_json::{Map, Value};

use super::JwtKey;
use crate::encoding::from_base64url;
use crate::error::{Error, Result};
use crate::keys::{PublicKey, SignAlg};

/// The verifying key described by `jwk`, pinned to its `alg` (or, without one, the only
/// algorithm its key type allows; `RS256` for RSA as OpenID Connect defaults to it).
pub(super) fn parse(jwk: &Map<String, Value>) -> Result<JwtKey> {
    let kty = text(jwk, "kty")?;
    let (pkey, default_alg) = match kty {
        "RSA" => {
            let n = BigNum::from_slice(&bytes(jwk, "n")?)?;
            let e = BigNum::from_slice(&bytes(jwk, "e")?)?;
            let rsa = Rsa::from_public_components(n, e).map_err(|e| bad(&e.to_string()))?;
            (PKey::from_rsa(rsa)?, SignAlg::Rs256)
        }
        "EC" => {
            let (nid, alg) = match text(jwk, "crv")? {
                "P-256" => (Nid::X9_62_PRIME256V1, SignAlg::Es256),
                "P-384" => (Nid::SECP384R1, SignAlg::Es384),
                other => return Err(bad(&format!("unsupported EC curve {other:?}"))),
            };
            let group = EcGroup::from_curve_name(nid)?;
            let x = BigNum::from_slice(&bytes(jwk, "x")?)?;
            let y = BigNum::from_slice(&bytes(jwk, "y")?)?;
            let ec = EcKey::from_public_key_affine_coordinates(&group, &x, &y)
                .map_err(|_| bad("the EC point is not on the curve"))?;
            (PKey::from_ec_key(ec)?, alg)
        }
        "OKP" => match text(jwk, "crv")? {
            "Ed25519" => {
                let raw = PKey::<Public>::public_key_from_raw_bytes(&bytes(jwk, "x")?, Id::ED25519)
                    .map_err(|_| bad("x is not an Ed25519 public key"))?;
                (raw, SignAlg::EdDsa)
            }
            other => return Err(bad(&format!("unsupported OKP curve {other:?}"))),
        },
        other => return Err(bad(&format!("unsupported kty {other:?}"))),
    };
    let alg = match jwk.get("alg").and_then(Value::as_str) {
        Some(name) => SignAlg::from_name(name)?,
        None => default_alg,
    };
    let key = JwtKey::verifying(alg, PublicKey::from_pkey(pkey)?)?;
    Ok(match jwk.get("kid").and_then(Value::as_str) {
        Some(kid) => key.with_kid(kid),
        None => key,
    })
}

fn text<'j>(jwk: &'j Map<String, Value>, name: &str) -> Result<&'j str> {
    jwk.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(&format!("missing {name:?}")))
}

fn bytes(jwk: &Map<String, Value>, name: &str) -> Result<Vec<u8>> {
    from_base64url(text(jwk, name)?).ok_or_else(|| bad(&format!("{name:?} is not base64url")))
}

fn bad(reason: &str) -> Error {
    Error::MalformedKey(format!("JWK: {reason}"))
}
