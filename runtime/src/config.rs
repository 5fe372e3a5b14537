//! `Runtime::builder()`: validated engine configuration, applied once per process.
//!
//! The engine (`may`) reads its configuration once, when the first fiber or socket starts it, and
//! silently ignores later changes. So the configuration lives here, is validated here, and is
//! applied exactly once: by `build()`, or with defaults (plus `MORIA_*` variables) by the first
//! spawn. A later `build()` with a different configuration is an error, never a silent no-op.
//! This module is the once-only gate: every entry point to the engine calls `ensure()` first.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex as StdMutex;

use crate::error::{Error, Result};
use crate::{blocking, startup};

/// Smallest accepted fiber stack, in bytes (four pages: less overflows on ordinary std calls).
pub const MIN_STACK_SIZE: usize = 16 * 1024;
/// Largest accepted fiber stack, in bytes.
pub const MAX_STACK_SIZE: usize = 64 * 1024 * 1024;
/// Default fiber stack, in bytes: enough for a TLS handshake plus JSON encoding (see README).
pub const DEFAULT_STACK_SIZE: usize = 128 * 1024;
/// Default number of pre-made stacks kept for reuse. The engine's pool is first in, first out,
/// so every pooled stack ends up holding the pages a typical fiber touches (about 8 KiB with
/// moria-http): the pool costs about this many × 8 KiB of resident memory whatever the load.
/// Measured (bench/README.md, "Benchmarking"): 1,000 stacks added 1.5 KB to each of 5,000 idle
/// connections' share of RSS against 128, and siege -c500 (a fiber per connection) used the
/// same CPU with either.
pub const DEFAULT_STACK_POOL: usize = 256;
/// Largest accepted stack pool.
pub const MAX_STACK_POOL: usize = 1_000_000;
/// Largest accepted worker count.
pub const MAX_WORKERS: usize = 1024;
/// Default fiber count the start-up check plans for (`vm.max_map_count` warning).
pub const DEFAULT_PLANNED_FIBERS: usize = 10_000;
/// Page size assumed for stack validation.
const PAGE: usize = 4096;

/// A complete, validated runtime configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Scheduler worker threads.
    pub workers: usize,
    /// Fiber stack size in bytes.
    pub stack_size: usize,
    /// Stacks kept pooled for reuse.
    pub stack_pool: usize,
    /// Upper bound of the offload pool's OS threads.
    pub blocking_threads: usize,
    /// Whether workers are pinned to CPU cores.
    pub pin_workers: bool,
    /// Fiber count the start-up check plans for.
    pub planned_fibers: usize,
    /// Whether start-up raises the soft `RLIMIT_NOFILE` to the hard limit.
    pub raise_nofile: bool,
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "workers={} stack_size={} stack_pool={} blocking_threads={} pin_workers={}",
            self.workers, self.stack_size, self.stack_pool, self.blocking_threads, self.pin_workers
        )
    }
}

/// Builds and applies the runtime configuration (`Runtime::builder()`).
#[derive(Clone, Debug)]
pub struct Builder {
    config: Config,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// A builder holding every default.
    pub fn new() -> Self {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Builder {
            config: Config {
                workers,
                stack_size: DEFAULT_STACK_SIZE,
                stack_pool: DEFAULT_STACK_POOL,
                blocking_threads: blocking::DEFAULT_THREADS,
                pin_workers: false,
                planned_fibers: DEFAULT_PLANNED_FIBERS,
                raise_nofile: true,
            },
        }
    }

    /// Scheduler worker threads (default: the number of CPUs).
    pub fn workers(mut self, n: usize) -> Self {
        self.config.workers = n;
        self
    }

