//! Search-quality benchmarks without a compiler: replay a recorded table of measurements (a
//! run directory, ideally an exhaustive one) or a synthetic function, for every learner over
//! many seeds, and report best-so-far curves and the evaluations needed to come within 5%
//! of the table's optimum.
//!
//! Each simulated evaluation is answered from the table by one of two [`Rules`]: under
//! `nearest` (the default, the rules `scripts/peers` holds every other optimiser to) the
//! learner searches the problem's whole space and a proposal that is not a row gets the
//! outcome of the nearest row, a row answering twice charged twice; under `rows` the
//! learner chooses among the table's rows only, so every proposal has its own outcome.

use std::collections::HashMap;

use crate::evaluate::outcome::{Measurement, Status};
use crate::problem::space::{Config, Space};
use crate::problem::Goal;
use crate::search::prior::Prior;
use crate::search::settings::{Mechanism, Without};
use crate::search::{Learner, Searcher, Settings};

/// How a proposal meets the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Rules {
    /// The learner searches the whole space; a proposal that is not a row is answered by
    /// the nearest row (fewest differing coordinates, the first on ties), and a row that
    /// answers again is charged again: the peers' rules.
    Nearest,
    /// The learner chooses among the table's rows only (every proposal has its own outcome):
    /// rules no peer is held to.
    Rows,
}

impl Rules {
    /// How the report says it.
    pub fn describe(self) -> &'static str {
        match self {
            Rules::Nearest => "rules `nearest` (the peers' rules): every learner searches the problem's whole space; a proposal that is not a row of the table is answered with the nearest row (fewest differing coordinates, the first on ties), a row answering twice is charged twice",
            Rules::Rows => "rules `rows` (restricted, not the peers' rules): every learner chooses among the table's rows only, so every proposal has its own outcome",
        }
    }
}

/// The row answering each proposal: its own, or the nearest one (a table's rows are distinct
/// configurations: [`from_records`] keeps a configuration's first outcome).
struct Answers {
    exact: HashMap<Vec<u64>, usize>,
    keys: Vec<Vec<u64>>,
}

impl Answers {
    fn new(table: &Table) -> Answers {
        let keys: Vec<Vec<u64>> = table.rows.iter().map(|(c, _)| c.key()).collect();
        let exact = (keys.iter().enumerate()).map(|(i, k)| (k.clone(), i));
        Answers {
            exact: exact.collect(),
            keys,
        }
    }

    /// The answering row, and whether it is the proposal itself.
    fn row(&self, c: &Config) -> (usize, bool) {
        let key = c.key();
        if let Some(&i) = self.exact.get(&key) {
            return (i, true);
        }
        let differing = |k: &Vec<u64>| k.iter().zip(&key).filter(|(a, b)| a != b).count();
        let nearest = (self.keys.iter().enumerate()).min_by_key(|(_, k)| differing(k));
        (nearest.map_or(0, |(i, _)| i), false)
    }
}

/// A table of outcomes: the configurations to search over and their measurements.
pub struct Table {
    pub name: String,
    pub space: Space,
    pub rows: Vec<(Config, Measurement)>,
    pub goal: Goal,
}

impl Table {
    pub fn optimum(&self) -> f64 {
        let oks = self
            .rows
            .iter()
            .filter(|r| r.1.status == Status::Ok)
            .filter_map(|r| r.1.objective);
        match self.goal {
            Goal::Minimize => oks.fold(f64::INFINITY, f64::min),
            Goal::Maximize => oks.fold(f64::NEG_INFINITY, f64::max),
        }
    }

    pub fn failure_share(&self) -> f64 {
        self.rows
            .iter()
            .filter(|r| r.1.status != Status::Ok)
            .count() as f64
            / self.rows.len().max(1) as f64
    }
}

/// One simulated search: best-so-far after each evaluation (NaN before the first success),
/// the number of failed evaluations, and the simulated seconds spent after each evaluation:
/// what the user would have waited — each evaluation's recorded `compile_s` + `run_s` (a
/// failure what it cost; a synthetic table records nothing) plus the learner's own ask and
/// tell, timed here.
pub struct Trace {
    pub best: Vec<f64>,
    pub failures: usize,
    pub seconds: Vec<f64>,
    /// Proposals answered by another row (always 0 under [`Rules::Rows`]).
    pub outside: usize,
    /// Evaluations answered by a row that had answered before.
    pub repeats: usize,
}

