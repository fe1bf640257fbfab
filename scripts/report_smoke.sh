#!/usr/bin/env bash
# Looks at `moldtune report` as a reader would: writes a report over committed run directories,
# renders the page and a convergence plot to PNG with headless chromium, and fails if the page
# logs a console error or lost its inline figures. It installs nothing: without chromium it
# skips (exit 0), or fails when REPORT_SMOKE_REQUIRED=1 (the test command, scripts/test.sh,
# installs chromium with `scripts/setup.sh --test` and requires it).
#
#   bash scripts/report_smoke.sh [OUT_DIR]     # default target/report-smoke; then view OUT_DIR/*.png
set -euo pipefail
cd "$(dirname "$0")/.."

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    if [ "${REPORT_SMOKE_REQUIRED:-0}" = 1 ]; then
        echo "report_smoke: no chromium on PATH (bash scripts/setup.sh --test installs it)" >&2
        exit 1
    fi
    echo "report_smoke: skipped: no chromium on PATH (apt-get install chromium)"
    exit 0
fi

out=${1:-target/report-smoke}
rm -rf "$out"
cargo build --quiet
dirs=(results/paper/gemm/large results/paper/floyd-warshall/medium results/paper/gemm/medium)
# An mctree run rebuilds its problem from the C file with clang-22's AST.
if command -v clang-22 >/dev/null; then
    dirs+=(results/mctree/runs/floyd-warshall/rf-s0)
fi
./target/debug/moldtune report "${dirs[@]}" --out "$out"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chrome() {
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" "$@"
}
page="file://$(realpath "$out/report.html")"
chrome --screenshot="$out/report.png" --window-size=1200,2000 "$page" 2>/dev/null
chrome --screenshot="$out/report-tall.png" --window-size=1200,9000 "$page" 2>/dev/null
curve=$(ls "$out"/1-*-curve.svg)
chrome --screenshot="$out/curve.png" --window-size=900,640 "file://$(realpath "$curve")" 2>/dev/null

# The DOM as loaded, and everything the page logged.
chrome --enable-logging=stderr --v=0 --dump-dom "$page" >"$out/dom.html" 2>"$out/console.log"
status=0
if grep -E 'CONSOLE|Uncaught|Failed to load resource|net::ERR_' "$out/console.log"; then
    echo "report_smoke: the page logged errors (above; all in $out/console.log)"
    status=1
fi
# Self-contained: nothing to load, nothing to run.
if grep -nE '<(img|script|link|iframe|object)[ >]|(src|href)="(https?:)?//' "$out/report.html"; then
    echo "report_smoke: the page loads or runs something (above)"
    status=1
fi
figures=$(grep -o '<svg' "$out/dom.html" | wc -l)
if [ "$figures" -lt "${#dirs[@]}" ]; then
    echo "report_smoke: $figures inline figures for ${#dirs[@]} runs"
    status=1
fi
echo "report_smoke: ${#dirs[@]} runs, $figures inline figures; look at $out/report.png, $out/report-tall.png, $out/curve.png"
exit $status
