//! The driver's side of `--executor slurm`: evaluations submitted as jobs, `workers` of
//! them in flight, collected in whatever order they end. A job that leaves the queue
//! without a reply was lost by the environment (cancelled, the time limit, its node failed):
//! its evaluation becomes a [`Status::Lost`] measurement whose cause says what Slurm said.
//! The jobs' folders are the state a killed driver picks up on `--resume` ([`Farm::recover`]):
//! a reply already written is collected, a job still queued or running is waited for, a
//! job gone without a reply is submitted again.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{exit, Error};
use crate::evaluate::child;
use crate::evaluate::outcome::{Measurement, Source, Status, Stop};
use crate::problem::space::Config;
use crate::problem::Problem;
use crate::run::slurm::job::{Answer, JobDir, Reply, Request, Task, JOBS};
use crate::run::slurm::queue::{self, Step, Submission};
use crate::run::slurm::Settings;
use crate::run::verdict::{Plan, Verification};

/// How often the job folders are looked at for replies.
const POLL: Duration = Duration::from_millis(250);
/// How often squeue is asked which jobs are still there (the controller is shared).
const SQUEUE_EVERY: Duration = Duration::from_secs(2);

/// How the driver follows a job.
#[derive(Debug)]
enum Handle {
    /// A batch job, by its Slurm id (seen in squeue).
    Batch(Option<String>),
    /// A step of the allocation moldtune runs in, by its srun.
    Step(Step),
}

/// A job submitted and not yet collected.
#[derive(Debug)]
struct Flight {
    job: JobDir,
    name: String,
    handle: Handle,
    /// The evaluation's configuration and why it was proposed (reference and verify: none).
    proposal: Option<(Config, Source)>,
}

/// Jobs in flight, by key (`eval-N` sorted by N; `reference` and `verify` run alone).
pub struct Farm {
    dir: PathBuf,
    cwd: PathBuf,
    exe: PathBuf,
    settings: Settings,
    /// The prefix of this run's job names.
    tag: String,
    evals: BTreeMap<usize, Flight>,
    asked_squeue: Option<Instant>,
    /// The allocation whose steps the jobs are (`salloc`, a batch script); `None`: batch jobs.
    allocation: Option<String>,
}

impl Farm {
    /// A farm for the run in `dir` (absolute).
    pub fn new(dir: &Path, settings: Settings) -> Result<Farm, Error> {
        let here = |e| Error::io("cannot find moldtune's own executable or directory", e);
        Ok(Farm {
            dir: dir.to_path_buf(),
            cwd: std::env::current_dir().map_err(here)?,
            exe: std::env::current_exe().map_err(here)?,
            tag: format!(
                "mt-{}",
                &crate::rng::hex_hash(dir.as_os_str().as_encoded_bytes())[..8]
            ),
            settings,
            evals: BTreeMap::new(),
            asked_squeue: None,
            allocation: queue::allocation(),
        })
    }

    /// Evaluations that may be in flight at once.
    pub fn workers(&self) -> usize {
        self.settings.workers
    }

    /// Evaluations in flight.
    pub fn in_flight(&self) -> usize {
        self.evals.len()
    }

    /// The next free evaluation id at or after `first`.
    pub fn next_id(&self, first: usize) -> usize {
        self.evals
            .keys()
            .next_back()
            .map_or(first, |&k| first.max(k + 1))
    }

    fn name(&self, key: &str) -> String {
        format!("{}-{key}", self.tag)
    }

    /// Writes the job's request and script and submits it.
    fn launch(&self, task: Task) -> Result<Flight, Error> {
        let key = task.key();
        let job = JobDir::of(&self.dir, &key);
        let name = self.name(&key);
        job.write_request(&Request {
            name: name.clone(),
            task,
        })?;
        let handle = self.submit(&job, &name, &key)?;
        Ok(Flight {
            job,
            name,
            handle,
            proposal: None,
        })
    }

    /// Submits the job in `job` (a batch job, or a step of the allocation moldtune runs in).
    fn submit(&self, job: &JobDir, name: &str, key: &str) -> Result<Handle, Error> {
        let script = job.0.join("job.sh");
        let words = [
            self.exe.as_os_str(),
            "worker".as_ref(),
            self.dir.as_os_str(),
            key.as_ref(),
        ];
        let line: Vec<String> = words.iter().map(|w| quote(&w.to_string_lossy())).collect();
        let text = format!(
            "#!/bin/sh\n# moldtune's Slurm job `{name}`\nexec {}\n",
            line.join(" ")
        );
        crate::run::log::write_atomic(&script, text.as_bytes())?;
        let submission = Submission {
            name,
            script: &script,
            output: &job.output_path(),
            chdir: &self.cwd,
        };
        let interrupted = |e| match child::interrupted() {
            true => Error::Interrupted(self.dir.clone()),
            false => e,
        };
        if self.allocation.is_some() {
            let step = queue::start_step(&submission, &self.settings).map_err(interrupted)?;
            return Ok(Handle::Step(step));
        }
        let id = queue::submit(&submission, &self.settings).map_err(interrupted)?;
        job.write_job_id(&id)?;
        Ok(Handle::Batch(Some(id)))
    }

