"""Writes results/search/peers.md from the peers' per-seed numbers (peers.json) and moldtune's
own rows, parsed from results/search/README.md (every learner under the peers' rules; else
identical-rules.md, gp and auto) and results/search/restricted.md (restricted rules), all written
by `moldtune replay`.

    python report.py --root REPO [--json results/search/peers.json]
        [--out results/search/peers.md] [--script-seconds S]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics

from seedstats import bootstrap, quantile, ratio_interval

MOLDTUNE_LEARNERS = ("rf", "et", "gbrt", "gp", "random", "auto")
PEER_LABELS = {"optuna": "Optuna TPE", "smac3": "SMAC3 HPO facade", "opentuner": "OpenTuner AUC bandit",
               "ytopt": "ytopt (RF + LCB)"}
COLUMNS = [
    "learner",
    "evals to within 5% of optimum (median)",
    "simulated s to 5% (median)",
    "seeds within 5%",
    "best@25 median [q25, q75]",
    "best@50 median [q25, q75]",
    "best@100 median [q25, q75]",
    "failed evals (median)",
    "evals to 5%: 95% interval of the median",
    "repeated proposals (median)",
    "proposals outside the table (median)",
    "optimiser s per search (median)",
]
# The README columns a moldtune row is read from (by header text), in COLUMNS order; the
# last two only since `moldtune replay --rules` (absent: "–").
README_COLUMNS = COLUMNS[:9] + ["repeated rows (median)", "answered by another row (median)"]
# moldtune's replay pages the rows are read from: under the peers' rules first.
MOLDTUNE_PAGES = ("README.md", "identical-rules.md", "restricted.md")


# ---------------------------------------------------------------------------------------------
# Numbers as moldtune prints them


def sig(v: float, digits: int = 3) -> str:
    """src/report/format.rs `sig`: `digits` significant digits, trailing zeros dropped, the
    integer part always whole; "–" when infinite."""
    if v is None or not math.isfinite(v):
        return "–"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    if not -5 <= mag < 6:
        return f"{v:.{max(digits - 1, 0)}e}"
    s = f"{v:.{max(digits - 1 - mag, 0)}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def inf(x):
    """peers.json's None (JSON has no infinity) as infinity."""
    return math.inf if x is None else x


def spread(values) -> str:
    """'median [q25, q75]' with five decimals, as moldtune's best@k cells."""
    q1, med, q3 = (quantile(values, q) for q in (0.25, 0.5, 0.75))
    return f"{med:.5f} [{q1:.5f}, {q3:.5f}]"


def evals_text(median: float, budget: int) -> str:
    """Evaluations to 5%: the median, or "> budget" when the median search never got there."""
    return f"> {budget}" if median > budget else f"{median:.0f}"


# ---------------------------------------------------------------------------------------------
# moldtune's rows


def readme_sections(text: str) -> dict[str, str]:
    """README.md's sections by table name (the first word of each `## ` heading)."""
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {p.split()[0]: p for p in parts}


def markdown_table(section: str) -> tuple[list[str], list[list[str]]]:
    """The first markdown table of a section: its header cells and rows of cells."""
    lines = [l for l in section.splitlines() if l.startswith("|")]
    cells = lambda l: [c.strip() for c in l.strip().strip("|").split("|")]
    return cells(lines[0]), [cells(l) for l in lines[2:]]


def moldtune_rows(readme: str, table: str) -> tuple[list[dict], str]:
    """moldtune's rows for `table` (rf, et, gbrt, gp, random, auto) as {column: cell text},
    and the section's protocol ("20 seeds, budget 200 evaluations"); none if absent."""
    sec = readme_sections(readme).get(table)
    if sec is None:
        return [], ""
    header, rows = markdown_table(sec)
    want = {r[0]: r for r in rows if r and r[0] in MOLDTUNE_LEARNERS}
    out = []
    for name in MOLDTUNE_LEARNERS:
        if name in want:
            row = dict(zip(header, want[name]))
            out.append({c: row.get(c, "–") for c in README_COLUMNS} | {"learner": f"moldtune {name}"})
    m = re.search(r"(\d+) seeds, budget (\d+) evaluations", sec)
    rules = re.search(r"rules `(\w+)`", sec)
    protocol = (m.group(0) if m else "") + (f", rules `{rules.group(1)}`" if rules else ", rules `rows`")
    return out, protocol


def parse_evals(cell: str) -> float:
    """An evaluations-to-5% cell as a number ("> 200" is 201)."""
    m = re.match(r">\s*(\d+)", cell)
    return float(m.group(1)) + 1 if m else float(cell)


