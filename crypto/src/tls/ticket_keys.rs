//! [`TicketKeys`]: the keys that seal TLS session tickets, one set shared by every context of
//! an acceptor (and by other acceptors given a clone), so a ticket resumes on any worker and
//! listener; rotated on a clock, with the previous keys kept to open older tickets.
//!
//! OpenSSL's default gives every `SSL_CTX` its own random ticket key, fixed for its life: two
//! acceptors (two listeners, or two servers behind one name) cannot resume each other's
//! tickets, and a long-running server never changes the key that protects every ticket's
//! session secret. Here the key set is ours (OpenSSL's ticket key callback,
//! `SSL_CTX_set_tlsext_ticket_key_evp_cb`): the current key seals new tickets (AES-256-CBC +
//! HMAC-SHA256, OpenSSL's own ticket format); once it is older than the rotation interval, a
//! new key takes over, and the retired one only opens tickets for `kept × rotation` more,
//! among at most `kept` previous keys. A ticket under a retired key resumes and gets a fresh
//! ticket under the current key; an unknown or expired key name falls back to a full handshake.

use std::collections::VecDeque;
use std::ffi::{c_char, c_int, c_uchar, c_void};
use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use foreign_types::ForeignTypeRef;
use openssl::ex_data::Index;
use openssl::ssl::{SslContext, SslContextBuilder, SslRef, SslVersion};
use openssl_sys as ffi;

use super::wipe;
use crate::error::{Error, Result};

/// How long a key seals new tickets unless set otherwise (an hour: the key that protects
/// every resumable session's secret changes often, as Cloudflare and Go's `crypto/tls` do).
pub const DEFAULT_TICKET_ROTATION: Duration = Duration::from_secs(3600);

/// Retired keys kept to open older tickets unless set otherwise: with the default rotation,
/// tickets resume for at least two hours, OpenSSL's session lifetime.
pub const DEFAULT_TICKET_KEYS_KEPT: usize = 2;

/// Most retired keys a set may keep (each ticket with an unknown name is compared to all).
pub const MAX_TICKET_KEYS_KEPT: usize = 16;

/// `EVP_MAX_IV_LENGTH`: the IV buffer OpenSSL hands the callback.
const IV_LEN: usize = 16;

/// The ticket key callback's signature (`SSL_CTX_set_tlsext_ticket_key_evp_cb`, OpenSSL 3.0).
type TicketKeyCallback = unsafe extern "C" fn(
    ssl: *mut ffi::SSL,
    key_name: *mut c_uchar,
    iv: *mut c_uchar,
    cipher: *mut ffi::EVP_CIPHER_CTX,
    mac: *mut ffi::EVP_MAC_CTX,
    enc: c_int,
) -> c_int;

extern "C" {
    fn SSL_CTX_set_tlsext_ticket_key_evp_cb(
        ctx: *mut ffi::SSL_CTX,
        cb: Option<TicketKeyCallback>,
    ) -> c_int;
    fn OSSL_PARAM_construct_utf8_string(
        key: *const c_char,
        buf: *mut c_char,
        bsize: usize,
    ) -> ffi::OSSL_PARAM;
}

/// One ticket key: its public name (sent in every ticket) and its two secrets.
struct TicketKey {
    name: [u8; 16],
    aes: [u8; 32],
    hmac: [u8; 32],
    /// When it stopped sealing new tickets (`None`: it is the current key).
    retired: Option<Instant>,
}

impl TicketKey {
    /// A fresh key from OpenSSL's `RAND_bytes` (long-term keys come from there, see `rng`).
    fn generate() -> Result<TicketKey> {
        let mut key = TicketKey {
            name: [0; 16],
            aes: [0; 32],
            hmac: [0; 32],
            retired: None,
        };
        crate::random_bytes(&mut key.name)?;
        crate::random_bytes(&mut key.aes)?;
        crate::random_bytes(&mut key.hmac)?;
        Ok(key)
    }
}

impl Drop for TicketKey {
    fn drop(&mut self) {
        wipe(&mut self.aes);
        wipe(&mut self.hmac);
    }
}

/// The current key and the retired ones, newest first.
struct Ring {
    current: TicketKey,
    current_since: Instant,
    retired: VecDeque<TicketKey>,
}

struct Inner {
    ring: RwLock<Ring>,
    rotation: Duration,
    kept: usize,
}

/// The keys sealing an acceptor's session tickets: cheap to clone, and every clone is the same
/// set (give one to several acceptors so their tickets resume on each other).
#[derive(Clone)]
pub struct TicketKeys {
    inner: Arc<Inner>,
}

impl TicketKeys {
    /// A fresh set rotated every [`DEFAULT_TICKET_ROTATION`], keeping
    /// [`DEFAULT_TICKET_KEYS_KEPT`] retired keys.
    pub fn new() -> Result<TicketKeys> {
        TicketKeys::with_rotation(DEFAULT_TICKET_ROTATION, DEFAULT_TICKET_KEYS_KEPT)
    }