/// One way of searching a table: a learner, with or without the feasibility model, cold or
/// warm-started from a prior (named).
#[derive(Clone, Copy)]
pub struct Variant<'p> {
    pub learner: Learner,
    /// The failure policy's mechanisms left out (`--without`; the classifier: "no
    /// feasibility model").
    pub without: Without,
    pub prior: Option<(&'p str, &'p Prior)>,
}

impl Variant<'_> {
    /// The learner as it is, cold.
    pub fn plain(learner: Learner) -> Variant<'static> {
        Variant::without(learner, Without::default())
    }

    /// The learner without the mechanisms `without`, cold.
    pub fn without(learner: Learner, without: Without) -> Variant<'static> {
        Variant {
            learner,
            without,
            prior: None,
        }
    }

    /// Its row label: "rf", "rf (no feasibility model)", "gp without books, worst",
    /// "rf warm-started from X".
    pub fn label(&self) -> String {
        let mut s = self.learner.as_str().to_string();
        let others: Vec<&str> = (self.without.list().into_iter())
            .filter(|&m| m != Mechanism::Classifier)
            .map(Mechanism::as_str)
            .collect();
        if self.without.has(Mechanism::Classifier) {
            s.push_str(" (no feasibility model)");
        }
        if !others.is_empty() {
            s.push_str(&format!(" without {}", others.join(", ")));
        }
        if let Some((name, _)) = self.prior {
            s.push_str(&format!(" warm-started from {name}"));
        }
        s
    }
}

/// The variants a table is replayed with: each of `learners`; rf without the feasibility
/// model; each learner but random without each of the mechanisms `without` and, when there
/// are several, without them all; with a prior, rf and gp (the default) warm-started from it.
pub fn variants<'p>(
    learners: &[Learner],
    without: &[Mechanism],
    prior: Option<(&'p str, &'p Prior)>,
) -> Vec<Variant<'p>> {
    let mut v: Vec<Variant> = learners.iter().map(|&l| Variant::plain(l)).collect();
    let mut ablations: Vec<Without> = (without.iter())
        .map(|&m| Without::default().and(m))
        .collect();
    if without.len() > 1 {
        ablations.push(without.iter().fold(Without::default(), |w, &m| w.and(m)));
    }
    for &l in learners.iter().filter(|&&l| l != Learner::Random) {
        v.extend(ablations.iter().map(|&w| Variant::without(l, w)));
    }
    if learners.contains(&Learner::Rf) && !without.contains(&Mechanism::Classifier) {
        v.push(Variant::without(
            Learner::Rf,
            Without::default().and(Mechanism::Classifier),
        ));
    }
    if prior.is_some() {
        for l in [Learner::Rf, Learner::Gp] {
            if learners.contains(&l) {
                v.push(Variant {
                    prior,
                    ..Variant::plain(l)
                });
            }
        }
    }
    v
}

/// One simulated search of `table` under `rules`, from `settings` (and `prior`). The seconds
/// charged are the answering rows' recorded costs and the learner's own ask and tell (the
/// table lookup is the replay's, not the learner's, as in scripts/peers).
pub fn simulate(
    table: &Table,
    settings: Settings,
    budget: usize,
    rules: Rules,
    prior: Option<&Prior>,
) -> Trace {
    let answers = Answers::new(table);
    let candidates =
        (rules == Rules::Rows).then(|| table.rows.iter().map(|r| r.0.clone()).collect());
    let mut s = Searcher::with_candidates(&table.space, settings, candidates);
    if let Some(p) = prior {
        s.warm_start(p.clone());
    }
    let mut best = Vec::with_capacity(budget);
    let mut seconds = Vec::with_capacity(budget);
    let mut answered = std::collections::HashSet::new();
    let (mut cur, mut spent) = (f64::NAN, 0.0);
    let (mut failures, mut outside, mut repeats) = (0, 0, 0);
    for step in 0..budget {
        let t0 = std::time::Instant::now();
        let Ok((c, src)) = s.ask(step) else { break };
        let asked_s = t0.elapsed().as_secs_f64();
        let (row, exact) = answers.row(&c);
        outside += usize::from(!exact);
        repeats += usize::from(!answered.insert(row));
        let m = &table.rows[row].1;
        if m.status == Status::Ok {
            let v = m.objective.unwrap_or(f64::NAN);
            cur = match table.goal {
                _ if cur.is_nan() => v,
                Goal::Minimize => cur.min(v),
                Goal::Maximize => cur.max(v),
            };
        } else {
            failures += 1;
        }
        best.push(cur);
        let t1 = std::time::Instant::now();
        s.tell(&c, m, src);
        spent += m.compile_s + m.run_s + asked_s + t1.elapsed().as_secs_f64();
        seconds.push(spent);
    }
    Trace {
        best,
        failures,
        seconds,
        outside,
        repeats,
    }
}

