//! fileserver: Mordor's `simplehttpfileserver`, done right — a directory served over HTTP and
//! HTTPS by moria-http's `StaticFiles`.
//!
//! ```text
//! cargo run --release -p moria-examples --bin fileserver                 # cwd on :8080 and :8443
//! cargo run --release -p moria-examples --bin fileserver -- --root /srv/www --gzip --upload
//! curl -k https://localhost:8443/README.md
//! curl -F file=@a.txt http://localhost:8080/dir/        # with --upload
//! curl -T a.txt http://localhost:8080/dir/               # the same, as a PUT
//! curl -o dir.tar 'http://localhost:8080/dir/?download=tar'
//! ```
//!
//! A directory without `index.html` is listed (sortable, filterable, with archive links and,
//! with `--upload`, an upload form); `--no-listing` answers 404 instead, `--no-archive` drops
//! the archive downloads.
//!
//! Without `--cert`/`--key` one self-signed certificate (localhost, 127.0.0.1, ::1) is made at
//! start and shared by every worker; `curl -k` or `--cacert` accepts it. With `--client-ca`,
//! HTTPS clients must present a certificate issued by one of those CAs (`curl --cert`). Each
//! flag has a `MORIA_*` environment twin (but `--auth`, given once per user). Ctrl-C (SIGINT)
//! or SIGTERM stops accepting, lets requests in flight finish (up to `--grace-secs`) and exits.
//!
//! `--auth USER:PASSWORD` (repeatable) asks every request, HTTP and HTTPS, for Basic
//! credentials; the user may read and, with `--upload`, upload. `--auth-read-only USER:PASSWORD`
//! names a user who may only read. The password may be a hash instead (so that no password is
//! on the command line): `echo -n secret | fileserver --hash-password` prints one
//! (`pbkdf2-sha256:…`, or give `sha256:HEX`). Wrong credentials are logged with the user name
//! they claimed, never the password.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use moria_crypto::pki::Pki;
use moria_crypto::{Identity, TlsAcceptor};
use moria_http::access_log::{self, Sink};
use moria_http::compress::Compression;
use moria_http::health::Readiness;
use moria_http::layer::{read_only, BasicAuth};
use moria_http::static_files::Uploads;
use moria_http::{Router, Server, StaticFiles};
use moria_runtime::log_file::LogFile;
use moria_runtime::shutdown;

