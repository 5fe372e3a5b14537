//! Handing a TLS 1.3 server session from OpenSSL to Moria's record layer (`record.rs`) when the
//! connection first goes idle, so that OpenSSL's `SSL` object (about 14 KiB per connection even
//! with its buffers released, see bench/results/2026-11-30-idle-connection-memory.md) can be
//! freed while the connection lives on.
//!
//! OpenSSL exports neither a session's keys nor its record sequence numbers, so the acceptor's
//! sessions note them as they go, through two public callbacks:
//!
//! - the key log callback hands over each traffic secret as it is derived (the lines
//!   `CLIENT_TRAFFIC_SECRET_0` and `SERVER_TRAFFIC_SECRET_0` of the NSS key log format);
//! - the message callback reports every record header OpenSSL reads or writes, the inner
//!   content type of every TLS 1.3 record it decrypts, and every handshake message. Each
//!   direction switches to its application key right after its own Finished message (the
//!   server's written one, the client's read one), and a TLS 1.3 record never carries a
//!   Finished message together with application data, so the headers counted after that
//!   Finished are exactly the records protected under the application key: the next sequence
//!   number.
//!
//! A session is handed over between records only: every record header OpenSSL read since the
//! client's Finished belongs to a record it also decrypted (a `SSL_read` that stopped after a
//! record's header, waiting for its body, leaves no trace that `SSL_has_pending` sees, but its
//! header is counted and its inner type is not). The session must also be TLS 1.3 on the
//! server side, with nothing decrypted and unread, no close_notify or KeyUpdate either way, and
//! a suite `record.rs` implements; otherwise it stays with OpenSSL for now (and for its whole
//! life once a KeyUpdate or close_notify went by), which is always correct, just larger and
//! slower.
//!
//! Why at the first idle and not right after the handshake: the handoff costs a second key
//! schedule and two AEAD contexts, which only a connection that waits or serves many requests
//! earns back; a connection that serves one request and closes (`Connection: close`, the TLS
//! handshake benchmark) never goes idle and stays with OpenSSL, which already has its keys.
//! Noting the secrets costs every handshake more (OpenSSL's key log lines), so an acceptor
//! prepares new sessions for the handoff only while its connections tend to go idle
//! (`idle_share.rs`).

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use foreign_types::ForeignTypeRef;
use openssl::ex_data::Index;
use openssl::ssl::{Ssl, SslContextBuilder, SslRef, SslVersion};
use openssl_sys as ffi;

use super::idle_share::IdleShare;
use super::openssl_session::OpenSslSession;
use super::record::{wipe, Opening, Sealing, Secret, Suite};

/// `SSL3_RT_HEADER`: the message callback's content type for a record header.
const RECORD_HEADER: c_int = 0x100;
/// `SSL3_RT_INNER_CONTENT_TYPE`: the message callback's content type for the inner type of a
/// TLS 1.3 record, reported once the record is decrypted.
const INNER_CONTENT_TYPE: c_int = 0x101;
/// `SSL3_RT_HANDSHAKE`.
const HANDSHAKE_MESSAGE: c_int = 22;
/// Handshake message type of Finished.
const FINISHED: u8 = 20;
/// Handshake message type of KeyUpdate.
const KEY_UPDATE: u8 = 24;

/// The message callback's signature (`SSL_CTX_set_msg_callback`).
type MessageCallback = unsafe extern "C" fn(
    write_p: c_int,
    version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut ffi::SSL,
    arg: *mut c_void,
);

extern "C" {
    fn SSL_CTX_set_msg_callback(ctx: *mut ffi::SSL_CTX, cb: Option<MessageCallback>);
    fn SSL_has_pending(s: *const ffi::SSL) -> c_int;
}

/// What one server session has noted about its keys and records, and whether it went idle
/// (told to its acceptor's [`IdleShare`] when OpenSSL frees the session).
pub(crate) struct Tracker {
    noted: Mutex<Noted>,
    share: Arc<IdleShare>,
}

impl Drop for Tracker {
    fn drop(&mut self) {
        let idle = self.noted().idle;
        self.share.record(idle);
    }
}

#[derive(Default)]
struct Noted {
    client_secret: Option<Secret>,
    server_secret: Option<Secret>,
    /// Record headers read under the client's application key, once it is in use.
    read: Option<u64>,
    /// Records decrypted under the client's application key (fewer than `read` while OpenSSL
    /// holds a record's header and waits for its body).
    opened: u64,
    /// Records written under the server's application key, once it is in use.
    written: Option<u64>,
    /// A KeyUpdate went either way (the secrets above are then stale).
    rekeyed: bool,
    /// The connection went idle at least once.
    idle: bool,
}

