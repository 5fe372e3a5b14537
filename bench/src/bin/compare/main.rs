//! compare: Moria against its peers on this machine, in one run — TFB's seven test types vs a
//! hyper + tokio-postgres application and may_minihttp, hello vs may_minihttp and hyper, a static file
//! and a 1 GiB file vs nginx over HTTP and HTTPS (HTTP/1.1 with wrk and siege, HTTP/2 and
//! pipelined HTTP/1.1 with h2load), the transit-lang-cmp
//! server vs an axum peer on a generated GTFS feed, TLS handshakes per second (full and
//! resumed, P-256 and RSA-2048) vs nginx, and the memory each idle keep-alive connection
//! holds, Moria's file server beside nginx.
//!
//! `bench/compare.sh [--quick] [--scenario NAME]…` builds the servers in release and runs this.
//! Servers and load generator are pinned to different CPUs (when there are two or more), get
//! the same number of workers, are warmed up, and take turns run by run (in alternating
//! order); each figure is the median of `--runs`. Prints one markdown table of Moria's ratio to
//! each peer (and one of memory per idle connection) and writes the raw results as JSON under
//! `target/bench/`.
//! `compare --syscalls` (`bench/syscalls.sh`) counts syscalls per request instead.
//!
//! | module | what lives there |
//! |---|---|
//! | `tools` | wrk, siege, h2load, nginx, curl, strace, PostgreSQL: found or installed (root) or the command printed |
//! | `setup` | files, certificate, nginx and siege configuration, the throwaway PostgreSQL |
//! | `gtfs` | the transit scenarios' feed, generated once by `gtfs_gen` |
//! | `server` | which servers there are; starting, pinning, probing and stopping each |
//! | `server_env` | what every server start needs (made by `setup`, read by `server`) |
//! | `scenario` | the scenario list |
//! | `load` | wrk, h2load and siege runs and their output |
//! | `wire` | the command's own HTTP/1.1 client (plain and TLS), for exact counts and idle connections |
//! | `idle` | RSS per idle keep-alive connection |
//! | `syscalls` | `strace -c -f` counts per request and per connection |
//! | `procstat` | CPU seconds, RSS, maps and descriptors of a server's process tree |
//! | `machine` | the machine's description, load average, the open-file limit |
//! | `report` | medians, the ratio table, the memory table |

mod gtfs;
mod idle;
mod load;
mod machine;
mod procstat;
mod report;
mod scenario;
mod server;
mod server_env;
mod setup;
mod syscalls;
mod tools;
mod wire;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;

use load::{Generator, Load};
use report::{Run, ScenarioResult, ServerResult};
use scenario::Scenario;
use server::{Running, Server};
use server_env::Env;

