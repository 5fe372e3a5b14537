//! moria-crypto's integration tests, one module per area, in one test binary (one link instead of
//! one per file). Shared helpers are in `common/`. The SoftHSM test is its own binary
//! (`tests/hsm_softhsm.rs`): it sets `SOFTHSM2_CONF` for the whole process.

mod common;

mod jwt_algorithms;
mod keys_openssl_cli;
mod pki_verify;
mod rng_fibers;
mod rng_statistics;
mod tls_fibers;
mod tls_handoff;
mod tls_handoff_policy;
mod tls_loopback;
mod tls_mutual;
mod tls_openssl_cli;
mod tls_read_within;
mod tls_split;
mod tls_tickets;
mod vectors_cipher;
mod vectors_hash;
mod vectors_jwt;
mod vectors_kdf;
mod vectors_wycheproof;
mod x509_openssl_cli;
