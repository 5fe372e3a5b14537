//! HMAC by name (`hmac-sha256`, ...), RFC 2104, on OpenSSL's `HMAC_CTX`: the keyed state is
//! set up once and each message restarts from it (what `openssl speed -hmac` measures); the
//! generic digest-sign API would rebuild a key context per message, several µs each.

use std::ffi::c_int;
use std::fmt;
use std::io;
use std::ptr::{self, NonNull};

use openssl::error::ErrorStack;
use openssl_sys as ffi;

use crate::error::Result;
use crate::hash::{Digest, HashAlg, MAX_DIGEST_LEN};
use crate::lookup::lookup;

/// Every MAC name of the catalogue.
pub(crate) const HMAC_NAMES: [&str; 7] = [
    "hmac-md5",
    "hmac-sha1",
    "hmac-sha256",
    "hmac-sha384",
    "hmac-sha512",
    "hmac-sha3-256",
    "hmac-sha3-512",
];

/// The hash under an `hmac-<hash>` name.
pub(crate) fn hmac_hash(name: &str) -> Result<HashAlg> {
    let table: Vec<(&'static str, HashAlg)> = HMAC_NAMES.into_iter().zip(HashAlg::ALL).collect();
    lookup("mac", &table, name)
}

/// Fails with OpenSSL's error queue unless `rc` is 1.
fn check(rc: c_int) -> Result<()> {
    if rc == 1 {
        Ok(())
    } else {
        Err(ErrorStack::get().into())
    }
}

/// An owned `HMAC_CTX`.
struct HmacCtx(NonNull<ffi::HMAC_CTX>);

// SAFETY: an HMAC_CTX is heap state owned by this value alone; OpenSSL ties it to no thread.
unsafe impl Send for HmacCtx {}

impl Drop for HmacCtx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from HMAC_CTX_new and is freed exactly once, here.
        unsafe { ffi::HMAC_CTX_free(self.0.as_ptr()) }
    }
}

/// An incremental HMAC with a fixed key; reusable after each [`Hmac::finish`].
pub struct Hmac {
    alg: HashAlg,
    ctx: HmacCtx,
}

impl Hmac {
    /// An HMAC called `name` (`hmac-sha256`) keyed with `key` (any length).
    pub fn new(name: &str, key: &[u8]) -> Result<Self> {
        Self::with_alg(hmac_hash(name)?, key)
    }

    /// An HMAC over `alg` keyed with `key`.
    pub fn with_alg(alg: HashAlg, key: &[u8]) -> Result<Self> {
        let key_len =
            c_int::try_from(key.len()).map_err(|_| crate::error::Error::InvalidLength {
                what: "HMAC key",
                expected: format!("at most {}", c_int::MAX),
                got: key.len(),
            })?;
        ffi::init();
        // SAFETY: HMAC_CTX_new has no preconditions; a null result is handled below.
        let raw = unsafe { ffi::HMAC_CTX_new() };
        let ctx = HmacCtx(NonNull::new(raw).ok_or_else(ErrorStack::get)?);
        // SAFETY: ctx is a live HMAC_CTX; key points to key_len readable bytes (never null,
        // so OpenSSL takes it as a key, even when empty); md is a valid digest for the
        // process's lifetime.
        check(unsafe {
            ffi::HMAC_Init_ex(
                ctx.0.as_ptr(),
                key.as_ptr().cast(),
                key_len,
                alg.message_digest().as_ptr(),
                ptr::null_mut(),
            )
        })?;
        Ok(Hmac { alg, ctx })
    }

    /// The underlying hash.
    pub fn alg(&self) -> HashAlg {
        self.alg
    }

    /// Feeds `data` into the MAC.
    pub fn update(&mut self, data: &[u8]) -> Result<()> {
        // SAFETY: ctx is a live, initialised HMAC_CTX; data is readable for its length.
        check(unsafe { ffi::HMAC_Update(self.ctx.0.as_ptr(), data.as_ptr(), data.len()) })
    }

    /// Returns the MAC of everything fed so far and starts over with the same key.
    pub fn finish(&mut self) -> Result<Digest> {
        let mut bytes = [0u8; MAX_DIGEST_LEN];
        let mut len = 0;
        // SAFETY: ctx is live; bytes holds MAX_DIGEST_LEN bytes, the largest digest of any
        // catalogue hash, which is all HMAC_Final writes.
        check(unsafe { ffi::HMAC_Final(self.ctx.0.as_ptr(), bytes.as_mut_ptr(), &mut len) })?;
        // SAFETY: null key and digest restart the live ctx with the key and digest it has.
        check(unsafe {
            ffi::HMAC_Init_ex(
                self.ctx.0.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(Digest::new(bytes, len as usize))
    }

    /// Finishes and compares with `tag` in constant time.
    pub fn verify(&mut self, tag: &[u8]) -> Result<bool> {
        Ok(crate::ct::constant_time_eq(&self.finish()?, tag))
    }
}

impl io::Write for Hmac {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Debug for Hmac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hmac")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

/// The MAC of `data` under the HMAC called `name` keyed with `key`.
pub fn hmac(name: &str, key: &[u8], data: &[u8]) -> Result<Digest> {
    let mut mac = Hmac::new(name, key)?;
    mac.update(data)?;
    mac.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn names_map_to_hashes() {
        assert_eq!(hmac_hash("hmac-sha3-256").unwrap(), HashAlg::Sha3_256);
        assert!(matches!(
            hmac_hash("sha256"),
            Err(Error::UnknownAlgorithm { kind: "mac", .. })
        ));
    }

    #[test]
    fn empty_key_and_message() {
        let mac = hmac("hmac-sha256", b"", b"").unwrap();
        assert_eq!(
            mac.to_hex(),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        );
    }

    #[test]
    fn finish_restarts_with_same_key() {
        let mut mac = Hmac::new("hmac-sha256", b"key").unwrap();
        mac.update(b"data").unwrap();
        let first = mac.finish().unwrap();
        mac.update(b"data").unwrap();
        assert!(mac.verify(&first).unwrap());
        mac.update(b"other").unwrap();
        assert!(!mac.verify(&first).unwrap());
    }
}
