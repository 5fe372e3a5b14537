//! [`TlsAcceptor`]: the server side, with SNI certificate selection and ALPN.

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use openssl::ssl::{
    AlpnError, NameType, Ssl, SslAcceptor, SslContext, SslMethod, SslMode, SslVerifyMode,
    SslVersion,
};

use super::handoff;
use super::identity::Identity;
use super::idle_share::IdleShare;
use super::stream::TlsStream;
use super::ticket_keys::TicketKeys;
use super::timeouts::SocketTimeouts;
use super::{alpn_wire, DEFAULT_HANDSHAKE_TIMEOUT};
use crate::error::Result;
use crate::pki::Pki;

/// Session-ID context: sessions resume only on acceptors of this crate.
const SESSION_ID_CONTEXT: &[u8] = b"moria-tls";

/// Wraps accepted connections in TLS. Cheap to clone and share between fibers.
#[derive(Clone)]
pub struct TlsAcceptor {
    /// Sessions of this context prepare their handoff to Moria's record layer.
    ctx: SslContext,
    /// The same without that preparation, while few connections go idle (`idle_share.rs`).
    plain_ctx: SslContext,
    idle_share: Arc<IdleShare>,
    identity: Arc<Identity>,
    handshake_timeout: Option<Duration>,
    ticket_keys: TicketKeys,
}

impl TlsAcceptor {
    /// A builder serving `identity` by default.
    pub fn builder(identity: Identity) -> TlsAcceptorBuilder {
        TlsAcceptorBuilder {
            identity,
            sni: Vec::new(),
            alpn: Vec::new(),
            handshake_timeout: Some(DEFAULT_HANDSHAKE_TIMEOUT),
            client_auth: None,
            ticket_keys: None,
        }
    }

    /// An acceptor with default settings from a PEM chain file and a PEM key file.
    pub fn from_pem_files(chain_path: &Path, key_path: &Path) -> Result<Self> {
        Self::builder(Identity::from_pem_files(chain_path, key_path)?).build()
    }

    /// An acceptor with default settings and a fresh self-signed certificate for `hosts`
    /// (see [`Identity::self_signed`]).
    pub fn self_signed(hosts: &[&str]) -> Result<Self> {
        Self::builder(Identity::self_signed(hosts)?).build()
    }

    /// The default identity's certificate chain as PEM (for clients to trust a self-signed one).
    pub fn certificate_pem(&self) -> Result<Vec<u8>> {
        self.identity.certificate_pem()
    }

    /// The keys sealing this acceptor's session tickets (give a clone to another acceptor's
    /// [`TlsAcceptorBuilder::ticket_keys`] so that tickets resume on both).
    pub fn ticket_keys(&self) -> &TicketKeys {
        &self.ticket_keys
    }

    /// Runs the server handshake on `stream`; fails with `ErrorKind::TimedOut` past the
    /// handshake timeout. A TLS 1.3 session goes on in Moria's own record layer from its first
    /// [`TlsStream::release_buffers`], or at once when the client chose HTTP/2 by ALPN (see the
    /// crate README, "TLS 1.3 records after the handshake").
    pub fn accept<S: Read + Write + SocketTimeouts>(&self, stream: S) -> Result<TlsStream<S>> {
        let ctx = if self.idle_share.worth_noting() {
            &self.ctx
        } else {
            &self.plain_ctx
        };
        let mut ssl = Ssl::new(ctx)?;
        ssl.set_accept_state();
        handoff::track(&mut ssl, &self.idle_share);
        let mut tls = TlsStream::handshake(ssl, stream, self.handshake_timeout)?;
        // An HTTP/2 connection is long-lived by design and its server need not call
        // `release_buffers`; any other waits for its first idle (or its split), so that one
        // that serves one request and closes never pays for the handoff (`handoff.rs`).
        if tls.alpn_protocol() == Some(b"h2") {
            tls.settle();
        }
        Ok(tls)
    }
}

impl fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsAcceptor")
            .field("identity", &self.identity)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`TlsAcceptor`].
#[derive(Debug)]
pub struct TlsAcceptorBuilder {
    identity: Identity,
    sni: Vec<(String, Identity)>,
    alpn: Vec<String>,
    handshake_timeout: Option<Duration>,
    client_auth: Option<Pki>,
    ticket_keys: Option<TicketKeys>,
}

impl TlsAcceptorBuilder {
    /// Requires every client to present a certificate that `pki` verifies for TLS client
    /// use (chain to its roots, validity, usage, CRLs); the handshake fails otherwise, and
    /// [`TlsStream::peer_certificate`] gives the verified certificate. Default: no client
    /// certificate is asked for.
    pub fn client_auth(mut self, pki: &Pki) -> Self {
        self.client_auth = Some(pki.clone());
        self
    }

    /// Serves `identity` to clients whose SNI is `host` (ASCII case-insensitive); others get
    /// the default identity. Default: none.
    pub fn sni(mut self, host: &str, identity: Identity) -> Self {
        self.sni.push((host.to_ascii_lowercase(), identity));
        self
    }

    /// ALPN protocols in order of preference (`["h2", "http/1.1"]`); a client offering none
    /// of them proceeds without ALPN. Default: no ALPN.
    pub fn alpn(mut self, protocols: &[&str]) -> Self {
        self.alpn = protocols.iter().map(|p| (*p).to_owned()).collect();
        self
    }

