//! [`Config`]: where and how to connect, from a URL, a `key=value` string and the `PG*`
//! environment variables (the libpq conventions).
//!
//! | key | URL part / env var | default |
//! |---|---|---|
//! | `host` | host, or `?host=/dir` / `PGHOST` (a path starting with `/` is a Unix socket directory) | `/var/run/postgresql` when it exists, else `localhost` |
//! | `port` | port / `PGPORT` | 5432 |
//! | `user` | user / `PGUSER` | `$USER` |
//! | `password` | password / `PGPASSWORD` | none |
//! | `dbname` | path / `PGDATABASE` | the user name |
//! | `sslmode` | `?sslmode=` / `PGSSLMODE`: `disable`, `prefer`, `require`, `verify-full` | `prefer` (TCP), `disable` (Unix socket) |
//! | `sslrootcert` | `?sslrootcert=` / `PGSSLROOTCERT`: extra trusted roots (PEM) for `verify-full` | system roots |
//! | `connect_timeout` | `?connect_timeout=` (seconds) / `PGCONNECT_TIMEOUT` | 10 s |
//! | `application_name` | `?application_name=` / `PGAPPNAME` | none |
//! | `options` | `?options=` / `PGOPTIONS`, e.g. `-c search_path=app` | none |
//! | `query_timeout` | `?query_timeout=` (milliseconds; Moria's own): deadline of each statement, cancelled on the server when it passes | none |
//! | `statement_cache` | `?statement_cache=` (Moria's own): prepared statements kept per connection | [`DEFAULT_STATEMENT_CACHE`] |

use std::path::{Path, PathBuf};
use std::time::Duration;

use percent_encoding::percent_decode_str;

use super::error::{Error, Result};

/// Prepared statements kept per connection unless configured.
pub const DEFAULT_STATEMENT_CACHE: usize = 256;
/// Connect timeout unless configured.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The PostgreSQL port unless configured.
pub const DEFAULT_PORT: u16 = 5432;

/// Whether and how to use TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SslMode {
    /// Never.
    Disable,
    /// Try TLS (without verifying the certificate), fall back to plain when the server refuses.
    Prefer,
    /// TLS or fail; the certificate is not verified (libpq's `require`).
    Require,
    /// TLS or fail, with the certificate verified against the roots and the host name.
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" | "verify-full" => SslMode::VerifyFull,
            _ => return Err(Error::Config(format!("unknown sslmode {s:?}"))),
        })
    }
}

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    /// A TCP host name or address.
    Tcp(String),
    /// A directory holding the server's Unix socket `.s.PGSQL.<port>`.
    Unix(PathBuf),
}

/// Everything needed to open a connection.
#[derive(Clone, PartialEq, Eq)]
pub struct Config {
    /// Server host or socket directory.
    pub host: Host,
    /// Server port (also names the Unix socket).
    pub port: u16,
    /// Role to log in as.
    pub user: String,
    /// Password, for SCRAM-SHA-256, MD5 or (over TLS only) cleartext authentication.
    pub password: Option<String>,
    /// Database name.
    pub dbname: String,
    /// TLS policy; `None` picks `prefer` for TCP and `disable` for a Unix socket.
    pub sslmode: Option<SslMode>,
    /// Extra root certificates (PEM file) trusted by `verify-full`.
    pub sslrootcert: Option<PathBuf>,
    /// Time allowed to connect, negotiate TLS and authenticate.
    pub connect_timeout: Duration,
    /// `application_name` reported to the server.
    pub application_name: Option<String>,
    /// Command-line options for the server backend (`-c name=value …`).
    pub options: Option<String>,
    /// Client-side deadline of each statement; past it the statement is cancelled on the server.
    pub query_timeout: Option<Duration>,
    /// Prepared statements kept per connection.
    pub statement_cache: usize,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "…"))
            .field("dbname", &self.dbname)
            .field("sslmode", &self.sslmode)
            .finish_non_exhaustive()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl Default for Config {
    fn default() -> Self {
        let user = std::env::var("USER").unwrap_or_else(|_| "postgres".into());
        Config {
            host: if Path::new("/var/run/postgresql").is_dir() {
                Host::Unix("/var/run/postgresql".into())
            } else {
                Host::Tcp("localhost".into())
            },
            port: DEFAULT_PORT,
            dbname: user.clone(),
            user,
            password: None,
            sslmode: None,
            sslrootcert: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            application_name: None,
            options: None,
            query_timeout: None,
            statement_cache: DEFAULT_STATEMENT_CACHE,
        }
    }
}

