//! Opening a [`Connection`]: socket, TLS per `sslmode`, the startup message, and
//! authentication (SCRAM-SHA-256, MD5, or a cleartext password over TLS only).

use std::io;
use std::time::Instant;

use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::config::Config;
use super::connection::Connection;
use super::error::{Error, Result};
use super::socket;

/// Connects with `cfg` and runs startup and authentication up to the first ReadyForQuery,
/// all within `cfg.connect_timeout`.
pub(crate) fn connect_raw(cfg: &Config) -> Result<Connection> {
    let deadline = Instant::now() + cfg.connect_timeout;
    let (sock, peer) = socket::connect_plain(cfg, deadline)?;
    let sock = socket::negotiate_tls(cfg, sock, deadline)?;
    let mut c = Connection::new(sock, peer, cfg, deadline);
    let out = startup(&mut c, cfg);
    c.started();
    match out {
        Ok(()) => Ok(c),
        Err(Error::Timeout(_)) => Err(Error::Io(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("connecting took longer than {:?}", cfg.connect_timeout),
        ))),
        Err(e) => Err(e),
    }
}

fn startup(c: &mut Connection, cfg: &Config) -> Result<()> {
    let mut params: Vec<(&str, &str)> = vec![
        ("user", &cfg.user),
        ("database", &cfg.dbname),
        ("client_encoding", "UTF8"),
    ];
    if let Some(a) = &cfg.application_name {
        params.push(("application_name", a));
    }
    if let Some(o) = &cfg.options {
        params.push(("options", o));
    }
    frontend::startup_message(params.iter().copied(), &mut c.wbuf)?;
    c.flush()?;
    authenticate(c, cfg)?;
    loop {
        match c.recv()? {
            Message::BackendKeyData(b) => {
                c.pid = b.process_id();
                c.secret = b.secret_key();
            }
            Message::ReadyForQuery(b) => {
                c.set_status(b.status());
                return Ok(());
            }
            Message::ErrorResponse(b) => return Err(c.db_error(b.fields())),
            m => return Err(c.unexpected(&m, "startup")),
        }
    }
}

fn password(cfg: &Config) -> Result<&str> {
    cfg.password.as_deref().ok_or_else(|| {
        Error::Auth(format!(
            "the server asks for a password for user {:?} but none was given",
            cfg.user
        ))
    })
}

fn authenticate(c: &mut Connection, cfg: &Config) -> Result<()> {
    loop {
        match c.recv()? {
            Message::AuthenticationOk => return Ok(()),
            Message::AuthenticationCleartextPassword => {
                if !c.is_tls() {
                    return Err(Error::Auth(
                        "the server asks for a cleartext password over an unencrypted \
                         connection; refused (use TLS or SCRAM-SHA-256)"
                            .into(),
                    ));
                }
                let pw = password(cfg)?;
                frontend::password_message(pw.as_bytes(), &mut c.wbuf)?;
                c.flush()?;
            }
            Message::AuthenticationMd5Password(b) => {
                let pw = password(cfg)?;
                let hash = md5_hash(cfg.user.as_bytes(), pw.as_bytes(), b.salt());
                frontend::password_message(hash.as_bytes(), &mut c.wbuf)?;
                c.flush()?;
            }
            Message::AuthenticationSasl(b) => {
                let mut mechanisms = b.mechanisms();
                let mut scram = false;
                while let Some(m) = mechanisms.next()? {
                    scram |= m == SCRAM_SHA_256;
                }
                if !scram {
                    return Err(Error::Auth(
                        "the server offers no supported SASL mechanism".into(),
                    ));
                }
                let pw = password(cfg)?;
                scram_sha_256(c, pw)?;
            }
            Message::ErrorResponse(b) => return Err(c.db_error(b.fields())),
            Message::AuthenticationKerberosV5
            | Message::AuthenticationScmCredential
            | Message::AuthenticationGss
            | Message::AuthenticationSspi => {
                return Err(Error::Auth(
                    "the server asks for an unsupported authentication method".into(),
                ))
            }
            m => return Err(c.unexpected(&m, "authentication")),
        }
    }
}

fn scram_sha_256(c: &mut Connection, password: &str) -> Result<()> {
    let mut scram = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
    frontend::sasl_initial_response(SCRAM_SHA_256, scram.message(), &mut c.wbuf)?;
    c.flush()?;
    match c.recv()? {
        Message::AuthenticationSaslContinue(b) => scram
            .update(b.data())
            .map_err(|e| Error::Auth(format!("SCRAM: {e}")))?,
        Message::ErrorResponse(b) => return Err(c.db_error(b.fields())),
        m => return Err(c.unexpected(&m, "SCRAM")),
    }
    frontend::sasl_response(scram.message(), &mut c.wbuf)?;
    c.flush()?;
    match c.recv()? {
        Message::AuthenticationSaslFinal(b) => scram
            .finish(b.data())
            .map_err(|e| Error::Auth(format!("SCRAM: the server's proof is wrong: {e}"))),
        Message::ErrorResponse(b) => Err(c.db_error(b.fields())),
        m => Err(c.unexpected(&m, "SCRAM")),
    }
}
