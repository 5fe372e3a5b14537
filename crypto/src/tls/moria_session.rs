//! [`MoriaSession`]: a TLS 1.3 server session after its handoff from OpenSSL (`handoff.rs`),
//! whose records Moria protects: the record layer of `record.rs` over the same memory
//! transport, and the [`HandshakeOutcome`] (version, suite, SNI, ALPN, the client's
//! certificate) kept as plain values.
//!
//! It speaks what a TLS 1.3 server may meet after the handshake: application data, alerts
//! (close_notify ends the input, any other alert fails the session) and KeyUpdate (answered
//! before the next record sent when the client asks). Any other post-handshake message is
//! refused (this server never asks for post-handshake client authentication). A failed session
//! stays failed; like OpenSSL in these streams, it sends no alert and leaves the closing to the
//! caller.

use std::io;

use super::handshake_outcome::HandshakeOutcome;
use super::memio::MemIo;
use super::record::{
    body_len, invalid, Opening, Sealing, ALERT, APPLICATION_DATA, HANDSHAKE, HEADER_LEN,
    MAX_PLAINTEXT,
};
use super::stop::Stop;

/// Handshake message type of KeyUpdate.
const KEY_UPDATE: u8 = 24;
/// A whole KeyUpdate message: type, 24-bit length 1, the request flag.
const KEY_UPDATE_LEN: usize = 5;
/// The alert description of close_notify.
const CLOSE_NOTIFY: u8 = 0;
/// The alert description of user_canceled (a warning, followed by close_notify).
const USER_CANCELED: u8 = 90;

/// A TLS 1.3 session whose records Moria protects.
#[derive(Debug)]
pub(crate) struct MoriaSession {
    io: MemIo,
    opening: Opening,
    sealing: Sealing,
    /// Decrypted application data, `plain[at..]` not yet read.
    plain: Vec<u8>,
    at: usize,
    /// A post-handshake message begun in an earlier record.
    handshake: Vec<u8>,
    /// The client sent close_notify.
    input_closed: bool,
    /// This side sent close_notify.
    output_closed: bool,
    /// The client asked for a KeyUpdate: send one before the next record.
    key_update_due: bool,
    /// Why the session failed, once it has.
    failed: Option<(io::ErrorKind, String)>,
    outcome: HandshakeOutcome,
}

impl MoriaSession {
    /// Carries on over `io` with the keys of `opening` and `sealing`.
    pub(crate) fn new(
        io: MemIo,
        opening: Opening,
        sealing: Sealing,
        outcome: HandshakeOutcome,
    ) -> MoriaSession {
        MoriaSession {
            io,
            opening,
            sealing,
            plain: Vec::new(),
            at: 0,
            handshake: Vec::new(),
            input_closed: false,
            output_closed: false,
            key_update_due: false,
            failed: None,
            outcome,
        }
    }

    /// The transport buffers.
    pub(crate) fn io(&self) -> &MemIo {
        &self.io
    }

    /// The transport buffers, mutably.
    pub(crate) fn io_mut(&mut self) -> &mut MemIo {
        &mut self.io
    }

    /// What the handshake established.
    pub(crate) fn outcome(&self) -> &HandshakeOutcome {
        &self.outcome
    }

    /// Whether decrypted bytes wait to be read.
    pub(crate) fn has_plaintext(&self) -> bool {
        self.at < self.plain.len()
    }

    /// Whether the client sent close_notify.
    pub(crate) fn input_closed(&self) -> bool {
        self.input_closed
    }

    /// Reads application data: `Ok(0)` after close_notify, [`Stop::WantRead`] when a whole
    /// record has not arrived yet.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, Stop> {
        loop {
            if self.has_plaintext() || buf.is_empty() {
                let n = buf.len().min(self.plain.len() - self.at);
                buf[..n].copy_from_slice(&self.plain[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            self.check()?;
            if self.input_closed {
                return Ok(0);
            }
            match self.open_next() {
                Ok(true) => {}
                Ok(false) if self.io.eof() => {
                    return Err(Stop::io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the TLS peer closed the connection without close_notify",
                    )))
                }
                Ok(false) => return Err(Stop::WantRead),
                Err(e) => return Err(self.fail(e)),
            }
        }
    }