impl Config {
    /// The defaults overridden by the `PG*` environment variables.
    pub fn from_env() -> Result<Config> {
        let mut c = Config::default();
        let mut user_set = false;
        let mut db_set = false;
        for (var, key) in [
            ("PGHOST", "host"),
            ("PGPORT", "port"),
            ("PGUSER", "user"),
            ("PGPASSWORD", "password"),
            ("PGDATABASE", "dbname"),
            ("PGSSLMODE", "sslmode"),
            ("PGSSLROOTCERT", "sslrootcert"),
            ("PGCONNECT_TIMEOUT", "connect_timeout"),
            ("PGAPPNAME", "application_name"),
            ("PGOPTIONS", "options"),
        ] {
            if let Some(v) = env(var) {
                user_set |= key == "user";
                db_set |= key == "dbname";
                c.set(key, &v)?;
            }
        }
        if user_set && !db_set {
            c.dbname = c.user.clone();
        }
        Ok(c)
    }

    /// Parses a `postgres://` / `postgresql://` URL or a `key=value …` string, on top of the
    /// `PG*` environment variables (what the string leaves out, the environment supplies).
    pub fn parse(s: &str) -> Result<Config> {
        let mut c = Config::from_env()?;
        if let Some(rest) = s
            .strip_prefix("postgres://")
            .or_else(|| s.strip_prefix("postgresql://"))
        {
            c.apply_url(rest)?;
        } else {
            c.apply_key_values(s)?;
        }
        Ok(c)
    }

    /// Sets one libpq key (see the module table).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let number = |what: &str| -> Result<u64> {
            value
                .parse()
                .map_err(|_| Error::Config(format!("{what}: not a number: {value:?}")))
        };
        match key {
            "host" => {
                self.host = if value.starts_with('/') {
                    Host::Unix(value.into())
                } else {
                    Host::Tcp(value.into())
                }
            }
            "port" => {
                self.port = u16::try_from(number("port")?)
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| Error::Config(format!("bad port {value:?}")))?
            }
            "user" => self.user = value.into(),
            "password" => self.password = Some(value.into()),
            "dbname" => self.dbname = value.into(),
            "sslmode" => self.sslmode = Some(SslMode::parse(value)?),
            "sslrootcert" => self.sslrootcert = Some(value.into()),
            "connect_timeout" => {
                self.connect_timeout = Duration::from_secs(number("connect_timeout")?.max(1))
            }
            "application_name" => self.application_name = Some(value.into()),
            "options" => self.options = Some(value.into()),
            "query_timeout" => {
                self.query_timeout = match number("query_timeout")? {
                    0 => None,
                    ms => Some(Duration::from_millis(ms)),
                }
            }
            "statement_cache" => {
                self.statement_cache = usize::try_from(number("statement_cache")?)
                    .map_err(|_| Error::Config("statement_cache too large".into()))?
            }
            // Accepted and ignored, like libpq's unknown-but-harmless keys.
            "client_encoding" | "target_session_attrs" | "gssencmode" | "channel_binding" => {}
            _ => return Err(Error::Config(format!("unknown connection key {key:?}"))),
        }
        Ok(())
    }

    fn apply_url(&mut self, rest: &str) -> Result<()> {
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = main.split_once('/').unwrap_or((main, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if let Some(u) = userinfo {
            let (user, pass) = u.split_once(':').map_or((u, None), |(a, b)| (a, Some(b)));
            if !user.is_empty() {
                self.user = decode(user)?;
                self.dbname = self.user.clone();
            }
            if let Some(p) = pass {
                self.password = Some(decode(p)?);
            }
        }
        if !hostport.is_empty() {
            let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
                let (h, after) = h
                    .split_once(']')
                    .ok_or_else(|| Error::Config("unclosed [ in host".into()))?;
                (h, after.strip_prefix(':'))
            } else {
                match hostport.rsplit_once(':') {
                    Some((h, p)) => (h, Some(p)),
                    None => (hostport, None),
                }
            };
            if !host.is_empty() {
                self.set("host", &decode(host)?)?;
            }
            if let Some(p) = port.filter(|p| !p.is_empty()) {
                self.set("port", p)?;
            }
        }
        if !path.is_empty() {
            self.dbname = decode(path)?;
        }
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            self.set(&decode(k)?, &decode(v)?)?;
        }
        Ok(())
    }

    fn apply_key_values(&mut self, s: &str) -> Result<()> {
        let mut chars = s.chars().peekable();
        let mut db_set = false;
        let mut user_set = false;
        loop {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.peek().is_none() {
                break;
            }
            let mut key = String::new();
            while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
                key.push(c);
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.next() != Some('=') {
                return Err(Error::Config(format!("expected = after {key:?}")));
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            let mut value = String::new();
            if chars.next_if_eq(&'\'').is_some() {
                loop {
                    match chars.next() {
                        Some('\\') => value.extend(chars.next()),
                        Some('\'') => break,
                        Some(c) => value.push(c),
                        None => return Err(Error::Config("unterminated quoted value".into())),
                    }
                }
            } else {
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    if c == '\\' {
                        value.extend(chars.next());
                    } else {
                        value.push(c);
                    }
                }
            }
            db_set |= key == "dbname";
            user_set |= key == "user";
            self.set(&key, &value)?;
        }
        if user_set && !db_set {
            self.dbname = self.user.clone();
        }
        Ok(())
    }

    /// The TLS policy in force (`prefer` over TCP, `disable` over a Unix socket, unless set).
    pub fn effective_sslmode(&self) -> SslMode {
        self.sslmode.unwrap_or(match self.host {
            Host::Tcp(_) => SslMode::Prefer,
            Host::Unix(_) => SslMode::Disable,
        })
    }

    /// The Unix socket path, for a Unix host.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.host {
            Host::Unix(dir) => Some(dir.join(format!(".s.PGSQL.{}", self.port))),
            Host::Tcp(_) => None,
        }
    }
}

