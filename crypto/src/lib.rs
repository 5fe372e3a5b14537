//! moria-crypto: TLS streams and a named crypto catalogue on OpenSSL.
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
mod kdf;
mod random;

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
pub mod jwt;
