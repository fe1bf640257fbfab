#!/usr/bin/env bash
# check_all.sh -- consistency check of moldtune's PolyBench kernels, molds and spaces.
#
# For every kernel K in polybench/:
#   1. K.yaml (and illegal.yaml where present): every #NAME marker of the mold is a parameter and
#      every parameter is used (as a marker or inside {{ }} / {% %} of compile/run/env).
#   2. K.c and the mold rendered at its default configuration are compiled with
#      clang-22 -O3 -fopenmp at MINI, SMALL and MEDIUM, run with PB_DUMP=1 OMP_NUM_THREADS=2, and
#      their dumps compared: identical, or numerically within rtol 1e-6. heat-3d and floyd-warshall
#      are also run with PB_INPUT=random, the input their spaces check with.
#   3. K.c is compiled with gcc -O3 and its MINI dump compared with clang's (portability).
# Exits 1 if anything fails, and prints a summary.
#
#   polybench/check_all.sh              the checks above
#   polybench/check_all.sh --illegal    also build the default (deliberately illegal) variant of each
#                                       illegal.yaml at its own dataset and report how many output
#                                       elements differ from the reference (expected: many)
# Environment: CLANG (default clang-22), GCC (default gcc), EXTRA_CFLAGS (added to every compile,
# e.g. "-march=native"), KERNELS (space-separated subset), DATASETS (default "MINI SMALL MEDIUM").
set -u -o pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLANG="${CLANG:-clang-22}"
GCC="${GCC:-gcc}"
EXTRA_CFLAGS="${EXTRA_CFLAGS:-}"
KERNELS="${KERNELS:-gemm syr2k 2mm 3mm lu heat-3d covariance floyd-warshall}"
DATASETS="${DATASETS:-MINI SMALL MEDIUM}"
ILLEGAL=0
[[ "${1:-}" == "--illegal" ]] && ILLEGAL=1

