//! Key derivation by name: PBKDF2 (`pbkdf2-sha256`, RFC 8018) for passwords and HKDF
//! (`hkdf-sha256`, RFC 5869) for high-entropy secrets.

use openssl::pkey::Id;
use openssl::pkey_ctx::PkeyCtx;

use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::lookup::lookup;

/// The PBKDF2 variants of the catalogue.
pub(crate) const PBKDF2: [(&str, HashAlg); 3] = [
    ("pbkdf2-sha1", HashAlg::Sha1),
    ("pbkdf2-sha256", HashAlg::Sha256),
    ("pbkdf2-sha512", HashAlg::Sha512),
];

/// The HKDF variants of the catalogue.
pub(crate) const HKDF: [(&str, HashAlg); 3] = [
    ("hkdf-sha1", HashAlg::Sha1),
    ("hkdf-sha256", HashAlg::Sha256),
    ("hkdf-sha512", HashAlg::Sha512),
];

/// Fills `out` with PBKDF2-HMAC of `password` and `salt` over `iterations` rounds, using the
/// variant called `name` (`pbkdf2-sha256`).
pub fn pbkdf2(
    name: &str,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
) -> Result<()> {
    let hash = lookup("kdf", &PBKDF2, name)?;
    if iterations == 0 {
        return Err(Error::InvalidInput {
            what: "iteration count",
            reason: "must be at least 1".into(),
        });
    }
    let rounds = usize::try_from(iterations).map_err(|_| Error::InvalidInput {
        what: "iteration count",
        reason: "too large for this platform".into(),
    })?;
    openssl::pkcs5::pbkdf2_hmac(password, salt, rounds, hash.message_digest(), out)?;
    Ok(())
}

/// Fills `out` with HKDF (extract then expand) of `ikm` with `salt` and `info`, using the
/// variant called `name` (`hkdf-sha256`). `out` may be at most 255 digests long.
pub fn hkdf(name: &str, ikm: &[u8], salt: &[u8], info: &[u8], out: &mut [u8]) -> Result<()> {
    let hash = lookup("kdf", &HKDF, name)?;
    let max = 255 * hash.output_len();
    if out.is_empty() || out.len() > max {
        return Err(Error::InvalidLength {
            what: "HKDF output",
            expected: format!("1 to {max}"),
            got: out.len(),
        });
    }
    let mut ctx = PkeyCtx::new_id(Id::HKDF)?;
    ctx.derive_init()?;
    ctx.set_hkdf_md(hash.md())?;
    ctx.set_hkdf_key(ikm)?;
    if !salt.is_empty() {
        ctx.set_hkdf_salt(salt)?;
    }
    ctx.add_hkdf_info(info)?;
    ctx.derive(Some(out))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_do_not_mix() {
        let mut out = [0u8; 16];
        match pbkdf2("hkdf-sha256", b"p", b"s", 1, &mut out) {
            Err(Error::UnknownAlgorithm { valid, .. }) => assert!(valid.contains(&"pbkdf2-sha256")),
            other => panic!("expected UnknownAlgorithm, got {other:?}"),
        }
        assert!(matches!(
            hkdf("pbkdf2-sha256", b"k", b"", b"", &mut out),
            Err(Error::UnknownAlgorithm { .. })
        ));
    }

    #[test]
    fn bad_parameters_error() {
        let mut out = [0u8; 16];
        assert!(matches!(
            pbkdf2("pbkdf2-sha256", b"p", b"s", 0, &mut out),
            Err(Error::InvalidInput { .. })
        ));
        let mut huge = vec![0u8; 255 * 32 + 1];
        assert!(matches!(
            hkdf("hkdf-sha256", b"k", b"", b"", &mut huge),
            Err(Error::InvalidLength { .. })
        ));
    }
}
