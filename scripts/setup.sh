#!/usr/bin/env bash
# Installs what moldtune's demo and tests need on Debian bookworm: clang-22 with Polly and
# OpenMP (+ llvm-22 tools); with `--test`, also what only the tests use: valgrind (the
# simulated metrics `instructions`/`cycles`; users of those install it too) and chromium
# (the report is rendered headless by scripts/report_smoke.sh); and python3-sklearn, which
# the application example (examples/mlp-digits) trains with; and libopenblas-dev, the dgemm
# scripts/reach.py compares the tuned gemm with. Non-interactive; a no-op when everything is
# present.
#
#   bash scripts/setup.sh [--test]
set -euo pipefail
need=()
if [ "${1:-}" = "--test" ]; then
  command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
command -v clang-22 >/dev/null 2>&1 || need+=(clang-22)
[ -e /usr/lib/llvm-22/lib/libomp.so ] || [ -e /usr/lib/llvm-22/lib/libomp.so.5 ] || need+=(libomp-22-dev)
[ -d /usr/lib/llvm-22/include/polly ] || need+=(libpolly-22-dev)
command -v llvm-objdump-22 >/dev/null 2>&1 || need+=(llvm-22)
[ -e /usr/include/x86_64-linux-gnu/cblas.h ] || [ -e /usr/include/cblas.h ] || need+=(libopenblas-dev)
# scikit-learn for the application example (examples/mlp-digits), in the distribution's Python.
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sklearn' 2>/dev/null || need+=(python3-sklearn)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
clang-22 --version | head -1