    /// Time allowed for a whole handshake, `None` for no limit. Default:
    /// [`DEFAULT_HANDSHAKE_TIMEOUT`].
    pub fn handshake_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.handshake_timeout = timeout;
        self
    }

    /// Seals session tickets with `keys` (a clone of another acceptor's set makes their
    /// tickets resume on each other). Default: a fresh [`TicketKeys::new`] for this acceptor,
    /// shared by all its contexts (SNI too), so by every worker and listener that uses it.
    pub fn ticket_keys(mut self, keys: TicketKeys) -> Self {
        self.ticket_keys = Some(keys);
        self
    }

    /// Builds the acceptor: TLS 1.2 and 1.3 only, Mozilla's "intermediate" cipher suites.
    pub fn build(self) -> Result<TlsAcceptor> {
        let alpn = alpn_wire(&self.alpn)?;
        let client_auth = self.client_auth.as_ref();
        let keys = match self.ticket_keys {
            Some(keys) => keys,
            None => TicketKeys::new()?,
        };
        let contexts = |prepared: bool| -> Result<SslContext> {
            let mut by_host = HashMap::new();
            for (host, identity) in &self.sni {
                let ctx = context(identity, &alpn, client_auth, &keys, prepared, None)?;
                by_host.insert(host.clone(), ctx);
            }
            let by_host = Some(Arc::new(by_host));
            context(&self.identity, &alpn, client_auth, &keys, prepared, by_host)
        };
        Ok(TlsAcceptor {
            ctx: contexts(true)?,
            plain_ctx: contexts(false)?,
            idle_share: Arc::default(),
            identity: Arc::new(self.identity),
            handshake_timeout: self.handshake_timeout,
            ticket_keys: keys,
        })
    }
}

/// One server context for `identity`, requiring client certificates verified by
/// `client_auth` if given, sealing session tickets with `keys`, its sessions `prepared` for a
/// handoff (`handoff.rs`) or not; `sni` switches to another context by server name.
fn context(
    identity: &Identity,
    alpn: &[u8],
    client_auth: Option<&Pki>,
    keys: &TicketKeys,
    prepared: bool,
    sni: Option<Arc<HashMap<String, SslContext>>>,
) -> Result<SslContext> {
    let mut builder = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server())?;
    builder.set_min_proto_version(Some(SslVersion::TLS1_2))?;
    builder.set_mode(SslMode::RELEASE_BUFFERS);
    builder.set_certificate(&identity.leaf)?;
    for cert in &identity.chain {
        builder.add_extra_chain_cert(cert.clone())?;
    }
    builder.set_private_key(&identity.key)?;
    builder.check_private_key()?;
    builder.set_session_id_context(SESSION_ID_CONTEXT)?;
    if prepared {
        handoff::prepare(&mut builder);
    }
    keys.install(&mut builder)?;
    if let Some(pki) = client_auth {
        builder.set_verify(SslVerifyMode::PEER | SslVerifyMode::FAIL_IF_NO_PEER_CERT);
        builder.set_verify_cert_store(pki.tls_client_store()?)?;
    }
    if !alpn.is_empty() {
        let server = alpn.to_vec();
        builder.set_alpn_select_callback(move |_, client| {
            choose_alpn(&server, client).ok_or(AlpnError::NOACK)
        });
    }
    if let Some(by_host) = sni.filter(|m| !m.is_empty()) {
        builder.set_servername_callback(move |ssl, _| {
            let chosen = ssl
                .servername(NameType::HOST_NAME)
                .and_then(|name| by_host.get(&name.to_ascii_lowercase()));
            if let Some(ctx) = chosen {
                // A failure here leaves the default certificate in place.
                if let Err(e) = ssl.set_ssl_context(ctx) {
                    log::warn!("SNI context switch failed: {e}");
                }
            }
            Ok(())
        });
    }
    Ok(builder.build().into_context())
}

/// The server's most preferred protocol that the client offers, as a slice of the client's
/// list (both lists in ALPN wire format).
fn choose_alpn<'c>(server: &[u8], client: &'c [u8]) -> Option<&'c [u8]> {
    let offered: Vec<&'c [u8]> = wire_entries(client).collect();
    wire_entries(server).find_map(|wanted| offered.iter().copied().find(|&p| p == wanted))
}

/// The names in an ALPN wire-format list; stops at a malformed entry.
fn wire_entries(mut wire: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (&len, rest) = wire.split_first()?;
        let len = usize::from(len);
        if len == 0 || rest.len() < len {
            return None;
        }
        let (name, tail) = rest.split_at(len);
        wire = tail;
        Some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_follows_server_preference() {
        let server = b"\x02h2\x08http/1.1";
        assert_eq!(choose_alpn(server, b"\x08http/1.1\x02h2"), Some(&b"h2"[..]));
        assert_eq!(choose_alpn(server, b"\x08http/1.1"), Some(&b"http/1.1"[..]));
        assert_eq!(choose_alpn(server, b"\x03foo"), None);
        assert_eq!(
            choose_alpn(server, b"\x09h2"),
            None,
            "truncated client list"
        );
    }
}
