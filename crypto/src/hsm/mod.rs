//! Keys in a hardware security module through PKCS#11 (the `cryptoki` crate): [`Hsm`] opens
//! a token by module path, slot and PIN, lists and generates keys, lists and stores
//! certificates; [`HsmKey`] signs and verifies on the token (ECDSA P-256/P-384, RSA
//! PKCS#1 v1.5 and PSS) and is a [`Signer`](crate::keys::Signer), so it signs JWTs
//! ([`SignerKey`](crate::jwt::SignerKey)) and CSRs
//! ([`Csr::new_with_signer`](crate::x509::Csr::new_with_signer)).
//!
//! Every token call runs on the runtime's offload pool (a token may answer slowly; a fiber's
//! worker must not wait for it), one at a time per [`Hsm`] (one PKCS#11 session).
//!
//! ```no_run
//! use std::path::Path;
//! use moria_crypto::hsm::{Hsm, TokenSlot};
//! use moria_crypto::keys::{KeyKind, SignAlg, Signer};
//!
//! let hsm = Hsm::open(
//!     Path::new("/usr/lib/softhsm/libsofthsm2.so"),
//!     &TokenSlot::Label("moria".into()),
//!     "1234",
//! )?;
//! let key = hsm.generate("api-signing", KeyKind::EcdsaP256)?;
//! let signature = key.sign(SignAlg::Es256, b"payload")?;
//! key.public_key()?.verify(SignAlg::Es256, b"payload", &signature)?;
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod key;
mod public;

pub use key::HsmKey;

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::error::RvError;
use cryptoki::mechanism::Mechanism;
use cryptoki::object::{Attribute, AttributeType, CertificateType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::types::AuthPin;

use crate::error::{Error, Result};
use crate::keys::KeyKind;
use crate::random::random_bytes;
use crate::x509::Certificate;

/// Public exponent of generated RSA keys (65537).
const RSA_PUBLIC_EXPONENT: [u8; 3] = [0x01, 0x00, 0x01];

/// Which token of a module to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSlot {
    /// The slot with this PKCS#11 slot id.
    Id(u64),
    /// The slot whose token has this label.
    Label(String),
}

struct Inner {
    session: Mutex<Session>,
    _module: Pkcs11,
}

/// A logged-in session on one token. Cheap to clone; clones share the session.
#[derive(Clone)]
pub struct Hsm {
    inner: Arc<Inner>,
    slot: u64,
}

