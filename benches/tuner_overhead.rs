//! Tuner-side time per evaluation: propose (pool of 10,000 valid candidates + forest fit +
//! LCB) + tell + bookkeeping (results.csv append, results.json rewrite), with no compile or
//! run at all, measured at 200 observations. Writes results/bench/tuner_overhead.md.
//!
//! `cargo bench --bench tuner_overhead`. The machine is shared and noisy: we report the
//! median and min over the measured steps, and the spread.

use std::time::Instant;

use moldtune::evaluate::outcome::{Measurement, Source};
use moldtune::evaluate::MockEvaluator;
use moldtune::problem::{Goal, Problem};
use moldtune::run::log::{self as db, Record};
use moldtune::run::meta;
use moldtune::search::{Learner, Searcher, Settings};

const SPACE: &str = r##"
name: bench
mold: bench.mold.c
params:
  - {name: P0, type: ordinal, values: [4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 128], default: 96}
  - {name: P1, type: ordinal, values: [4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 128], default: 96}
  - {name: P2, type: ordinal, values: [4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 2048], default: 2048}
  - {name: P3, type: ordinal, values: [4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 256], default: 256}
  - {name: P4, type: ordinal, values: [4, 8, 16, 20, 32, 50, 64, 80, 96, 100, 128], default: 96}
  - {name: P5, type: categorical, choices: ["", "#pragma omp interchange", "#pragma omp interchange permutation(3,1,2)"], default: ""}
  - {name: P6, type: categorical, choices: ["", "#pragma omp reverse"], default: ""}
  - {name: P7, type: categorical, choices: ["", "#pragma omp unroll partial(2)", "#pragma omp unroll partial(4)"], default: "", when: {P6: [""]}}
  - {name: P8, type: integer, low: 1, high: 1024, log: true, default: 64}
  - {name: P9, type: real, low: 0.01, high: 10.0, log: true}
  - {name: P10, type: boolean, default: false}
