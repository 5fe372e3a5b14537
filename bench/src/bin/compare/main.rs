//! compare: Moria against its peers on this machine, in one run — TFB's seven test types vs a
//! hyper + tokio-postgres application and may_minihttp, hello vs may_minihttp, a static file
//! and a 1 GiB file vs nginx over HTTP and HTTPS, with wrk and siege.
//!
//! `bench/compare.sh [--quick] [--scenario NAME]…` builds the servers in release and runs this.
//! Servers and load generator are pinned to different CPUs (when there are two or more), get
//! the same number of workers, are warmed up, and take turns run by run; each figure is the
//! median of `--runs`. Prints one markdown table of Moria's ratio to each peer and writes the
//! raw results as JSON under `target/bench/`.
//!
//! | module | what lives there |
//! |---|---|
//! | `tools` | wrk, siege, nginx, curl, PostgreSQL: found or installed (root) or the command printed |
//! | `setup` | files, certificate, nginx and siege configuration, the throwaway PostgreSQL |
//! | `server` | starting, pinning, probing and stopping each server |
//! | `scenario` | the scenario list |
//! | `load` | wrk and siege runs and their output |
//! | `procstat` | CPU seconds and peak RSS of a server's process tree |
//! | `report` | medians, the ratio table |

mod load;
mod procstat;
mod report;
mod scenario;
mod server;
mod setup;
mod tools;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;

use load::{Generator, Load};
use report::{Run, ScenarioResult, ServerResult};
use scenario::Scenario;
use server::{Env, Kind, Running};

/// The longest a single measured run may last.
const MAX_SECONDS: u64 = 15;
/// The binaries `bench/compare.sh` builds.
const BINARIES: &[&str] = &[
    "techempower",
    "fileserver",
    "hello",
    "peer_minihttp",
    "peer_hyper_tfb",
];

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(about = "Moria vs its peers: TFB, hello, static files; wrk and siege on loopback")]
struct Args {
    /// About a minute and a half: one 1-second run per server, no warm-up, small siege runs.
    #[arg(long)]
    quick: bool,
    /// Run only the scenarios whose name contains NAME (repeatable; `tfb`, `static-https`, …).
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<String>,
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
    /// Measured runs per server and scenario (median kept). Default 3, 1 with --quick.
    #[arg(long)]
    runs: Option<usize>,
    /// Seconds per wrk run (at most 15). Default 5, 1 with --quick.
    #[arg(long)]
    seconds: Option<u64>,
    /// Directory of the release binaries (default: this program's directory).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Where the JSON goes.
    #[arg(long, default_value = "target/bench")]
    out: PathBuf,
}

/// CPUs for servers and for the load generator, as `taskset -c` lists, and their counts.
struct Cpus {
    server: String,
    load: String,
    workers: usize,
    load_count: usize,
}

fn split_cpus() -> Cpus {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        return Cpus {
            server: String::new(),
            load: String::new(),
            workers: 1,
            load_count: 1,
        };
    }
    let half = n / 2;
    let list = |a: usize, b: usize| {
        if a == b {
            a.to_string()
        } else {
            format!("{a}-{b}")
        }
    };
    Cpus {
        server: list(0, half - 1),
        load: list(half, n - 1),
        workers: half,
        load_count: n - half,
    }
}

fn url(s: &Scenario, r: &Running) -> String {
    match (s.https, r.https) {
        (true, Some(a)) => format!("https://{a}{}", s.path),
        _ => format!("http://{}{}", r.http, s.path),
    }
}

/// Runs one scenario: start every server, probe, warm up, measure in turns, stop.
fn run_scenario(
    s: &Scenario,
    env: &Env,
    gen: &Generator<'_>,
    runs: usize,
    secs: u64,
    warm: u64,
) -> ScenarioResult {
    let kinds: Vec<Kind> = std::iter::once(s.moria)
        .chain(s.peers.iter().copied())
        .collect();
    let mut servers: Vec<(ServerResult, Option<Running>)> = kinds
        .iter()
        .map(|&kind| {
            let started = Running::start(kind, env);
            let refused = match &started {
                Err(e) => Some(e.clone()),
                Ok(r) => match server::status_of(&url(s, r)) {
                    Ok(200) => None,
                    Ok(code) => Some(format!("answered {code}, not 200")),
                    Err(e) => Some(e),
                },
            };
            let result = ServerResult {
                kind,
                refused,
                runs: Vec::new(),
                peak_rss_kib: 0,
            };
            (result, started.ok())
        })
        .collect();
    let warm_load = match s.load {
        Load::Siege { .. } => Load::Wrk {
            conns: 10,
            depth: 1,
        },
        ref l => l.clone(),
    };
    for (res, running) in servers.iter_mut().filter(|_| warm > 0) {
        if let (None, Some(r)) = (&res.refused, running.as_ref()) {
            if let Err(e) = gen.run(&warm_load, &url(s, r), warm) {
                eprintln!("  {} {}: warm-up: {e}", s.name, res.kind.name());
            }
        }
    }
    for i in 0..runs {
        for (res, running) in servers.iter_mut() {
            let Some(r) = running.as_ref().filter(|_| res.refused.is_none()) else {
                continue;
            };
            let before = procstat::cpu_seconds(r.pid());
            let got = gen.run(&s.load, &url(s, r), s.seconds(secs));
            let cpu_s = procstat::cpu_seconds(r.pid()) - before;
            match &got {
                Ok(m) => eprintln!(
                    "  {} run {}: {:<22} {:>10.1} req/s  errors {} non-2xx {}  cpu {:.2}s",
                    s.name,
                    i + 1,
                    res.kind.name(),
                    m.rps,
                    m.errors,
                    m.non_2xx,
                    cpu_s
                ),
                Err(e) => eprintln!("  {} run {}: {}: {e}", s.name, i + 1, res.kind.name()),
            }
            let (measured, failure) = match got {
                Ok(m) => (Some(m), None),
                Err(e) => (None, Some(e)),
            };
            res.runs.push(Run {
                measured,
                failure,
                cpu_s,
            });
            res.peak_rss_kib = procstat::peak_rss_kib(r.pid());
        }
    }
    ScenarioResult {
        scenario: s.clone(),
        servers: servers.into_iter().map(|(r, _)| r).collect(),
    }
}