    /// Fiber stack size in bytes, a multiple of 4096 (default [`DEFAULT_STACK_SIZE`]).
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.config.stack_size = bytes;
        self
    }

    /// Number of stacks kept for reuse (default [`DEFAULT_STACK_POOL`]).
    pub fn stack_pool(mut self, capacity: usize) -> Self {
        self.config.stack_pool = capacity;
        self
    }

    /// Upper bound of the offload pool (default [`blocking::DEFAULT_THREADS`]).
    pub fn blocking_threads(mut self, n: usize) -> Self {
        self.config.blocking_threads = n;
        self
    }

    /// Pin each worker to a CPU core (default off: pinning hurts on shared hosts).
    pub fn pin_workers(mut self, pin: bool) -> Self {
        self.config.pin_workers = pin;
        self
    }

    /// Fiber count to plan for; start-up warns when `vm.max_map_count` cannot hold it
    /// (default [`DEFAULT_PLANNED_FIBERS`]).
    pub fn planned_fibers(mut self, n: usize) -> Self {
        self.config.planned_fibers = n;
        self
    }

    /// Raise the soft open-file limit to the hard limit at start-up (default on).
    pub fn raise_nofile_limit(mut self, raise: bool) -> Self {
        self.config.raise_nofile = raise;
        self
    }

    /// Reads `MORIA_WORKERS`, `MORIA_STACK_SIZE`, `MORIA_STACK_POOL` and
    /// `MORIA_BLOCKING_THREADS`; a malformed value is an error naming the variable.
    pub fn from_env(self) -> Result<Self> {
        self.with_lookup(|var| std::env::var(var).ok())
    }

    /// `from_env` over any variable source (used by tests).
    fn with_lookup(mut self, get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let read = |var: &'static str, slot: &mut usize| -> Result<()> {
            if let Some(value) = get(var) {
                *slot = parse_size(&value).map_err(|reason| Error::InvalidEnv {
                    var,
                    value: value.clone(),
                    reason,
                })?;
            }
            Ok(())
        };
        read("MORIA_WORKERS", &mut self.config.workers)?;
        read("MORIA_STACK_SIZE", &mut self.config.stack_size)?;
        read("MORIA_STACK_POOL", &mut self.config.stack_pool)?;
        read("MORIA_BLOCKING_THREADS", &mut self.config.blocking_threads)?;
        Ok(self)
    }

    /// Checks every value without applying anything.
    pub fn validate(&self) -> Result<Config> {
        let c = &self.config;
        let bad = |msg: String| Err(Error::InvalidConfig(msg));
        if c.workers == 0 || c.workers > MAX_WORKERS {
            return bad(format!(
                "workers must be 1..={MAX_WORKERS}, got {}",
                c.workers
            ));
        }
        if !c.stack_size.is_multiple_of(PAGE) {
            return bad(format!(
                "stack_size must be a multiple of {PAGE} bytes, got {}",
                c.stack_size
            ));
        }
        if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&c.stack_size) {
            return bad(format!(
                "stack_size must be {MIN_STACK_SIZE}..={MAX_STACK_SIZE} bytes, got {}",
                c.stack_size
            ));
        }
        if c.stack_pool > MAX_STACK_POOL {
            return bad(format!(
                "stack_pool must be at most {MAX_STACK_POOL}, got {}",
                c.stack_pool
            ));
        }
        if !(blocking::MIN_THREADS..=blocking::MAX_THREADS).contains(&c.blocking_threads) {
            return bad(format!(
                "blocking_threads must be {}..={}, got {}",
                blocking::MIN_THREADS,
                blocking::MAX_THREADS,
                c.blocking_threads
            ));
        }
        Ok(c.clone())
    }

    /// Validates and applies the configuration; errors if a different one is already in force.
    pub fn build(self) -> Result<Runtime> {
        let config = self.validate()?;
        apply(config).map(|config| Runtime { config })
    }
}