/// Command-line flags (each has a `MORIA_*` environment equivalent).
#[derive(Parser, Debug)]
#[command(about = "Moria static file server (HTTP and HTTPS)")]
struct Args {
    /// Directory to serve.
    #[arg(long, env = "MORIA_ROOT", default_value = ".")]
    root: PathBuf,
    /// Plain-HTTP address.
    #[arg(long, env = "MORIA_HTTP", default_value = "0.0.0.0:8080")]
    http: String,
    /// HTTPS address.
    #[arg(long, env = "MORIA_HTTPS", default_value = "0.0.0.0:8443")]
    https: String,
    /// Serve plain HTTP only.
    #[arg(long, env = "MORIA_NO_HTTPS")]
    no_https: bool,
    /// PEM certificate chain for HTTPS (default: a self-signed certificate made at start).
    #[arg(long, env = "MORIA_CERT", requires = "key")]
    cert: Option<PathBuf>,
    /// PEM private key for --cert.
    #[arg(long, env = "MORIA_KEY", requires = "cert")]
    key: Option<PathBuf>,
    /// PEM file (or directory of PEM files) of CAs, and their CRLs, whose client certificates
    /// HTTPS requires (default: no client certificate asked for).
    #[arg(long, env = "MORIA_CLIENT_CA")]
    client_ca: Option<PathBuf>,
    /// Scheduler worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
    /// Answer 404 for directories without index.html instead of listing them.
    #[arg(long, env = "MORIA_NO_LISTING")]
    no_listing: bool,
    /// Offer no `.tar` / `.tar.gz` downloads of directories.
    #[arg(long, env = "MORIA_NO_ARCHIVE")]
    no_archive: bool,
    /// Accept uploads: multipart POST to a directory URL (the listing's form), PUT to a file URL.
    #[arg(long, env = "MORIA_UPLOAD")]
    upload: bool,
    /// Largest uploaded file, in bytes.
    #[arg(long, env = "MORIA_MAX_UPLOAD", default_value_t = Uploads::default().max_file_bytes)]
    max_upload: u64,
    /// Let an upload replace an existing file (otherwise 409 Conflict).
    #[arg(long, env = "MORIA_OVERWRITE")]
    overwrite: bool,
    /// Let the upload form create subdirectories.
    #[arg(long, env = "MORIA_MKDIR")]
    mkdir: bool,
    /// Require HTTP Basic credentials: a user who may read and upload, as USER:PASSWORD or
    /// USER:HASH (from --hash-password, or sha256:HEX). Repeatable.
    #[arg(long = "auth", value_name = "USER:PASSWORD")]
    auth: Vec<String>,
    /// Like --auth, for a user who may only read (GET, HEAD, OPTIONS). Repeatable.
    #[arg(long = "auth-read-only", value_name = "USER:PASSWORD")]
    auth_read_only: Vec<String>,
    /// Print the hash of the password read from standard input, for --auth USER:HASH, and exit.
    #[arg(long)]
    hash_password: bool,
    /// Compress textual files on the fly for clients that accept gzip.
    #[arg(long, env = "MORIA_GZIP")]
    gzip: bool,
    /// Cache-Control value sent with every file (default: none).
    #[arg(long, env = "MORIA_CACHE_CONTROL")]
    cache_control: Option<String>,
    /// Keep small files open for this many seconds between checks (0: no open-file cache).
    #[arg(long, env = "MORIA_CACHE_SECS", default_value_t = 0)]
    cache_secs: u64,
    /// Log one line per request to stderr (or --access-log-file), bare, in
    /// --access-log-format.
    #[arg(long, env = "MORIA_ACCESS_LOG")]
    access_log: bool,
    /// Access-log line format: common, combined or json (implies --access-log).
    #[arg(long, env = "MORIA_ACCESS_LOG_FORMAT")]
    access_log_format: Option<access_log::Format>,
    /// Write the access log to this file, reopened on SIGHUP (implies --access-log).
    #[arg(long, env = "MORIA_ACCESS_LOG_FILE")]
    access_log_file: Option<PathBuf>,
    /// Serve /metrics (Prometheus), /healthz and /readyz on this separate address.
    #[arg(long, env = "MORIA_METRICS")]
    metrics: Option<String>,
    /// Record no request metrics (connection counters stay).
    #[arg(long, env = "MORIA_NO_METRICS")]
    no_metrics: bool,
    /// Serve HTTP/1.1 only: no HTTP/2 by ALPN on HTTPS nor by its preface on HTTP.
    #[arg(long, env = "MORIA_NO_H2")]
    no_h2: bool,
    /// Send every file-system call through the offload pool (no fast path on the fiber).
    #[arg(long, env = "MORIA_NO_INLINE_IO")]
    no_inline_io: bool,
    /// How long Ctrl-C waits for requests in flight.
    #[arg(long, env = "MORIA_GRACE_SECS", default_value_t = 10)]
    grace_secs: u64,
    /// Most connections served at once; more clients get 503 with Retry-After.
    #[arg(long, env = "MORIA_MAX_CONNECTIONS", default_value_t = moria_http::limits::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.hash_password {
        let mut password = String::new();
        std::io::stdin().read_line(&mut password)?;
        let password = password.trim_end_matches(['\r', '\n']);
        println!("{}", BasicAuth::hash_password(password)?);
        return Ok(());
    }
    let auth = auth(&args)?;
    let access = match &args.access_log_file {
        Some(path) => Some(Sink::File(LogFile::open(path)?)),
        None if args.access_log || args.access_log_format.is_some() => Some(Sink::Stderr),
        None => None,
    };
    if let Some(f) = args.access_log_format {
        access_log::set_format(f);
    }
    moria_examples::init_logging_with_access("info,may=warn,moria_http::access=warn", access)?;
    let runtime = moria_examples::start_runtime(args.workers)?;
    let workers = runtime.config().workers;

    let files = files(&args)?;
    let root = files.root().display().to_string();

    let mut server = Server::builder()
        .listen(args.http.as_str())
        .listeners_per_address(workers)
        .shutdown_token(shutdown::global().clone())
        .shutdown_grace(Duration::from_secs(args.grace_secs))
        .max_connections(args.max_connections)
        .metrics(!args.no_metrics)
        .h2(!args.no_h2);
    if args.upload {
        // A multipart body carries its delimiters and part headers besides the file.
        server = server.max_body(args.max_upload.saturating_add(MULTIPART_OVERHEAD));
    }
    let mut certificate = "";
    if !args.no_https {
        let identity = match (&args.cert, &args.key) {
            (Some(cert), Some(key)) => {
                certificate = "certificate from --cert";
                Identity::from_pem_files(cert, key)?
            }
            _ => {
                certificate = "self-signed certificate for localhost (curl -k)";
                Identity::self_signed(&["localhost", "127.0.0.1", "::1"])?
            }
        };
        let mut acceptor = TlsAcceptor::builder(identity);
        if !args.no_h2 {
            acceptor = acceptor.alpn(&["h2", "http/1.1"]);
        }
        if let Some(path) = &args.client_ca {
            acceptor = acceptor.client_auth(&Pki::builder().add_path(path)?.build()?);
        }
        server = server.listen_tls(args.https.as_str(), acceptor.build()?);
    }
    shutdown::listen_for_signals()?;
    let server = match auth {
        Some(auth) => server.start(Router::new().fallback(files).layer(auth))?,
        None => server.start(files)?,
    };
    let metrics = match &args.metrics {
        Some(addr) => {
            let token = shutdown::global().clone();
            let ready = Readiness::new(token.clone());
            Some(moria_examples::metrics_listener(addr, token, ready)?)
        }
        None => None,
    };

    let urls: Vec<String> = server
        .local_addrs()
        .iter()
        .enumerate()
        .map(|(i, a)| url(if i == 0 { "http" } else { "https" }, *a))
        .collect();
    let tls = if args.no_https {
        String::new()
    } else {
        format!("; {certificate}")
    };
    let metrics_url = metrics
        .as_ref()
        .map(|m| format!("; metrics on {}", url("http", m.local_addr())))
        .unwrap_or_default();
    println!(
        "fileserver: serving {root} on {} with {workers} workers{tls}{metrics_url}; Ctrl-C to \
         stop",
        urls.join(" and ")
    );
    server.wait();
    if let Some(m) = &metrics {
        m.wait();
    }
    log::info!("fileserver: stopped");
    log::logger().flush();
    Ok(())
}

