//! Signed (HMAC-SHA256) and encrypted (AES-256-GCM) cookie values through moria-crypto, with
//! key rotation: the first key seals, every key is tried to open. The expiry (from `Max-Age`)
//! is sealed inside, so a tampered, foreign or expired cookie reads as absent.
//!
//! Signed: `expiry.base64url(value).base64url(tag)`, the tag over `name=expiry.value`.
//! Encrypted: `base64url(nonce || ciphertext || tag)`, plaintext `expiry (8 bytes) || value`,
//! the name as associated data.

use std::time::{SystemTime, UNIX_EPOCH};

use moria_crypto::encoding::{base64url, from_base64url};
use moria_crypto::{constant_time_eq, hmac, rng};
use moria_crypto::{Aead, NONCE_LEN};

use super::{Cookie, CookieError};
use crate::request::Request;
use crate::response::Response;

/// Shortest key accepted, in bytes.
const MIN_KEY_LEN: usize = 32;
/// The AEAD of encrypted cookies (32-byte keys).
const AEAD: &str = "aes-256-gcm";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The expiry sealed into `cookie` (0: none).
fn expiry(cookie: &Cookie) -> u64 {
    cookie
        .max_age
        .map_or(0, |age| now().saturating_add(age.as_secs()))
}

fn live(expiry: u64) -> bool {
    expiry == 0 || expiry > now()
}

fn check_keys(keys: &[&[u8]]) -> Result<Vec<Vec<u8>>, CookieError> {
    if keys.is_empty() {
        return Err(CookieError("no key"));
    }
    if keys.iter().any(|k| k.len() < MIN_KEY_LEN) {
        return Err(CookieError("keys must be at least 32 bytes"));
    }
    Ok(keys.iter().map(|k| k.to_vec()).collect())
}

/// Cookies whose value is readable by the client but cannot be changed by it.
pub struct SignedCookies {
    keys: Vec<Vec<u8>>,
}

impl SignedCookies {
    /// Signs with `keys[0]`, verifies with any of `keys` (each at least 32 bytes).
    pub fn new(keys: &[&[u8]]) -> Result<SignedCookies, CookieError> {
        Ok(SignedCookies {
            keys: check_keys(keys)?,
        })
    }

    fn tag(key: &[u8], name: &str, payload: &str) -> Option<Vec<u8>> {
        let data = format!("{name}={payload}");
        hmac("hmac-sha256", key, data.as_bytes())
            .ok()
            .map(|d| d.to_vec())
    }

    /// The signed form of `cookie`'s value.
    pub fn seal(&self, cookie: &Cookie) -> Result<Cookie, CookieError> {
        let payload = format!("{}.{}", expiry(cookie), base64url(cookie.value.as_bytes()));
        let tag =
            Self::tag(&self.keys[0], &cookie.name, &payload).ok_or(CookieError("HMAC failed"))?;
        Ok(cookie.with_value(format!("{payload}.{}", base64url(&tag))))
    }

    /// The value of a signed `raw` cookie called `name`, if genuine and not expired.
    pub fn open(&self, name: &str, raw: &str) -> Option<String> {
        let (payload, tag) = raw.rsplit_once('.')?;
        let tag = from_base64url(tag)?;
        let genuine = self
            .keys
            .iter()
            .any(|k| Self::tag(k, name, payload).is_some_and(|t| constant_time_eq(&t, &tag)));
        let (exp, value) = payload.split_once('.')?;
        if !genuine || !live(exp.parse().ok()?) {
            return None;
        }
        String::from_utf8(from_base64url(value)?).ok()
    }

    /// Sends `cookie` with its value signed.
    pub fn set(&self, res: &mut Response, cookie: &Cookie) -> Result<(), CookieError> {
        res.set_cookie(&self.seal(cookie)?)?;
        Ok(())
    }

    /// The verified value of cookie `name` (absent when missing, tampered or expired).
    pub fn get(&self, req: &Request<'_>, name: &str) -> Option<String> {
        self.open(name, req.cookie(name)?)
    }
}

