#!/usr/bin/env bash
# Replays moldtune's search tables through Optuna, SMAC3 and OpenTuner and writes
# results/search/peers.md and results/search/peers.json.
#
#   scripts/peers/run.sh                       # 20 seeds, budget 200, every table and peer
#   scripts/peers/run.sh --seeds 2 --budget 50 --tables gemm-table,tiles
#   scripts/peers/run.sh --peers optuna --peer-seeds smac3=10
#   scripts/peers/run.sh --report-only         # rewrite peers.md from peers.json and README.md
#   scripts/peers/run.sh --tables NAME --add    # replay one more table, keep the others
#
# Creates (or updates, when requirements.txt changed) the virtual environment
# scripts/peers/.venv from /usr/bin/python3 with the pinned requirements.txt.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PEERS_PYTHON:-/usr/bin/python3}"
venv="$here/.venv"
start=$(date +%s)

seeds=20 budget=200 tables="gemm-table,3mm-medium,lu-medium,floyd-warshall-medium,floyd-warshall-table,lu-table,3mm-table,syr2k-table,2mm-table,covariance-table,branin,tiles"
peers="optuna,smac3,opentuner,ytopt" peer_seeds="" report_only="" add=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --tables) tables="$2"; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    --peer-seeds) peer_seeds="$2"; shift 2 ;;
    --report-only) report_only=1; shift ;;
    --add) add="--add"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command="scripts/peers/run.sh --seeds $seeds --budget $budget --tables $tables --peers $peers"
[ -n "$peer_seeds" ] && command="$command --peer-seeds $peer_seeds"

# The virtual environment, reinstalled when requirements.txt changes.
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$venv/bin/pip" install --quiet --upgrade pip
  "$venv/bin/pip" install --quiet -r "$here/requirements.txt"
  echo "$want" > "$stamp"
fi

cd "$here"
if [ -n "$report_only" ]; then
  exec "$venv/bin/python" report.py --root "$root" --json results/search/peers.json --out results/search/peers.md
fi
"$venv/bin/python" replay.py --root "$root" --out results/search/peers.json \
  --seeds "$seeds" --budget "$budget" --tables "$tables" --peers "$peers" \
  --peer-seeds "$peer_seeds" --command "$command" $add
"$venv/bin/python" report.py --root "$root" --json results/search/peers.json \
  --out results/search/peers.md --script-seconds "$(( $(date +%s) - start ))"
