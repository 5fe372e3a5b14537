//! Distinguished names as a list of (attribute, value) pairs and as one readable line.

use std::net::IpAddr;

use openssl::nid::Nid;
use openssl::x509::extension::SubjectAlternativeName;
use openssl::x509::{X509Name, X509NameRef};

use crate::error::Result;

/// `CN=..., O=...` with OpenSSL's short attribute names; unreadable values show as `?`.
pub(crate) fn one_line(name: &X509NameRef) -> String {
    entries(name)
        .iter()
        .map(|(nid, value)| format!("{}={value}", nid.short_name().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value of the first `nid` attribute (e.g. the common name).
pub(crate) fn first(name: &X509NameRef, nid: Nid) -> Option<String> {
    name.entries_by_nid(nid)
        .next()
        .and_then(|e| e.data().to_string().ok())
}

/// The attributes of `name` in order.
pub(crate) fn entries(name: &X509NameRef) -> Vec<(Nid, String)> {
    name.entries()
        .map(|e| {
            let value = e.data().to_string().unwrap_or_else(|_| "?".into());
            (e.object().nid(), value)
        })
        .collect()
}

/// A name from attributes.
pub(crate) fn build(entries: &[(Nid, String)]) -> Result<X509Name> {
    let mut name = X509Name::builder()?;
    for (nid, value) in entries {
        name.append_entry_by_nid(*nid, value)?;
    }
    Ok(name.build())
}

/// Subject alternative names: each host is an IP address if it parses as one, else a DNS
/// name.
pub(crate) fn alt_names<S: AsRef<str>>(hosts: &[S]) -> SubjectAlternativeName {
    let mut san = SubjectAlternativeName::new();
    for host in hosts {
        let host = host.as_ref();
        if host.parse::<IpAddr>().is_ok() {
            san.ip(host);
        } else {
            san.dns(host);
        }
    }
    san
}
