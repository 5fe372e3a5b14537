//! moria-crypto: TLS streams and a named crypto catalogue on OpenSSL.
//!
//! # Module map
//!
//! | where | what |
//! |---|---|
//! | [`tls`] | [`TlsAcceptor`], [`TlsConnector`], [`TlsStream`] over any `Read + Write`, split into [`TlsReader`]/[`TlsWriter`] for full duplex; [`Identity`] (PEM, x509 or self-signed); mutual TLS (`client_auth(&Pki)`, `identity`, `peer_certificate`); [`TicketKeys`]: session ticket keys shared by every worker and listener, rotated |
//! | `hash` | [`Hasher`], [`hash()`]: `md5`, `sha1`, `sha256`, `sha384`, `sha512`, `sha3-256`, `sha3-512` |
//! | `hmac` | [`Hmac`], [`hmac()`]: `hmac-<hash>` |
//! | `aead` | [`Aead`]: `aes-128-gcm`, `aes-256-gcm`, `chacha20-poly1305` |
//! | `ctr` | [`Ctr`]: `aes-128-ctr`, `aes-256-ctr` |
//! | `kdf` | [`pbkdf2`] (`pbkdf2-sha1/-sha256/-sha512`), [`hkdf`] (`hkdf-sha1/-sha256/-sha512`) |
//! | `random` | [`random_bytes`], [`random_vec`], [`RandomReader`] (CSPRNG as a `Read`) |
//! | [`rng`] | the fast per-thread CSPRNG (AES-128-CTR, fast key erasure): [`rng::fill`], [`rng::u32`], [`rng::u64`], [`rng::range`] |
//! | `ct` | [`constant_time_eq`] |
//! | `hash_io` | [`HashReader`], [`HashWriter`]: hash what passes through a stream |
//! | `cipher_io` | [`CtrWriter`], [`SealWriter`], [`OpenWriter`]: streaming encryption as `Write` |
//! | [`jwt`] | [`jwt::JwtKey`] (HS256 and every [`keys::SignAlg`], one pinned per key), [`jwt::Jwks`] (keys by `kid`): sign/verify with [`jwt::Validation`] (`exp`/`nbf`/`iss`/`aud`) |
//! | [`keys`] | [`keys::PrivateKey`], [`keys::PublicKey`]: `rsa-2048/3072/4096`, `ecdsa-p256/p384`, `ed25519`, `x25519`; PEM/DER/PKCS#8; [`keys::SignAlg`] `RS*`/`PS*`/`ES*`/`EdDSA` (one-shot or reusable [`keys::SignContext`]/[`keys::VerifyContext`]); RSA-OAEP; ECDH + HKDF; [`keys::Signer`] |
//! | [`x509`] | [`x509::Certificate`], [`x509::CertBuilder`] (CA, TLS server/client, code signing), [`x509::Csr`], [`x509::CrlBuilder`]/[`x509::Crl`] |
//! | [`pki`] | [`pki::Pki`]: roots, intermediates, CRLs from PEM/files/directories; `verify(cert, purpose)` by OpenSSL's X509_STORE, cached by fingerprint |
//! | [`hsm`] | [`hsm::Hsm`], [`hsm::HsmKey`]: PKCS#11 tokens (by module, slot, PIN); keys that sign on the token, for JWTs and CSRs too |
//! | [`encoding`] | hex, base64 and base64url (canonical forms only) |
//! | `lookup` | finding an algorithm by name (below every algorithm) |
//! | `catalogue` | [`algorithms`] lists every name (above every algorithm) |
//! | `error` | [`Error`], [`Result`], and [`pki::Rejection`] (why a certificate was refused) |
//!
//! Every algorithm is found by name; an unknown name is [`Error::UnknownAlgorithm`] listing
//! the valid ones, a bad key/nonce size is [`Error::InvalidLength`], a failed AEAD check is
//! [`Error::TagMismatch`]. Contexts (`Hasher`, `Hmac`, `Aead`, `Ctr`) are reusable: create one
//! per key and call it many times, as `openssl speed` does.
//!
//! # OpenSSL in fibers
//!
//! Moria's fibers migrate between worker threads at every wait, while OpenSSL keeps
//! per-thread state: the error queue (read by `SSL_get_error` right after a failing call) and
//! the per-thread DRBG. If a fiber waited *inside* `SSL_read` (in the BIO callback, when the
//! socket would block), it could resume on another thread halfway through an OpenSSL call,
//! reading or leaving errors in the wrong thread's queue.
//!
//! **Decision: OpenSSL never waits.** A [`TlsStream`] runs OpenSSL over an in-memory
//! transport (an inbound and an outbound buffer) whose reads return `WouldBlock` when empty.
//! Every OpenSSL call therefore starts and finishes on one thread without yielding, and the
//! `openssl` crate drains the error queue into the returned error before the call returns.
//! The fiber does the socket I/O *between* OpenSSL calls: after each call it writes the
//! outbound buffer to the socket; on `WANT_READ` it reads the socket into the inbound buffer
//! and retries. Those socket operations are where the fiber may yield and migrate, and by
//! then OpenSSL holds no per-thread state for it. The error queue is also cleared before each
//! call, so leftovers from unrelated code on the thread cannot confuse `SSL_get_error`. The
//! same holds for the catalogue: every call is one or a few synchronous OpenSSL calls with no
//! I/O in between. The cost is one copy of received ciphertext (socket → inbound buffer).
//! Sent ciphertext is not copied when the transport is a socket
//! ([`SocketTimeouts::socket_fd`]): inside the call, each record goes out with one `send(2)`
//! that never waits, and only what the socket does not take at once is kept in the
//! outbound buffer for the fiber to send (measured in bench/README.md, "Benchmarking"). The
//! alternatives were pinning each TLS connection to one thread (gives up the scheduler)
//! or auditing every yield point inside OpenSSL (not ours to keep true across versions).
//! `tests/crypto/tls_fibers.rs` proves it: 200 concurrent connections on two workers doing
//! handshakes and 1 MiB checksummed echoes, twice, with zero errors, while 50 saboteur
//! connections make OpenSSL fail mid-session on the same workers (thousands of mid-session
//! migrations per run). For the record: `SslStream` straight over the runtime socket also
//! passed that test in an experiment (OpenSSL 3.0 happens to push and drain its errors after
//! the last BIO read of a call), so the hazard is one of construction, not one we could
//! reproduce; this design removes it without depending on OpenSSL's internals.
//!
//! A TLS 1.3 server session leaves OpenSSL once its handshake is done: Moria's own record layer
//! (over the same memory transport, so the same reasoning holds) carries its records, and
//! OpenSSL's session object is freed; see the README, "TLS 1.3 records after the handshake".
//!
//! Handshake timeouts use the transport's read/write timeouts ([`SocketTimeouts`]): each
//! socket operation gets the time left (or the transport's own timeout if shorter), and the
//! transport's timeouts are restored when the handshake ends.
#![warn(missing_docs)]

mod aead;
mod catalogue;
mod cipher_io;
mod ct;
mod ctr;
pub mod encoding;
mod error;
mod hash;
mod hash_io;
mod hmac;
pub mod hsm;
pub mod jwt;
mod kdf;
pub mod keys;
mod lookup;
pub mod pki;
mod random;
pub mod rng;
pub mod tls;
pub mod x509;

pub use aead::{Aead, AeadAlg, NONCE_LEN, TAG_LEN};
pub use catalogue::algorithms;
pub use cipher_io::{CtrWriter, OpenWriter, SealWriter, CHUNK_LEN};
pub use ct::constant_time_eq;
pub use ctr::{Ctr, CtrAlg, CTR_IV_LEN};
pub use error::{Error, Result};
pub use hash::{hash, Digest, HashAlg, Hasher, MAX_DIGEST_LEN};
pub use hash_io::{HashReader, HashWriter};
pub use hmac::{hmac, Hmac};
pub use kdf::{hkdf, pbkdf2};
pub use random::{random_bytes, random_vec, RandomReader};
pub use tls::{
    Identity, SocketTimeouts, TicketKeys, TlsAcceptor, TlsConnector, TlsReader, TlsStream,
    TlsWriter,
};