def parse_seconds(cell: str) -> float:
    """A simulated-seconds cell as a number ("–" is infinity)."""
    try:
        return float(cell)
    except ValueError:
        return math.inf


# ---------------------------------------------------------------------------------------------
# The peers' rows


def peer_stats(seeds: list[dict], budget: int) -> dict:
    """The medians over a peer's seeds (never-reached counts as budget + 1 evaluations and
    infinite seconds). Evaluations and seconds to 5% are lower medians, as moldtune's replay
    states them: when exactly half the seeds got there, both say when that half did."""
    med = lambda xs: quantile(xs, 0.5)
    return {
        "evals": statistics.median_low([s["evals_to_5pct"] for s in seeds]),
        "seconds": statistics.median_low([inf(s["seconds_to_5pct"]) for s in seeds]),
        "reached": sum(s["evals_to_5pct"] <= budget for s in seeds),
        "n": len(seeds),
        "best_at": {k: [inf(s["best_at"][k]) for s in seeds] for k in seeds[0]["best_at"]},
        "failures": med([s["failures"] for s in seeds]),
        "interval": median_interval([s["evals_to_5pct"] for s in seeds]),
        "repeats": med([s["repeats"] for s in seeds]),
        "out_of_table": med([s["out_of_table"] for s in seeds]),
        "optimiser_s": med([s["optimiser_s"] for s in seeds]),
    }


def median_interval(values, seed: int = 0) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the lower median of `values` (the seed-to-seed
    spread of a peer's evaluations to 5%, as moldtune's replay states its own)."""
    _, low, high = bootstrap([values], lambda m: m[0], seed)
    return low, high


def peer_row(label: str, st: dict, budget: int) -> list[str]:
    """One peer's cells, in COLUMNS order."""
    best = lambda k: spread(st["best_at"][k]) if k in st["best_at"] else "–"
    return [
        label,
        evals_text(st["evals"], budget),
        sig(st["seconds"]),
        f"{st['reached']}/{st['n']}",
        best("25"),
        best("50"),
        best("100"),
        f"{st['failures']:.0f}",
        "[{}, {}]".format(*(evals_text(x, budget) for x in st["interval"])),
        f"{st['repeats']:.0f}",
        f"{st['out_of_table']:.0f}",
        sig(st["optimiser_s"]),
    ]


def table_markdown(rows: list[list[str]]) -> str:
    """A markdown table with COLUMNS as its header."""
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def wins(name: str, stats: dict, gp: dict | None, budget: int) -> list[str]:
    """The peers whose evals-to-5% or seconds-to-5% median is below moldtune gp's."""
    if gp is None:
        return [f"- {name}: no moldtune gp row in README.md to compare with"]
    g_e, g_s = parse_evals(gp["evals to within 5% of optimum (median)"]), parse_seconds(gp["simulated s to 5% (median)"])
    out = []
    for p, st in stats.items():
        better = []
        if st["evals"] <= budget and st["evals"] < g_e:  # a censored median ("> budget") never wins
            better.append(f"evaluations to 5% {evals_text(st['evals'], budget)} < gp's {gp['evals to within 5% of optimum (median)']}")
        if st["seconds"] < g_s:
            better.append(f"simulated s to 5% {sig(st['seconds'])} < gp's {gp['simulated s to 5% (median)']}")
        if better:
            out.append(f"- {name}, {PEER_LABELS.get(p, p)}: " + "; ".join(better))
    return out


# ---------------------------------------------------------------------------------------------
# The document


def seed_counts(doc: dict) -> dict:
    """Per peer: its seed counts, each with the tables replayed with that many seeds."""
    out: dict = {}
    for name, t in doc["tables"].items():
        for p, e in t["peers"].items():
            out.setdefault(p, {}).setdefault(len(e["seeds"]), []).append(name)
    return out