/// Cookies whose value the client can neither read nor change.
pub struct EncryptedCookies {
    keys: Vec<Vec<u8>>,
}

impl EncryptedCookies {
    /// Encrypts with `keys[0]`, decrypts with any of `keys` (32 bytes each, AES-256-GCM).
    pub fn new(keys: &[&[u8]]) -> Result<EncryptedCookies, CookieError> {
        let keys = check_keys(keys)?;
        if keys.iter().any(|k| Aead::new(AEAD, k).is_err()) {
            return Err(CookieError("keys must be 32 bytes"));
        }
        Ok(EncryptedCookies { keys })
    }

    /// The encrypted form of `cookie`'s value.
    pub fn seal(&self, cookie: &Cookie) -> Result<Cookie, CookieError> {
        let mut nonce = [0u8; NONCE_LEN];
        rng::fill(&mut nonce).map_err(|_| CookieError("no randomness"))?;
        let mut plain = expiry(cookie).to_be_bytes().to_vec();
        plain.extend_from_slice(cookie.value.as_bytes());
        let sealed = Aead::new(AEAD, &self.keys[0])
            .and_then(|mut a| a.seal(&nonce, cookie.name.as_bytes(), &plain))
            .map_err(|_| CookieError("encryption failed"))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(cookie.with_value(base64url(&out)))
    }

    /// The value of an encrypted `raw` cookie called `name`, if genuine and not expired.
    pub fn open(&self, name: &str, raw: &str) -> Option<String> {
        let bytes = from_base64url(raw)?;
        let (nonce, sealed) = bytes.split_at_checked(NONCE_LEN)?;
        let plain = self.keys.iter().find_map(|k| {
            Aead::new(AEAD, k)
                .and_then(|mut a| a.open(nonce, name.as_bytes(), sealed))
                .ok()
        })?;
        let (exp, value) = plain.split_at_checked(8)?;
        let exp = u64::from_be_bytes(exp.try_into().ok()?);
        if !live(exp) {
            return None;
        }
        String::from_utf8(value.to_vec()).ok()
    }

    /// Sends `cookie` with its value encrypted.
    pub fn set(&self, res: &mut Response, cookie: &Cookie) -> Result<(), CookieError> {
        res.set_cookie(&self.seal(cookie)?)?;
        Ok(())
    }

    /// The decrypted value of cookie `name` (absent when missing, tampered or expired).
    pub fn get(&self, req: &Request<'_>, name: &str) -> Option<String> {
        self.open(name, req.cookie(name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const K1: &[u8] = &[1; 32];
    const K2: &[u8] = &[2; 32];

    #[test]
    fn signed_values_verify_with_any_key_and_refuse_tampering() {
        let old = SignedCookies::new(&[K1]).unwrap();
        let rotated = SignedCookies::new(&[K2, K1]).unwrap();
        let c = old.seal(&Cookie::new("sid", "ada; admin")).unwrap();
        assert_eq!(
            rotated.open("sid", c.value()).as_deref(),
            Some("ada; admin")
        );
        assert_eq!(rotated.open("other", c.value()), None);
        let forged = c.value().replacen('0', "9", 1);
        assert_eq!(rotated.open("sid", &forged), None);
        assert_eq!(
            SignedCookies::new(&[K2]).unwrap().open("sid", c.value()),
            None
        );
        assert_eq!(rotated.open("sid", "garbage"), None);
    }

    #[test]
    fn encrypted_values_hide_and_expire() {
        let jar = EncryptedCookies::new(&[K2, K1]).unwrap();
        let c = jar.seal(&Cookie::new("s", "secret")).unwrap();
        assert!(!c.value().contains("secret"));
        assert_eq!(jar.open("s", c.value()).as_deref(), Some("secret"));
        assert_eq!(
            EncryptedCookies::new(&[K1]).unwrap().open("s", c.value()),
            None
        );
        let mut gone = Cookie::new("s", "x").max_age(Duration::ZERO);
        gone = jar.seal(&gone).unwrap();
        assert_eq!(jar.open("s", gone.value()), None);
        assert!(EncryptedCookies::new(&[&[0; 16]]).is_err());
    }
}