    /// Sends up to one record of `buf`.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, Stop> {
        self.check()?;
        if self.output_closed {
            return Err(Stop::io(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the TLS session was shut down for writing",
            )));
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let chunk = &buf[..buf.len().min(MAX_PLAINTEXT)];
        let MoriaSession {
            io,
            sealing,
            key_update_due,
            ..
        } = self;
        let sent = io.produce(|out| {
            if *key_update_due {
                sealing.seal(HANDSHAKE, &[KEY_UPDATE, 0, 0, 1, 0], out)?;
                sealing.update()?;
                *key_update_due = false;
            }
            sealing.seal(APPLICATION_DATA, chunk, out)
        });
        match sent {
            Ok(()) => Ok(chunk.len()),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Sends close_notify (once).
    pub(crate) fn shutdown(&mut self) -> Result<(), Stop> {
        self.check()?;
        if self.output_closed {
            return Ok(());
        }
        let MoriaSession { io, sealing, .. } = self;
        match io.produce(|out| sealing.seal(ALERT, &[1, CLOSE_NOTIFY], out)) {
            Ok(()) => {
                self.output_closed = true;
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Frees what an idle session does not need: the AEAD contexts and empty buffers.
    pub(crate) fn release(&mut self) {
        self.opening.release();
        self.sealing.release();
        if !self.has_plaintext() {
            self.plain = Vec::new();
            self.at = 0;
        }
        self.io.release();
    }

    /// The error the session failed with, again.
    fn check(&self) -> Result<(), Stop> {
        match &self.failed {
            Some((kind, msg)) => Err(Stop::io(io::Error::new(*kind, msg.clone()))),
            None => Ok(()),
        }
    }

    /// Marks the session failed with `e`; nothing decrypted is handed out after that.
    fn fail(&mut self, e: io::Error) -> Stop {
        self.plain.clear();
        self.at = 0;
        self.failed = Some((e.kind(), e.to_string()));
        Stop::io(e)
    }

    /// Decrypts the next whole record, if it has arrived (`Ok(false)` if not), and acts on it.
    fn open_next(&mut self) -> io::Result<bool> {
        let unread = self.io.unread();
        let Some(head) = unread.first_chunk::<HEADER_LEN>() else {
            return Ok(false);
        };
        let len = body_len(head)?;
        let Some(body) = unread.get(HEADER_LEN..HEADER_LEN + len) else {
            return Ok(false);
        };
        let kind = self.opening.open(head, body, &mut self.plain)?;
        self.io.consume(HEADER_LEN + len);
        self.at = 0;
        if kind != HANDSHAKE && !self.handshake.is_empty() {
            return Err(invalid(
                "unexpected_message: a TLS handshake message interrupted by another record".into(),
            ));
        }
        match kind {
            APPLICATION_DATA => Ok(true),
            ALERT => self.on_alert().map(|()| true),
            HANDSHAKE => self.on_handshake().map(|()| true),
            other => Err(invalid(format!(
                "unexpected_message: a TLS record of inner type {other}"
            ))),
        }
    }

    /// Acts on the alert in `plain`.
    fn on_alert(&mut self) -> io::Result<()> {
        let alert = std::mem::take(&mut self.plain);
        match alert[..] {
            [_, CLOSE_NOTIFY] => self.input_closed = true,
            [_, USER_CANCELED] => {}
            [_, description] => {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!(
                        "the TLS peer sent alert {description} ({})",
                        alert_name(description)
                    ),
                ))
            }
            _ => {
                return Err(invalid(format!(
                    "decode_error: a TLS alert of {} bytes",
                    alert.len()
                )))
            }
        }
        Ok(())
    }

    /// Acts on the handshake bytes in `plain`: a KeyUpdate, possibly split across records.
    fn on_handshake(&mut self) -> io::Result<()> {
        if self.plain.is_empty() {
            return Err(invalid(
                "unexpected_message: an empty TLS handshake record".into(),
            ));
        }
        self.handshake.extend_from_slice(&self.plain);
        self.plain.clear();
        let msg = &self.handshake[..];
        if msg[0] != KEY_UPDATE {
            return Err(invalid(format!(
                "unexpected_message: TLS handshake message {} after the handshake",
                msg[0]
            )));
        }
        // Length 1; and a KeyUpdate must end its record (what follows it was sealed under the
        // old key).
        let length_ok = msg[1..].iter().zip([0, 0, 1]).all(|(&a, b)| a == b);
        if !length_ok || msg.len() > KEY_UPDATE_LEN {
            return Err(invalid("decode_error: a malformed TLS KeyUpdate".into()));
        }
        if msg.len() < KEY_UPDATE_LEN {
            return Ok(());
        }
        match msg[4] {
            0 => {}
            1 => self.key_update_due = true,
            _ => {
                return Err(invalid(
                    "illegal_parameter: a TLS KeyUpdate request other than 0 or 1".into(),
                ))
            }
        }
        self.handshake.clear();
        self.opening.update()
    }
}

/// The name RFC 8446 (§6) gives an alert description.
fn alert_name(description: u8) -> &'static str {
    match description {
        10 => "unexpected_message",
        20 => "bad_record_mac",
        22 => "record_overflow",
        40 => "handshake_failure",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        113 => "bad_certificate_status_response",
        115 => "unknown_psk_identity",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => "unknown alert",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::record::{Secret, Suite, HEADER_LEN};

    const SUITE: Suite = Suite::ChaCha20Poly1305;

    /// A Moria server session and the client's ends of its two directions.
    fn pair() -> (MoriaSession, Sealing, Opening) {
        let client = Secret::new(&[1u8; 32]).unwrap();
        let server = Secret::new(&[2u8; 32]).unwrap();
        let session = MoriaSession::new(
            MemIo::new(),
            Opening::new(SUITE, client.clone(), 3).unwrap(),
            Sealing::new(SUITE, server.clone(), 2).unwrap(),
            HandshakeOutcome {
                version: "TLSv1.3",
                cipher: None,
                server_name: None,
                alpn: None,
                resumed: false,
                peer_certificate: None,
            },
        );
        let to_server = Sealing::new(SUITE, client, 3).unwrap();
        let from_server = Opening::new(SUITE, server, 2).unwrap();
        (session, to_server, from_server)
    }

    /// Seals one record of `kind` from the client into the session's input.
    fn send(session: &mut MoriaSession, client: &mut Sealing, kind: u8, content: &[u8]) {
        let mut wire = Vec::new();
        client.seal(kind, content, &mut wire).unwrap();
        session.io_mut().feed(&wire).unwrap();
    }

    /// Every record the session sent, opened by the client.
    fn received(session: &mut MoriaSession, client: &mut Opening) -> Vec<(u8, Vec<u8>)> {
        let wire = session.io_mut().take_outbound();
        let mut rest = &wire[..];
        let mut records = Vec::new();
        while !rest.is_empty() {
            let head: [u8; HEADER_LEN] = rest[..HEADER_LEN].try_into().unwrap();
            let len = body_len(&head).unwrap();
            let mut plain = Vec::new();
            let kind = client
                .open(&head, &rest[HEADER_LEN..HEADER_LEN + len], &mut plain)
                .unwrap();
            if kind == HANDSHAKE {
                client.update().unwrap();
            }
            records.push((kind, plain));
            rest = &rest[HEADER_LEN + len..];
        }
        records
    }

    fn read_all(session: &mut MoriaSession) -> Result<Vec<u8>, Stop> {
        let mut buf = [0u8; 64];
        let n = session.read(&mut buf)?;
        Ok(buf[..n].to_vec())
    }

    fn error_of(stop: Stop) -> io::Error {
        match stop {
            Stop::Failed(super::super::stop::SessionError::Io(e)) => e,
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn a_requested_key_update_is_answered_before_the_next_record() {
        let (mut session, mut to_server, mut from_server) = pair();
        send(&mut session, &mut to_server, APPLICATION_DATA, b"one");
        // Split across two records, then data under the new key.
        send(&mut session, &mut to_server, HANDSHAKE, &[KEY_UPDATE, 0]);
        send(&mut session, &mut to_server, HANDSHAKE, &[0, 1, 1]);
        to_server.update().unwrap();
        send(&mut session, &mut to_server, APPLICATION_DATA, b"two");
        assert_eq!(read_all(&mut session).ok().unwrap(), b"one");
        assert_eq!(read_all(&mut session).ok().unwrap(), b"two");
        session.release();
        assert_eq!(session.write(b"answer").ok(), Some(6));
        assert_eq!(session.write(b"more").ok(), Some(4));
        assert_eq!(
            received(&mut session, &mut from_server),
            [
                (HANDSHAKE, vec![KEY_UPDATE, 0, 0, 1, 0]),
                (APPLICATION_DATA, b"answer".to_vec()),
                (APPLICATION_DATA, b"more".to_vec()),
            ]
        );
    }

    #[test]
    fn close_notify_ends_the_input_and_shutdown_sends_one() {
        let (mut session, mut to_server, mut from_server) = pair();
        send(&mut session, &mut to_server, APPLICATION_DATA, b"");
        send(&mut session, &mut to_server, APPLICATION_DATA, b"last");
        send(&mut session, &mut to_server, ALERT, &[1, CLOSE_NOTIFY]);
        assert_eq!(read_all(&mut session).ok().unwrap(), b"last");
        assert_eq!(read_all(&mut session).ok().unwrap(), b"");
        assert!(session.input_closed());
        session.shutdown().ok().unwrap();
        session.shutdown().ok().unwrap();
        let err = error_of(session.write(b"late").err().unwrap());
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(
            received(&mut session, &mut from_server),
            [(ALERT, vec![1, CLOSE_NOTIFY])]
        );
    }

    #[test]
    fn partial_records_wait_and_a_truncated_stream_is_an_error() {
        let (mut session, mut to_server, _) = pair();
        let mut wire = Vec::new();
        to_server
            .seal(APPLICATION_DATA, b"split", &mut wire)
            .unwrap();
        session.io_mut().feed(&wire[..3]).unwrap();
        assert!(matches!(read_all(&mut session), Err(Stop::WantRead)));
        session.io_mut().feed(&wire[3..10]).unwrap();
        assert!(matches!(read_all(&mut session), Err(Stop::WantRead)));
        session.io_mut().feed(&wire[10..]).unwrap();
        assert_eq!(read_all(&mut session).ok().unwrap(), b"split");
        session.io_mut().feed(&wire[..4]).unwrap();
        session.io_mut().feed(b"").unwrap();
        let err = error_of(read_all(&mut session).err().unwrap());
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn forbidden_records_fail_the_session_for_good() {
        let cases: [(u8, &[u8], &str); 7] = [
            (HANDSHAKE, &[4, 0, 0, 0], "unexpected_message"),
            (HANDSHAKE, &[KEY_UPDATE, 0, 0, 2, 0, 0], "decode_error"),
            (
                HANDSHAKE,
                &[KEY_UPDATE, 0, 0, 1, 0, KEY_UPDATE],
                "decode_error",
            ),
            (HANDSHAKE, &[KEY_UPDATE, 0, 0, 1, 2], "illegal_parameter"),
            (HANDSHAKE, &[], "unexpected_message"),
            (ALERT, &[2, 40], "alert 40 (handshake_failure)"),
            (20, &[1], "unexpected_message"),
        ];
        for (kind, content, want) in cases {
            let (mut session, mut to_server, _) = pair();
            send(&mut session, &mut to_server, kind, content);
            send(&mut session, &mut to_server, APPLICATION_DATA, b"after");
            let read = read_all(&mut session);
            assert!(read.is_err(), "{kind} {content:?} was accepted");
            let err = error_of(read.err().unwrap());
            assert!(err.to_string().contains(want), "{kind} {content:?}: {err}");
            let again = error_of(read_all(&mut session).err().unwrap());
            assert_eq!(again.to_string(), err.to_string(), "stays failed");
            assert!(session.write(b"x").is_err(), "no writes after a failure");
        }
    }

    #[test]
    fn data_interrupting_a_handshake_message_is_refused() {
        let (mut session, mut to_server, _) = pair();
        send(&mut session, &mut to_server, HANDSHAKE, &[KEY_UPDATE, 0]);
        send(&mut session, &mut to_server, APPLICATION_DATA, b"data");
        let err = error_of(read_all(&mut session).err().unwrap());
        assert!(err.to_string().contains("interrupted"), "{err}");
    }
}