def intro(doc: dict, script_s: float | None, nearest: bool) -> str:
    """What was run, how, with what, and how long it took; `nearest`: moldtune's rows were
    replayed under the peers' rules."""
    v = doc["versions"]
    vers = ", ".join(f"{k} {x}" for k, x in v.items())
    loads = [s["load1"] for t in doc["tables"].values() for p in t["peers"].values() for s in p["seeds"]]
    counts = seed_counts(doc)
    seeds = ", ".join(f"{PEER_LABELS.get(p, p)} {' / '.join(str(n) for n in by)}" for p, by in counts.items())
    fewer = ""
    for p, by in counts.items():
        short = by.get(min(by)) if min(by) < doc["seeds"] else None
        if short:
            per = [s["optimiser_s"] for t in doc["tables"].values() if p in t["peers"] for s in t["peers"][p]["seeds"]]
            full = [t for n, ts in by.items() if n >= doc["seeds"] for t in ts]
            fewer += (
                f" {PEER_LABELS.get(p, p)} ran {min(by)} seeds instead of {doc['seeds']} on {', '.join(short)}"
                f"{' (' + str(doc['seeds']) + ' on ' + ', '.join(full) + ')' if full else ''}: its own time is "
                f"about {sig(statistics.median(per) if per else math.nan, 2)} s per search (median), so "
                f"{doc['seeds']} seeds on every table would have taken hours."
            )
    run_time = f"{doc.get('wall_s', 0) / 60:.1f} min of replay"
    if script_s is not None:
        run_time += f", {script_s / 60:.1f} min for the whole script (venv check included)"
    fail = "\n".join(f"- {PEER_LABELS.get(p, p)}: {t}" for p, t in doc["failures"].items())
    runs = doc.get("determinism", {})
    determinism = "; ".join(f"{PEER_LABELS.get(p, p)}: {t}" for p, t in runs.items()) or "not measured"
    missing = [PEER_LABELS.get(p, p) for p in doc["failures"] if p not in runs]
    if runs and missing:
        determinism += f"; not measured for {', '.join(missing)}"
    ours_rule = (
        "moldtune's rows follow the same rule (`moldtune replay --rules nearest`: its learners "
        "search the whole space too)."
        if nearest
        else "moldtune's rows here come from `moldtune replay --rules rows`, which restricts its "
        "learners to the recorded rows: on the sampled tables moldtune chooses among the 500 rows "
        "while a peer's proposals mostly land near one (not the same rules)."
    )
    return f"""# Search quality of other optimisers on moldtune's replay tables

Written by `scripts/peers/run.sh` (`scripts/peers/report.py`); the per-seed numbers are in
`results/search/peers.json`. The moldtune rows are parsed from `results/search/README.md` (every learner
under the peers' rules), else `identical-rules.md`, and `results/search/restricted.md` (restricted rules)
(`moldtune replay`) when this file is
written, not copied; each table says which.

**What was run.** Each peer searches each table with a budget of {doc['budget']} evaluations
(moldtune's replay: 200) from seeds 0, 1, … ({seeds} seeds), every evaluation answered
from the recorded table instead of a compiler. Lower is better; `best@k` is the best objective
found within k evaluations (median [q25, q75] over seeds; `inf` = no success yet); the
evaluations to come within 5% of the table's optimum count a search that never does as
{doc['budget'] + 1} (shown as "> {doc['budget']}" when that is the median); the seconds to 5%
count it as infinite ("–").{fewer}

Command: `{doc['command']}` (to rewrite this file from peers.json and the current README.md
without replaying: `scripts/peers/run.sh --report-only`)

Python: {doc['python']}. Versions: {vers}.

**Peers.**
- Optuna TPE: `TPESampler(seed=seed, constraints_func=...)`, otherwise its defaults (10
  random startup trials; Optuna 5 uses the multivariate TPE by default), ask/tell; failures
  and forbidden combinations as infeasible trials (see Failures); categorical parameters as
  `suggest_categorical`, ordinal ones as `suggest_int` over the value index (Optuna has no
  ordinal type); a conditional parameter is suggested only when its condition holds.
- SMAC3: `HyperparameterOptimizationFacade` (random forest, log-scaled costs, log EI, Sobol
  initial design of min(10 × parameters, 25% of the budget) configurations, 20% random
  interleaving), ask/tell, `Scenario(deterministic=True, n_trials={doc['budget']}, seed=seed)`;
  ConfigSpace categorical/ordinal hyperparameters, `when` conditions as `InCondition`,
  forbidden combinations as forbidden clauses. (SMAC 2.4's facade random forest is
  scikit-learn's, with n_jobs=-1; pyrfr is no longer used. Profiling one gemm-table search
  while writing this script, about half of SMAC's step time went to joblib starting a thread
  pool for each forest prediction and waiting on it.)
- OpenTuner: its default technique `AUCBanditMetaTechniqueA` (an AUC bandit over differential
  evolution, uniform and normal greedy mutation, random Nelder–Mead), driven through
  `opentuner.api.TuningRunManager` with a throwaway sqlite database per search (under
  `tempfile.mkdtemp()`); categorical parameters as `EnumParameter`, ordinal ones as
  `IntegerParameter` over the value index; Python's `random` and NumPy's global generator
  seeded per search. OpenTuner has no conditions or forbidden combinations: it sets every
  parameter (an inactive one is dropped before the table is consulted). SQLAlchemy is pinned
  to 1.4: under SQLAlchemy 2, OpenTuner 0.8.8 no longer recognises configurations it has
  already requested and measures them again.
- None of the peers is given moldtune's default configuration as its first evaluation
  (moldtune's rows start with it); each starts as it does out of the box.

**Failures** (as each peer documents them):
{fail}

**Run to run** (the same seeds replayed twice): {determinism}

**Configurations outside the table.** One rule for every peer: each peer searches the table's
own space (the parameters of the problem file, as declared), and a proposal that is not a
recorded row is answered with the nearest recorded row (Hamming distance over the parameter
values, an inactive parameter counting as a value of its own; ties to the lower row index);
that row's outcome and cost are what the peer is told and what the search is charged. Only
3mm-medium, lu-medium and floyd-warshall-medium (500 random configurations of much larger
spaces) need it; gemm-table (exhaustive) and the synthetic tables hold every configuration.
{ours_rule}

**Repeats.** A proposal answered by a row the search already evaluated is counted and charged
as an evaluation, as a user running the peer would pay for it: Optuna's TPE proposes
configurations it has already tried (it also keeps no record that a failed configuration
fails, so it may propose one again), two out-of-table proposals may share a nearest row, and
OpenTuner's proposals that differ only in an inactive parameter (tiles' UNROLL) are the same
row. moldtune never proposes a configuration twice, but under the same rule two of its
proposals may share a nearest row, and that is charged too.

**Simulated seconds** = for each evaluation so far, the answering row's recorded
`compile_s + run_s` (a failure costs what it cost when recorded; the synthetic tables record
no cost, so there it is the optimiser's time alone) plus the peer's own ask + tell, timed with
`time.perf_counter` in this replay (the table lookup is not counted). "optimiser s per
search" is that ask + tell time summed over one search (median over seeds).

**Run time and load.** {run_time}, one Python process on a {doc['machine']['cpus']}-core
machine ({doc['machine']['platform']}), started {doc['started_at']}; 1-minute load average
{doc['load_at_start'][0]:.2f} at the start, {doc.get('load_at_end', [math.nan])[0]:.2f} at the
end, {min(loads, default=math.nan):.2f}–{max(loads, default=math.nan):.2f} (median
{statistics.median(loads) if loads else math.nan:.2f}) sampled after each search. Other work
on the machine (a load above the replay's own 1) slows the optimisers' timed steps, and so
adds to the simulated seconds, most visibly on the synthetic tables.
"""