/// Parses a decimal count or byte size, accepting a `K`/`M` (KiB/MiB) suffix.
fn parse_size(value: &str) -> std::result::Result<usize, String> {
    let v = value.trim();
    let (digits, unit) = match v.as_bytes().last() {
        Some(b'k' | b'K') => (&v[..v.len() - 1], 1024),
        Some(b'm' | b'M') => (&v[..v.len() - 1], 1024 * 1024),
        _ => (v, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| "expected a non-negative integer (optionally with K or M)".to_string())
}

/// Whether a configuration is in force (the fast path of [`ensure`]).
static CONFIGURED: AtomicBool = AtomicBool::new(false);

/// Makes sure a configuration is applied before the engine starts (defaults otherwise).
#[inline]
pub(crate) fn ensure() {
    if !CONFIGURED.load(Ordering::Acquire) {
        ensure_applied();
    }
}

/// The configuration in force, once applied.
static APPLIED: StdMutex<Option<Config>> = StdMutex::new(None);

/// Applies `config` to the engine once; returns the configuration in force.
fn apply(config: Config) -> Result<Config> {
    let mut applied = APPLIED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(current) = applied.as_ref() {
        return if *current == config {
            Ok(config)
        } else {
            Err(Error::AlreadyConfigured {
                applied: current.to_string(),
                requested: config.to_string(),
            })
        };
    }
    crate::engine::setup::configure(
        config.workers,
        config.stack_size,
        config.stack_pool,
        config.pin_workers,
    );
    crate::stack_trim::set_stack_size(config.stack_size);
    crate::stack_sweep::start(config.stack_pool);
    blocking::set_max_threads(config.blocking_threads);
    startup::check(config.planned_fibers, config.raise_nofile);
    *applied = Some(config.clone());
    CONFIGURED.store(true, Ordering::Release);
    Ok(config)
}

/// Applies the default configuration (with `MORIA_*` variables) unless one is in force.
#[cold]
fn ensure_applied() {
    let builder = Builder::new().from_env().unwrap_or_else(|e| {
        log::warn!("{e}; using the default runtime configuration");
        Builder::new()
    });
    let config = match builder.validate() {
        Ok(c) => c,
        Err(e) => {
            log::warn!("{e}; using the default runtime configuration");
            Builder::new().config
        }
    };
    // A concurrent build() may win the race; whichever applied first stays in force.
    let _ = apply(config);
}

/// The configuration in force, if the runtime has started.
pub fn current_config() -> Option<Config> {
    APPLIED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A handle on the configured runtime (its `run` lives beside `spawn`, in [`fiber`](crate::fiber)).
#[derive(Clone, Debug)]
pub struct Runtime {
    config: Config,
}

impl Runtime {
    /// Starts a configuration builder.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_suffixes_and_refuse_garbage() {
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("2m"), Ok(2 * 1024 * 1024));
        assert_eq!(parse_size(" 12 "), Ok(12));
        assert!(parse_size("-1").is_err());
        assert!(parse_size("12x").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn bad_env_value_names_the_variable() {
        let err = Builder::new()
            .with_lookup(|v| (v == "MORIA_STACK_SIZE").then(|| "big".to_string()))
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("MORIA_STACK_SIZE"), "{text}");
        assert!(text.contains("big"), "{text}");
    }

    #[test]
    fn env_values_reach_the_config() {
        let b = Builder::new()
            .with_lookup(|v| match v {
                "MORIA_WORKERS" => Some("3".into()),
                "MORIA_STACK_SIZE" => Some("256K".into()),
                _ => None,
            })
            .unwrap();
        let c = b.validate().unwrap();
        assert_eq!((c.workers, c.stack_size), (3, 256 * 1024));
    }

    #[test]
    fn validation_refuses_odd_and_tiny_stacks_and_zero_workers() {
        assert!(Builder::new().stack_size(100_000).validate().is_err());
        assert!(Builder::new().stack_size(4096).validate().is_err());
        assert!(Builder::new().workers(0).validate().is_err());
        assert!(Builder::new().blocking_threads(0).validate().is_err());
        assert!(Builder::new().stack_size(256 * 1024).validate().is_ok());
    }
}
