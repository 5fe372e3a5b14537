//! What every server start needs: binaries, CPUs, workers, connection limit, database URL,
//! static files, certificate, nginx's directory and the GTFS feed. Made by `setup`, read by
//! `server`.

use std::path::PathBuf;

/// What every server start needs.
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
    /// Where nginx's configuration and logs go.
    pub nginx_dir: PathBuf,
    /// The generated GTFS feed of the transit servers (empty when no scenario needs it).
    pub gtfs: PathBuf,
}
