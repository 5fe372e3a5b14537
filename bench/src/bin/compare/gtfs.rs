//! The transit scenarios' GTFS feed: generated once by `gtfs_gen` (beside the binaries) with its
//! default seed at scale 1, and reused while its `generated.txt` says that seed and scale.

use std::path::Path;
use std::process::Command;

/// The generator's seed (its default).
const SEED: u64 = 1;
/// The feed's size relative to the MBTA's.
const SCALE: f64 = 1.0;

/// Whether `generated.txt` (written last by `gtfs_gen`) names [`SEED`] and [`SCALE`].
fn complete(generated: &str) -> bool {
    let field = |name: &str| {
        generated
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(str::trim)
    };
    field("seed").and_then(|s| s.parse::<u64>().ok()) == Some(SEED)
        && field("scale").and_then(|s| s.parse::<f64>().ok()) == Some(SCALE)
}

/// Makes sure `dir` holds the feed and its mixes, running `bin/gtfs_gen` when it does not.
pub fn ensure(bin: &Path, dir: &Path) -> Result<(), String> {
    let done = std::fs::read_to_string(dir.join("generated.txt"))
        .map(|t| complete(&t))
        .unwrap_or(false);
    if done {
        return Ok(());
    }
    eprintln!("compare: generating the GTFS feed into {}", dir.display());
    let gen = bin.join("gtfs_gen");
    let out = Command::new(&gen)
        .arg("--out")
        .arg(dir)
        .args(["--seed", &SEED.to_string(), "--scale", &SCALE.to_string()])
        .output()
        .map_err(|e| format!("{}: {e}", gen.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "gtfs_gen failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_only_a_complete_feed_of_this_seed_and_scale() {
        assert!(complete("seed=1\nscale=1\nroutes=3\n"));
        assert!(!complete("seed=2\nscale=1\n"));
        assert!(!complete("seed=1\nscale=0.5\n"));
        assert!(!complete("seed=1\n"));
        assert!(!complete(""));
    }
}
