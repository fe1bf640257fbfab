//! The search loop: owns evaluation, asks the strategy, records every outcome, resumes from
//! the log, stops cleanly on interrupt.

use std::path::PathBuf;
use std::time::Instant;

use crate::error::Error;
use crate::evaluate::child;
use crate::evaluate::outcome::Status;
use crate::evaluate::{Evaluated, Evaluator, MockEvaluator, RealEvaluator};
use crate::problem::MetricKind;
use crate::problem::Problem;
use crate::rng::hex_hash;
use crate::run::log::{self, Record, RunMeta};
use crate::run::progress::Progress;
use crate::search::{Acquisition, Design, Learner, Searcher, Settings};

/// Everything `moldtune run` can be told on the command line (None = from the problem file,
/// or from run.json when resuming, or the built-in default).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub problem: Option<PathBuf>,
    pub learner: Option<Learner>,
    pub max_evals: Option<usize>,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub resume: bool,
    pub initial: Option<usize>,
    pub kappa: Option<f64>,
    pub acquisition: Option<Acquisition>,
    pub design: Option<Design>,
    pub no_feasibility: bool,
    pub interleave: Option<usize>,
    pub pool: Option<usize>,
    pub repeats: Option<u32>,
    pub compile_timeout: Option<f64>,
    pub run_timeout: Option<f64>,
    pub mock: bool,
    pub keep_builds: bool,
    pub quiet: bool,
    pub command_line: Vec<String>,
}

#[derive(Debug)]
pub struct Summary {
    pub dir: PathBuf,
    pub evaluations: usize,
    pub best: Option<(usize, f64, String)>,
    pub default_objective: Option<f64>,
    pub termination: String,
    pub counts: String,
    pub goal: crate::problem::Goal,
}

pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_string())
}

fn compiler_version(problem: &Problem) -> Option<String> {
    let b = crate::problem::template::Builtins::placeholder(&problem.dir, &problem.sources);
    let ctx = crate::problem::template::context(&problem.space, &problem.default_config(), &b);
    let cc = problem.compile.argv(&ctx).ok()?.into_iter().next()?;
    let out = std::process::Command::new(&cc)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .map(str::to_string)
}

fn default_out(problem: &Problem) -> PathBuf {
    let stamp = now_rfc3339()
        .replace([':', '-'], "")
        .replace('T', "-")
        .trim_end_matches('Z')
        .to_string();
    let base = PathBuf::from("results").join(&problem.name);
    let mut dir = base.join(&stamp);
    let mut k = 1;
    while dir.exists() {
        k += 1;
        dir = base.join(format!("{stamp}-{k}"));
    }
    dir
}

