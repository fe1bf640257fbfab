#!/usr/bin/env bash
# Hunts counter-examples to mctree's proofs with the kernel generator (tests/mctree/kernelgen.rs)
# for MINUTES minutes from seed SEED and writes results/mctree/generator.md: kernels, proved
# stacks built, candidates refused, proved stacks that changed the output or did not build
# (each with its seed). Kernels with a wrong stack are kept in KEEP_DIR for minimising.
#
#   bash scripts/generator_campaign.sh [MINUTES=60] [SEED=1000] [KEEP_DIR=results/mctree/generator-found]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
seed=${2:-1000}
keep=${3:-results/mctree/generator-found}
mkdir -p results/mctree
MOLDTUNE_GEN_MINUTES="$minutes" MOLDTUNE_GEN_SEED="$seed" MOLDTUNE_GEN_KEEP="$keep" \
  MOLDTUNE_GEN_REPORT="$PWD/results/mctree/generator.md" \
  cargo test --release --test main -- mctree_oracle::generated_kernels --nocapture
