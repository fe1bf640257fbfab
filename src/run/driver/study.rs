//! Ask and tell: the search as a service a program calls (`moldtune serve`, `moldtune ask`,
//! `moldtune tell`, the Python module), the convention of Optuna, SMAC3 and scikit-optimize.
//! The program evaluates; everything else is `run`'s, through the same [`Session`]: the
//! run directory and its lock, results.csv and its resume, run.json, results.json, the
//! searcher's replay, `progress:` pruning and the tie rule.
//!
//! Evaluations asked and not yet recorded live in `asked.jsonl` (the study's journal): each
//! ask, each progress point reported, and each outcome told ahead of an earlier evaluation
//! (results.csv records in eval order, as `run --parallel` does). Every request is written
//! there before it is answered, so a study whose program or server dies goes on from the
//! same point; once nothing is in flight the journal is removed.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Arrived, Launch, Session};
use crate::error::Error;
use crate::evaluate::outcome::{Curve, Measurement, Source, Status};
use crate::evaluate::prune::Pruner;
use crate::problem::progress;
use crate::problem::space::Config;
use crate::run::executor_kind::ExecutorKind;
use crate::run::lock;
use crate::run::log;
use crate::run::meta::{self, Termination, ASKED_JSONL};
use crate::run::settings::{self, RunOptions};
use crate::search::unseen::NoProposal;
use crate::search::{Learner, Searcher, Strategy};

/// One line of the journal.
#[derive(Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "lowercase")]
enum Line {
    /// The run's elapsed seconds at a wall-clock time: what `elapsed_sec` counts from while
    /// evaluations are in flight.
    Clock {
        unix: f64,
        elapsed: f64,
    },
    Ask {
        eval: usize,
        config: Vec<Option<f64>>,
        source: Source,
        learner: Option<Learner>,
        unix: f64,
    },
    Point {
        eval: usize,
        step: f64,
        value: f64,
    },
    Told {
        eval: usize,
        m: Box<Measurement>,
    },
}

/// An evaluation asked and not yet told.
struct Asked {
    config: Config,
    source: Source,
    /// When it was asked (seconds since the epoch): its `run_s` is the time to its tell.
    unix: f64,
    curve: Curve,
    /// Its best reported value so far (by `progress:`'s goal).
    best: Option<f64>,
}

/// What an ask gets: a configuration to evaluate, or why there is none.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Offer {
    Config {
        eval: usize,
        config: serde_json::Map<String, serde_json::Value>,
        source: Source,
    },
    End {
        end: Termination,
    },
}

/// A reported progress value's verdict.
#[derive(Debug, Serialize)]
pub struct Verdict {
    pub prune: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// An outcome a program tells.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Told {
    pub eval: usize,
    pub value: Option<f64>,
    /// `ok` (the default), `pruned`, `failed`, `run_timeout`, `wrong_output`, `lost`.
    #[serde(default)]
    pub status: Option<String>,
    /// Values of the problem's `record:` quantities.
    #[serde(default)]
    pub record: BTreeMap<String, f64>,
    pub cause: Option<String>,
}

/// An open study: the session, its strategy and what is in flight.
pub struct Study<'p, 's> {
    session: Session<'p>,
    strategy: &'s mut dyn Strategy,
    asked: BTreeMap<usize, Asked>,
    arrived: Arrived,
    next_id: usize,
    /// Asks of an earlier server, offered again before anything new (`serve`).
    orphans: VecDeque<usize>,
    /// (wall-clock seconds, the run's elapsed seconds then) of the journal's clock line.
    clock: Option<(f64, f64)>,
    /// Why the strategy had nothing more to propose, when it ran dry (run.json says so once
    /// nothing is in flight).
    dry: Option<Termination>,
    pruner: Option<Pruner>,
    journal: PathBuf,
    _lock: lock::Lock,
}

/// Seconds since the epoch.
fn unix_now() -> f64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0.0, |d| d.as_secs_f64())
}