/// Percent-decoding of one URL component (`+` is itself): every `%` must start a two-digit hex
/// escape and the result must be UTF-8.
fn decode(s: &str) -> Result<String> {
    let bad = || Error::Config(format!("bad percent escape or non-UTF-8 text in {s:?}"));
    let b = s.as_bytes();
    let escapes_valid = b
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == b'%')
        .all(|(i, _)| {
            b.get(i + 1..i + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
        });
    if !escapes_valid {
        return Err(bad());
    }
    percent_decode_str(s)
        .decode_utf8()
        .map(|d| d.into_owned())
        .map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_with_everything() {
        let c = Config::parse(
            "postgres://al%40x:p%3Ass@db.example:6543/shop?sslmode=require&application_name=a&query_timeout=250",
        )
        .unwrap();
        assert_eq!(c.user, "al@x");
        assert_eq!(c.password.as_deref(), Some("p:ss"));
        assert_eq!(c.host, Host::Tcp("db.example".into()));
        assert_eq!(c.port, 6543);
        assert_eq!(c.dbname, "shop");
        assert_eq!(c.sslmode, Some(SslMode::Require));
        assert_eq!(c.query_timeout, Some(Duration::from_millis(250)));
        assert_eq!(c.application_name.as_deref(), Some("a"));
    }

    #[test]
    fn url_with_unix_socket_directory() {
        let c = Config::parse("postgresql://u@%2Ftmp%2Fpg:5433/d").unwrap();
        assert_eq!(c.host, Host::Unix("/tmp/pg".into()));
        assert_eq!(c.socket_path().unwrap(), Path::new("/tmp/pg/.s.PGSQL.5433"));
        assert_eq!(c.effective_sslmode(), SslMode::Disable);
        let c = Config::parse("postgres:///d?host=/run/x&port=7").unwrap();
        assert_eq!(c.host, Host::Unix("/run/x".into()));
        assert_eq!(c.port, 7);
    }

    #[test]
    fn key_value_string() {
        let c = Config::parse("host=127.0.0.1 port=5 user=bob password='it''s \\' x' dbname = d")
            .unwrap_err();
        assert!(matches!(c, Error::Config(_)));
        let c =
            Config::parse("host=127.0.0.1 port=5 user=bob password='a \\'b' dbname = d").unwrap();
        assert_eq!(c.password.as_deref(), Some("a 'b"));
        assert_eq!((c.port, c.dbname.as_str()), (5, "d"));
        assert_eq!(c.effective_sslmode(), SslMode::Prefer);
        let c = Config::parse("user=carol").unwrap();
        assert_eq!(c.dbname, "carol");
    }

    #[test]
    fn bad_values_are_errors() {
        for bad in [
            "postgres://h:99999/d",
            "postgres://h/d?sslmode=maybe",
            "postgres://h/d?nonsense=1",
            "host=h port",
            "postgres://h/%zz",
            "postgres://h/d%4",
            "postgres://h/d%",
            "postgres://h/%ff",
        ] {
            assert!(Config::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn url_parts_are_percent_decoded_once_and_plus_is_itself() {
        let c = Config::parse("postgres://a+b@h/caf%C3%A9%2541").unwrap();
        assert_eq!(c.user, "a+b");
        assert_eq!(c.dbname, "café%41");
    }
}
