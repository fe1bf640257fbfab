#!/bin/bash
# Search quality on every replay table (results/search/README.md and figures/): the recorded
# tables with a SMALL table, each also warm-started from it, in one process; floyd-warshall-medium
# (recorded, no SMALL table) and the synthetic ones in another (the machine's two cores). No compiler needed. About 20 minutes on 2 cores (measured: 20 and 21).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${MOLDTUNE:-target/release/moldtune}
S=results/search
A=$(mktemp); B=$(mktemp)
trap 'rm -f "$A" "$B"' EXIT
"$BIN" replay $S/gemm-table $S/3mm-medium $S/lu-medium \
    --warm-start $S/gemm-table-small --warm-start $S/3mm-small --warm-start $S/lu-small \
    --seeds 20 --budget 200 --figures $S/figures --report $S/README.md > "$A" &
"$BIN" replay $S/floyd-warshall-medium --synthetic --seeds 20 --budget 200 --figures $S/figures --report "$B" > /dev/null
wait
# One page: the recorded tables' report, then floyd-warshall-medium and the synthetic tables without their title.
tail -n +4 "$B" | sed 's|(/tmp/[^)]*/figures/|(figures/|; s|('"$S"'/figures/|(figures/|' >> $S/README.md
sed -i '3a\
\
Tables: gemm-table (all 768 configurations), 3mm-medium, lu-medium and floyd-warshall-medium (500 random\
configurations each; floyd-warshall-medium has conditional parameters and about half of it fails) and the SMALL\
counterparts of the first three (the priors of the warm-started rows: the first 200 configurations of the same random\
sequence) were measured with clang-22 and the output check, as `recording.md` says; tiles and branin are synthetic.' $S/README.md