/// The `q`-quantile of the seeds' values (never empty: at least one seed).
fn quantile(v: &[f64], q: f64) -> f64 {
    crate::stats::quantile(v, q).unwrap_or(f64::NAN)
}

/// Summary of one learner on one table over seeds.
pub struct LearnerReport {
    pub label: String,
    /// (evaluations, q25, median, q75) of best-so-far, after every evaluation.
    pub curve: Vec<(usize, f64, f64, f64)>,
    /// Median evaluations to come within 5% of the optimum (`budget + 1` when never).
    pub to_5pct: f64,
    /// The 95% bootstrap interval of that median over seeds: the seed-to-seed spread of
    /// a comparison (`None` without seeds).
    pub to_5pct_interval: Option<(f64, f64)>,
    /// Median simulated seconds to come within 5% of the optimum (infinite when never).
    pub seconds_to_5pct: f64,
    pub reached: usize,
    pub failures_median: f64,
    /// Median proposals answered by another row, and evaluations answered by a row again.
    pub outside_median: f64,
    pub repeats_median: f64,
    pub seeds: usize,
    /// Each seed's outcome, in seed order (for paired comparisons).
    pub per_seed: Vec<SeedOutcome>,
}

/// What one seed's search came to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedOutcome {
    /// Evaluations to within 5% of the optimum (`budget + 1` when never).
    pub evals: f64,
    /// Simulated seconds to 5% (infinite when never).
    pub seconds: f64,
    pub failures: f64,
}

/// How the simulated searches are run.
#[derive(Debug, Clone, Copy)]
pub struct Protocol {
    pub seeds: usize,
    pub budget: usize,
    pub initial: usize,
    pub acquisition: crate::search::Acquisition,
    pub kappa: f64,
    pub rules: Rules,
}

/// Every seed's numbers of `reports` on `table`, for scripts that compare searches seed by
/// seed (`moldtune replay --seeds-json`; scripts/peers/report.py's ratios and their
/// intervals): per learner, evaluations to 5% (`budget + 1` when never), simulated seconds
/// to 5% (`null` when never) and failed evaluations, in seed order.
pub fn seeds_json(table: &Table, reports: &[LearnerReport], pr: &Protocol) -> serde_json::Value {
    let learners: serde_json::Map<String, serde_json::Value> = (reports.iter())
        .map(|r| {
            let column = |f: fn(&SeedOutcome) -> Option<f64>| -> Vec<Option<f64>> {
                r.per_seed.iter().map(f).collect()
            };
            let v = serde_json::json!({
                "evals_to_5pct": column(|s| Some(s.evals)),
                "seconds_to_5pct": column(|s| s.seconds.is_finite().then_some(s.seconds)),
                "failures": column(|s| Some(s.failures)),
            });
            (r.label.clone(), v)
        })
        .collect();
    serde_json::json!({
        "optimum": table.optimum(),
        "budget": pr.budget,
        "seeds": pr.seeds,
        "rules": format!("{:?}", pr.rules).to_lowercase(),
        "learners": learners,
    })
}

/// Simulates `pr.seeds` searches of variant `v` on `table` (seeds 0, 1, ...) and summarises
/// them: best-so-far quantiles after every evaluation, evaluations to come within 5% of the
/// optimum, failures.
pub fn evaluate_learner(table: &Table, v: Variant, pr: &Protocol) -> LearnerReport {
    summarize(v.label(), table, &simulate_seeds(table, v, pr), pr)
}

