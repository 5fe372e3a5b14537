//! wget: downloads a URL to a file with Moria's HTTP client, resumable.
//!
//! `cargo run -p moria-examples --bin wget -- URL [-O FILE] [-c] [-q] [--header 'Name: value']
//! [--cacert PEM] [-k]`
//!
//! The body goes to `FILE.part` and is renamed to `FILE` only once complete, so a broken
//! transfer never looks like a finished file. The resource's validator (a strong ETag, else
//! Last-Modified) is kept beside it in `FILE.part.validator`; `-c` asks for the rest with
//! `Range` and `If-Range`, and starts over when the resource has changed (the server answers
//! 200 instead of 206). Proxies come from `http_proxy`, `https_proxy` and `no_proxy`. Exits
//! non-zero with a message on an HTTP error status, an unverified certificate or a broken
//! transfer. Progress (bytes, rate, ETA) is drawn on stderr when it is a terminal, unless `-q`.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::client::{Client, Error, Response};
use moria_runtime::{blocking_io, Runtime};
use moria_streams::File;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(about = "Download a URL with Moria's HTTP client")]
struct Args {
    /// The http:// or https:// URL.
    url: String,
    /// Where to save (default: the URL's last path segment, or index.html).
    #[arg(short = 'O', long = "output-document")]
    output: Option<PathBuf>,
    /// Resume a partial download left in FILE.part.
    #[arg(short = 'c', long = "continue")]
    resume: bool,
    /// No progress or summary.
    #[arg(short, long)]
    quiet: bool,
    /// An extra request header, `Name: value` (repeatable).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Also trust the CA certificates in this PEM file.
    #[arg(long)]
    cacert: Option<PathBuf>,
    /// Insecure: accept any server certificate.
    #[arg(short = 'k', long = "no-check-certificate")]
    insecure: bool,
}

/// Read size of the copy loop.
const CHUNK: usize = 64 * 1024;
/// How often the progress line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let args = Args::parse();
    let runtime = match Runtime::builder().from_env().and_then(|b| b.build()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("wget: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.run(move || fetch(&args)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("wget: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("wget: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The file name a URL saves to by default.
fn default_name(url: &str) -> PathBuf {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or_default();
    if path.matches('/').count() < 3 || last.is_empty() {
        PathBuf::from("index.html")
    } else {
        PathBuf::from(last)
    }
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn fetch(args: &Args) -> Result<(), Failure> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_name(&args.url));
    let part = with_suffix(&output, ".part");
    let validator_file = with_suffix(&output, ".part.validator");

    let mut builder = Client::builder()
        .proxy_from_env()
        .danger_accept_invalid_certs(args.insecure);
    if let Some(path) = args.cacert.clone() {
        let pem = blocking_io(move || std::fs::read(&path))?;
        builder = builder.add_root_certificate_pem(&pem);
    }
    let client = builder.build()?;
    // The bytes as stored, so that byte ranges mean the same thing on every attempt.
    let mut request = client.get(&args.url).header("Accept-Encoding", "identity");
    for h in &args.headers {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| format!("--header {h:?} is not `Name: value`"))?;
        request = request.header(name.trim(), value.trim());
    }
    let offset = if args.resume { size_of(&part)? } else { 0 };
    if offset > 0 {
        request = request.header("Range", &format!("bytes={offset}-"));
        if let Some(v) = read_validator(&validator_file)? {
            request = request.header("If-Range", &v);
        }
    }
    let response = request.send().map_err(explain)?;
    let start = match response.status() {
        206 if offset > 0 => {
            check_range_start(&response, offset)?;
            if !args.quiet {
                eprintln!("wget: resuming at byte {offset}");
            }
            offset
        }
        200..=299 => {
            if offset > 0 && !args.quiet {
                eprintln!("wget: the resource changed or cannot resume; starting over");
            }
            save_validator(&response, &validator_file)?;
            0
        }
        416 if offset > 0 && complete_length(&response) == Some(offset) => {
            return finish(args, &part, &output, &validator_file, offset);
        }
        status => {
            return Err(format!("{}: HTTP {status} {}", args.url, response.reason()).into());
        }
    };
    let total = response
        .headers()
        .get("content-length")
        .and_then(|n| n.parse::<u64>().ok())
        .map(|n| n + start);
    let mut file = if start > 0 {
        File::options().append(true).open(&part)?
    } else {
        File::create(&part)?
    };
    let show = !args.quiet && std::io::stderr().is_terminal();
    let received = copy(response, &mut file, start, total, show).map_err(|(done, e)| {
        format!(
            "{}: transfer broken after {done} bytes ({e}); the partial file is {}; -c resumes",
            args.url,
            part.display()
        )
    })?;
    file.sync_all()?;
    finish(args, &part, &output, &validator_file, received)
}

/// The client's error, saying what to do when the server's certificate did not verify.
fn explain(e: Error) -> Failure {
    match e {
        Error::TlsVerify { url, reason } => format!(
            "the TLS certificate of {url} could not be verified ({reason}); --cacert PEM \
             trusts its issuer, -k skips the check"
        )
        .into(),
        e => e.into(),
    }
}

/// Renames the complete `.part` file into place.
fn finish(
    args: &Args,
    part: &Path,
    output: &Path,
    validator_file: &Path,
    bytes: u64,
) -> Result<(), Failure> {
    let (part, output, validator_file) = (
        part.to_owned(),
        output.to_owned(),
        validator_file.to_owned(),
    );
    let shown = output.display().to_string();
    blocking_io(move || {
        std::fs::rename(&part, &output)?;
        match std::fs::remove_file(&validator_file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    })?;
    if !args.quiet {
        eprintln!("wget: saved {shown} ({bytes} bytes)");
    }
    Ok(())
}

/// Copies the body into `file`; returns the file's length, or how far it got and why not.
fn copy(
    mut body: Response,
    file: &mut File,
    start: u64,
    total: Option<u64>,
    show: bool,
) -> Result<u64, (u64, std::io::Error)> {
    let mut buf = vec![0u8; CHUNK];
    let mut done = start;
    let began = Instant::now();
    let mut drawn = began;
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err((done, e)),
        };
        file.write_all(&buf[..n]).map_err(|e| (done, e))?;
        done += n as u64;
        if show && drawn.elapsed() >= REDRAW {
            drawn = Instant::now();
            draw(done - start, done, total, began.elapsed());
        }
    }
    if show {
        draw(done - start, done, total, began.elapsed());
        eprintln!();
    }
    Ok(done)
}

