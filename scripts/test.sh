#!/usr/bin/env bash
# The README's test command: install clang-22 if missing, then lint and run every test
# (unit tests, the mock-driven CLI tests and the real clang-22 end-to-end tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo test 2>&1