/// The summary of a variant's `traces` on `table`. Evaluations and seconds to 5% are lower
/// medians ([`crate::stats::lower_median`]): a seed that never got there counts as
/// `budget + 1` evaluations and infinite seconds, and when exactly half the seeds got there
/// both columns say when the half did, never a midpoint with "never".
fn summarize(label: String, table: &Table, traces: &[Trace], pr: &Protocol) -> LearnerReport {
    use crate::stats::{lower_median, lower_median_interval};
    let hits = evals_to_5pct(table, traces, pr.budget);
    let secs: Vec<f64> = (traces.iter().zip(&hits))
        .map(|(t, &h)| match h as usize {
            k if k <= t.seconds.len() => t.seconds[k - 1],
            _ => f64::INFINITY,
        })
        .collect();
    let reached = hits.iter().filter(|&&h| h <= pr.budget as f64).count();
    let fails: Vec<f64> = traces.iter().map(|t| t.failures as f64).collect();
    let outside: Vec<f64> = traces.iter().map(|t| t.outside as f64).collect();
    let repeats: Vec<f64> = traces.iter().map(|t| t.repeats as f64).collect();
    let per_seed = (hits.iter().zip(&secs).zip(&fails))
        .map(|((&evals, &seconds), &failures)| SeedOutcome {
            evals,
            seconds,
            failures,
        })
        .collect();
    let interval = lower_median_interval(&hits, 0).map(|r| (r.low, r.high));
    LearnerReport {
        label,
        curve: curve(traces, pr.budget),
        to_5pct: lower_median(&hits).unwrap_or(f64::NAN),
        to_5pct_interval: interval,
        seconds_to_5pct: lower_median(&secs).unwrap_or(f64::INFINITY),
        reached,
        failures_median: quantile(&fails, 0.5),
        outside_median: quantile(&outside, 0.5),
        repeats_median: quantile(&repeats, 0.5),
        seeds: pr.seeds,
        per_seed,
    }
}

/// One simulated search per seed.
fn simulate_seeds(table: &Table, v: Variant, pr: &Protocol) -> Vec<Trace> {
    (0..pr.seeds)
        .map(|seed| {
            let s = Settings {
                initial: pr.initial,
                without: v.without,
                acquisition: pr.acquisition,
                kappa: pr.kappa,
                ..Settings::new(v.learner, seed as u64, table.goal)
            };
            simulate(table, s, pr.budget, pr.rules, v.prior.map(|p| p.1))
        })
        .collect()
}

/// (k, q25, median, q75) of the best-so-far after k evaluations, for k = 1 … `budget`; a
/// search that found no success yet counts as infinitely bad.
fn curve(traces: &[Trace], budget: usize) -> Vec<(usize, f64, f64, f64)> {
    (1..=budget)
        .map(|k| {
            let v: Vec<f64> = traces
                .iter()
                .map(|t| {
                    // A search that stopped early (nothing left) keeps its last value.
                    t.best
                        .get(k - 1)
                        .or(t.best.last())
                        .copied()
                        .unwrap_or(f64::NAN)
                })
                .map(|v| if v.is_nan() { f64::INFINITY } else { v })
                .collect();
            (k, quantile(&v, 0.25), quantile(&v, 0.5), quantile(&v, 0.75))
        })
        .collect()
}

/// Per search, the evaluations it took to come within 5% of the table's optimum
/// (`budget + 1` when it never did).
fn evals_to_5pct(table: &Table, traces: &[Trace], budget: usize) -> Vec<f64> {
    let opt = table.optimum();
    let within = |v: f64| crate::problem::objective::shortfall(table.goal, v, opt) <= 0.05 + 1e-12;
    traces
        .iter()
        .map(|t| {
            t.best
                .iter()
                .position(|&v| !v.is_nan() && within(v))
                .map_or(budget as f64 + 1.0, |p| p as f64 + 1.0)
        })
        .collect()
}

/// Counts used by the synthetic tile space's failure region (for the claim in docs/deciding.md).
pub fn describe(table: &Table) -> String {
    format!(
        "{}: {} configurations, {:.0}% fail, optimum {:.6}",
        table.name,
        table.rows.len(),
        100.0 * table.failure_share(),
        table.optimum()
    )
}

/// Builds a table from a run directory's records (duplicates of a configuration keep the
/// first outcome).
pub fn from_records(
    name: &str,
    space: Space,
    goal: Goal,
    records: &[crate::run::log::Record],
) -> Table {
    let mut seen = std::collections::HashSet::new();
    let rows = records
        .iter()
        .filter(|r| seen.insert(r.config.key()))
        .map(|r| (r.config.clone(), r.m.clone()))
        .collect();
    Table {
        name: name.into(),
        space,
        rows,
        goal,
    }
}

/// Every variant replayed on `table`.
pub fn replay_table(table: &Table, variants: &[Variant], pr: &Protocol) -> Vec<LearnerReport> {
    (variants.iter())
        .map(|v| evaluate_learner(table, *v, pr))
        .collect()
}