impl<'p, 's> Study<'p, 's> {
    /// Opens (creates, or continues) the study in the launch's run directory. With
    /// `reoffer`, evaluations asked by an earlier server and never told are offered again
    /// first (that server is gone: the lock is ours).
    pub fn open(
        l: Launch<'p>,
        strategy: &'s mut dyn Strategy,
        reoffer: bool,
    ) -> Result<Study<'p, 's>, Error> {
        let dir = (l.opts.run_dir()).expect("a study is opened on its directory");
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::usage(
                format!(
                    "cannot create the study's directory `{}`: {e}",
                    dir.display()
                ),
                None,
            )
        })?;
        let lock = lock::lock(&dir)?;
        let dir = super::claim_dir(&dir, true)?;
        let mut session = Session::open(&l, dir)?;
        let pruner = (l.problem.progress.as_ref()).map(|p| Pruner::open(p, &session.dir));
        let mut remember = |m: &Measurement, id| {
            if let Some(p) = &pruner {
                p.remember(m, id);
            }
        };
        session.replay(strategy, &mut remember, None);
        let journal = session.dir.join(ASKED_JSONL);
        let mut study = Study {
            next_id: session.records.len(),
            session,
            strategy,
            asked: BTreeMap::new(),
            arrived: Arrived::new(),
            orphans: VecDeque::new(),
            clock: None,
            dry: None,
            pruner,
            journal,
            _lock: lock,
        };
        study.read_journal();
        if reoffer {
            study.orphans = study.asked.keys().copied().collect();
        }
        study.record_arrived()?;
        Ok(study)
    }

    /// What the journal holds beyond results.csv: asks in flight (the strategy told they
    /// are pending), their points, outcomes told ahead of their turn. A line a crash cut is
    /// left out.
    fn read_journal(&mut self) {
        let text = std::fs::read(&self.journal).unwrap_or_default();
        let recorded = self.session.records.len();
        let lines = text.split(|&b| b == b'\n');
        for line in lines.filter_map(|l| serde_json::from_slice::<Line>(l).ok()) {
            match line {
                Line::Clock { unix, elapsed } => self.clock = Some((unix, elapsed)),
                Line::Ask { eval, .. } | Line::Point { eval, .. } | Line::Told { eval, .. }
                    if eval < recorded => {}
                Line::Ask {
                    eval,
                    config,
                    source,
                    learner,
                    unix,
                } => {
                    let config = Config(config.iter().map(|x| x.unwrap_or(f64::NAN)).collect());
                    if let Some(l) = learner {
                        self.strategy.recall(&config, l);
                    }
                    self.strategy.pending(&config, source);
                    self.asked_now(eval, config, source, unix);
                }
                Line::Point { eval, step, value } => {
                    let pruner = self.pruner.as_ref();
                    if let Some(a) = self.asked.get_mut(&eval) {
                        a.curve.push((step, value));
                        if pruner.is_some_and(|p| p.better(value, a.best)) {
                            a.best = Some(value);
                        }
                    }
                }
                Line::Told { eval, m } => {
                    if let Some(a) = self.asked.remove(&eval) {
                        self.arrived.insert(eval, (a.config, a.source, *m));
                    }
                }
            }
        }
    }

    /// Appends a line to the journal (flushed before the request is answered).
    fn write(&self, line: &Line) -> Result<(), Error> {
        let text = serde_json::to_string(line).expect("a journal line serializes");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.journal);
        let written = file.and_then(|mut f| f.write_all(format!("{text}\n").as_bytes()));
        written.map_err(|e| Error::io(format!("cannot write `{}`", self.journal.display()), e))
    }

    /// The next configuration to evaluate (an orphan of an earlier server first), or why
    /// there is none; refused when `--parallel` evaluations are in flight already.
    pub fn ask(&mut self) -> Result<Offer, Error> {
        if let Some(eval) = self.orphans.pop_front() {
            return Ok(self.offer(eval));
        }
        let in_flight = self.asked.len() + self.arrived.len();
        if !self.session.budget_allows(in_flight) {
            let end = self.session.budget_spent().unwrap_or(Termination::MaxEvals);
            return Ok(Offer::End { end });
        }
        if self.asked.len() >= self.session.s.executor.at_once() {
            return Err(self.too_many());
        }
        let (config, source) = match self.strategy.ask(self.next_id) {
            Ok(proposal) => proposal,
            Err(NoProposal::Exhausted) => return Ok(self.ended(Termination::SpaceExhausted)),
            Err(NoProposal::NotFound) => return Ok(self.ended(Termination::NoConfigFound)),
        };
        self.strategy.pending(&config, source);
        let eval = self.next_id;
        if self.clock.is_none() {
            let clock = (
                unix_now(),
                self.session.records.last().map_or(0.0, |r| r.elapsed_sec),
            );
            self.write(&Line::Clock {
                unix: clock.0,
                elapsed: clock.1,
            })?;
            self.clock = Some(clock);
        }
        let learner = self.strategy.proposer(&config);
        let unix = unix_now();
        let coords = config.0.iter().map(|x| (!x.is_nan()).then_some(*x));
        let (config_line, source_line) = (coords.collect(), source);
        self.write(&Line::Ask {
            eval,
            config: config_line,
            source: source_line,
            learner,
            unix,
        })?;
        self.asked_now(eval, config, source, unix);
        Ok(self.offer(eval))
    }

    /// `eval` is in flight from now on (asked at `unix`).
    fn asked_now(&mut self, eval: usize, config: Config, source: Source, unix: f64) {
        let (curve, best) = (Vec::new(), None);
        let a = Asked {
            config,
            source,
            unix,
            curve,
            best,
        };
        self.asked.insert(eval, a);
        self.next_id = self.next_id.max(eval + 1);
    }

    /// The end of the search when nothing more can be proposed: final once nothing is in
    /// flight (an evaluation lost in flight may give the space back a configuration).
    fn ended(&mut self, end: Termination) -> Offer {
        self.dry = Some(end);
        Offer::End { end }
    }

    fn too_many(&self) -> Error {
        let ids: Vec<String> = self.asked.keys().map(|k| k.to_string()).collect();
        let limit = self.session.s.executor.at_once();
        Error::usage(
            format!(
                "{} asked and not told (eval {}): the study evaluates at most {limit} at once",
                self.asked.len(),
                ids.join(", ")
            ),
            Some("tell an outcome first (`tell --eval N --value V`, or `--status lost` to give one up), or open the study with a larger `--parallel`"),
        )
    }

    fn offer(&self, eval: usize) -> Offer {
        let a = &self.asked[&eval];
        Offer::Config {
            eval,
            config: self.session.problem.space.json(&a.config),
            source: a.source,
        }
    }

    /// A value `eval` reached at `step` while it runs: whether to stop it there (the
    /// median rule of `progress:`; never without it).
    pub fn report(&mut self, eval: usize, step: f64, value: f64) -> Result<Verdict, Error> {
        if !(step.is_finite() && value.is_finite()) {
            return Err(Error::usage(
                format!("eval {eval}: step {step} value {value} is not a pair of finite numbers"),
                None,
            ));
        }
        self.in_flight(eval)?;
        self.write(&Line::Point { eval, step, value })?;
        let a = self.asked.get_mut(&eval).expect("checked in flight");
        a.curve.push((step, value));
        let why = self.pruner.as_ref().and_then(|p| {
            if p.better(value, a.best) {
                a.best = Some(value);
            }
            p.verdict(step, a.best.unwrap_or(value))
        });
        Ok(Verdict {
            prune: why.is_some(),
            why,
        })
    }

    /// Refuses an eval that is not asked and untold.
    fn in_flight(&self, eval: usize) -> Result<(), Error> {
        if self.asked.contains_key(&eval) {
            return Ok(());
        }
        // Every id below `next_id` was asked: one not in flight was told.
        let why = match eval < self.next_id {
            true => "was told already",
            false => "was never asked",
        };
        let open: Vec<String> = self.asked.keys().map(|k| k.to_string()).collect();
        let hint = match open.is_empty() {
            true => "nothing is in flight: `ask` first".to_string(),
            false => format!("in flight: eval {}", open.join(", ")),
        };
        Err(Error::usage(format!("eval {eval} {why}"), Some(&hint)))
    }

    /// Records what the program tells of `t.eval` (in eval order: an outcome ahead of an
    /// earlier one waits in the journal).
    pub fn tell(&mut self, t: Told) -> Result<usize, Error> {
        self.in_flight(t.eval)?;
        let m = self.measurement(&t)?;
        if t.eval != self.session.records.len() {
            self.write(&Line::Told {
                eval: t.eval,
                m: Box::new(m.clone()),
            })?;
        }
        let a = self.asked.remove(&t.eval).expect("checked in flight");
        self.arrived.insert(t.eval, (a.config, a.source, m));
        self.record_arrived()?;
        if self.asked.is_empty() && self.arrived.is_empty() {
            self.clock = None; // the time until the next ask is the program's, not the run's
            let _ = std::fs::remove_file(&self.journal);
        }
        Ok(t.eval)
    }

    /// The measurement a tell makes: a value for `ok` (and `pruned`: its last one), the
    /// problem's `record:` quantities only, the time since the ask as its run time.
    fn measurement(&self, t: &Told) -> Result<Measurement, Error> {
        let status = told_status(t)?;
        let a = &self.asked[&t.eval];
        let run_s = (unix_now() - a.unix).max(0.0);
        let mut m = match status {
            Status::Ok => {
                let kind = self.session.problem.metric.kind;
                let value = log::objective_of(kind, t.value)
                    .map_err(|why| Error::usage(format!("eval {}: {why}", t.eval), None))?;
                Measurement {
                    run_s,
                    ..Measurement::ok(value, 0.0, 1)
                }
            }
            s => {
                let cause = t.cause.clone().unwrap_or_else(|| format!("told {s}"));
                Measurement::failed(s, 0.0, run_s, cause)
            }
        };
        m.recorded = self.recorded(t)?;
        m.curve = a.curve.clone();
        if status == Status::Pruned {
            let last = a.curve.last().copied();
            let value = t.value.or(last.map(|p| p.1));
            let step = last.map(|p| p.0);
            m.recorded
                .extend(step.map(|s| (progress::STEP.to_string(), s)));
            m.recorded
                .extend(value.map(|v| (progress::VALUE.to_string(), v)));
        }
        Ok(m)
    }

    /// `t.record`, each a quantity of the problem's `record:` with a finite value.
    fn recorded(&self, t: &Told) -> Result<BTreeMap<String, f64>, Error> {
        let names: Vec<&str> = (self.session.problem.record.iter())
            .map(|q| q.name.as_str())
            .filter(|n| ![progress::STEP, progress::VALUE].contains(n))
            .collect();
        for (k, v) in &t.record {
            if !names.contains(&k.as_str()) {
                let hint = match names.is_empty() {
                    true => "the problem records nothing: add it to `record:` in the problem file"
                        .to_string(),
                    false => format!("the problem records {}", names.join(", ")),
                };
                return Err(Error::usage(
                    format!(
                        "eval {}: `{k}` is not a quantity of the problem's `record:`",
                        t.eval
                    ),
                    Some(&hint),
                ));
            }
            if !v.is_finite() {
                return Err(Error::usage(
                    format!("eval {}: `{k}` is {v}, not a finite number", t.eval),
                    None,
                ));
            }
        }
        Ok(t.record.clone())
    }

    /// Records the evaluations told, in eval order as far as none is missing.
    fn record_arrived(&mut self) -> Result<(), Error> {
        let elapsed = match self.clock {
            Some((unix, elapsed)) => elapsed + (unix_now() - unix).max(0.0),
            None => self.session.records.last().map_or(0.0, |r| r.elapsed_sec),
        };
        while let Some((config, source, m)) = self.arrived.remove(&self.session.records.len()) {
            let learner = self.strategy.proposer(&config);
            let r =
                self.session
                    .record_next((config, source, m), learner, self.strategy, elapsed)?;
            if let Some(p) = &self.pruner {
                p.remember(&r.m, r.eval_id);
            }
        }
        Ok(())
    }

    /// The best evaluation so far: its id, objective and configuration.
    pub fn best(&self) -> Option<(usize, f64, serde_json::Map<String, serde_json::Value>)> {
        let r = &self.session.records[self.session.best_id?];
        let config = self.session.problem.space.json(&r.config);
        Some((r.eval_id, r.m.objective?, config))
    }

    /// Writes run.json (`running` while the budget is not spent or evaluations are in
    /// flight) and the summaries.
    pub fn close(mut self) -> Result<Termination, Error> {
        let in_flight = self.asked.len() + self.arrived.len();
        let end = match in_flight {
            0 => self.session.budget_spent().or(self.dry),
            _ => None,
        };
        let termination = end.unwrap_or(Termination::Running);
        self.session.conclude(termination)?;
        Ok(termination)
    }
}