def unwrap(text: str) -> str:
    """Joins the lines of each paragraph and list item (the intro is written wrapped, with
    values of any length inserted)."""
    out = []
    for line in text.splitlines():
        cont = out and out[-1] and line and not line.startswith(("- ", "#", "|", "<!--"))
        if cont and not out[-1].startswith(("#", "|")):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def moldtune_by_rules(pages: dict[str, str], table: str) -> tuple[list, str, list, str]:
    """moldtune's rows for `table` under the peers' rules (the first page that has them) and
    under the restricted ones, each with where it comes from."""
    same, same_note, other, other_note = [], "", [], ""
    for page, text in pages.items():
        ours, protocol = moldtune_rows(text, table)
        if not ours:
            continue
        note = f"results/search/{page} ({protocol})"
        if "rules `nearest`" in protocol and not same:
            same, same_note = ours, note
        elif "rules `nearest`" not in protocol and not other:
            other, other_note = ours, note
    return same, same_note, other, other_note


def ratio_lines(doc: dict, seeds: dict) -> list[str]:
    """Per table, moldtune gp's (the default's) evaluations to 5% over the best peer's (the
    peer with the lowest lower median): the ratio of lower medians with its 95% bootstrap
    interval over seeds, from moldtune's per-seed numbers (`moldtune replay --seeds-json`) and
    peers.json. A seed that never got there counts as budget + 1, so a ratio against a peer
    that mostly never did is a bound."""
    lines = ["| table | moldtune gp | best peer | ratio [95% interval] | interval wider than 2× |",
             "|---|---|---|---|---|"]
    for name, t in doc["tables"].items():
        gp = (seeds.get(name) or {}).get("learners", {}).get("gp")
        if gp is None or not t["peers"]:
            continue
        by_peer = {p: [s["evals_to_5pct"] for s in e["seeds"]] for p, e in t["peers"].items()}
        best = min(by_peer, key=lambda p: statistics.median_low(by_peer[p]))
        mine = gp["evals_to_5pct"]
        r, lo, hi = ratio_interval(mine, by_peer[best])
        wide = "yes: more seeds" if hi / lo > 2 else "no"
        lines.append(f"| {name} | {statistics.median_low(mine):.0f} ({len(mine)} seeds) | "
                     f"{PEER_LABELS.get(best, best)} {statistics.median_low(by_peer[best]):.0f} "
                     f"({len(by_peer[best])} seeds) | {r:.2f} [{lo:.2f}, {hi:.2f}] | {wide} |")
    return lines


