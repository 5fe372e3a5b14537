//! RFC 7515 appendix examples (A.1 HS256, A.3 ES256) verified with our JWT code, plus signing
//! with the A.3 private key.

use moria_crypto::encoding::from_base64url;
use moria_crypto::jwt::{JwtKey, Validation};
use moria_crypto::Error;
use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use serde_json::json;

const A1_KEY: &str =
    "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow";
const A1_TOKEN: &str = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.\
eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.\
dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const A3_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.\
eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.\
DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";
const A3_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
const A3_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
const A3_D: &str = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI";
/// The examples' `exp` (2011-03-22); checked one second before it.
const A_EXP: u64 = 1_300_819_380;

fn b64(text: &str) -> BigNum {
    BigNum::from_slice(&from_base64url(text).unwrap()).unwrap()
}

/// The A.3 key pair from its JWK coordinates, as (private PEM, public PEM).
fn a3_pems() -> (Vec<u8>, Vec<u8>) {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let public = EcKey::from_public_key_affine_coordinates(&group, &b64(A3_X), &b64(A3_Y)).unwrap();
    // check_key proves d * G is the published (x, y).
    let private = EcKey::from_private_components(&group, &b64(A3_D), public.public_key()).unwrap();
    private.check_key().unwrap();
    (
        private.private_key_to_pem().unwrap(),
        public.public_key_to_pem().unwrap(),
    )
}

#[test]
fn rfc_7515_a1_hs256() {
    let key = JwtKey::hs256(&from_base64url(A1_KEY).unwrap()).unwrap();
    let claims = key
        .verify(A1_TOKEN, &Validation::new().issuer("joe").at(A_EXP - 1))
        .unwrap();
    assert_eq!(claims["iss"], "joe");
    assert_eq!(claims["http://example.com/is_root"], true);
    assert!(matches!(
        key.verify(A1_TOKEN, &Validation::new()),
        Err(Error::TokenExpired { exp: A_EXP, .. })
    ));
    let at = Validation::new().at(A_EXP - 1);
    assert!(matches!(
        key.verify(&tampered(A1_TOKEN), &at),
        Err(Error::TokenSignature)
    ));
    let other = JwtKey::hs256(&[7u8; 64]).unwrap();
    assert!(matches!(
        other.verify(A1_TOKEN, &at),
        Err(Error::TokenSignature)
    ));
}

/// `token` with one character inside its signature changed.
fn tampered(token: &str) -> String {
    let at = token.rfind('.').unwrap() + 5;
    let mut bytes = token.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn rfc_7515_a3_es256() {
    let (private_pem, public_pem) = a3_pems();
    let public = JwtKey::es256_public_pem(&public_pem).unwrap();
    let claims = public
        .verify(A3_TOKEN, &Validation::new().at(A_EXP - 1))
        .unwrap();
    assert_eq!(claims["iss"], "joe");

    assert!(matches!(
        public.verify(&tampered(A3_TOKEN), &Validation::new().at(A_EXP - 1)),
        Err(Error::TokenSignature)
    ));

    // ECDSA signatures are randomized: sign anew with the example's private key, twice. The
    // signed parts are the same, the signatures differ, and both verify.
    let private = JwtKey::es256_private_pem(&private_pem).unwrap();
    let claims = json!({"iss": "joe", "exp": A_EXP});
    let first = private.sign(&claims).unwrap();
    let second = private.sign(&claims).unwrap();
    let (signed, signature) = first.rsplit_once('.').unwrap();
    let (signed_again, signature_again) = second.rsplit_once('.').unwrap();
    assert_eq!(signed, signed_again);
    assert_ne!(
        signature, signature_again,
        "two ECDSA signatures were equal"
    );
    // RFC 7518 §3.4: R and S, 32 bytes each, not a DER structure.
    assert_eq!(from_base64url(signature).unwrap().len(), 64);
    for token in [&first, &second] {
        let verified = public
            .verify(token, &Validation::new().issuer("joe").at(A_EXP - 1))
            .unwrap();
        assert_eq!(serde_json::Value::Object(verified), claims);
    }
}

#[test]
fn hs256_token_is_not_an_es256_token() {
    let (_, public_pem) = a3_pems();
    let public = JwtKey::es256_public_pem(&public_pem).unwrap();
    assert!(matches!(
        public.verify(A1_TOKEN, &Validation::new().at(A_EXP - 1)),
        Err(Error::TokenAlgorithm {
            expected: "ES256",
            ..
        })
    ));
}
