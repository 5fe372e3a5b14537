#!/usr/bin/env bash
# Bundles `compare` for a machine with no package registry and no Rust toolchain (a quiet
# many-core box): the release binaries, wrk's pipelining and transit scripts, and wrk, siege, nginx and curl
# with every shared library they and the binaries load except the C library's own, which the
# other machine provides (it must be glibc at least as new as this one's).
#
#   bench/scripts/bundle.sh DIR            # then, on the other machine:
#   DIR/run.sh --scenario static-http-c500 --scenario hello-c500 …   # compare's flags
#
# PostgreSQL is not bundled: the TFB database scenarios stay on machines that have it.
set -euo pipefail
DIR=${1:?usage: bundle.sh DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BINS=(compare fileserver hello peer_minihttp peer_hyper_hello transit peer_transit_axum gtfs_gen)
TOOLS=(wrk siege nginx curl)
for t in "${TOOLS[@]}"; do
  command -v "$t" >/dev/null || { echo "bundle.sh: $t missing (apt-get install -y ${t/nginx/nginx-light})" >&2; exit 1; }
done
(cd "$ROOT" && cargo build --release -q -p moria-examples --bin fileserver --bin transit &&
  cargo build --release -q -p moria-bench --bin compare --bin hello --bin peer_minihttp --bin peer_hyper_hello \
    --bin peer_transit_axum --bin gtfs_gen)
rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/lib"
for b in "${BINS[@]}"; do cp "$ROOT/target/release/$b" "$DIR/bin/"; done
cp "$ROOT/bench/scripts/pipeline.lua" "$ROOT/bench/scripts/transit_mix.lua" "$DIR/bin/"
for t in "${TOOLS[@]}"; do cp "$(command -v "$t")" "$DIR/bin/"; done
# Every resolved library but glibc's (libc, libm, libpthread, libdl, librt, libresolv, libanl, libutil, the loader).
for f in "$DIR"/bin/*; do [ "${f##*.}" = lua ] || ldd "$f"; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|libanl|libutil|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$DIR/lib/"; done
cat >"$DIR/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the bundled compare with the bundled tools first on PATH; nginx's compiled-in
# directories are created when missing (it refuses to start without them).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export PATH="$HERE/bin:$PATH" LD_LIBRARY_PATH="$HERE/lib"
mkdir -p /var/lib/nginx /var/log/nginx 2>/dev/null || true
exec "$HERE/bin/compare" --bin "$HERE/bin" "$@"
RUN
chmod +x "$DIR/run.sh"
du -sh "$DIR"
