//! OpenSSL trust stores built from a PKI's material: one per purpose for
//! [`Pki::verify`](super::Pki::verify), and one for TLS client authentication.

use std::ffi::c_int;

use foreign_types::ForeignTypeRef;
use openssl::x509::store::{X509Store, X509StoreBuilder, X509StoreBuilderRef};
use openssl::x509::verify::{X509VerifyFlags, X509VerifyParam};
use openssl::x509::X509CrlRef;

use super::{CrlCheck, Purpose};
use crate::error::Result;
use crate::x509::{Certificate, Crl};

/// Longest chain accepted below the trust anchor (OpenSSL's default is 100).
pub const MAX_CHAIN_DEPTH: i32 = 8;

extern "C" {
    // Not bound by openssl-sys; part of libcrypto's stable API (x509_vfy.h).
    fn X509_STORE_add_crl(
        store: *mut openssl_sys::X509_STORE,
        crl: *mut openssl_sys::X509_CRL,
    ) -> c_int;
}

/// What every store of one PKI is made of.
pub(crate) struct Material {
    pub(crate) roots: Vec<Certificate>,
    pub(crate) intermediates: Vec<Certificate>,
    pub(crate) crls: Vec<Crl>,
    pub(crate) crl_check: CrlCheck,
}

impl Material {
    /// A store trusting the roots, holding the CRLs, verifying for `purpose`; with
    /// `intermediates`, they are added too (for TLS, where OpenSSL takes no untrusted list:
    /// a chain must still end at a self-signed root, as partial chains are not allowed).
    pub(crate) fn store(&self, purpose: Purpose, intermediates: bool) -> Result<X509Store> {
        let mut b = X509StoreBuilder::new()?;
        for root in &self.roots {
            b.add_cert(root.x509.clone())?;
        }
        if intermediates {
            for cert in &self.intermediates {
                b.add_cert(cert.x509.clone())?;
            }
        }
        for crl in &self.crls {
            add_crl(&mut b, &crl.crl)?;
        }
        match self.crl_check {
            CrlCheck::Off => {}
            CrlCheck::Leaf => b.set_flags(X509VerifyFlags::CRL_CHECK)?,
            CrlCheck::All => {
                b.set_flags(X509VerifyFlags::CRL_CHECK | X509VerifyFlags::CRL_CHECK_ALL)?
            }
        }
        let mut param = X509VerifyParam::new()?;
        param.set_purpose(purpose.openssl())?;
        param.set_depth(MAX_CHAIN_DEPTH);
        b.set_param(&param)?;
        Ok(b.build())
    }
}

fn add_crl(store: &mut X509StoreBuilderRef, crl: &X509CrlRef) -> Result<()> {
    // SAFETY: both pointers come from live owned OpenSSL objects; X509_STORE_add_crl takes
    // its own reference to the CRL and does not keep the pointer we pass beyond that.
    let ok = unsafe { X509_STORE_add_crl(store.as_ptr(), crl.as_ptr()) };
    if ok == 1 {
        Ok(())
    } else {
        Err(openssl::error::ErrorStack::get().into())
    }
}