/// The status a tell names (`failed` is a run error), and the value it needs.
fn told_status(t: &Told) -> Result<Status, Error> {
    let name = t.status.as_deref().unwrap_or("ok");
    let status = match name {
        "failed" => Some(Status::RunError),
        other => Status::parse(other),
    };
    let allowed = "ok, pruned, failed, run_timeout, wrong_output, lost";
    let status = status
        .filter(|s| {
            !matches!(
                s,
                Status::BuildError | Status::BuildTimeout | Status::InvalidMetric
            )
        })
        .ok_or_else(|| {
            Error::usage(
                format!("eval {}: `{name}` is not a status a program tells", t.eval),
                Some(&format!("one of {allowed}")),
            )
        })?;
    if status == Status::Ok && t.value.is_none() {
        return Err(Error::usage(
            format!("eval {}: an `ok` outcome needs its value", t.eval),
            Some("give `value`, or another status (`failed`, `pruned`, `lost`)"),
        ));
    }
    Ok(status)
}

/// Opens the study of `o` (its run directory in `o.shared.out`), lets `f` work on it, then
/// closes it (run.json and the summaries written however `f` ended).
pub fn with_study<T>(
    mut o: RunOptions,
    reoffer: bool,
    f: impl FnOnce(&mut Study) -> Result<T, Error>,
) -> Result<T, Error> {
    let dir = o
        .shared
        .out
        .clone()
        .expect("a study is opened on its directory");
    let exists = dir.join(meta::RUN_JSON).is_file();
    if !exists && o.problem.is_none() {
        return Err(Error::usage(
            format!("`{}` holds no study", dir.display()),
            Some("start one with `--problem SPACE.yaml` (the parameters, the metric's goal and the search)"),
        ));
    }
    if exists {
        o.shared.resume = Some(Some(dir));
    }
    let previous = settings::previous_run(&o.shared)?;
    let prev = previous.as_ref();
    let problem = settings::load_problem(&o, prev)?;
    let mut s = settings::resolve(&o, prev, &problem)?;
    // The program evaluates: `--parallel` is the asks in flight, whatever the file's executor.
    s.executor = ExecutorKind::Told(crate::run::parallel::resolve(
        o.parallel, prev, false, &problem,
    )?);
    let mut searcher = Searcher::new(&problem.space, s.searcher_settings(&problem));
    let launch = Launch {
        problem: &problem,
        s,
        opts: &o.shared,
        prev,
        mctree: None,
        warm_start: None,
    };
    let mut study = Study::open(launch, &mut searcher, reoffer)?;
    let out = f(&mut study);
    let closed = study.close();
    let out = out?;
    closed?;
    Ok(out)
}