fn first_line(path: &str, key: &str) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(key))
                .map(|l| l.split_once(':').map_or(l, |(_, v)| v).trim().to_owned())
        })
        .unwrap_or_default()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// One line naming the machine and the tools.
fn machine() -> String {
    format!(
        "{}, {} CPUs, Linux {}, {}, {}, {}, PostgreSQL from {}",
        first_line("/proc/cpuinfo", "model name"),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim(),
        tools::version("nginx", "-v"),
        tools::version("wrk", "-v"),
        tools::version("siege", "--version"),
        std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| d
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .max())
            .map_or("PATH".into(), |v| format!("Debian's postgresql {v}")),
    )
}

/// Raises the open-file limit to the hard limit (500 connections on each side need more than
/// the usual 1024); servers and load generators inherit it.
fn raise_nofile() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let (runs, secs, warm, reps) = if args.quick {
        (args.runs.unwrap_or(1), args.seconds.unwrap_or(1), 0, 4)
    } else {
        (args.runs.unwrap_or(3), args.seconds.unwrap_or(5), 2, 20)
    };
    if secs == 0 || secs > MAX_SECONDS || runs == 0 {
        return Err(format!(
            "--seconds must be 1..={MAX_SECONDS} and --runs at least 1"
        ));
    }
    let cpus = split_cpus();
    let chosen = scenario::select(scenario::all(cpus.load_count, reps), &args.scenarios);
    if args.list || chosen.is_empty() {
        for s in scenario::all(cpus.load_count, reps) {
            println!("{:<22} {:<16} {}", s.name, s.load.label(), s.what);
        }
        return if args.list {
            Ok(())
        } else {
            Err("no scenario matches --scenario".into())
        };
    }
    tools::ensure()?;
    raise_nofile();
    let bin = match args.bin {
        Some(b) => b,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .map(Path::to_path_buf)
            .ok_or("no directory for the binaries")?,
    };
    for b in BINARIES {
        if !bin.join(b).is_file() {
            return Err(format!(
                "{} missing: run bench/compare.sh, which builds it",
                bin.join(b).display()
            ));
        }
    }
    let start = Instant::now();
    let load_avg_start = loadavg();
    let setup = setup::prepare(&bin)?;
    if let (Some(pid), false) = (setup.pg_pid(), cpus.server.is_empty()) {
        // PostgreSQL shares the servers' CPUs; backends forked later inherit the mask.
        let _ = Command::new("taskset")
            .args(["-a", "-cp", &cpus.server, &pid.to_string()])
            .output();
    }
    let env = setup.env(&bin, &cpus.server, cpus.workers);
    let lua = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/pipeline.lua");
    let gen = Generator {
        cpus: &cpus.load,
        threads: cpus.load_count,
        pipeline_lua: &lua,
        siegerc: &setup.siegerc,
    };
    eprintln!(
        "compare: {} scenarios, {runs} run(s) of {secs} s; servers on CPUs [{}] with {} worker(s), load on [{}]",
        chosen.len(), cpus.server, cpus.workers, cpus.load
    );
    let mut results = Vec::new();
    for s in &chosen {
        eprintln!("{} ({}, {})", s.name, s.load.label(), s.what);
        results.push(run_scenario(s, &env, &gen, runs, secs, warm));
    }
    let table = report::table(&results);
    let machine = machine();
    let load_avg_end = loadavg();
    println!("\nmachine: {machine}");
    println!(
        "servers on CPUs [{}] ({} worker(s) each, PostgreSQL pinned with them), load generator on [{}]; \
         median of {runs} run(s) of {secs} s; load average {load_avg_start} at start, {load_avg_end} at end; {:.0} s in all\n",
        cpus.server, cpus.workers, cpus.load, start.elapsed().as_secs_f64()
    );
    println!("{table}");
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = args.out.join(format!("compare-{stamp}.json"));
    let json = serde_json::json!({
        "machine": machine,
        "cpus": { "server": cpus.server, "load": cpus.load, "workers": cpus.workers },
        "runs": runs, "seconds": secs, "quick": args.quick,
        "load_average": { "start": load_avg_start, "end": load_avg_end },
        "results": results,
    });
    let text = serde_json::to_vec_pretty(&json).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("raw results: {}", path.display());
    Ok(())
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}