def render(doc: dict, pages: dict[str, str], script_s: float | None, seeds: dict | None = None) -> str:
    """The whole of peers.md; `pages`: moldtune's replay pages by file name; `seeds`:
    moldtune's per-seed numbers by table (`moldtune replay --seeds-json`), for the ratios."""
    budget = doc["budget"]
    nearest = any("rules `nearest`" in text for text in pages.values())
    out = [unwrap(intro(doc, script_s, nearest))]
    win_lines = []
    for name, t in doc["tables"].items():
        stats = {p: peer_stats(e["seeds"], budget) for p, e in t["peers"].items()}
        ours, where, restricted, where_restricted = moldtune_by_rules(pages, name)
        rows = [peer_row(PEER_LABELS.get(p, p), st, budget) for p, st in stats.items()]
        rows += [[r[c] for c in README_COLUMNS] + ["–"] for r in ours]
        note = f"moldtune rows under the same rules from {where}" if ours else "no moldtune rows under the same rules"
        out.append(f"## {name}\n\n{t['source']}: {t['description']}. {note}.\n\n{table_markdown(rows)}")
        if restricted:
            second = [[r[c] for c in README_COLUMNS] + ["–"] for r in restricted]
            out.append(
                f"moldtune under the restricted rules (its learners choose among the table's rows only; "
                f"not the peers' rules), from {where_restricted}:\n\n{table_markdown(second)}"
            )
        gp = next((r for r in ours if r["learner"] == "moldtune gp"), None)
        win_lines += wins(name, stats, gp, budget)
    out.append(
        "## Where a peer wins\n\n"
        "<!-- computed by scripts/peers/report.py: the peers whose median evaluations or simulated "
        "seconds to within 5% of the optimum are below moldtune gp's; reasons to be added by hand -->\n\n"
        + ("\n".join(win_lines) if win_lines else "No peer beats moldtune gp on either median.")
        + "\n"
    )
    if seeds:
        out.append(
            "## The default against the best peer\n\n"
            "Evaluations to within 5% of the optimum, moldtune gp (the default) over the best peer on the table "
            "(lowest lower median), with the 95% percentile-bootstrap interval of that ratio (4,000 resamples of "
            "both sets of seeds, independently). ≤ 0.5 is the aim.\n\n" + "\n".join(ratio_lines(doc, seeds)) + "\n"
        )
    why = os.path.join(os.path.dirname(os.path.abspath(__file__)), "why.md")
    if win_lines and os.path.exists(why):
        with open(why) as f:
            out.append(f.read())
    if budget != 200 or doc["seeds"] != 20:
        out.append(
            f"\n**Note:** this is a subset run ({doc['seeds']} seeds, budget {budget}); moldtune's "
            "rows are from its own protocol, so the comparison above is only indicative.\n"
        )
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=".")
    ap.add_argument("--json", default="results/search/peers.json")
    ap.add_argument("--out", default="results/search/peers.md")
    ap.add_argument("--script-seconds", type=float, default=None)
    ap.add_argument("--moldtune-seeds", default="results/search/seeds.json",
                    help="moldtune's per-seed numbers (`moldtune replay --seeds-json`), for the ratios")
    a = ap.parse_args(argv)
    with open(os.path.join(a.root, a.json)) as f:
        doc = json.load(f)
    pages = {}
    for page in MOLDTUNE_PAGES:
        path = os.path.join(a.root, "results", "search", page)
        if os.path.exists(path):
            with open(path) as f:
                pages[page] = f.read()
    if a.script_seconds is not None:  # kept in peers.json for a later --report-only
        doc["script_s"] = doc.get("script_before_s", 0.0) + a.script_seconds
        with open(os.path.join(a.root, a.json), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    seeds_path = os.path.join(a.root, a.moldtune_seeds)
    ours = None
    if os.path.exists(seeds_path):
        with open(seeds_path) as f:
            # Keyed by the replay's table titles ("gemm-table (768 recorded evaluations, …)"):
            # the first word is the table's name.
            ours = {title.split(" ")[0]: v for title, v in json.load(f).items()}
    text = render(doc, pages, doc.get("script_s"), ours)
    with open(os.path.join(a.root, a.out), "w") as f:
        f.write(text)
    print(f"wrote {os.path.join(a.root, a.out)}")


if __name__ == "__main__":
    main()
