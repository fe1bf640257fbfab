#!/bin/bash
# Search quality on every replay table, under the peers' rules (`--rules nearest`, the default:
# results/search/README.md and figures/) or, with `--rules rows`, restricted to the recorded
# rows (results/search/restricted.md and figures-restricted/). The recorded tables with a SMALL
# table, each also warm-started from it, in one process; the recorded tables without one
# (floyd-warshall-medium and the exhaustive floyd-warshall-table, lu-table, 3mm-table,
# syr2k-table) and the synthetic ones in another, the exhaustive 2mm-table and covariance-table
# in a third (the machine's two cores share them). No compiler needed.
#
#   bash scripts/replay_all.sh [--rules nearest|rows]
set -euo pipefail
cd "$(dirname "$0")/.."
rules=nearest
if [ "${1:-}" = "--rules" ]; then rules="$2"; fi
case "$rules" in
  nearest) page=README.md figures=figures ;;
  rows) page=restricted.md figures=figures-restricted ;;
  *) echo "replay_all.sh: --rules nearest or rows, not \`$rules\`" >&2; exit 2 ;;
esac
BIN=${MOLDTUNE:-target/release/moldtune}
S=results/search
A=$(mktemp); B=$(mktemp); C=$(mktemp); JA=$(mktemp); JB=$(mktemp); JC=$(mktemp)
trap 'rm -f "$A" "$B" "$C" "$JA" "$JB" "$JC"' EXIT
"$BIN" replay $S/gemm-table $S/3mm-medium $S/lu-medium --rules "$rules" \
    --warm-start $S/gemm-table-small --warm-start $S/3mm-small --warm-start $S/lu-small \
    --seeds 20 --budget 200 --figures $S/$figures --report $S/$page --seeds-json "$JA" > "$A" &
"$BIN" replay $S/2mm-table $S/covariance-table --rules "$rules" --seeds 20 --budget 200 \
    --figures $S/$figures --report "$C" --seeds-json "$JC" > /dev/null &
"$BIN" replay $S/floyd-warshall-medium $S/floyd-warshall-table $S/lu-table $S/3mm-table $S/syr2k-table --synthetic \
    --rules "$rules" --seeds 20 --budget 200 \
    --figures $S/$figures --report "$B" --seeds-json "$JB" > /dev/null
wait
# Every seed's numbers in one file (scripts/peers/report.py's ratios and their intervals).
seeds_json=$S/seeds.json
[ "$rules" = rows ] && seeds_json=$S/seeds-restricted.json
python3 -c 'import json, sys; out = {}
for f in sys.argv[2:]: out.update(json.load(open(f)))
json.dump(out, open(sys.argv[1], "w"), indent=1)' "$seeds_json" "$JA" "$JC" "$JB"
# One page: the recorded tables' report, then the other tables' without their title.
tail -n +4 "$C" | sed 's|(/tmp/[^)]*/'"$figures"'/|('"$figures"'/|; s|('"$S"'/'"$figures"'/|('"$figures"'/|' >> $S/$page
tail -n +4 "$B" | sed 's|(/tmp/[^)]*/'"$figures"'/|('"$figures"'/|; s|('"$S"'/'"$figures"'/|('"$figures"'/|' >> $S/$page
sed -i '3a\
\
Tables: gemm-table (all 768 configurations), 3mm-medium, lu-medium and floyd-warshall-medium (500 random\
configurations each; floyd-warshall-medium has conditional parameters and about half of it fails), the SMALL\
counterparts of the first three (the priors of the warm-started rows: the first 200 configurations of the same random\
sequence), floyd-warshall-table, lu-table, 3mm-table and syr2k-table (reduced spaces, every configuration: 768,\
648, 360, 576), and 2mm-table and covariance-table (every configuration: 720, 384; their failures belong to a\
parallel for combined with a loop order, and nothing is forbidden) were measured with clang-22 and the output check, as `recording.md` says; tiles and branin are synthetic.' $S/$page