constraints: ["P0 * P1 <= 10000"]
compile: "cc {{ source }} -o {{ exe }}"
run: "{{ exe }}"
"##;

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mold: String = (0..=10).map(|i| format!("#P{i}\n")).collect();
    std::fs::write(dir.path().join("bench.mold.c"), mold).unwrap();
    std::fs::write(dir.path().join("bench.yaml"), SPACE).unwrap();
    let problem = Problem::load(&dir.path().join("bench.yaml")).expect("bench problem");
    let out = dir.path().join("run");
    std::fs::create_dir_all(&out).unwrap();

    {
        // Parts of one rf step at ~200 observations (diagnostic; the features are the tree
        // features the forest learners use).
        use moldtune::rng::Rng;
        use moldtune::search::surrogate::{Forest, ForestParams};
        let mut s = Searcher::new(
            &problem.space,
            Settings::new(Learner::Rf, 7, Goal::Minimize),
        );
        let mut rng = Rng::new(1);
        let sampler = moldtune::problem::sample::Sampler::new(&problem.space);
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for _ in 0..200 {
            let c = sampler.draw(&mut rng, &|_| true).found().unwrap();
            let y = MockEvaluator::objective(&problem, &c);
            problem.space.push_tree_features(&c, &mut xs);
            ys.push(y.ln());
            let m = Measurement::single(y);
            s.tell(&c, &m, moldtune::evaluate::outcome::Source::Random);
        }
        let t = Instant::now();
        let pool = s.pool(&mut rng);
        let t_pool = t.elapsed();
        let t = Instant::now();
        let mut xp = Vec::new();
        for c in &pool {
            problem.space.push_tree_features(c, &mut xp);
        }
        let t_enc = t.elapsed();
        let t = Instant::now();
        let f = Forest::fit(
            &xs,
            problem.space.tree_width(),
            &ys,
            ForestParams::random_forest(),
            &mut rng,
        );
        let t_fit = t.elapsed();
        let t = Instant::now();
        let _ = f.predict(&xp);
        let t_pred = t.elapsed();
        println!(
            "parts: pool {:?} encode {:?} fit {:?} predict {:?}",
            t_pool, t_enc, t_fit, t_pred
        );
    }
    let mut report = String::from("# Tuner-side time per evaluation\n\n");
    report.push_str("Measured by `cargo bench --bench tuner_overhead` (release build). Per step: ask (pool of 10,000 valid\n");
    report.push_str("candidates sampled from an 11-parameter space of ~10^13 points with a constraint and a condition, forest\n");
    report.push_str("fit on all observations, LCB over the pool) + tell + results.csv append + results.json rewrite.\n");
    report.push_str("Steps 190..210 (about 200 observations). ytopt on this machine kind: 2.46 s per evaluation.\n\n");
    report.push_str("| learner | median ms | min ms | max ms | steps |\n|---|---|---|---|---|\n");
    for learner in learners() {
        // interleave 0: every step after the initial design is a model step, so the figure is
        // the cost of a model proposal (interleaved random steps cost ~0.5 ms).
        let settings = Settings {
            interleave: 0,
            ..Settings::new(learner, 7, Goal::Minimize)
        };
        let mut s = Searcher::new(&problem.space, settings);
        let mut log = db::Log::create(&out, &problem).unwrap();
        let meta_probe = moldtune::run::dir::RunDir::metadata(&out).ok();
        let mut records: Vec<Record> = Vec::new();
        let mut times = Vec::new();
        let mut asks = Vec::new();
        for step in 0..210 {
            let t = Instant::now();
            let (config, source) = s.ask(step).expect("a proposal");
            let t_ask = t.elapsed().as_secs_f64() * 1e3;
            let y = MockEvaluator::objective(&problem, &config);
            let m = Measurement::single(y);
            let learner = s.proposer(&config);
            let rec = Record {
                eval_id: step,
                config_hash: problem.space.hash(&config),
                config,
                m,
                elapsed_sec: 0.0,
                learner,
                source,
            };
            log.append(&problem, &rec).unwrap();
            s.tell(&rec.config, &rec.m, rec.source);
            records.push(rec);
            if let Some(meta) = &meta_probe {
                moldtune::run::results_json::write(&out, &problem, meta, &records).unwrap();
            } else {
                // No run.json in the bench: write the same amount of JSON as the driver does.
                let v: Vec<_> = records
                    .iter()
                    .map(|r| db::json_record(&problem, r))
                    .collect();
                meta::write_atomic(
                    &out.join("results.json"),
                    serde_json::to_string_pretty(&v).unwrap().as_bytes(),
                )
                .unwrap();
            }
            if step >= 190 {
                times.push(t.elapsed().as_secs_f64() * 1e3);
                asks.push(t_ask);
            }
        }
        times.sort_by(f64::total_cmp);
        let med = times[times.len() / 2];
        let line = format!(
            "| {} | {:.2} | {:.2} | {:.2} | {} |\n",
            learner.as_str(),
            med,
            times[0],
            times[times.len() - 1],
            times.len()
        );
        print!("{line}");
        report.push_str(&line);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    report.push_str(&format!("\nLoad average during the run: {}\n", load.trim()));
    std::fs::create_dir_all("results/bench").unwrap();
    std::fs::write("results/bench/tuner_overhead.md", report).unwrap();
    println!("wrote results/bench/tuner_overhead.md");
    if std::env::var("TUNER_SCALE").as_deref() != Ok("0") {
        scale(&problem, &out);
    }
}

/// The learners to time: `TUNER_LEARNERS=rf,gp` (comma-separated), else all of them.
fn learners() -> Vec<Learner> {
    match std::env::var("TUNER_LEARNERS") {
        Ok(names) => (names.split(','))
            .map(|n| {
                Learner::parse(n.trim()).expect("TUNER_LEARNERS: rf, et, gbrt, gp, random or auto")
            })
            .collect(),
        Err(_) => Learner::ALL.to_vec(),
    }
}

/// Observations at which one model step is timed for the design at scale (`TUNER_SCALE=0`
/// skips it).
const SCALE_AT: [usize; 4] = [1_000, 2_000, 3_000, 10_000];

/// The learners timed at scale: the default (gp, fitted on at most `GP_ROWS` observations)
/// and the forests.
const SCALE_LEARNERS: [Learner; 4] = [Learner::Gp, Learner::Rf, Learner::Et, Learner::Gbrt];