    /// Submits evaluation `eval_id` of `config`.
    pub fn start(
        &mut self,
        problem: &Problem,
        eval_id: usize,
        config: &Config,
        source: Source,
    ) -> Result<(), Error> {
        let cells = (problem.space.params.iter().zip(&config.0))
            .map(|(p, &x)| p.cell(x))
            .collect();
        let task = Task::Evaluate {
            eval_id,
            cells,
            source,
        };
        let mut flight = self.launch(task)?;
        flight.proposal = Some((config.clone(), source));
        self.evals.insert(eval_id, flight);
        Ok(())
    }
}

/// `word` quoted for sh.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl Farm {
    /// Runs `task` as a job of its own and waits for its reply (the reference, the
    /// verification); an interrupt cancels it.
    fn alone(&mut self, task: Task) -> Result<Reply, Stop> {
        let flight = self.launch(task).map_err(stop_of)?;
        let mut flights = BTreeMap::from([(0, flight)]);
        loop {
            let mut ended = match self.collect(&mut flights) {
                Ok(ended) => ended,
                Err(stop) => {
                    cancel(flights.into_values());
                    return Err(stop);
                }
            };
            if let Some((_, got)) = ended.pop() {
                return got.map_err(Stop::Environment);
            }
            std::thread::sleep(POLL);
        }
    }

    /// Builds the reference on a node (unless the run directory holds its output already).
    pub fn reference(&mut self, problem: &Problem) -> Result<(), Error> {
        let needed = problem.check.mode != crate::problem::CheckMode::None;
        if !needed || self.dir.join("reference.out").is_file() {
            return Ok(());
        }
        let reply = self
            .alone(Task::Reference)
            .map_err(|s| s.into_error(&self.dir))?;
        match reply.answer {
            Answer::Reference => Ok(()),
            Answer::ReferenceFailed { message, built } => Err(Error::Reference { message, built }),
            Answer::Failed { message, code } => Err(failure(message, code)),
            other => Err(Error::Internal(format!(
                "the reference job answered {other:?}"
            ))),
        }
    }

    /// The end-of-run verification as one job: every candidate timed on the same node.
    pub fn verify(&mut self, plan: Plan, anchors: &[usize]) -> Result<Option<Verification>, Stop> {
        let task = Task::Verify {
            plan,
            anchors: anchors.to_vec(),
        };
        let reply = self.alone(task)?;
        match reply.answer {
            Answer::Verified { verification } => Ok(verification),
            Answer::Failed { message, .. } => Err(Stop::Environment(message)),
            other => Err(Stop::Environment(format!(
                "the verification job answered {other:?}"
            ))),
        }
    }
}

/// The error a job's failed answer stands for.
fn failure(message: String, code: u8) -> Error {
    match code {
        exit::ENVIRONMENT => Error::Environment(message),
        exit::USAGE => Error::usage(message, None),
        _ => Error::Internal(message),
    }
}

fn stop_of(e: Error) -> Stop {
    match e {
        Error::Interrupted(_) => Stop::Interrupted,
        e => Stop::Environment(e.to_string()),
    }
}

/// What became of an evaluation's job: its measurement, or the environment's failure.
type Ended = Result<Reply, String>;

impl Farm {
    /// Waits until at least one evaluation in flight has ended; those that have, with their
    /// configurations and measurements. Ctrl-C: [`Stop::Interrupted`].
    pub fn wait(&mut self) -> Result<Vec<(usize, Config, Source, Measurement)>, Stop> {
        let mut flights = std::mem::take(&mut self.evals);
        let ended = loop {
            let ended = match self.collect(&mut flights) {
                Ok(e) => e,
                Err(stop) => {
                    self.evals = flights;
                    return Err(stop);
                }
            };
            if !ended.is_empty() || flights.is_empty() {
                break ended;
            }
            std::thread::sleep(POLL);
        };
        self.evals = flights;
        Ok(ended
            .into_iter()
            .filter_map(|(f, got)| measured(f, got))
            .collect())
    }

