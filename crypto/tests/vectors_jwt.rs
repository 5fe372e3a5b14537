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
}

#[test]
fn rfc_7515_a3_es256() {
    let (private_pem, public_pem) = a3_pems();
    let public = JwtKey::es256_public_pem(&public_pem).unwrap();
    let claims = public
        .verify(A3_TOKEN, &Validation::new().at(A_EXP - 1))
        .unwrap();
    assert_eq!(claims["iss"], "joe");

    // ECDSA signatures are randomized: sign anew with the example's private key.
    let private = JwtKey::es256_private_pem(&private_pem).unwrap();
    let token = private.sign(&json!({"iss": "joe", "exp": A_EXP})).unwrap();
    assert_ne!(token, A3_TOKEN);
    public
        .verify(&token, &Validation::new().issuer("joe").at(A_EXP - 1))
        .unwrap();
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