    /// A fresh set whose current key seals tickets for `rotation`, then opens them for
    /// `kept × rotation` more as one of at most `kept` retired keys (`kept` 0: a ticket stops
    /// resuming at the next rotation). `rotation` must be positive, `kept` at most
    /// [`MAX_TICKET_KEYS_KEPT`].
    pub fn with_rotation(rotation: Duration, kept: usize) -> Result<TicketKeys> {
        if rotation.is_zero() || kept > MAX_TICKET_KEYS_KEPT {
            return Err(Error::InvalidInput {
                what: "ticket key rotation",
                reason: format!(
                    "rotation must be positive and kept keys at most {MAX_TICKET_KEYS_KEPT} \
                     (got {rotation:?}, {kept})"
                ),
            });
        }
        let ring = Ring {
            current: TicketKey::generate()?,
            current_since: Instant::now(),
            retired: VecDeque::with_capacity(kept + 1),
        };
        Ok(TicketKeys {
            inner: Arc::new(Inner {
                ring: RwLock::new(ring),
                rotation,
                kept,
            }),
        })
    }

    /// Retires the current key now and seals new tickets under a fresh one (also done on the
    /// clock, when the current key is older than the rotation interval).
    pub fn rotate(&self) -> Result<()> {
        let fresh = TicketKey::generate()?;
        let mut ring = self
            .inner
            .ring
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        self.retire(&mut ring, fresh);
        Ok(())
    }

    /// How long a key seals new tickets.
    pub fn rotation(&self) -> Duration {
        self.inner.rotation
    }

    /// How many retired keys are kept to open older tickets.
    pub fn kept(&self) -> usize {
        self.inner.kept
    }

    /// Whether `other` is the same set (a clone of this one).
    pub fn same_set(&self, other: &TicketKeys) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn retire(&self, ring: &mut Ring, fresh: TicketKey) {
        let now = Instant::now();
        let mut old = std::mem::replace(&mut ring.current, fresh);
        old.retired = Some(now);
        ring.current_since = now;
        ring.retired.push_front(old);
        ring.retired.truncate(self.inner.kept);
    }

    fn read(&self) -> RwLockReadGuard<'_, Ring> {
        self.inner
            .ring
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The ring with a current key younger than the rotation interval (rotating if needed).
    fn sealing(&self) -> Result<RwLockReadGuard<'_, Ring>> {
        {
            let ring = self.read();
            if ring.current_since.elapsed() < self.inner.rotation {
                return Ok(ring);
            }
        }
        let fresh = TicketKey::generate()?;
        {
            let mut ring = self
                .inner
                .ring
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            // Another thread may have rotated in between.
            if ring.current_since.elapsed() >= self.inner.rotation {
                self.retire(&mut ring, fresh);
            }
        }
        Ok(self.read())
    }

    /// Whether a key retired at `retired` still opens tickets.
    fn opens(&self, retired: Instant) -> bool {
        retired.elapsed() < self.inner.rotation.saturating_mul(self.inner.kept as u32)
    }

    /// Installs this set as the ticket keys of the server context `builder`.
    pub(crate) fn install(&self, builder: &mut SslContextBuilder) -> Result<()> {
        builder.set_ex_data(index()?, self.clone());
        // SAFETY: the context is live and the callback matches OpenSSL's prototype; the keys
        // it reads live in the context's ex-data, freed with the context.
        let ok =
            unsafe { SSL_CTX_set_tlsext_ticket_key_evp_cb(builder.as_ptr(), Some(on_ticket_key)) };
        if ok != 1 {
            return Err(openssl::error::ErrorStack::get().into());
        }
        Ok(())
    }
}

impl fmt::Debug for TicketKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let retired = self.read().retired.len();
        f.debug_struct("TicketKeys")
            .field("rotation", &self.inner.rotation)
            .field("kept", &self.inner.kept)
            .field("retired", &retired)
            .finish_non_exhaustive()
    }
}

