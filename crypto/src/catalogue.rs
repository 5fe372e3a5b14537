//! The catalogue's listing: [`algorithms`], every name it knows, by kind.

/// Every algorithm name the catalogue knows, grouped by kind.
pub fn algorithms() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "hash",
            crate::hash::HashAlg::ALL.iter().map(|a| a.name()).collect(),
        ),
        ("mac", crate::hmac::HMAC_NAMES.to_vec()),
        (
            "aead",
            crate::aead::AeadAlg::ALL.iter().map(|a| a.name()).collect(),
        ),
        (
            "cipher",
            crate::ctr::CtrAlg::ALL.iter().map(|a| a.name()).collect(),
        ),
        (
            "kdf",
            crate::kdf::PBKDF2
                .iter()
                .chain(&crate::kdf::HKDF)
                .map(|&(name, _)| name)
                .collect(),
        ),
        ("key", crate::keys::KeyKind::names()),
        (
            "signature",
            crate::keys::SignAlg::ALL.iter().map(|a| a.name()).collect(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_resolves() {
        let key = [0u8; 32];
        let mut out = [0u8; 16];
        for (kind, names) in algorithms() {
            assert!(!names.is_empty(), "{kind}");
            for name in names {
                let resolved = match kind {
                    "hash" => crate::hash::hash(name, b"x").map(drop),
                    "mac" => crate::hmac::hmac(name, b"k", b"x").map(drop),
                    "aead" => crate::aead::AeadAlg::from_name(name).map(drop),
                    "cipher" => crate::ctr::CtrAlg::from_name(name).map(drop),
                    "key" => crate::keys::KeyKind::from_name(name).map(drop),
                    "signature" => crate::keys::SignAlg::from_name(name).map(drop),
                    _ if name.starts_with("pbkdf2") => {
                        crate::kdf::pbkdf2(name, &key, b"salt", 1, &mut out)
                    }
                    _ => crate::kdf::hkdf(name, &key, b"", b"", &mut out),
                };
                assert!(resolved.is_ok(), "{kind} {name}: {resolved:?}");
            }
        }
    }
}