    /// Takes the flights that ended out of `flights`: those with a reply, and (when squeue
    /// is due) those squeue no longer lists, with what Slurm says of them.
    fn collect(
        &mut self,
        flights: &mut BTreeMap<usize, Flight>,
    ) -> Result<Vec<(Flight, Ended)>, Stop> {
        if child::interrupted() {
            return Err(Stop::Interrupted);
        }
        let mut ended = Vec::new();
        let replied: Vec<usize> = (flights.iter())
            .filter(|(_, f)| f.job.reply_path().is_file())
            .map(|(&k, _)| k)
            .collect();
        for k in replied {
            if let Some(f) = flights.remove(&k) {
                let got = f
                    .job
                    .reply()
                    .ok_or_else(|| "its reply is unreadable".to_string());
                ended.push((f, got));
            }
        }
        ended.extend(steps_ended(flights));
        let due = (self.asked_squeue).is_none_or(|t| t.elapsed() >= SQUEUE_EVERY);
        let batch = flights
            .values()
            .any(|f| matches!(f.handle, Handle::Batch(_)));
        if ended.is_empty() && batch && due {
            self.asked_squeue = Some(Instant::now());
            ended.extend(gone(flights));
        }
        Ok(ended)
    }
}

/// The steps whose srun ended, taken out of `flights` with their replies (or why not).
fn steps_ended(flights: &mut BTreeMap<usize, Flight>) -> Vec<(Flight, Ended)> {
    let over: Vec<(usize, String)> = (flights.iter_mut())
        .filter_map(|(&k, f)| match &mut f.handle {
            Handle::Step(step) => step.ended().map(|how| (k, how)),
            Handle::Batch(_) => None,
        })
        .collect();
    let mut ended = Vec::new();
    for (k, how) in over {
        let Some(f) = flights.remove(&k) else {
            continue;
        };
        let got = f.job.reply().ok_or_else(|| {
            let why = format!("slurm step `{}` ended without a reply ({how})", f.name);
            with_output(why, &f)
        });
        ended.push((f, got));
    }
    ended
}

/// The batch flights squeue no longer lists (each looked at once more for a reply written
/// as it left), taken out of `flights`.
fn gone(flights: &mut BTreeMap<usize, Flight>) -> Vec<(Flight, Ended)> {
    let batch = |f: &Flight| matches!(f.handle, Handle::Batch(_));
    let names: Vec<String> = (flights.values())
        .filter(|f| batch(f))
        .map(|f| f.name.clone())
        .collect();
    let Some(listed) = queue::queued(&names) else {
        return Vec::new(); // squeue did not answer: ask again later
    };
    let lost: Vec<usize> = (flights.iter())
        .filter(|(_, f)| batch(f) && !listed.contains_key(&f.name))
        .map(|(&k, _)| k)
        .collect();
    let mut ended = Vec::new();
    for k in lost {
        let Some(f) = flights.remove(&k) else {
            continue;
        };
        let got = f.job.reply().ok_or_else(|| why_lost(&f));
        ended.push((f, got));
    }
    ended
}

/// What Slurm says of a batch job that left the queue without a reply.
fn why_lost(f: &Flight) -> String {
    let id = match &f.handle {
        Handle::Batch(Some(id)) => id.clone(),
        _ => "?".into(),
    };
    let (state, reason) = queue::ended(&id).unwrap_or_else(|| ("UNKNOWN".into(), String::new()));
    let what = match state.split_whitespace().next().unwrap_or("") {
        s if s.starts_with("CANCELLED") => {
            "was cancelled (scancel, or an administrator)".to_string()
        }
        "TIMEOUT" => "hit its Slurm time limit (`--time`)".to_string(),
        "NODE_FAIL" => "was lost with its node (NODE_FAIL)".to_string(),
        "PREEMPTED" => "was preempted".to_string(),
        "OUT_OF_MEMORY" => "ran out of memory".to_string(),
        "UNKNOWN" => "left the queue without a reply".to_string(),
        s => format!("ended {s} without a reply"),
    };
    let reason = match reason.as_str() {
        "" | "None" => String::new(),
        r => format!(", reason {r}"),
    };
    with_output(format!("slurm job {id} (`{}`) {what}{reason}", f.name), f)
}

/// `why`, and the last lines the job printed.
fn with_output(why: String, f: &Flight) -> String {
    match f.job.output_tail().trim() {
        "" => why,
        t => format!("{why}; its output ended: {t}"),
    }
}

/// Cancels jobs and forgets them (their folders removed).
fn cancel(flights: impl Iterator<Item = Flight>) {
    let mut ids = Vec::new();
    for mut f in flights {
        match &mut f.handle {
            Handle::Batch(id) => ids.extend(id.take()),
            Handle::Step(step) => step.cancel(),
        }
        let _ = std::fs::remove_dir_all(&f.job.0);
    }
    queue::cancel(&ids);
}

