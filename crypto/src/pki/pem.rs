//! Splitting PEM documents into certificates and CRLs, and reading trust files from disk.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::x509::{Certificate, Crl};

/// File extensions read from a trust directory.
pub const TRUST_FILE_EXTENSIONS: [&str; 4] = ["pem", "crt", "cer", "crl"];

/// The certificates and CRLs of one PEM document, in order; other blocks (keys) are skipped.
pub(crate) fn split(pem: &[u8]) -> Result<(Vec<Certificate>, Vec<Crl>)> {
    let text = std::str::from_utf8(pem).map_err(|_| Error::InvalidInput {
        what: "PEM",
        reason: "not UTF-8 text".into(),
    })?;
    let (mut certs, mut crls) = (Vec::new(), Vec::new());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let block = &rest[start..];
        let label_end = block[11..].find("-----").ok_or_else(truncated)? + 11;
        let label = &block[11..label_end];
        let end_marker = format!("-----END {label}-----");
        let end = block.find(&end_marker).ok_or_else(truncated)? + end_marker.len();
        let one = &block[..end];
        match label {
            "CERTIFICATE" => certs.push(Certificate::from_pem(one.as_bytes())?),
            "X509 CRL" => crls.push(Crl::from_pem(one.as_bytes())?),
            other => log::debug!("PKI: skipping a PEM block labelled {other:?}"),
        }
        rest = &block[end..];
    }
    Ok((certs, crls))
}

fn truncated() -> Error {
    Error::InvalidInput {
        what: "PEM",
        reason: "a block has no matching END line".into(),
    }
}

/// The contents of `path`, or of every trust file of the directory `path` (sorted by name),
/// read on the offload pool so a fiber's worker never stalls on the disk.
pub(crate) fn read_all(path: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let path = path.to_owned();
    Ok(moria_runtime::blocking_io(move || {
        if !path.is_dir() {
            let bytes = std::fs::read(&path)?;
            return Ok(vec![(path, bytes)]);
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&path)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| TRUST_FILE_EXTENSIONS.contains(&e))
            })
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|p| std::fs::read(&p).map(|bytes| (p, bytes)))
            .collect()
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncation_are_errors() {
        assert!(split(b"no pem here").unwrap().0.is_empty());
        assert!(split(b"-----BEGIN CERTIFICATE-----\nAAAA\n").is_err());
        assert!(split(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").is_err());
        assert!(split(&[0xff, 0xfe]).is_err());
        let key = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        let (certs, crls) = split(key).unwrap();
        assert!(certs.is_empty() && crls.is_empty());
    }
}
