//! Client bench: `--connections` fibers issuing keep-alive GETs for a 1312-byte file against
//! nginx (one worker pinned to CPU 0, started here with a generated configuration), beside wrk
//! with the same connection count; the two take turns run by run and the table gives medians.
//!
//! `taskset -c 1 cargo run --release -p moria-bench --bin client -- --connections 64 --seconds 5
//! --runs 5` (needs the `nginx` and `wrk` packages).

use std::error::Error;
use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::client::Client;
use moria_runtime::{spawn, Runtime};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "moria-http client against nginx, beside wrk")]
struct Args {
    /// Concurrent connections (fibers for the client, `-c` for wrk).
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// Seconds per run.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// Runs of each load generator, alternating.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Worker threads of the client's runtime.
    #[arg(long, default_value_t = 1)]
    workers: usize,
}

/// The size of the file fetched (Mordor's benchmark file).
const FILE_SIZE: usize = 1312;

/// nginx serving one directory; killed and its directory removed on drop.
struct Nginx {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Nginx {
    fn start() -> Result<Nginx, Box<dyn Error>> {
        let dir = std::env::temp_dir().join(format!("moria-bench-client-{}", std::process::id()));
        fs::create_dir_all(dir.join("www"))?;
        fs::create_dir_all(dir.join("tmp"))?;
        fs::write(dir.join("www/file.bin"), vec![b'm'; FILE_SIZE])?;
        // nginx cannot report a port it picked: take a spare one.
        let port = moria_runtime::net::spare_port()?;
        let d = dir.display();
        fs::write(
            dir.join("nginx.conf"),
            format!(
                "daemon off; master_process off; worker_processes 1; worker_cpu_affinity 1;
pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off; keepalive_requests 100000000; keepalive_timeout 300s;
    client_body_temp_path {d}/tmp/body; proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi; uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    server {{ listen 127.0.0.1:{port}; root {d}/www; }}
}}
"
            ),
        )?;
        let child = Command::new("nginx")
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start nginx ({e}): install the Debian package `nginx`"))?;
        let nginx = Nginx { child, dir, port };
        let give_up = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > give_up {
                return Err("nginx did not start listening within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(nginx)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Requests per second of `connections` fibers sharing one client for `seconds`.
fn moria_run(url: String, connections: usize, seconds: u64) -> Result<f64, String> {
    let client = Client::builder()
        .pool_max_open_per_host(connections)
        .pool_max_idle_per_host(connections)
        .decompress(false)
        .build()
        .map_err(|e| e.to_string())?;
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let stop = started + Duration::from_secs(seconds);
    let fibers: Vec<_> = (0..connections)
        .map(|_| {
            let (client, url, done) = (client.clone(), url.clone(), Arc::clone(&done));
            spawn(move || -> Result<(), String> {
                while Instant::now() < stop {
                    let body = client
                        .get(&url)
                        .send()
                        .and_then(|r| r.bytes())
                        .map_err(|e| e.to_string())?;
                    if body.len() != FILE_SIZE {
                        return Err(format!("got {} bytes, not {FILE_SIZE}", body.len()));
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    for f in fibers {
        f.join().map_err(|e| e.to_string())??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// wrk's requests per second with one thread and `connections` connections.
fn wrk_run(url: &str, connections: usize, seconds: u64) -> Result<f64, Box<dyn Error>> {
    let out = Command::new("wrk")
        .args([
            "-t1",
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            url,
        ])
        .output()
        .map_err(|e| format!("cannot run wrk ({e}): install the Debian package `wrk`"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no Requests/sec in wrk's output:\n{text}").into())
}

fn median(runs: &[f64]) -> f64 {
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

fn main() -> Result<(), Box<dyn Error>> {
    env_logger::init();
    let args = Args::parse();
    let rt = Runtime::builder().workers(args.workers).build()?;
    let nginx = Nginx::start()?;
    let url = format!("http://127.0.0.1:{}/file.bin", nginx.port);
    let (mut moria, mut wrk) = (Vec::new(), Vec::new());
    for _ in 0..args.runs {
        let (u, c, s) = (url.clone(), args.connections, args.seconds);
        moria.push(rt.run(move || moria_run(u, c, s))??);
        wrk.push(wrk_run(&url, args.connections, args.seconds)?);
    }
    let (m, w) = (median(&moria), median(&wrk));
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "{} connections, {} s per run, {} runs, {FILE_SIZE}-byte file from nginx",
        args.connections, args.seconds, args.runs
    );
    println!("| load generator | req/s (median) | runs |");
    println!("|---|---|---|");
    println!("| moria-http client | {m:.0} | {} |", list(&moria));
    println!("| wrk | {w:.0} | {} |", list(&wrk));
    println!("ratio moria / wrk: {:.2}", m / w.max(1.0));
    Ok(())
}
