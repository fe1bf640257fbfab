#!/usr/bin/env bash
# The README's test command: install clang-22 if missing, then lint and run every test
# (unit tests, the mock-driven CLI tests and the real clang-22 end-to-end tests, the Python
# client's tests, the commands the documentation shows), then
# render the report in headless chromium (scripts/report_smoke.sh). As root, it also starts
# a Slurm cluster on this machine (scripts/slurm_local.sh) for tests/slurm.rs and stops it
# after; elsewhere those tests say they are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
python3 scripts/layering.py --quiet
python3 scripts/test_layering.py
if [ "$(id -u)" -eq 0 ] && [ "${MOLDTUNE_SLURM_TESTS:-}" != "0" ]; then
  slurm_dir=$(mktemp -d /tmp/moldtune-slurm.XXXXXX)
  trap 'bash scripts/slurm_local.sh stop "$slurm_dir"' EXIT
  bash scripts/slurm_local.sh start "$slurm_dir"
  export SLURM_CONF="$slurm_dir/slurm.conf" MOLDTUNE_SLURM_TESTS=1
else
  echo "test: not root (or MOLDTUNE_SLURM_TESTS=0): the Slurm tests will be skipped" >&2
fi
MOLDTUNE_REQUIRE_CLANG=1 cargo test 2>&1
# The Python client (python/moldtune) against the binary just tested: standard library only.
MOLDTUNE="$PWD/target/debug/moldtune" python3 -m unittest discover -s tests/python
# Every `moldtune` command README.md and docs/*.md show, run against the same binary (docs/README.md).
MOLDTUNE="$PWD/target/debug/moldtune" python3 scripts/docs_check.py
REPORT_SMOKE_REQUIRED=1 bash scripts/report_smoke.sh
