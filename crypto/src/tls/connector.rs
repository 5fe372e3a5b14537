//! [`TlsConnector`]: the client side, verifying the server against system and extra roots,
//! resuming sessions per host.

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use openssl::ex_data::Index;
use openssl::ssl::{
    Ssl, SslConnector, SslMethod, SslMode, SslSession, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};
use openssl::x509::X509;

use super::identity::Identity;
use super::stream::TlsStream;
use super::timeouts::SocketTimeouts;
use super::{alpn_wire, DEFAULT_HANDSHAKE_TIMEOUT, TLS12_CIPHERS};
use crate::error::{Error, Result};

/// Sessions kept for resumption per connector (one per host); the oldest is dropped beyond it.
pub const MAX_CACHED_SESSIONS: usize = 256;

/// Remembered sessions by host. A std mutex on purpose: `put` runs inside OpenSSL (the
/// new-session callback, during `SSL_read`), where a fiber-parking lock could yield in the
/// middle of an OpenSSL call; the lock is held only for a map operation.
#[derive(Default)]
struct SessionCache {
    by_host: Mutex<HashMap<String, (u64, SslSession)>>,
}

impl SessionCache {
    fn get(&self, host: &str) -> Option<SslSession> {
        let map = self.by_host.lock().unwrap_or_else(|p| p.into_inner());
        map.get(host).map(|(_, s)| s.clone())
    }

    fn put(&self, host: &str, session: SslSession) {
        let mut map = self.by_host.lock().unwrap_or_else(|p| p.into_inner());
        let next = map.values().map(|(n, _)| n + 1).max().unwrap_or(0);
        if map.len() >= MAX_CACHED_SESSIONS && !map.contains_key(host) {
            let oldest = map
                .iter()
                .min_by_key(|(_, (n, _))| *n)
                .map(|(h, _)| h.clone());
            if let Some(oldest) = oldest {
                map.remove(&oldest);
            }
        }
        map.insert(host.to_owned(), (next, session));
    }

    fn forget(&self, host: &str) {
        let mut map = self.by_host.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(host);
    }
}

/// The ex-data slot carrying the host name of a client connection into the session callback.
fn host_index() -> Result<Index<Ssl, String>> {
    static INDEX: OnceLock<Index<Ssl, String>> = OnceLock::new();
    if let Some(index) = INDEX.get() {
        return Ok(*index);
    }
    let index = Ssl::new_ex_index()?;
    Ok(*INDEX.get_or_init(|| index))
}

/// Opens TLS sessions to servers. Cheap to clone and share between fibers.
#[derive(Clone)]
pub struct TlsConnector {
    ctx: SslConnector,
    verify: bool,
    handshake_timeout: Option<Duration>,
    sessions: Arc<SessionCache>,
}

impl TlsConnector {
    /// A connector with default settings: system roots, hostname verification, no ALPN.
    pub fn new() -> Result<Self> {
        Self::builder().build()
    }

    /// A builder with default settings.
    pub fn builder() -> TlsConnectorBuilder {
        TlsConnectorBuilder {
            roots_pem: Vec::new(),
            alpn: Vec::new(),
            verify: true,
            handshake_timeout: Some(DEFAULT_HANDSHAKE_TIMEOUT),
            identity: None,
        }
    }

    /// Runs the client handshake with `host` (used for SNI and certificate verification) on
    /// `stream`. Verification failures are [`Error::CertificateVerification`].
    pub fn connect<S: Read + Write + SocketTimeouts>(
        &self,
        host: &str,
        stream: S,
    ) -> Result<TlsStream<S>> {
        let mut config = self.ctx.configure()?;
        if !self.verify {
            config.set_verify(SslVerifyMode::NONE);
            config.set_verify_hostname(false);
        }
        let mut ssl = config.into_ssl(host)?;
        ssl.set_ex_data(host_index()?, host.to_owned());
        if let Some(session) = self.sessions.get(host) {
            // SAFETY: the session was created by a connection of this connector's context
            // (it comes from this connector's own new-session callback).
            unsafe { ssl.set_session(&session)? };
        }
        ssl.set_connect_state();
        let stream = TlsStream::handshake(ssl, stream, self.handshake_timeout);
        if stream.is_err() {
            self.sessions.forget(host);
        }
        stream
    }
}