for tool in "$CLANG" "$GCC" python3; do
  command -v "$tool" >/dev/null || { echo "check_all: \`$tool\` not found" >&2; exit 2; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/pb-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# ---- helpers (python3, standard library only: the YAML files use a small regular subset) -------
PY_HELPER="$WORK/helper.py"
cat >"$PY_HELPER" <<'PYEOF'
import json, re, sys

def parse_params(yaml_path):
    """The params list of one of our problem YAMLs: name, type, default, when (or None)."""
    params, cur, in_params = [], None, False
    for line in open(yaml_path):
        if re.match(r"^params:\s*$", line):
            in_params = True
            continue
        if in_params and re.match(r"^\S", line) and not line.startswith("#"):
            in_params = False
        if not in_params:
            continue
        m = re.match(r"^  - name:\s*(\S+)\s*$", line)
        if m:
            cur = {"name": m.group(1), "type": None, "default": None, "when": None}
            params.append(cur)
            continue
        m = re.match(r"^    (type|default|when):\s*(.*?)\s*$", line)
        if m and cur is not None:
            key, val = m.groups()
            if key == "type":
                cur["type"] = val
            elif key == "default":
                cur["default"] = json.loads(val)
            else:
                w = re.match(r"^\{(\w+):\s*\[(.*)\]\}$", val)
                if not w:
                    sys.exit(f"{yaml_path}: cannot read `when: {val}`")
                cur["when"] = (w.group(1), json.loads("[" + w.group(2) + "]"))
    return params

def top_value(yaml_path, key):
    for line in open(yaml_path):
        m = re.match(rf"^\s*{key}:\s*(.*?)\s*$", line)
        if m:
            v = m.group(1)
            return json.loads(v) if v.startswith('"') else v
    return None

MARKER = re.compile(r"#([A-Za-z_][A-Za-z0-9_]*)\b")

def render(yaml_path, mold_path, out_path):
    params = parse_params(yaml_path)
    vals = {p["name"]: p["default"] for p in params}
    def active(p):
        return p["when"] is None or vals[p["when"][0]] in p["when"][1]
    names = {p["name"]: p for p in params}
    def sub(m):
        p = names.get(m.group(1))
        if p is None:
            return m.group(0)
        if not active(p):
            return ""
        v = vals[p["name"]]
        return ("1" if v else "0") if isinstance(v, bool) else str(v)
    open(out_path, "w").write(MARKER.sub(sub, open(mold_path).read()))

def lint(yaml_path, mold_path):
    """Every marker is a parameter, every parameter is used somewhere."""
    params = parse_params(yaml_path)
    names = {p["name"] for p in params}
    text = open(mold_path).read()
    # #NAME with NAME a preprocessor directive is not a marker (no parameter may be called so)
    cpp = {"pragma", "include", "define", "undef", "if", "ifdef", "ifndef", "else", "elif",
           "endif", "error", "warning", "line"}
    bad = [p for p in names if p in cpp]
    markers = {m for m in MARKER.findall(text) if m not in cpp}
    # a marker-looking token that is no parameter would reach the compiler as a stray '#'
    unknown = sorted(markers - names)
    pieces = re.findall(r"\{\{(.*?)\}\}|\{%(.*?)%\}", open(yaml_path).read())
    templ = " ".join(a + b for a, b in pieces)
    unused = sorted(n for n in names
                    if n not in markers and not re.search(rf"\b{re.escape(n)}\b", templ))
    problems = []
    if bad: problems.append(f"parameters named like preprocessor keywords: {bad}")
    if unknown: problems.append(f"markers without a parameter: {unknown}")
    if unused: problems.append(f"parameters used nowhere: {unused}")
    return problems

def values(path):
    names, vals = [], []
    for line in open(path):
        if line.startswith("=="):
            continue
        if line.startswith("begin dump:") or line.startswith("end   dump:"):
            names.append(line.strip())
            continue
        vals.extend(float(x) for x in line.split())
    return names, vals

def compare(ref_path, got_path, rtol=1e-6):
    """-> (status word, number of differing elements, number of elements)"""
    if open(ref_path, "rb").read() == open(got_path, "rb").read():
        n = len(values(ref_path)[1])
        return ("identical", 0, n) if n > 0 else ("EMPTY", 0, 0)
    rn, rv = values(ref_path)
    gn, gv = values(got_path)
    if rn != gn or len(rv) != len(gv) or not rv:
        return ("MISMATCH(layout)", max(len(rv), len(gv)), max(len(rv), len(gv)))
    bad = sum(1 for a, b in zip(rv, gv)
              if not (a == b or abs(a - b) <= rtol * max(abs(a), abs(b))))
    return ("within-rtol" if bad == 0 else "MISMATCH", bad, len(rv))

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "render":
        render(*sys.argv[2:5])
    elif cmd == "lint":
        probs = lint(sys.argv[2], sys.argv[3])
        print("; ".join(probs) if probs else "ok")
        sys.exit(1 if probs else 0)
    elif cmd == "compare":
        s, bad, n = compare(sys.argv[2], sys.argv[3])
        print(f"{s} {bad} {n}")
    elif cmd == "get":
        v = top_value(sys.argv[2], sys.argv[3])
        print("" if v is None else v)
PYEOF
helper() { python3 "$PY_HELPER" "$@"; }

FAILS=0
SUMMARY=()
note() { SUMMARY+=("$1"); printf '%s\n' "$1"; }
fail() { FAILS=$((FAILS + 1)); note "FAIL  $1"; }

# compile SRC EXE DATASET [COMPILER] -> 0/1, log in EXE.log
compile() {
  local src="$1" exe="$2" ds="$3" cc="${4:-$CLANG}" flags
  if [[ "$cc" == "$CLANG" ]]; then
    flags=(-O3 -fopenmp -fno-crash-diagnostics)
  else
    flags=(-O3 -Wall -Wextra)
  fi
  # shellcheck disable=SC2086
  "$cc" "${flags[@]}" $EXTRA_CFLAGS -I"$HERE/harness" -D"${ds}_DATASET" "$src" -o "$exe" -lm \
    >"$exe.log" 2>&1
}

# run EXE OUT_DUMP [ENV...] -> prints the kernel time
run_dump() {
  local exe="$1" out="$2"
  shift 2
  env PB_DUMP=1 OMP_NUM_THREADS=2 "$@" "$exe" 2>"$out" | tail -n 1
}

inputs_for() {
  case "$1" in
    heat-3d | floyd-warshall) echo "polybench random" ;;
    *) echo "polybench" ;;
  esac
}

