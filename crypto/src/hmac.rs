//! HMAC by name (`hmac-sha256`, ...), RFC 2104, on OpenSSL's digest-sign API.

use std::fmt;
use std::io;

use openssl::md_ctx::MdCtx;
use openssl::pkey::{PKey, Private};

use crate::catalogue::lookup;
use crate::error::Result;
use crate::hash::{Digest, HashAlg, MAX_DIGEST_LEN};

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

/// An incremental HMAC with a fixed key; reusable after each [`Hmac::finish`].
pub struct Hmac {
    alg: HashAlg,
    key: PKey<Private>,
    ctx: MdCtx,
}

impl Hmac {
    /// An HMAC called `name` (`hmac-sha256`) keyed with `key` (any length).
    pub fn new(name: &str, key: &[u8]) -> Result<Self> {
        Self::with_alg(hmac_hash(name)?, key)
    }

    /// An HMAC over `alg` keyed with `key`.
    pub fn with_alg(alg: HashAlg, key: &[u8]) -> Result<Self> {
        let key = PKey::hmac(key)?;
        let mut ctx = MdCtx::new()?;
        ctx.digest_sign_init(Some(alg.md()), &key)?;
        Ok(Hmac { alg, key, ctx })
    }

    /// The underlying hash.
    pub fn alg(&self) -> HashAlg {
        self.alg
    }

    /// Feeds `data` into the MAC.
    pub fn update(&mut self, data: &[u8]) -> Result<()> {
        self.ctx.digest_sign_update(data)?;
        Ok(())
    }

    /// Returns the MAC of everything fed so far and starts over with the same key.
    pub fn finish(&mut self) -> Result<Digest> {
        let mut bytes = [0u8; MAX_DIGEST_LEN];
        let len = self.ctx.digest_sign_final(Some(&mut bytes))?;
        self.ctx.digest_sign_init(Some(self.alg.md()), &self.key)?;
        Ok(Digest::new(bytes, len))
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