/// The context ex-data slot holding the keys.
fn index() -> Result<Index<SslContext, TicketKeys>> {
    static INDEX: OnceLock<Index<SslContext, TicketKeys>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = SslContext::new_ex_index()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// Callback result: the ticket is sealed, or opened under the current key (TLS 1.2).
const DONE: c_int = 1;
/// Callback result: opened, and OpenSSL issues a new ticket (a retired key, or TLS 1.3).
const OPENED_RENEW: c_int = 2;
/// Callback result: no key opens this ticket; a full handshake follows.
const UNKNOWN_KEY: c_int = 0;
/// Callback result: failure (the handshake fails).
const FAILED: c_int = -1;

/// OpenSSL's ticket key callback: sets up `cipher` and `mac` to seal a new ticket (`enc` 1:
/// fills `key_name` and `iv`) or to open one (`enc` 0: `key_name` and `iv` come from it).
unsafe extern "C" fn on_ticket_key(
    ssl: *mut ffi::SSL,
    key_name: *mut c_uchar,
    iv: *mut c_uchar,
    cipher: *mut ffi::EVP_CIPHER_CTX,
    mac: *mut ffi::EVP_MAC_CTX,
    enc: c_int,
) -> c_int {
    // SAFETY: OpenSSL passes its live SSL; the keys were installed on its context (the SNI
    // contexts of an acceptor get the same set as its default one).
    let ssl = unsafe { SslRef::from_ptr(ssl) };
    let Some(keys) = index().ok().and_then(|i| ssl.ssl_context().ex_data(i)) else {
        return FAILED;
    };
    // SAFETY: OpenSSL hands 16 bytes of key name and EVP_MAX_IV_LENGTH (16) bytes of IV.
    let (name, iv) = unsafe {
        (
            std::slice::from_raw_parts_mut(key_name, 16),
            std::slice::from_raw_parts_mut(iv, IV_LEN),
        )
    };
    if enc == 1 {
        let Ok(ring) = keys.sealing() else {
            return FAILED;
        };
        if crate::rng::fill(iv).is_err() {
            return FAILED;
        }
        name.copy_from_slice(&ring.current.name);
        // SAFETY: live contexts from OpenSSL; keys and IV of the sizes AES-256-CBC takes.
        return match unsafe { init(&ring.current, iv, cipher, mac, true) } {
            true => DONE,
            false => FAILED,
        };
    }
    let ring = keys.read();
    let found = std::iter::once(&ring.current)
        .chain(ring.retired.iter())
        .find(|k| k.name[..] == name[..]);
    let Some(key) = found else {
        return UNKNOWN_KEY;
    };
    if key.retired.is_some_and(|at| !keys.opens(at)) {
        return UNKNOWN_KEY;
    }
    // SAFETY: as above.
    if !unsafe { init(key, iv, cipher, mac, false) } {
        return FAILED;
    }
    // TLS 1.3 clients use a ticket once (RFC 8446, C.4), so a resumed session always gets a
    // new one, as OpenSSL's own ticket keys do; TLS 1.2 renews only a retired key's ticket.
    match key.retired.is_some() || ssl.version2() == Some(SslVersion::TLS1_3) {
        true => OPENED_RENEW,
        false => DONE,
    }
}

/// Keys `cipher` (AES-256-CBC, to seal or to open) and `mac` (HMAC-SHA256) with `key`.
///
/// # Safety
/// `cipher` and `mac` must be live contexts; `iv` holds 16 bytes.
unsafe fn init(
    key: &TicketKey,
    iv: &[u8],
    cipher: *mut ffi::EVP_CIPHER_CTX,
    mac: *mut ffi::EVP_MAC_CTX,
    seal: bool,
) -> bool {
    let digest = c"SHA256";
    // SAFETY: the parameters point at the key and the digest name, both alive until
    // EVP_MAC_CTX_set_params returns (OpenSSL copies them); the end marker closes the list.
    let params = unsafe {
        [
            ffi::OSSL_PARAM_construct_octet_string(
                c"key".as_ptr(),
                key.hmac.as_ptr() as *mut c_void,
                key.hmac.len(),
            ),
            OSSL_PARAM_construct_utf8_string(c"digest".as_ptr(), digest.as_ptr() as *mut c_char, 0),
            ffi::OSSL_PARAM_construct_end(),
        ]
    };
    // SAFETY: live contexts (the caller's promise), a 32-byte key and a 16-byte IV.
    unsafe {
        if ffi::EVP_MAC_CTX_set_params(mac, params.as_ptr()) != 1 {
            return false;
        }
        let aes = ffi::EVP_aes_256_cbc();
        let (k, v, engine) = (key.aes.as_ptr(), iv.as_ptr(), std::ptr::null_mut());
        match seal {
            true => ffi::EVP_EncryptInit_ex(cipher, aes, engine, k, v) == 1,
            false => ffi::EVP_DecryptInit_ex(cipher, aes, engine, k, v) == 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_keeps_at_most_kept_keys() {
        let keys = TicketKeys::with_rotation(Duration::from_secs(60), 2).unwrap();
        let first = keys.read().current.name;
        for _ in 0..5 {
            keys.rotate().unwrap();
        }
        let ring = keys.read();
        assert_eq!(ring.retired.len(), 2);
        assert_ne!(ring.current.name, first);
        assert!(ring.retired.iter().all(|k| k.retired.is_some()));
        assert!(ring.retired.iter().all(|k| k.name != first));
    }

    #[test]
    fn a_stale_current_key_is_replaced_when_sealing() {
        let keys = TicketKeys::with_rotation(Duration::from_nanos(1), 1).unwrap();
        let first = keys.read().current.name;
        let ring = keys.sealing().unwrap();
        assert_ne!(ring.current.name, first);
        assert_eq!(ring.retired[0].name, first);
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(TicketKeys::with_rotation(Duration::ZERO, 1).is_err());
        assert!(
            TicketKeys::with_rotation(Duration::from_secs(1), MAX_TICKET_KEYS_KEPT + 1).is_err()
        );
        let keys = TicketKeys::new().unwrap();
        assert!(keys.same_set(&keys.clone()));
        assert!(!keys.same_set(&TicketKeys::new().unwrap()));
    }
}
