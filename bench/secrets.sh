#!/usr/bin/env bash
# Times the secret scan on 256 KiB bodies (typical markdown and adversarial
# ones) in a release build; docs/performance.md ("Secret scan") records a
# run.
#
#   bench/secrets.sh [RUNS]      runs per body (default 30), medians printed
#
# CARGO_TARGET_DIR is honoured, as by any cargo command.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --example scan_secrets
exec "${CARGO_TARGET_DIR:-target}/release/examples/scan_secrets" "${1:-30}"