pub fn run(opts: RunOptions) -> Result<Summary, Error> {
    // Resolve what to run: a resumed run takes its problem and settings from run.json.
    let previous = match (&opts.resume, &opts.out) {
        (true, Some(dir)) => Some(log::read_run_json(dir)?),
        (true, None) => {
            return Err(Error::usage(
                "`--resume` needs the run directory",
                Some("`moldtune run --resume DIR` or `--out DIR --resume`"),
            ))
        }
        _ => None,
    };
    let problem_path = match (&opts.problem, &previous) {
        (Some(p), _) => p.clone(),
        (None, Some(m)) => m.problem.clone(),
        (None, None) => {
            return Err(Error::usage(
                "no problem file given",
                Some("`moldtune run PROBLEM.yaml`"),
            ))
        }
    };
    let mut problem = Problem::load(&problem_path)?;
    let prev = previous.as_ref();
    if let Some(r) = opts.repeats.or(prev.map(|m| m.repeats)) {
        if r == 0 {
            return Err(Error::usage("`--repeats` must be at least 1", None));
        }
        problem.repeats = r;
    }
    if let Some(t) = opts.compile_timeout.or(prev.map(|m| m.compile_timeout_s)) {
        problem.compile_timeout_s = t;
    }
    if let Some(t) = opts.run_timeout.or(prev.map(|m| m.run_timeout_s)) {
        problem.run_timeout_s = t;
    }
    if problem.compile_timeout_s <= 0.0 || problem.run_timeout_s <= 0.0 {
        return Err(Error::usage("timeouts must be positive", None));
    }
    let ds = &problem.search;
    let learner = match opts.learner {
        Some(l) => l,
        None => match prev.map(|m| m.learner.clone()).or(ds.learner.clone()) {
            Some(name) => match Learner::parse(&name) {
                Some(l) => l,
                None => {
                    return Err(Error::ConfigFile {
                        file: problem.path.clone(),
                        message: format!("unknown learner `{name}` in `search.learner`"),
                        hint: Some("use rf, et, gbrt, gp or random".into()),
                    })
                }
            },
            None => Learner::Rf,
        },
    };
    let max_evals = opts
        .max_evals
        .or(prev.map(|m| m.max_evals))
        .or(ds.max_evals)
        .unwrap_or(100);
    let seed = opts.seed.or(prev.map(|m| m.seed)).or(ds.seed).unwrap_or(0);
    let initial = opts
        .initial
        .or(prev.map(|m| m.initial))
        .or(ds.initial)
        .unwrap_or(10);
    let kappa = opts
        .kappa
        .or(prev.map(|m| m.kappa))
        .or(ds.kappa)
        .unwrap_or(1.96);
    let pool = opts
        .pool
        .or(prev.map(|m| m.pool))
        .or(ds.pool)
        .unwrap_or(10_000)
        .max(1);
    let mock = opts.mock || prev.is_some_and(|m| m.mock);
    let acquisition = opts
        .acquisition
        .or(prev.map(|m| m.acquisition))
        .unwrap_or_default();
    let design = opts.design.or(prev.map(|m| m.design)).unwrap_or_default();
    let feasibility = !opts.no_feasibility && prev.is_none_or(|m| m.feasibility);
    let interleave = opts
        .interleave
        .or(prev.and_then(|m| m.interleave))
        .unwrap_or(Settings::default_interleave(learner));
    if kappa.is_nan() || kappa < 0.0 {
        return Err(Error::usage(
            format!("`--kappa` must be >= 0, got `{kappa}`"),
            None,
        ));
    }
    if let Some(m) = prev {
        if m.problem_hash != problem.hash {
            return Err(Error::usage(
                format!(
                    "the problem file `{}` changed since this run started",
                    problem.path.display()
                ),
                Some(
                    "a resumed run must use the same problem; start a new run with another `--out`",
                ),
            ));
        }
    }

    let dir = match &opts.out {
        Some(d) => d.clone(),
        None => default_out(&problem),
    };
    // Lock first, so that a second run on a busy directory is told so (not "resume it").
    let _lock = log::lock(&dir)?;
    // Absolute from here on: compiles and runs happen in build directories below it.
    let dir = std::fs::canonicalize(&dir)
        .map_err(|e| Error::io(format!("cannot resolve `{}`", dir.display()), e))?;
    if !opts.resume && log::has_rows(&dir) {
        return Err(Error::usage(
            format!("`{}` already holds results", dir.display()),
            Some("continue it with `--resume`, or choose another `--out`"),
        ));
    }
    // A previous moldtune killed with SIGKILL cannot have killed its child's group itself:
    // finish that job now (only processes of that group that work inside this directory).
    child::reap_stale_group(&dir);
    child::track_children_in(&dir);
    child::install_signal_handlers();

    // Continue an existing log only when resuming; otherwise (re)start it.
    let continuing = opts.resume && dir.join(log::RESULTS_CSV).exists();
    let mut records = if continuing {
        log::read_records(&dir, &problem)?
    } else {
        Vec::new()
    };
    let mut meta = RunMeta {
        format_version: log::FORMAT_VERSION,
        moldtune_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: opts.command_line.clone(),
        problem: problem.path.clone(),
        problem_name: problem.name.clone(),
        problem_hash: problem.hash.clone(),
        mold_hash: hex_hash(problem.mold.text.as_bytes()),
        seed,
        learner: learner.as_str().into(),
        acquisition,
        design,
        feasibility,
        interleave: Some(interleave),
        max_evals,
        initial,
        kappa,
        pool,
        repeats: problem.repeats,
        reduce: problem.reduce,
        metric: problem.metric.kind,
        goal: problem.metric.goal,
        compile_timeout_s: problem.compile_timeout_s,
        run_timeout_s: problem.run_timeout_s,
        mock,
        compiler_version: if mock {
            None
        } else {
            compiler_version(&problem)
        },
        cpu_model: cpu_model(),
        started_at: prev.map_or_else(now_rfc3339, |m| m.started_at.clone()),
        updated_at: now_rfc3339(),
        termination: "running".into(),
        evaluations: records.len(),
        best_objective: None,
        best_eval_id: None,
    };
    log::write_run_json(&dir, &meta)?;
    let mut log = if continuing {
        log::Log::append_to(&dir)?
    } else {
        log::Log::create(&dir, &problem)?
    };

    let mut progress = Progress::new(max_evals, records.len(), opts.quiet);
    progress.message(&format!(
        "moldtune: {} — learner {}, seed {seed}, {} of {max_evals} evaluations done, results in {}",
        problem.name,
        learner.as_str(),
        records.len(),
        dir.display()
    ));

    let mut evaluator: Box<dyn Evaluator> = if mock {
        Box::new(MockEvaluator::new())
    } else {
        let mut e = RealEvaluator::new();
        e.keep_builds = opts.keep_builds;
        Box::new(e)
    };
    if let Err(e) = evaluator.prepare(&problem, &dir) {
        meta.termination = if matches!(e, Error::Interrupted(_)) {
            "interrupted"
        } else {
            "reference_failed"
        }
        .into();
        log::write_run_json(&dir, &meta)?;
        return Err(e);
    }

    let settings = Settings {
        initial,
        kappa,
        pool,
        acquisition,
        design,
        feasibility,
        interleave,
        censor_timeouts: problem.metric.goal == crate::problem::Goal::Minimize
            && matches!(
                problem.metric.kind,
                MetricKind::KernelTime | MetricKind::WallTime | MetricKind::CpuTime
            ),
        ..Settings::new(learner, seed, problem.metric.goal)
    };
    let mut searcher = Searcher::new(&problem.space, settings);
    for r in &records {
        searcher.tell(&r.config, &r.m, r.source);
        evaluator.remember(&r.m, r.eval_id);
        progress.count(r);
    }
    let elapsed0 = records.last().map_or(0.0, |r| r.elapsed_sec);
    let t0 = Instant::now();
    let mut best_id = log::best(&records, problem.metric.goal).map(|r| r.eval_id);

    let termination = loop {
        if records.len() >= max_evals {
            break "max_evals";
        }
        if child::interrupted() {
            break "interrupted";
        }
        let step = records.len();
        let Some((config, source)) = searcher.ask(step) else {
            break "space_exhausted";
        };
        let m = match evaluator.evaluate(&problem, &config, step) {
            Evaluated::Done(m) => m,
            Evaluated::Interrupted => break "interrupted",
        };
        let rec = Record {
            eval_id: step,
            config_hash: problem.space.hash(&config),
            config,
            m,
            elapsed_sec: elapsed0 + t0.elapsed().as_secs_f64(),
            source,
        };
        log.append(&problem, &rec)?;
        searcher.tell(&rec.config, &rec.m, rec.source);
        let describe = problem.space.describe(&rec.config);
        records.push(rec);
        let new_best = log::best(&records, problem.metric.goal).map(|r| r.eval_id);
        if new_best != best_id {
            best_id = new_best;
            let b = &records[best_id.expect("just found")];
            log::write_atomic(
                &dir.join(log::BEST_C),
                problem.mold.render(&problem.space, &b.config).as_bytes(),
            )?;
        }
        let last = records.last().expect("just pushed");
        let best_obj = best_id.and_then(|i| records[i].m.objective);
        progress.update(last, best_obj, &describe);
        meta.evaluations = records.len();
        meta.best_eval_id = best_id;
        meta.best_objective = best_obj;
        log::write_results_json(&dir, &problem, &meta, &records)?;
    };
    progress.finish();

    meta.termination = termination.into();
    meta.updated_at = now_rfc3339();
    meta.evaluations = records.len();
    meta.best_eval_id = best_id;
    meta.best_objective = best_id.and_then(|i| records[i].m.objective);
    log::write_run_json(&dir, &meta)?;
    log::write_results_json(&dir, &problem, &meta, &records)?;
    if let Some(b) = best_id {
        // (Re)write best.c: a resumed run may not have found a new best itself.
        log::write_atomic(
            &dir.join(log::BEST_C),
            problem
                .mold
                .render(&problem.space, &records[b].config)
                .as_bytes(),
        )?;
    }

    let summary = Summary {
        dir: dir.clone(),
        evaluations: records.len(),
        best: best_id.map(|i| {
            (
                i,
                records[i].m.objective.unwrap_or(f64::NAN),
                problem.space.describe(&records[i].config),
            )
        }),
        default_objective: records
            .iter()
            .find(|r| r.source == crate::evaluate::outcome::Source::Default)
            .and_then(|r| r.m.objective),
        termination: termination.into(),
        counts: progress.summary_counts(),
        goal: problem.metric.goal,
    };
    if termination == "interrupted" {
        return Err(Error::Interrupted(dir));
    }
    if !records.is_empty() && records.iter().all(|r| r.m.status != Status::Ok) {
        return Err(Error::NoSuccess(records.len()));
    }
    Ok(summary)
}