/// The cost of one step at 1,000 to 10,000 observations (the 10,000-evaluation campaign of
/// docs/cluster.md's "Beyond one cluster"): a model proposal of the default learner and of each
/// forest learner, the exact GP's fit on every observation where it is affordable, and the
/// driver's bookkeeping — the results.csv append and the results.json rewrite. Writes
/// results/bench/tuner_scale.md.
fn scale(problem: &Problem, out: &std::path::Path) {
    let mut report = String::from("# Tuner-side time per step at scale\n\n");
    report.push_str("Measured by `cargo bench --bench tuner_overhead` (release build): one model proposal (pool of 10,000, LCB)\n");
    report.push_str("after n random observations of the bench space, median of 3 steps — gp (the default) fitted on at most\n");
    report.push_str(&format!("{} of them (the best half and the most recent), the forests on all; the exact GP's fit alone on all n\n", moldtune::search::GP_ROWS));
    report.push_str("(one fit, up to 2,000: its cubic cost makes larger ones take minutes); and the driver's bookkeeping for one\n");
    report.push_str("evaluation with n recorded (results.csv append, results.json rewrite).\n\n");
    report.push_str("| observations | gp (default) ms | exact gp fit ms | rf ms | et ms | gbrt ms | csv append ms | results.json rewrite ms |\n|---|---|---|---|---|---|---|---|\n");
    let sampler = moldtune::problem::sample::Sampler::new(&problem.space);
    let mut rng = moldtune::rng::Rng::new(3);
    let mut configs = Vec::new();
    while configs.len() < SCALE_AT[SCALE_AT.len() - 1] {
        configs.push(sampler.draw(&mut rng, &|_| true).found().unwrap());
    }
    for n in SCALE_AT {
        let mut row = format!("| {n} |");
        for (k, learner) in SCALE_LEARNERS.into_iter().enumerate() {
            row.push_str(&format!(
                " {:.0} |",
                model_step_ms(problem, &configs[..n], learner)
            ));
            if k == 0 {
                row.push_str(&exact_gp_fit_ms(problem, &configs[..n]));
            }
        }
        let (append, rewrite) = bookkeeping(problem, out, &configs[..n]);
        row.push_str(&format!(" {append:.2} | {rewrite:.0} |\n"));
        print!("{row}");
        report.push_str(&row);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    report.push_str(&format!("\nLoad average during the run: {}\n", load.trim()));
    std::fs::write("results/bench/tuner_scale.md", report).unwrap();
    println!("wrote results/bench/tuner_scale.md");
}

/// Milliseconds of one model proposal of `learner` told `configs` (median of 3 steps), as a
/// run tells them: the default, the initial design, then the search's own.
fn model_step_ms(
    problem: &Problem,
    configs: &[moldtune::problem::space::Config],
    learner: Learner,
) -> f64 {
    let settings = Settings {
        interleave: 0,
        ..Settings::new(learner, 7, Goal::Minimize)
    };
    let mut s = Searcher::new(&problem.space, settings);
    s.tell(
        &problem.default_config(),
        &Measurement::single(1.0),
        Source::Default,
    );
    for (i, c) in configs.iter().enumerate() {
        let m = Measurement::single(MockEvaluator::objective(problem, c));
        let source = if i < 10 {
            Source::Initial
        } else {
            Source::Model
        };
        s.tell(c, &m, source);
    }
    let n = configs.len();
    let times: Vec<f64> = (0..3)
        .map(|k| {
            let t = Instant::now();
            let _ = s.ask(n + k).expect("a proposal");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    moldtune::stats::median(&times).expect("three steps")
}

/// The exact GP's fit on all of `configs` (milliseconds, one fit), as a table cell; "–"
/// beyond 2,000 observations.
fn exact_gp_fit_ms(problem: &Problem, configs: &[moldtune::problem::space::Config]) -> String {
    if configs.len() > 2_000 {
        return " – |".into();
    }
    let x: Vec<f64> = configs
        .iter()
        .flat_map(|c| problem.space.encode(c))
        .collect();
    let y: Vec<f64> = (configs.iter())
        .map(|c| MockEvaluator::objective(problem, c).ln())
        .collect();
    let t = Instant::now();
    let _ = moldtune::search::surrogate::Gp::fit(
        &x,
        problem.space.params.len(),
        &y,
        &problem.space.categorical_mask(),
    );
    format!(" {:.0} |", t.elapsed().as_secs_f64() * 1e3)
}

/// Milliseconds of one results.csv append and one results.json rewrite with `configs`
/// recorded.
fn bookkeeping(
    problem: &Problem,
    out: &std::path::Path,
    configs: &[moldtune::problem::space::Config],
) -> (f64, f64) {
    let records: Vec<Record> = (configs.iter().enumerate())
        .map(|(i, c)| Record {
            eval_id: i,
            config_hash: problem.space.hash(c),
            config: c.clone(),
            m: Measurement::single(MockEvaluator::objective(problem, c)),
            elapsed_sec: 0.0,
            source: moldtune::evaluate::outcome::Source::Random,
            learner: None,
        })
        .collect();
    let mut log = db::Log::create(out, problem).unwrap();
    let t = Instant::now();
    log.append(problem, &records[records.len() - 1]).unwrap();
    let append = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let v: Vec<_> = records
        .iter()
        .map(|r| db::json_record(problem, r))
        .collect();
    meta::write_atomic(
        &out.join("results.json"),
        serde_json::to_string_pretty(&v).unwrap().as_bytes(),
    )
    .unwrap();
    (append, t.elapsed().as_secs_f64() * 1e3)
}