/// Room for a multipart body's delimiters and part headers beyond `--max-upload`.
const MULTIPART_OVERHEAD: u64 = 64 * 1024;

/// The handler, composed in one place: the file server with the flags' settings. (Anything
/// wrapping it, such as authentication, wraps what this returns.)
fn files(args: &Args) -> Result<StaticFiles, String> {
    let uploads = args.upload.then_some(Uploads {
        max_file_bytes: args.max_upload,
        overwrite: args.overwrite,
        mkdir: args.mkdir,
    });
    StaticFiles::builder(&args.root)
        .listing(!args.no_listing)
        .archives(!args.no_archive)
        .uploads(uploads)
        .gzip(args.gzip.then(Compression::default))
        .cache_control(args.cache_control.as_deref())
        .inline_io(!args.no_inline_io)
        .open_file_cache((args.cache_secs > 0).then(|| Duration::from_secs(args.cache_secs)))
        .build()
        .map_err(|e| format!("cannot serve {}: {e}", args.root.display()))
}

/// The `--auth` and `--auth-read-only` users as one Basic-auth layer, if there is any.
fn auth(args: &Args) -> Result<Option<BasicAuth>, String> {
    if args.auth.is_empty() && args.auth_read_only.is_empty() {
        return Ok(None);
    }
    let mut auth = BasicAuth::new("fileserver");
    let mut readers = HashSet::new();
    let full = args.auth.iter().map(|s| (s, false));
    for (spec, read_only_user) in full.chain(args.auth_read_only.iter().map(|s| (s, true))) {
        // The message never repeats the value: it holds a password.
        let (user, secret) = spec
            .split_once(':')
            .filter(|(u, s)| !u.is_empty() && !s.is_empty())
            .ok_or("--auth: expected USER:PASSWORD or USER:HASH")?;
        auth = if secret.starts_with("sha256:") || secret.starts_with("pbkdf2-sha256:") {
            auth.user_hashed(user, secret)
                .map_err(|e| format!("--auth {user}: {e}"))?
        } else {
            auth.user(user, secret)
        };
        if read_only_user {
            readers.insert(user.to_string());
        }
    }
    Ok(Some(auth.rights(move |user, req| {
        !readers.contains(user) || read_only(req.method())
    })))
}

/// A URL a browser on this machine can open (`localhost` for an unspecified address).
fn url(scheme: &str, addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        format!("{scheme}://localhost:{}/", addr.port())
    } else {
        format!("{scheme}://{addr}/")
    }
}