printf '== moldtune PolyBench check: %s, datasets %s\n' "$("$CLANG" --version | head -n 1)" "$DATASETS"
for k in $KERNELS; do
  dir="$HERE/$k"
  [[ -f "$dir/$k.c" && -f "$dir/$k.mold.c" && -f "$dir/$k.yaml" ]] || { fail "$k: missing files"; continue; }

  # 1. marker/parameter consistency of every space of this kernel
  for y in "$dir"/*.yaml; do
    mold="$dir/$(helper get "$y" mold)"
    if lint_out="$(helper lint "$y" "$mold")"; then
      note "ok    $k: $(basename "$y") markers and parameters agree"
    else
      fail "$k: $(basename "$y"): $lint_out"
    fi
  done

  # 2. K.c vs the mold's default configuration
  helper render "$dir/$k.yaml" "$dir/$k.mold.c" "$WORK/$k.default.c"
  for ds in $DATASETS; do
    ref="$WORK/$k.$ds.ref"
    var="$WORK/$k.$ds.mold"
    compile "$dir/$k.c" "$ref" "$ds" || { fail "$k $ds: $k.c does not compile (see below)"; cat "$ref.log"; continue; }
    compile "$WORK/$k.default.c" "$var" "$ds" || { fail "$k $ds: default mold does not compile"; cat "$var.log"; continue; }
    for input in $(inputs_for "$k"); do
      envs=()
      [[ "$input" == random ]] && envs=(PB_INPUT=random)
      t_ref="$(run_dump "$ref" "$ref.$input.dump" "${envs[@]}")" || { fail "$k $ds $input: $k.c failed"; continue; }
      t_var="$(run_dump "$var" "$var.$input.dump" "${envs[@]}")" || { fail "$k $ds $input: mold failed"; continue; }
      read -r status bad n < <(helper compare "$ref.$input.dump" "$var.$input.dump")
      line="$(printf '%-15s %-6s %-9s %-16s %8s elements  time K.c %ss, mold default %ss' \
        "$k" "$ds" "$input" "$status" "$n" "$t_ref" "$t_var")"
      if [[ "$status" == identical || "$status" == within-rtol ]]; then
        note "ok    $line"
      else
        fail "$line ($bad differ)"
      fi
    done
  done

  # 3. portability: gcc -O3 builds K.c and agrees with clang at MINI
  gref="$WORK/$k.gcc"
  if compile "$dir/$k.c" "$gref" MINI "$GCC"; then
    if [[ -s "$gref.log" ]]; then
      note "warn  $k: gcc warnings:"; cat "$gref.log"
    fi
    cref="$WORK/$k.MINI.ref"
    [[ -x "$cref" ]] || compile "$dir/$k.c" "$cref" MINI
    run_dump "$gref" "$gref.dump" >/dev/null
    run_dump "$cref" "$cref.cmp.dump" >/dev/null
    read -r status bad n < <(helper compare "$cref.cmp.dump" "$gref.dump")
    if [[ "$status" == identical || "$status" == within-rtol ]]; then
      note "ok    $k: gcc -O3 builds $k.c; MINI output $status vs clang"
    else
      fail "$k: gcc -O3 output $status vs clang ($bad of $n differ)"
    fi
  else
    fail "$k: gcc -O3 cannot compile $k.c"; cat "$gref.log"
  fi
done

# ---- optional: the deliberately illegal spaces ----------------------------------------------
if [[ $ILLEGAL == 1 ]]; then
  for y in "$HERE"/*/illegal.yaml; do
    dir="$(dirname "$y")"
    k="$(basename "$dir")"
    mold="$dir/$(helper get "$y" mold)"
    refsrc="$dir/$(helper get "$y" reference 2>/dev/null)"
    [[ -f "$refsrc" ]] || refsrc="$dir/$k.c"
    ds="$(grep -o -- '-D[A-Z]*_DATASET' "$y" | head -n 1 | sed 's/^-D//; s/_DATASET$//')"
    envs=()
    grep -q 'PB_INPUT: "random"' "$y" && envs=(PB_INPUT=random)
    helper render "$y" "$mold" "$WORK/$k.illegal.c"
    compile "$refsrc" "$WORK/$k.illegal.ref" "$ds" || { fail "$k illegal: reference does not compile"; continue; }
    compile "$WORK/$k.illegal.c" "$WORK/$k.illegal.var" "$ds" || { fail "$k illegal: variant does not compile"; cat "$WORK/$k.illegal.var.log"; continue; }
    run_dump "$WORK/$k.illegal.ref" "$WORK/$k.illegal.ref.dump" "${envs[@]}" >/dev/null
    for rep in 1 2 3; do
      run_dump "$WORK/$k.illegal.var" "$WORK/$k.illegal.var.dump" "${envs[@]}" >/dev/null
      read -r status bad n < <(helper compare "$WORK/$k.illegal.ref.dump" "$WORK/$k.illegal.var.dump")
      line="$(printf '%-15s %-6s illegal.yaml default, run %d: %s of %s elements differ' "$k" "$ds" "$rep" "$bad" "$n")"
      if [[ "$status" == MISMATCH ]]; then
        note "ok    $line (expected: the variant is illegal)"
      else
        note "warn  $line -- the illegal variant was not caught this time"
      fi
    done
  done
fi

echo
echo "== summary"
printf '%s\n' "${SUMMARY[@]}" | grep -c '^ok' | xargs printf '%s checks ok\n'
if [[ $FAILS -gt 0 ]]; then
  echo "$FAILS FAILED:"
  printf '%s\n' "${SUMMARY[@]}" | grep '^FAIL'
  exit 1
fi
echo "all passed"
