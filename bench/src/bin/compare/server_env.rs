//! What every server start needs: binaries, CPUs, workers, connection limit, database URL,
//! static files, certificate, nginx's directory and the GTFS feed. Made by `setup`, read by
//! `server`.

use std::path::PathBuf;

use crate::load::Load;
use crate::setup::Cert;

/// What every server start needs.
#[derive(Clone)]
pub struct Env {
    /// Directory holding the release binaries.
    pub bin: PathBuf,
    /// `taskset -c` CPU list for servers (empty: not pinned).
    pub cpus: String,
    /// Workers for every server.
    pub workers: usize,
    /// Connections each file server accepts at once (nginx's `worker_connections`, the
    /// fileserver's `--max-connections`).
    pub max_connections: usize,
    /// PostgreSQL URL of the TFB database (empty when no scenario needs it).
    pub pg_url: String,
    /// Root of the static files.
    pub www: PathBuf,
    /// TLS certificate and key (PEM files).
    pub cert: PathBuf,
    /// See `cert`.
    pub key: PathBuf,
    /// The RSA-2048 certificate and key of the RSA handshake rows (PEM files).
    pub rsa_cert: PathBuf,
    /// See `rsa_cert`.
    pub rsa_key: PathBuf,
    /// Where nginx's configuration and logs go.
    pub nginx_dir: PathBuf,
    /// The generated GTFS feed of the transit servers (empty when no scenario needs it).
    pub gtfs: PathBuf,
}

impl Env {
    /// This environment for a scenario loaded by `load`: the servers present the RSA
    /// certificate when the load asks for it.
    pub fn for_load(&self, load: &Load) -> Env {
        let mut env = self.clone();
        if let Load::Handshakes {
            cert: Cert::Rsa2048,
            ..
        } = load
        {
            env.cert.clone_from(&self.rsa_cert);
            env.key.clone_from(&self.rsa_key);
        }
        env
    }
}
