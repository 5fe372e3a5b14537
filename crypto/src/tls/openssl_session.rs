//! [`OpenSslSession`]: the OpenSSL session of a stream, which stays resumable when the stream is
//! dropped without close_notify.

use std::ops::{Deref, DerefMut};

use openssl::ssl::{ShutdownState, SslStream};

use super::memio::MemIo;

/// OpenSSL's session over the memory transport.
pub(crate) struct OpenSslSession(SslStream<MemIo>);

impl OpenSslSession {
    /// Wraps a session.
    pub(crate) fn new(ssl: SslStream<MemIo>) -> OpenSslSession {
        OpenSslSession(ssl)
    }
}

impl Deref for OpenSslSession {
    type Target = SslStream<MemIo>;

    fn deref(&self) -> &SslStream<MemIo> {
        &self.0
    }
}

impl DerefMut for OpenSslSession {
    fn deref_mut(&mut self) -> &mut SslStream<MemIo> {
        &mut self.0
    }
}

impl Drop for OpenSslSession {
    /// OpenSSL marks the session of a connection freed before it sent close_notify as not
    /// resumable, so a client pool closing an idle connection would lose the session its next
    /// connection should resume. Closing locally is deliberate; a connection that failed
    /// (alert, truncation) was already removed from resumption by OpenSSL when it failed.
    fn drop(&mut self) {
        let state = self.0.get_shutdown();
        self.0.set_shutdown(state | ShutdownState::SENT);
    }
}
