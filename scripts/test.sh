#!/usr/bin/env bash
# The README's test command: install clang-22 if missing, then lint and run every test
# (unit tests, the mock-driven CLI tests and the real clang-22 end-to-end tests), then
# render the report in headless chromium (scripts/report_smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test 2>&1
REPORT_SMOKE_REQUIRED=1 bash scripts/report_smoke.sh