/// The longest a single measured run may last.
const MAX_SECONDS: u64 = 15;
/// Connections held open by the memory rows (`--idle-conns`), and with `--quick`.
const IDLE_CONNS: u32 = 10_000;
/// See [`IDLE_CONNS`].
const QUICK_IDLE_CONNS: u32 = 2_000;
/// Connections a file server accepts at once, at least (nginx's `worker_connections`); raised
/// above `--idle-conns` when that is larger.
const MIN_FILE_SERVER_CONNS: usize = 16_384;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(
    about = "Moria vs its peers: TFB, hello, static files (HTTP/1.1 and HTTP/2), transit; wrk, h2load and siege on loopback"
)]
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
    /// Idle keep-alive connections held by the memory rows. Default 10000, 2000 with --quick.
    #[arg(long, value_name = "N")]
    idle_conns: Option<u32>,
    /// Count syscalls per request with strace (Moria's file server and nginx, one worker each)
    /// instead of running the scenarios.
    #[arg(long)]
    syscalls: bool,
    /// Directory of the release binaries (default: this program's directory).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Where the JSON goes (and the transit scenarios' GTFS feed, in `transit/`).
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
    if s.is_ws() {
        return format!("ws://{}{}", r.http, s.path);
    }
    match (s.https, r.https, r.h2c) {
        (true, Some(a), _) => format!("https://{a}{}", s.path),
        (false, _, Some(a)) if s.is_h2c() => format!("http://{a}{}", s.path),
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
    let env = &env.for_load(&s.load);
    let mut servers: Vec<(ServerResult, Option<Running>)> = s
        .servers()
        .into_iter()
        .map(|kind| {
            let started = Running::start(kind, env);
            let refused = match &started {
                Err(e) => Some(e.clone()),
                // A WebSocket endpoint answers a plain GET with 400 or 426: the load's own
                // handshake is the probe.
                Ok(_) if s.is_ws() => None,
                Ok(r) => match server::status_of(&url(s, r), s.is_h2c()) {
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
        // Turns alternate in order (A B, B A, ...) so a drift of the machine's load during the
        // scenario does not always favour the server that goes first.
        let turn: Box<dyn Iterator<Item = _>> = match i % 2 {
            0 => Box::new(servers.iter_mut()),
            _ => Box::new(servers.iter_mut().rev()),
        };
        for (res, running) in turn {
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

/// The directory of the release binaries: `--bin`, or this program's own.
fn bin_dir(arg: Option<PathBuf>) -> Result<PathBuf, String> {
    match arg {
        Some(b) => Ok(b),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| "no directory for the binaries".into()),
    }
}

/// A wrk script (`pipeline.lua`, `transit_mix.lua`): beside the binaries when they were
/// bundled for another machine (`bench/scripts/bundle.sh`), else in this crate's `scripts/`.
fn wrk_script(bin: &Path, name: &str) -> PathBuf {
    let bundled = bin.join(name);
    if bundled.is_file() {
        bundled
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name)
    }
}

/// `Err` naming the first binary of `servers` missing from `bin` (with `gtfs_gen` when one
/// needs the GTFS feed, `ws_load` for the WebSocket scenarios).
fn check_binaries(bin: &Path, servers: &[Server]) -> Result<(), String> {
    let gtfs_gen = servers.iter().any(|k| k.needs_gtfs()).then_some("gtfs_gen");
    let ws_load = servers.contains(&Server::WsTokio).then_some("ws_load");
    for b in servers
        .iter()
        .filter_map(|k| k.binary())
        .chain(gtfs_gen)
        .chain(ws_load)
    {
        if !bin.join(b).is_file() {
            return Err(format!(
                "{} missing: run bench/compare.sh, which builds it",
                bin.join(b).display()
            ));
        }
    }
    Ok(())
}

/// Writes `json` as `out/NAME-<time>.json` and says where.
fn write_json(out: &Path, name: &str, json: &serde_json::Value) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = out.join(format!("{name}-{stamp}.json"));
    let text = serde_json::to_vec_pretty(json).map_err(|e| e.to_string())?;
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("raw results: {}", path.display());
    Ok(())
}

/// `compare --syscalls`: strace counts for the file server and nginx, one worker each.
fn run_syscalls(args: Args, cpus: &Cpus) -> Result<(), String> {
    tools::ensure(tools::FOR_SYSCALLS, false)?;
    machine::raise_nofile();
    let bin = bin_dir(args.bin)?;
    check_binaries(&bin, &[Server::MoriaFiles])?;
    let load_avg_start = machine::loadavg();
    let setup = setup::prepare(&bin, false)?;
    let env = setup.env(&bin, &cpus.server, 1, MIN_FILE_SERVER_CONNS);
    machine::pin_self(&cpus.load);
    eprintln!(
        "compare --syscalls: servers on CPUs [{}] with 1 worker, client and strace on [{}]",
        cpus.server, cpus.load
    );
    let (counted, failed): (Vec<_>, Vec<_>) = syscalls::run(&env, setup.dir.path())
        .into_iter()
        .partition(Result::is_ok);
    let counted: Vec<_> = counted.into_iter().flatten().collect();
    let machine = machine::describe();
    println!("\nmachine: {machine}");
    println!(
        "servers on CPUs [{}] with 1 worker each, client and strace on [{}]; load average {load_avg_start} at start, {} at end; {}\n",
        cpus.server, cpus.load, machine::loadavg(), tools::version("strace", "-V")
    );
    println!("{}", syscalls::table(&counted));
    let failed: Vec<String> = failed.into_iter().filter_map(Result::err).collect();
    write_json(
        &args.out,
        "syscalls",
        &serde_json::json!({ "machine": machine, "counts": counted, "failures": failed }),
    )?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

fn run(args: Args) -> Result<(), String> {
    let (runs, secs, warm, reps, idle_conns) = if args.quick {
        (
            args.runs.unwrap_or(1),
            args.seconds.unwrap_or(1),
            0,
            4,
            args.idle_conns.unwrap_or(QUICK_IDLE_CONNS),
        )
    } else {
        (
            args.runs.unwrap_or(3),
            args.seconds.unwrap_or(5),
            2,
            20,
            args.idle_conns.unwrap_or(IDLE_CONNS),
        )
    };
    if secs == 0 || secs > MAX_SECONDS || runs == 0 || idle_conns == 0 {
        return Err(format!(
            "--seconds must be 1..={MAX_SECONDS}, --runs and --idle-conns at least 1"
        ));
    }
    let cpus = split_cpus();
    if args.syscalls {
        return run_syscalls(args, &cpus);
    }
    let all = scenario::all(cpus.load_count, reps, idle_conns);
    let chosen = scenario::select(all.clone(), &args.scenarios);
    if args.list || chosen.is_empty() {
        for s in all {
            println!("{:<22} {:<16} {}", s.name, s.load.label(), s.what);
        }
        return if args.list {
            Ok(())
        } else {
            Err("no scenario matches --scenario".into())
        };
    }
    let servers: Vec<Server> = chosen.iter().flat_map(Scenario::servers).collect();
    let db = servers.iter().any(|k| k.needs_db());
    tools::ensure(tools::NEEDED, db)?;
    let nofile = machine::raise_nofile();
    let has_idle = chosen.iter().any(|s| matches!(s.load, Load::Idle { .. }));
    if has_idle {
        machine::check_nofile(
            "compare (the idle rows' client)",
            nofile,
            u64::from(idle_conns) + idle::SPARE_FDS,
        )?;
    }
    let bin = bin_dir(args.bin)?;
    check_binaries(&bin, &servers)?;
    let tls_load = bin.join("tls_load");
    let handshakes = chosen
        .iter()
        .any(|s| matches!(s.load, Load::Handshakes { .. }));
    if handshakes && !tls_load.is_file() {
        return Err(format!(
            "{} missing: run bench/compare.sh, which builds it",
            tls_load.display()
        ));
    }
    let start = Instant::now();
    let load_avg_start = machine::loadavg();
    let setup = setup::prepare(&bin, db)?;
    if let (Some(pid), false) = (setup.pg_pid(), cpus.server.is_empty()) {
        // PostgreSQL shares the servers' CPUs; backends forked later inherit the mask.
        let _ = Command::new("taskset")
            .args(["-a", "-cp", &cpus.server, &pid.to_string()])
            .output();
    }
    let max_conns = MIN_FILE_SERVER_CONNS.max(idle_conns as usize + 1024);
    let mut env = setup.env(&bin, &cpus.server, cpus.workers, max_conns);
    if servers.iter().any(|k| k.needs_gtfs()) {
        env.gtfs = args.out.join("transit");
        gtfs::ensure(&bin, &env.gtfs)?;
    }
    // The idle rows' client runs in this process: on the load CPUs, like wrk.
    machine::pin_self(&cpus.load);
    let lua = wrk_script(&bin, "pipeline.lua");
    let transit_lua = wrk_script(&bin, "transit_mix.lua");
    let ws_load = bin.join("ws_load");
    let gen = Generator {
        cpus: &cpus.load,
        threads: cpus.load_count,
        pipeline_lua: &lua,
        siegerc: &setup.siegerc,
        transit_lua: &transit_lua,
        gtfs: &env.gtfs,
        ws_load: &ws_load,
        tls_load: &tls_load,
    };
    eprintln!(
        "compare: {} scenarios, {runs} run(s) of {secs} s; servers on CPUs [{}] with {} worker(s), load on [{}]",
        chosen.len(), cpus.server, cpus.workers, cpus.load
    );
    let mut results = Vec::new();
    let mut memory = Vec::new();
    for s in &chosen {
        eprintln!("{} ({}, {})", s.name, s.load.label(), s.what);
        if matches!(s.load, Load::Idle { .. }) {
            memory.push(idle::run(s, &env, runs));
        } else {
            results.push(run_scenario(s, &env, &gen, runs, secs, warm));
        }
    }
    let machine = machine::describe();
    let load_avg_end = machine::loadavg();
    println!("\nmachine: {machine}");
    println!(
        "servers on CPUs [{}] ({} worker(s) each, PostgreSQL pinned with them), load generator on [{}]; \
         median of {runs} run(s) of {secs} s; load average {load_avg_start} at start, {load_avg_end} at end; {:.0} s in all\n",
        cpus.server, cpus.workers, cpus.load, start.elapsed().as_secs_f64()
    );
    if !results.is_empty() {
        println!("{}", report::table(&results));
        println!(
            "load CPU: the load generator's CPU time over the run's wall time and its CPUs. \
             † marks a ratio where it was at least {:.0}% for both servers: the generator set \
             the pace, so the ratio says only that neither server was the bottleneck, and CPU s \
             per 100k tells them apart.\n",
            report::GENERATOR_BOUND * 100.0
        );
    }
    if !memory.is_empty() {
        println!(
            "Memory per idle keep-alive connection (VmRSS after − before, ÷ connections; the second half: after − halfway, ÷ its connections; nginx: master + worker)\n\n{}",
            report::memory_table(&memory)
        );
    }
    let json = serde_json::json!({
        "machine": machine,
        "cpus": { "server": cpus.server, "load": cpus.load, "workers": cpus.workers },
        "runs": runs, "seconds": secs, "quick": args.quick, "idle_conns": idle_conns,
        "load_average": { "start": load_avg_start, "end": load_avg_end },
        "results": results,
        "memory": memory,
    });
    write_json(&args.out, "compare", &json)
}

fn main() {
    if let Err(e) = run(Args::parse()) {
        eprintln!("compare: {e}");
        std::process::exit(1);
    }
}