impl Tracker {
    fn noted(&self) -> std::sync::MutexGuard<'_, Noted> {
        self.noted.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn index() -> Option<Index<Ssl, Tracker>> {
    static INDEX: OnceLock<Option<Index<Ssl, Tracker>>> = OnceLock::new();
    *INDEX.get_or_init(|| Ssl::new_ex_index().ok())
}

/// Makes the sessions of the server context `builder` note what a handoff needs (sessions
/// without a tracker, see [`track`], cost one lookup per callback). A context without this
/// gives sessions that stay with OpenSSL (see `idle_share.rs` for when that is better).
pub(crate) fn prepare(builder: &mut SslContextBuilder) {
    builder.set_keylog_callback(|ssl, line| {
        if let Some(tracker) = index().and_then(|i| ssl.ex_data(i)) {
            note_secret(&mut tracker.noted(), line);
        }
    });
    // SAFETY: the context is live and the callback matches OpenSSL's prototype.
    unsafe { SSL_CTX_set_msg_callback(builder.as_ptr(), Some(on_message)) };
}

/// Gives the server session `ssl` its tracker (before its handshake starts), which tells
/// `share` whether the connection went idle.
pub(crate) fn track(ssl: &mut Ssl, share: &Arc<IdleShare>) {
    if let Some(i) = index() {
        let tracker = Tracker {
            noted: Mutex::default(),
            share: share.clone(),
        };
        ssl.set_ex_data(i, tracker);
    }
}

/// Notes that the connection of the server session `openssl` is going idle.
pub(crate) fn going_idle(openssl: &OpenSslSession) {
    if let Some(tracker) = index().and_then(|i| openssl.ssl().ex_data(i)) {
        tracker.noted().idle = true;
    }
}

/// Records a traffic secret from a key log line.
fn note_secret(noted: &mut Noted, line: &str) {
    let mut words = line.split(' ');
    let (Some(label), Some(_client_random), Some(hex), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return;
    };
    let slot = match label {
        "CLIENT_TRAFFIC_SECRET_0" => &mut noted.client_secret,
        "SERVER_TRAFFIC_SECRET_0" => &mut noted.server_secret,
        _ => return,
    };
    *slot = decode_secret(hex);
}

/// The bytes of a secret written in hex, wiping the intermediate copy.
fn decode_secret(hex: &str) -> Option<Secret> {
    let mut bytes = [0u8; 64];
    let len = hex.len() / 2;
    let decoded = hex.len().is_multiple_of(2)
        && len <= bytes.len()
        && bytes[..len].iter_mut().enumerate().all(|(i, byte)| {
            let value = hex
                .get(2 * i..2 * i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok());
            value.map(|v| *byte = v).is_some()
        });
    let secret = decoded.then(|| Secret::new(&bytes[..len])).flatten();
    wipe(&mut bytes);
    secret
}

/// OpenSSL's message callback: counts record headers after each direction's Finished (and the
/// records read then decrypted) and notes KeyUpdates.
unsafe extern "C" fn on_message(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut ffi::SSL,
    _arg: *mut c_void,
) {
    // SAFETY: OpenSSL passes its live SSL, borrowed for the call.
    let ssl = unsafe { SslRef::from_ptr(ssl) };
    let Some(tracker) = index().and_then(|i| ssl.ex_data(i)) else {
        return;
    };
    let writing = write_p != 0;
    let mut noted = tracker.noted();
    match content_type {
        RECORD_HEADER => {
            let count = if writing {
                &mut noted.written
            } else {
                &mut noted.read
            };
            if let Some(n) = count {
                *n += 1;
            }
        }
        INNER_CONTENT_TYPE if !writing && noted.read.is_some() => noted.opened += 1,
        HANDSHAKE_MESSAGE if len > 0 && !buf.is_null() => {
            // SAFETY: `buf` holds `len` (> 0) readable bytes for the call.
            match unsafe { *buf.cast::<u8>() } {
                FINISHED if writing => noted.written = Some(0),
                FINISHED => {
                    noted.read = Some(0);
                    noted.opened = 0;
                }
                KEY_UPDATE => noted.rekeyed = true,
                _ => {}
            }
        }
        _ => {}
    }
}

/// The record layer of the TLS 1.3 server session `openssl`, whose handshake is over, if it can
/// carry on without OpenSSL now (see the module docs); `None` leaves it with OpenSSL.
pub(crate) fn take(openssl: &mut OpenSslSession) -> Option<(Opening, Sealing)> {
    let shut = !openssl.get_shutdown().is_empty();
    let ssl = openssl.ssl();
    let io = openssl.get_ref();
    // Bytes in the memory transport are not OpenSSL's: without read-ahead it reads exactly
    // the record it works on, so received bytes it has not asked for yet are whole records to
    // come (the Moria session reads them), and bytes waiting to be sent are records it sealed
    // and counted already.
    let quiet = ssl.is_server()
        && ssl.version2() == Some(SslVersion::TLS1_3)
        && !shut
        && ssl.pending() == 0
        // SAFETY: `ssl` is live for the call.
        && unsafe { SSL_has_pending(ssl.as_ptr()) } == 0
        && !io.eof();
    if !quiet {
        return None;
    }
    let suite = Suite::from_name(ssl.current_cipher()?.name())?;
    let noted = ssl.ex_data(index()?)?.noted();
    if noted.rekeyed {
        return None;
    }
    let (client, server) = (noted.client_secret.clone()?, noted.server_secret.clone()?);
    let (read, written) = (noted.read?, noted.written?);
    if read != noted.opened {
        return None;
    }
    drop(noted);
    let opening = Opening::new(suite, client, read).ok()?;
    let sealing = Sealing::new(suite, server, written).ok()?;
    Some((opening, sealing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_log_lines_give_the_application_secrets_only() {
        let mut noted = Noted::default();
        let random = "ab".repeat(32);
        let secret = "0f".repeat(32);
        note_secret(
            &mut noted,
            &format!("CLIENT_HANDSHAKE_TRAFFIC_SECRET {random} {secret}"),
        );
        assert!(noted.client_secret.is_none());
        note_secret(
            &mut noted,
            &format!("CLIENT_TRAFFIC_SECRET_0 {random} {secret}"),
        );
        note_secret(&mut noted, &format!("SERVER_TRAFFIC_SECRET_0 {random} zz"));
        note_secret(
            &mut noted,
            &format!("SERVER_TRAFFIC_SECRET_0 {random} {secret} x"),
        );
        assert!(noted.client_secret.is_some());
        assert!(noted.server_secret.is_none(), "malformed lines are ignored");
    }
}