impl fmt::Debug for TlsConnector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConnector")
            .field("verify", &self.verify)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`TlsConnector`].
#[derive(Debug)]
pub struct TlsConnectorBuilder {
    roots_pem: Vec<Vec<u8>>,
    alpn: Vec<String>,
    verify: bool,
    handshake_timeout: Option<Duration>,
    identity: Option<Identity>,
}

impl TlsConnectorBuilder {
    /// Presents `identity` (certificate chain and key) when a server asks for a client
    /// certificate. Default: none.
    pub fn identity(mut self, identity: Identity) -> Self {
        self.identity = Some(identity);
        self
    }

    /// Also trusts the certificates in `pem` (one or more) as roots, besides the system's.
    /// Default: system roots only.
    pub fn add_root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.roots_pem.push(pem.to_vec());
        self
    }

    /// ALPN protocols to offer, in order of preference. Default: none.
    pub fn alpn(mut self, protocols: &[&str]) -> Self {
        self.alpn = protocols.iter().map(|p| (*p).to_owned()).collect();
        self
    }

    /// **Insecure**: with `true`, accepts any certificate for any host (testing only; anyone
    /// on the path can read and change the traffic). Default: false.
    pub fn danger_accept_invalid_certs(mut self, accept: bool) -> Self {
        self.verify = !accept;
        self
    }

    /// Time allowed for a whole handshake, `None` for no limit. Default:
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`].
    pub fn handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Builds the connector: TLS 1.2 and 1.3 only, modern AEAD cipher suites.
    pub fn build(self) -> Result<TlsConnector> {
        let mut builder = SslConnector::builder(SslMethod::tls_client())?;
        builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
        builder.set_mode(SslMode::RELEASE_BUFFERS);
        builder.set_cipher_list(TLS12_CIPHERS)?;
        for pem in &self.roots_pem {
            let certs = X509::stack_from_pem(pem).map_err(|e| Error::InvalidInput {
                what: "root certificate PEM",
                reason: e.to_string(),
            })?;
            if certs.is_empty() {
                return Err(Error::InvalidInput {
                    what: "root certificate PEM",
                    reason: "no certificate found".into(),
                });
            }
            for cert in certs {
                builder.cert_store_mut().add_cert(cert)?;
            }
        }
        if let Some(identity) = &self.identity {
            builder.set_certificate(&identity.leaf)?;
            for cert in &identity.chain {
                builder.add_extra_chain_cert(cert.clone())?;
            }
            builder.set_private_key(&identity.key)?;
            builder.check_private_key()?;
        }
        let alpn = alpn_wire(&self.alpn)?;
        if !alpn.is_empty() {
            builder.set_alpn_protos(&alpn)?;
        }
        let sessions = Arc::new(SessionCache::default());
        builder.set_session_cache_mode(SslSessionCacheMode::CLIENT);
        let index = host_index()?;
        let cache = Arc::clone(&sessions);
        builder.set_new_session_callback(move |ssl, session| {
            if let Some(host) = ssl.ex_data(index) {
                cache.put(host, session);
            }
        });
        Ok(TlsConnector {
            ctx: builder.build(),
            verify: self.verify,
            handshake_timeout: self.handshake_timeout,
            sessions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_root_pem_errors() {
        assert!(matches!(
            TlsConnector::builder()
                .add_root_certificate_pem(b"junk")
                .build(),
            Err(Error::InvalidInput { .. })
        ));
    }

    #[test]
    fn default_connector_builds() {
        let connector = TlsConnector::new().unwrap();
        assert!(connector.verify);
    }
}