impl Hsm {
    /// Loads the PKCS#11 `module`, opens the token in `slot` and logs in as user with `pin`.
    pub fn open(module: &Path, slot: &TokenSlot, pin: &str) -> Result<Self> {
        let ctx = Pkcs11::new(module)
            .map_err(|e| Error::Hsm(format!("cannot load the module {}: {e}", module.display())))?;
        match ctx.initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK)) {
            Ok(())
            | Err(cryptoki::error::Error::Pkcs11(RvError::CryptokiAlreadyInitialized, _)) => {}
            Err(e) => return Err(hsm_error(e)),
        }
        let mut chosen = None;
        for candidate in ctx.get_slots_with_token().map_err(hsm_error)? {
            let matches = match slot {
                TokenSlot::Id(id) => candidate.id() == *id,
                TokenSlot::Label(label) => {
                    ctx.get_token_info(candidate)
                        .map_err(hsm_error)?
                        .label()
                        .trim_end()
                        == label
                }
            };
            if matches {
                chosen = Some(candidate);
                break;
            }
        }
        let chosen = chosen.ok_or_else(|| Error::Hsm(format!("no token in slot {slot:?}")))?;
        let session = ctx.open_rw_session(chosen).map_err(hsm_error)?;
        session
            .login(UserType::User, Some(&AuthPin::from(pin)))
            .map_err(hsm_error)?;
        log::debug!("HSM: logged in to slot {}", chosen.id());
        Ok(Hsm {
            inner: Arc::new(Inner {
                session: Mutex::new(session),
                _module: ctx,
            }),
            slot: chosen.id(),
        })
    }

    /// Generates a key pair labelled `label` on the token (EC P-256/P-384 or RSA of 2048 to
    /// 4096 bits); the private key is sensitive and never extractable.
    pub fn generate(&self, label: &str, kind: KeyKind) -> Result<HsmKey> {
        let mut id = [0u8; 8];
        random_bytes(&mut id)?;
        let common = |class: ObjectClass| {
            vec![
                Attribute::Class(class),
                Attribute::Token(true),
                Attribute::Label(label.as_bytes().to_vec()),
                Attribute::Id(id.to_vec()),
            ]
        };
        let mut public = common(ObjectClass::PUBLIC_KEY);
        public.push(Attribute::Verify(true));
        let ec = match (kind, public::ec_params(kind)) {
            (_, Some(params)) => {
                public.push(Attribute::EcParams(params.to_vec()));
                true
            }
            (KeyKind::Rsa(bits), None) => {
                KeyKind::from_name(&format!("rsa-{bits}"))?;
                public.push(Attribute::ModulusBits(u64::from(bits).into()));
                public.push(Attribute::PublicExponent(RSA_PUBLIC_EXPONENT.to_vec()));
                false
            }
            _ => {
                return Err(Error::WrongKey {
                    alg: "PKCS#11 key generation",
                    key: kind.to_string(),
                })
            }
        };
        let mut private = common(ObjectClass::PRIVATE_KEY);
        private.extend([
            Attribute::Private(true),
            Attribute::Sensitive(true),
            Attribute::Extractable(false),
            Attribute::Sign(true),
        ]);
        let (public_handle, private_handle) = self.call(move |session| {
            let mechanism = if ec {
                Mechanism::EccKeyPairGen
            } else {
                Mechanism::RsaPkcsKeyPairGen
            };
            session.generate_key_pair(&mechanism, &public, &private)
        })?;
        self.load(label.to_owned(), private_handle, public_handle)
    }

    /// The key pair labelled `label`.
    pub fn key(&self, label: &str) -> Result<HsmKey> {
        let find = |class: ObjectClass| {
            let template = vec![
                Attribute::Class(class),
                Attribute::Label(label.as_bytes().to_vec()),
            ];
            let found = self.call(move |session| session.find_objects(&template))?;
            found
                .first()
                .copied()
                .ok_or_else(|| Error::Hsm(format!("no {class} labelled {label:?} on the token")))
        };
        let private = find(ObjectClass::PRIVATE_KEY)?;
        let public = find(ObjectClass::PUBLIC_KEY)?;
        self.load(label.to_owned(), private, public)
    }

    /// Every key pair on the token (private keys with a public key of the same label).
    pub fn keys(&self) -> Result<Vec<HsmKey>> {
        let labels = self.call(|session| {
            let handles = session.find_objects(&[Attribute::Class(ObjectClass::PRIVATE_KEY)])?;
            let mut labels = Vec::new();
            for handle in handles {
                for attr in session.get_attributes(handle, &[AttributeType::Label])? {
                    if let Attribute::Label(label) = attr {
                        labels.push(String::from_utf8_lossy(&label).into_owned());
                    }
                }
            }
            Ok(labels)
        })?;
        labels.iter().map(|label| self.key(label)).collect()
    }

    /// Stores `cert` on the token under `label`.
    pub fn store_certificate(&self, label: &str, cert: &Certificate) -> Result<()> {
        let template = vec![
            Attribute::Class(ObjectClass::CERTIFICATE),
            Attribute::CertificateType(CertificateType::X_509),
            Attribute::Token(true),
            Attribute::Label(label.as_bytes().to_vec()),
            Attribute::Subject(cert.x509.subject_name().to_der()?),
            Attribute::Value(cert.to_der()?),
        ];
        self.call(move |session| session.create_object(&template))?;
        Ok(())
    }

    /// Every X.509 certificate on the token, with its label.
    pub fn certificates(&self) -> Result<Vec<(String, Certificate)>> {
        let found = self.call(|session| {
            let handles = session.find_objects(&[Attribute::Class(ObjectClass::CERTIFICATE)])?;
            let mut found = Vec::new();
            for handle in handles {
                let (mut label, mut der) = (String::new(), Vec::new());
                for attr in
                    session.get_attributes(handle, &[AttributeType::Label, AttributeType::Value])?
                {
                    match attr {
                        Attribute::Label(l) => label = String::from_utf8_lossy(&l).into_owned(),
                        Attribute::Value(v) => der = v,
                        _ => {}
                    }
                }
                found.push((label, der));
            }
            Ok(found)
        })?;
        found
            .into_iter()
            .map(|(label, der)| Ok((label, Certificate::from_der(&der)?)))
            .collect()
    }

    fn load(
        &self,
        label: String,
        private: ObjectHandle,
        public_handle: ObjectHandle,
    ) -> Result<HsmKey> {
        let public = self
            .call_raw(move |session| Ok(public::read(session, public_handle)))?
            .map_err(hsm_error)??;
        Ok(HsmKey {
            hsm: self.clone(),
            label,
            private,
            public_handle,
            public,
        })
    }

    /// Runs `f` with the session on the offload pool; a PKCS#11 failure becomes
    /// [`Error::Hsm`].
    fn call<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Session) -> cryptoki::error::Result<T> + Send + 'static,
    {
        self.call_raw(f)?.map_err(hsm_error)
    }

    /// Runs `f` with the session on the offload pool, returning PKCS#11's own result.
    fn call_raw<T, F>(&self, f: F) -> Result<cryptoki::error::Result<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Session) -> cryptoki::error::Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        moria_runtime::blocking(move || {
            let session = inner.session.lock().unwrap_or_else(PoisonError::into_inner);
            f(&session)
        })
        .map_err(|e| Error::Hsm(format!("token call failed: {e}")))
    }
}

impl fmt::Debug for Hsm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hsm")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

/// A PKCS#11 failure as [`Error::Hsm`].
fn hsm_error(e: cryptoki::error::Error) -> Error {
    Error::Hsm(e.to_string())
}