/// The run's outcomes as a replayable table.
pub fn table_of(
    dir: &std::path::Path,
    fronts: &crate::run::front_ends::FrontEnds,
) -> Result<Table, crate::error::Error> {
    let crate::run::dir::RunDir {
        problem, records, ..
    } = crate::run::dir::RunDir::open(dir, fronts)?;
    if !(records.iter()).any(|r| r.m.status == Status::Ok && r.m.objective.is_some()) {
        return Err(crate::error::Error::usage(
            format!(
                "`{}` holds no successful evaluation ({} recorded): a replay has no outcome to find",
                dir.display(),
                records.len()
            ),
            Some("replay runs whose results.csv has at least one `ok` row"),
        ));
    }
    let name = format!(
        "{} ({} recorded evaluations, {})",
        problem.name,
        records.len(),
        dir.display()
    );
    Ok(from_records(
        &name,
        problem.space.clone(),
        problem.metric.goal,
        &records,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every third row of branin's grid: a sampled table, as 3mm-medium's 500 rows are.
    fn sampled() -> Table {
        let mut t = crate::report::synthetic::branin();
        t.rows = t.rows.into_iter().step_by(3).collect();
        t
    }

    #[test]
    fn a_proposal_off_the_table_gets_the_nearest_row_and_the_first_on_ties() {
        let t = sampled();
        let a = Answers::new(&t);
        let row = |i: usize| t.rows[i].0.clone();
        assert_eq!(a.row(&row(5)), (5, true));
        // (0, 1) is not a row (rows are every third cell in X1-fastest order): (0, 0) and
        // (0, 3) differ from it in one coordinate each; the first of them answers.
        let off = Config(vec![0.0, 1.0]);
        assert!(!t.rows.iter().any(|(c, _)| c == &off));
        assert_eq!(a.row(&off), (0, false));
    }

    #[test]
    fn under_the_peers_rules_proposals_leave_the_table_and_repeats_are_charged() {
        let t = sampled();
        let settings = Settings::new(Learner::Random, 3, t.goal);
        let whole = simulate(&t, settings.clone(), 200, Rules::Nearest, None);
        assert_eq!(whole.best.len(), 200);
        assert!(whole.outside > 50, "{} of 200 off the table", whole.outside);
        assert!(whole.repeats > 0);
        let rows = simulate(&t, settings, 200, Rules::Rows, None);
        assert_eq!((rows.outside, rows.repeats), (0, 0));
    }

    #[test]
    fn a_synthetic_table_costs_nothing_but_the_learner_s_time() {
        // Its objective is not a run time (branin's values reach 300): charging it as one
        // made branin's "simulated seconds" the sum of the objectives seen.
        for table in [
            crate::report::synthetic::branin(),
            crate::report::synthetic::tiles(),
        ] {
            assert!(
                (table.rows.iter()).all(|(_, m)| m.compile_s == 0.0 && m.run_s == 0.0),
                "{}",
                table.name
            );
        }
    }

    #[test]
    fn when_exactly_half_the_seeds_reach_the_seconds_are_those_of_the_half() {
        // Issue 57: 10 of 20 seeds within 5%: the evaluations' median was the midpoint of
        // the 10th seed's count and "never" (a number), the seconds' median infinite ("–").
        let t = sampled();
        let opt = t.optimum();
        let pr = Protocol {
            seeds: 20,
            budget: 50,
            initial: 10,
            acquisition: crate::search::Acquisition::Lcb,
            kappa: 1.96,
            rules: Rules::Nearest,
        };
        let trace = |reach: Option<usize>| Trace {
            best: (1..=50)
                .map(|k| match reach {
                    Some(r) if k >= r => opt,
                    _ => opt * 3.0 + 10.0,
                })
                .collect(),
            failures: 0,
            seconds: (1..=50).map(|k| k as f64 * 2.0).collect(),
            outside: 0,
            repeats: 0,
        };
        let traces: Vec<Trace> = (0..20)
            .map(|s| trace((s % 2 == 0).then_some(11 + s)))
            .collect();
        let r = summarize("rf".into(), &t, &traces, &pr);
        assert_eq!(r.reached, 10);
        // The 10th smallest: seeds 0, 2, …, 18 reach at 11, 13, …, 29.
        assert_eq!(r.to_5pct, 29.0);
        assert_eq!(r.seconds_to_5pct, 58.0);
        let md = crate::report::replay_md::report_table(&t, std::slice::from_ref(&r), &pr);
        assert!(md.contains("| 29 | 58 |"), "{md}");
        // Seed by seed, for the ratios' intervals: a seed that never got there is 51 and null.
        let json = seeds_json(&t, &[r], &pr);
        let rf = &json["learners"]["rf"];
        assert_eq!(rf["evals_to_5pct"][0], 11.0);
        assert_eq!(rf["evals_to_5pct"][1], 51.0);
        assert!(rf["seconds_to_5pct"][1].is_null());
        assert_eq!(rf["failures"].as_array().map(Vec::len), Some(20));
    }
}