/// One progress line: bytes so far, rate, and time left when the total is known.
fn draw(this_run: u64, done: u64, total: Option<u64>, elapsed: Duration) {
    let rate = this_run as f64 / elapsed.as_secs_f64().max(0.001);
    let mut line = format!("\r{done} bytes  {:.1} MiB/s", rate / (1024.0 * 1024.0));
    if let Some(total) = total {
        let left = total.saturating_sub(done) as f64 / rate.max(1.0);
        let pct = done as f64 * 100.0 / total.max(1) as f64;
        line.push_str(&format!("  {pct:.0}% of {total}  ETA {left:.0}s"));
    }
    let mut err = std::io::stderr();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// The size of `path`, 0 when it does not exist.
fn size_of(path: &Path) -> Result<u64, Failure> {
    let path = path.to_owned();
    Ok(blocking_io(move || match std::fs::metadata(&path) {
        Ok(m) => Ok(m.len()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    })?)
}

fn read_validator(path: &Path) -> Result<Option<String>, Failure> {
    let path = path.to_owned();
    Ok(blocking_io(move || match std::fs::read_to_string(&path) {
        Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_owned())),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    })?)
}

/// Keeps what `If-Range` needs to resume this exact representation: a strong ETag, else the
/// Last-Modified date (weak ETags cannot be used in If-Range, RFC 9110 §13.1.5).
fn save_validator(response: &Response, path: &Path) -> Result<(), Failure> {
    let headers = response.headers();
    let validator = headers
        .get("etag")
        .filter(|e| !e.starts_with("W/"))
        .or_else(|| headers.get("last-modified"))
        .unwrap_or_default()
        .to_owned();
    let path = path.to_owned();
    Ok(blocking_io(move || std::fs::write(&path, validator))?)
}

/// Fails unless the 206 starts where the partial file ends.
fn check_range_start(response: &Response, offset: u64) -> Result<(), Failure> {
    let range = response.headers().get("content-range").unwrap_or_default();
    let first = range
        .strip_prefix("bytes ")
        .and_then(|r| r.split('-').next())
        .and_then(|n| n.parse::<u64>().ok());
    match first {
        Some(n) if n == offset => Ok(()),
        _ => Err(format!("the server answered range {range:?} for bytes {offset}-").into()),
    }
}

/// The complete length of a `416` (`Content-Range: bytes */N`).
fn complete_length(response: &Response) -> Option<u64> {
    response
        .headers()
        .get("content-range")?
        .strip_prefix("bytes */")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        assert_eq!(default_name("http://h"), PathBuf::from("index.html"));
        assert_eq!(default_name("http://h/"), PathBuf::from("index.html"));
        assert_eq!(default_name("http://h/a/"), PathBuf::from("index.html"));
        assert_eq!(default_name("http://h/a/b.iso?x=1"), PathBuf::from("b.iso"));
    }
}