/// An evaluation's ended job as its measurement (a reference or verify flight: none).
fn measured(f: Flight, got: Ended) -> Option<(usize, Config, Source, Measurement)> {
    let (config, source) = f.proposal?;
    let eval_id = match f.job.request()?.task {
        Task::Evaluate { eval_id, .. } => eval_id,
        _ => return None,
    };
    let m = match got {
        Ok(Reply {
            answer: Answer::Measured { measurement },
            ..
        }) => measurement,
        Ok(Reply {
            answer: Answer::Failed { message, .. },
            node,
            ..
        }) => lost(
            format!("the job failed on node {node}: {message}"),
            Some(node),
        ),
        Ok(other) => lost(
            format!("the job answered {:?}", other.answer),
            Some(other.node),
        ),
        Err(why) => lost(why, None),
    };
    Some((eval_id, config, source, m))
}

fn lost(cause: String, node: Option<String>) -> Measurement {
    let mut m = Measurement::failed(Status::Lost, 0.0, 0.0, cause);
    m.node = node;
    m
}

impl Farm {
    /// After a kill: the evaluations whose jobs were submitted but not recorded (ids from
    /// `first` on). A reply is collected at the next wait, a job still queued or running is
    /// waited for, one gone without a reply is submitted again. Returns them in id order.
    pub fn recover(
        &mut self,
        problem: &Problem,
        first: usize,
    ) -> Result<Vec<(usize, Config, Source)>, Error> {
        let mut found = Vec::new();
        for (eval_id, job) in self.job_dirs() {
            if eval_id < first {
                let _ = std::fs::remove_dir_all(&job.0); // recorded before the kill
                continue;
            }
            let Some(Request {
                name,
                task: Task::Evaluate { cells, source, .. },
            }) = job.request()
            else {
                let _ = std::fs::remove_dir_all(&job.0); // killed while writing it
                continue;
            };
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            let Some(config) = problem.space.parse_cells(&cells) else {
                continue;
            };
            found.push((eval_id, config, source, job, name));
        }
        let names: Vec<String> = found.iter().map(|f| f.4.clone()).collect();
        let listed = match self.allocation {
            None => queue::queued(&names).unwrap_or_default(),
            Some(_) => HashMap::new(),
        };
        // Rows are appended in id order: what lies beyond a gap (an evaluation cancelled by
        // Ctrl-C) cannot be recorded in its place, so it is cancelled and proposed anew.
        let contiguous = (found.iter().enumerate())
            .take_while(|(k, f)| f.0 == first + k)
            .count();
        let beyond: Vec<Flight> = (found.drain(contiguous..))
            .map(|(_, _, _, job, name)| Flight {
                handle: self.running(&name, &listed).unwrap_or(Handle::Batch(None)),
                job,
                name,
                proposal: None,
            })
            .collect();
        cancel(beyond.into_iter());
        let mut out = Vec::new();
        for (eval_id, config, source, job, name) in found {
            let handle = match (job.reply_path().is_file(), self.running(&name, &listed)) {
                (true, _) => Handle::Batch(job.job_id()),
                (false, Some(h)) => h,
                (false, None) => self.submit(&job, &name, &format!("eval-{eval_id}"))?,
            };
            let proposal = Some((config.clone(), source));
            let flight = Flight {
                job,
                name,
                handle,
                proposal,
            };
            self.evals.insert(eval_id, flight);
            out.push((eval_id, config, source));
        }
        Ok(out)
    }

    /// The job named `name` if it still runs: listed by squeue (`listed`), or a step whose
    /// srun is still here.
    fn running(&self, name: &str, listed: &HashMap<String, queue::Queued>) -> Option<Handle> {
        match self.allocation {
            Some(_) => Step::find(name).map(Handle::Step),
            None => listed.get(name).map(|q| Handle::Batch(Some(q.id.clone()))),
        }
    }

    /// The `jobs/eval-N` folders, by N.
    fn job_dirs(&self) -> BTreeMap<usize, JobDir> {
        let Ok(entries) = std::fs::read_dir(self.dir.join(JOBS)) else {
            return BTreeMap::new();
        };
        (entries.flatten())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix("eval-")?.parse().ok()?;
                Some((n, JobDir(e.path())))
            })
            .collect()
    }

    /// Forgets evaluation `eval_id`'s job folder once its row is recorded.
    pub fn recorded(&self, eval_id: usize) {
        let _ = std::fs::remove_dir_all(JobDir::of(&self.dir, &format!("eval-{eval_id}")).0);
    }

    /// Cancels every job in flight and forgets them: a resumed run proposes anew.
    pub fn cancel(&mut self) {
        cancel(std::mem::take(&mut self.evals).into_values());
    }
}
