#!/usr/bin/env bash
# The README's demo: install clang-22 if missing, build moldtune, tune the example matmul mold
# with the random-forest search, then show the best configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --quiet
out="results/matmul/demo-$(date +%Y%m%d-%H%M%S)"
./target/release/moldtune run tests/e2e/matmul/matmul.yaml --learner rf --max-evals 40 --seed 1 --out "$out"
./target/release/moldtune best "$out"
